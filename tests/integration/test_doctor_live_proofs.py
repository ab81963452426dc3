"""`bot doctor`'s proofs of the services (prices, a quote, the swap's function, the router ABI).

As a user runs it: real `bot` subprocesses against a paper world served by `bot paper
serve` on loopback (real uvicorn), which answers the real forms (`POST /swap` quotes,
`txData` calling `panora_swap::router_entry`, the mainnet router's module ABI). Paper mode
proves the paper world; `--live` proves the `[api]` and `[chain]` services, here the same
served world so that nothing leaves the machine.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.chain import ROUTER_FUNCTION, new_key_file
from tests.support.cli import run_bot
from tests.support.paper_server import PAPER_KEY, paper_serve, write_config

PROOFS = ("APT and USDC prices", "swap quote", "swap function allowed", "router ABI on chain")
CHECK_LINE = re.compile(r"^(PASS|FAIL|WARN|SKIP)  (\S.*?\S) {2,}(.*)$")
STRATEGY = """
[[strategies]]
name = "weekly-apt"
plugin = "recurring_dca"
schedule = { interval_seconds = 3600 }
params = { from_token = "USDC", to_token = "APT", amount_per_order = "25", \
interval = "1 day", orders = 7 }
"""


def checks(result: subprocess.CompletedProcess[str]) -> dict[str, tuple[str, str]]:
    """Each check line of doctor's output: name → (outcome, detail)."""
    found = {}
    for line in result.stdout.splitlines():
        match = CHECK_LINE.match(line)
        if match:
            found[match[2]] = (match[1], match[3])
    return found


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A served paper world whose wallet (a fresh 0600 key) holds APT and USDC."""
    home = tmp_path_factory.mktemp("doctor-live")
    key = home / "wallet.key"
    address = str(new_key_file(key))
    funding = "".join(
        f'[[paper.funding]]\nwallet = "{address}"\ntoken = "{token}"\namount = "{amount}"\n'
        for token, amount in (("APT", "10"), ("USDC", "500"))
    )
    with paper_serve(write_config(home / "server.toml", "\n" + funding)) as (url, _):
        yield url, key


def live_config(folder: Path, url: str, key: Path, *, api_key: str, chain: str = "") -> Path:
    """A paper config whose `[api]` and `[chain]` point at the served world (for `--live`)."""
    secret = folder / "api-key"
    secret.write_text(api_key + "\n")
    secret.chmod(0o600)
    return write_config(
        folder / "bot.toml",
        f'\n[wallet]\nkey_file = "{key}"\n\n[journal]\nurl = "sqlite:///{folder / "bot.db"}"\n'
        f'\n[api]\nbase_url = "{url}"\napi_key_file = "{secret}"\n'
        f'\n[chain]\nnode_url = "{url}/v1"\nchain_id = 4\n{chain}' + STRATEGY,
    )


def test_paper_mode_proves_the_paper_world(world: tuple[str, Path], tmp_path: Path) -> None:
    url, key = world
    config = write_config(
        tmp_path / "bot.toml",
        f'url = "{url}"\n\n[wallet]\nkey_file = "{key}"\n\n[journal]\n'
        f'url = "sqlite:///{tmp_path / "bot.db"}"\n' + STRATEGY,
    )
    result = run_bot("-c", str(config), "doctor", timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    found = checks(result)
    assert {name: found[name][0] for name in PROOFS} == dict.fromkeys(PROOFS, "PASS")
    assert found["swap quote"][1].startswith("0.1 APT → ")
    assert found["swap function allowed"][1] == (
        f"POST /swap calls {ROUTER_FUNCTION}, on [chain].allowed_functions"
    )
    assert found["router ABI on chain"][1] == (
        "router_entry: 21 parameters, 32 type parameters, as in the codec's ABI"
    )
    assert PAPER_KEY not in result.stdout + result.stderr


def test_live_fails_a_swap_whose_function_is_not_allowlisted(
    world: tuple[str, Path], tmp_path: Path
) -> None:
    url, key = world
    only = '\nallowed_functions = ["0x1::aptos_account::transfer"]\n'
    config = live_config(tmp_path, url, key, api_key=PAPER_KEY, chain=only)
    result = run_bot("-c", str(config), "doctor", "--live", timeout=60)
    assert result.returncode == 1
    found = checks(result)
    outcome, detail = found["swap function allowed"]
    assert outcome == "FAIL"
    assert detail.startswith(f"POST /swap: function {ROUTER_FUNCTION} is not on the allowlist")
    assert detail.endswith(f'add "{ROUTER_FUNCTION}" to [chain].allowed_functions')
    # The quote and the router itself are fine: only the allowlist is wrong.
    assert found["swap quote"][0] == "PASS"
    assert found["router ABI on chain"][0] == "PASS"
    assert "swap function allowed" in result.stderr.strip().splitlines()[-1]


def test_live_with_a_refused_key_says_so_and_skips_what_needs_the_api(
    world: tuple[str, Path], tmp_path: Path
) -> None:
    url, key = world
    config = live_config(tmp_path, url, key, api_key="not-the-key-4c1d")
    result = run_bot("-c", str(config), "doctor", "--live", timeout=60)
    assert result.returncode == 1
    found = checks(result)
    assert found["API key accepted"] == (
        "FAIL",
        f"{url} refused the API key (401): check [api].api_key, BOT_API__API_KEY "
        "or [api].api_key_file",
    )
    assert [found[name][0] for name in PROOFS] == ["SKIP", "SKIP", "SKIP", "PASS"]
    assert "not-the-key-4c1d" not in result.stdout + result.stderr
