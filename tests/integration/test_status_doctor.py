"""`bot doctor` and `bot status` as a user (and Docker's HEALTHCHECK) runs them.

Real subprocesses; doctor against a paper world served by `bot paper serve` on loopback,
and an embedded one. Each failure is introduced alone and must produce its FAIL line.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.chain import new_key_file
from bot.engine.wallet_lock import WalletLock
from bot.journal import Journal
from bot.ops.status_file import DaemonStatus, StrategyStatus, status_path, write_status
from tests.support.cli import ROOT, run_bot
from tests.support.loopback import closed_port
from tests.support.paper_server import PAPER_KEY, paper_serve, write_config


def bot(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return run_bot(*args, cwd=cwd, timeout=60)


STRATEGY = """
[[strategies]]
name = "weekly-apt"
plugin = "recurring_dca"
schedule = { interval_seconds = 3600 }
params = { from_token = "USDC", to_token = "APT", amount_per_order = "25", \
interval = "1 day", orders = 7 }
"""


CHECK_LINE = re.compile(r"^(PASS|FAIL|WARN|SKIP)  (\S.*?\S) {2,}(.*)$")


def checks(result: subprocess.CompletedProcess[str]) -> dict[str, tuple[str, str]]:
    """Each check line of doctor's output: name → (outcome, detail)."""
    found = {}
    for line in result.stdout.splitlines():
        match = CHECK_LINE.match(line)
        if match:
            found[match[2]] = (match[1], match[3])
    return found


def failures(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    return {name: detail for name, (outcome, detail) in checks(result).items() if outcome == "FAIL"}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, str]]:
    """A served paper world whose wallet (a fresh 0600 key) holds APT and USDC."""
    home = tmp_path_factory.mktemp("doctor")
    key = home / "wallet.key"
    address = str(new_key_file(key))
    funding = "".join(
        f'[[paper.funding]]\nwallet = "{address}"\ntoken = "{token}"\namount = "{amount}"\n'
        for token, amount in (("APT", "10"), ("USDC", "500"))
    )
    server = write_config(home / "server.toml", "\n" + funding)
    with paper_serve(server) as (url, _):
        yield url, key, funding


def doctor_config(path: Path, url: str, key: Path, extra: str = "") -> Path:
    """A paper config on the served world, with its own journal (migrated) and the key."""
    journal = f"sqlite:///{path.parent / 'bot.db'}"
    Journal.open(journal).close()
    return write_config(
        path,
        f'url = "{url}"\n\n[wallet]\nkey_file = "{key}"\n\n[journal]\nurl = "{journal}"\n'
        + extra
        + STRATEGY,
    )


def api_key_file(folder: Path) -> Path:
    """The paper world's API key in a 0600 file (a secret is never written in the config)."""
    path = folder / "api-key"
    path.write_text(PAPER_KEY + "\n")
    path.chmod(0o600)
    return path


# --- doctor -------------------------------------------------------------------------------


def test_doctor_passes_against_the_served_paper_world(
    world: tuple[str, Path, str], tmp_path: Path
) -> None:
    url, key, _ = world
    result = bot("-c", str(doctor_config(tmp_path / "bot.toml", url, key)), "doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    found = checks(result)
    assert len(found) == 20
    assert found["API key source"] == ("PASS", "the paper world's key ([paper].api_keys)")
    assert found["paper world"] == (
        "PASS",
        f"served at {url} (`bot paper serve`): the world a daemon with this [paper].url trades on",
    )
    assert {name for name, (outcome, _) in found.items() if outcome != "PASS"} == {
        "clock skew",
        "swap reference price",
    }
    assert found["clock skew"] == ("SKIP", "skipped (paper clock: stepped)")
    assert found["swap reference price"][0] == "WARN"
    assert "provider's own /prices feed" in found["swap reference price"][1]
    assert found["node chain id"] == ("PASS", "node says 4, config says 4")
    assert found["token balances"] == ("PASS", "10 APT, 500 USDC")
    assert result.stdout.strip().splitlines()[-1].endswith("0 failed, 1 warning, 1 skipped")
    assert PAPER_KEY not in result.stdout + result.stderr
    assert key.read_text().strip() not in result.stdout + result.stderr


def test_doctor_passes_against_an_embedded_paper_world(
    world: tuple[str, Path, str], tmp_path: Path
) -> None:
    _, key, funding = world
    config = write_config(
        tmp_path / "bot.toml",
        f'\n[wallet]\nkey_file = "{key}"\n\n[journal]\n'
        f'url = "sqlite:///{tmp_path / "bot.db"}"\n' + funding + STRATEGY,
    )
    result = bot("-c", str(config), "doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    found = checks(result)
    assert found["node reachable"] == ("PASS", "embedded paper node (ledger version 0)")
    assert found["journal"][1].endswith("does not exist yet; `bot run` creates it")
    assert not (tmp_path / "bot.db").exists()  # doctor never creates or migrates the journal


def test_doctor_live_checks_the_api_and_chain_sections(
    world: tuple[str, Path, str], tmp_path: Path
) -> None:
    url, key, _ = world
    extra = (
        f'\n[api]\nbase_url = "{url}"\napi_key_file = "{api_key_file(tmp_path)}"\n'
        f'\n[chain]\nnode_url = "{url}/v1"\nchain_id = 4\n'
    )
    config = doctor_config(tmp_path / "bot.toml", "", key, extra)
    result = bot("-c", str(config), "doctor", "--live")
    assert "(mode paper, checked as live (--live), 1 strategy enabled)" in result.stdout
    # Live checks never skip the clock: the served world's stepped clock is months off.
    assert result.returncode == 1
    assert list(failures(result)) == ["clock skew"]
    assert failures(result)["clock skew"].startswith("local clock")
    assert checks(result)["API key accepted"][1].startswith(f"{url}: GET /prices")
    assert PAPER_KEY not in result.stdout + result.stderr


def test_doctor_fails_on_a_key_file_others_can_read(
    world: tuple[str, Path, str], tmp_path: Path
) -> None:
    url, _, _ = world
    key = tmp_path / "open.key"
    new_key_file(key)
    key.chmod(0o644)
    result = bot("-c", str(doctor_config(tmp_path / "bot.toml", url, key)), "doctor")
    assert result.returncode == 2  # a configuration error, as for `bot run`
    assert failures(result) == {
        "key file permissions": f"{key} is 0644, open to group or others; run: chmod 600 {key}"
    }
    assert "bot: error: doctor: failed: key file permissions" in result.stderr


def test_doctor_fails_on_a_wrong_chain_id(world: tuple[str, Path, str], tmp_path: Path) -> None:
    url, key, _ = world
    config = doctor_config(tmp_path / "bot.toml", url, key, "\n[paper.node]\nchain_id = 5\n")
    result = bot("-c", str(config), "doctor")
    assert result.returncode == 1
    assert failures(result) == {"node chain id": "node says 4, config says 5"}


def test_doctor_fails_on_an_unreachable_node(world: tuple[str, Path, str], tmp_path: Path) -> None:
    url, key, _ = world
    port = closed_port()
    body = (
        f'[api]\nbase_url = "{url}"\napi_key_file = "{api_key_file(tmp_path)}"\n'
        f'\n[chain]\nnode_url = "http://127.0.0.1:{port}/v1"\nchain_id = 4\n'
    )
    config = doctor_config(tmp_path / "bot.toml", "", key, "\n" + body)
    config.write_text('mode = "live"\n' + config.read_text())  # top-level keys come first
    result = bot("-c", str(config), "doctor")
    assert result.returncode == 1
    assert list(failures(result)) == ["node reachable"]
    assert failures(result)["node reachable"].startswith(f"http://127.0.0.1:{port}/v1: ")
    assert checks(result)["API key accepted"][0] == "PASS"  # only the node is down


def test_doctor_reports_an_invalid_config_with_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "bot.toml"
    config.write_text('[daemon]\nheartbeat_seconds = "often"\n')
    result = bot("-c", str(config), "doctor")
    assert result.returncode == 2
    assert failures(result)["config valid"].startswith(f"{config}: daemon.heartbeat_seconds:")


# --- status -------------------------------------------------------------------------------


def status_config(tmp_path: Path, heartbeat: int = 60) -> tuple[Path, str]:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    Journal.open(url).close()
    config = tmp_path / "bot.toml"
    config.write_text(
        f'[journal]\nurl = "{url}"\n\n[daemon]\nheartbeat_seconds = {heartbeat}\n'
        f'lock_dir = "{tmp_path / "locks"}"\n'
        '\n[risk]\ndaily_spend_caps = { USDC = "100" }\n'
    )
    return config, url


def fake_daemon_status(url: str, wallet: str, updated: datetime) -> None:
    started = updated - timedelta(minutes=90)
    write_status(
        status_path(url),
        DaemonStatus(
            pid=os.getpid(),
            state="running",
            started_at=started.isoformat(),
            updated_at=updated.isoformat(),
            mode="paper",
            wallet=wallet,
            version="0.1.0",
            strategies={"weekly-apt": StrategyStatus(ticks=3, last_tick=updated.isoformat())},
            last_poll_at=updated.isoformat(),
            last_poll_ok_at=updated.isoformat(),
            apt_balance="9.75",
        ),
    )


def test_status_without_a_daemon_says_not_running_and_exits_1(tmp_path: Path) -> None:
    config, _ = status_config(tmp_path)
    result = bot("-c", str(config), "status")
    assert result.returncode == 1
    assert result.stdout.splitlines()[0] == "bot not running (no status file)"


def test_status_of_a_running_daemon_exits_0_with_stable_json(tmp_path: Path) -> None:
    config, url = status_config(tmp_path)
    wallet = "0x" + "5e" * 32
    fake_daemon_status(url, wallet, datetime.now(UTC))
    with WalletLock(tmp_path / "locks", wallet):  # the "daemon" (this process) holds it
        human = bot("-c", str(config), "status")
        machine = bot("-c", str(config), "status", "--json")
    assert human.returncode == 0, human.stdout + human.stderr
    assert human.stdout.startswith(f"bot running (pid {os.getpid()}, up 1h 30m, paper mode")
    assert machine.returncode == 0
    data = json.loads(machine.stdout)
    assert data["running"] is True and data["healthy"] is True and data["problem"] is None
    assert data["pid"] == os.getpid() and data["wallet"] == wallet
    assert data["apt_balance"] == "9.75" and data["open_orders"] == 0
    assert data["strategies"]["weekly-apt"]["ticks"] == 3
    assert data["spend_today"] == [
        {"scope": "all strategies", "token": "USDC", "spent": "0", "cap": "100"}
    ]
    assert {"uptime_seconds", "status_age_seconds", "last_poll_at", "lock_file"} <= set(data)


def test_status_of_a_stale_daemon_exits_1(tmp_path: Path) -> None:
    config, url = status_config(tmp_path, heartbeat=10)
    wallet = "0x" + "5e" * 32
    fake_daemon_status(url, wallet, datetime.now(UTC) - timedelta(seconds=45))
    with WalletLock(tmp_path / "locks", wallet):
        result = bot("-c", str(config), "status")
    assert result.returncode == 1
    assert "UNHEALTHY: stale: the status file was last updated 4" in result.stdout
    assert "(more than 30 s)" in result.stdout


def test_status_with_an_invalid_config_exits_2(tmp_path: Path) -> None:
    config = tmp_path / "bot.toml"
    config.write_text("[daemon]\nheartbeat_seconds = 0\n")
    result = bot("-c", str(config), "status")
    assert result.returncode == 2
    assert "daemon.heartbeat_seconds" in result.stderr
