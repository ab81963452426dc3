"""Config files gone wrong, as a user meets them: through `bot` in a subprocess.

* SIGHUP with the file emptied or cut short: refused in one log line, the strategies run
  on; a file without strategies is applied only when it says so explicitly.
* A secret written in the file itself: `bot config check` exits 2 with one line naming
  the key, while the same secret from the environment or its file is accepted.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.chain import new_key_file
from tests.support.cli import ROOT, clean_env, run_bot

PLUGIN = '''
"""Test plugin: does nothing, every tick."""

from bot.engine.strategy import Action, Context, Strategy, StrategyParams


class IdleParams(StrategyParams):
    label: str = ""


class Idle(Strategy):
    """Returns no action."""

    name = "idle"
    Params = IdleParams

    async def on_tick(self, ctx: Context) -> list[Action]:
        return []
'''

STRATEGY = (
    '\n[[strategies]]\nname = "{name}"\nplugin = "idle"\n'
    'schedule = {{ interval_seconds = 1 }}\nparams = {{ label = "a fairly long label" }}\n'
)


class Daemon:
    """`bot run` on an embedded paper world (real clock), with its folder and config."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.config = folder / "bot.toml"
        (folder / "plugins").mkdir()
        (folder / "plugins" / "idle.py").write_text(PLUGIN)
        self.wallet = str(new_key_file(folder / "wallet.key"))
        self.process: subprocess.Popen[str] | None = None

    def head(self, scheduler_extra: str = "") -> str:
        folder = self.folder
        return (
            f'[journal]\nurl = "sqlite:///{folder / "bot.db"}"\n'
            f'[wallet]\nkey_file = "{folder / "wallet.key"}"\n'
            f'[scheduler]\nstrategy_dirs = ["{folder / "plugins"}"]\n{scheduler_extra}'
            f'[daemon]\nheartbeat_seconds = 1\nlock_dir = "{folder / "locks"}"\n'
            '[paper]\nclock = "real"\napi_keys = ["k"]\n'
            f'funding = [{{ wallet = "{self.wallet}", token = "APT", amount = "3" }}]\n'
        )

    def full_text(self) -> str:
        return self.head() + "".join(STRATEGY.format(name=n) for n in ("a", "b"))

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bot", "--log-format", "json", "-c", str(self.config), "run"],
            stdout=(self.folder / "out.txt").open("w"),
            stderr=(self.folder / "err.txt").open("w"),
            text=True,
            env=clean_env(),
            cwd=ROOT,
        )

    def status(self) -> dict[str, Any]:
        path = self.folder / "status.json"
        try:
            return dict(json.loads(path.read_text())) if path.exists() else {}
        except json.JSONDecodeError:  # caught mid-write: read again
            return {}

    def wait(self, done: Callable[[], bool], timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            assert self.process is not None and self.process.poll() is None, self.errors()
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; status {self.status()}")
            time.sleep(0.1)

    def events(self, event: str) -> list[dict[str, Any]]:
        lines = (self.folder / "err.txt").read_text().splitlines()
        records = [json.loads(line) for line in lines if line.startswith("{")]
        return [r for r in records if r.get("event") == event]

    def errors(self) -> str:
        return (self.folder / "err.txt").read_text()[-2000:]

    def hangup(self, text: str, refusals: int) -> None:
        """Write `text` as the config, SIGHUP, wait for refusal number `refusals`."""
        self.config.write_text(text)
        assert self.process is not None
        self.process.send_signal(signal.SIGHUP)
        self.wait(lambda: len(self.events("reload.refused")) >= refusals)

    def ticks(self) -> dict[str, int]:
        strategies = self.status().get("strategies", {})
        return {name: s["ticks"] for name, s in strategies.items()}


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    running = Daemon(tmp_path)
    yield running
    if running.process is not None and running.process.poll() is None:
        running.process.kill()
        running.process.wait(timeout=10)


def test_an_emptied_or_truncated_config_is_refused_on_sighup(daemon: Daemon) -> None:
    full = daemon.full_text()
    daemon.config.write_text(full)
    daemon.start()
    daemon.wait(lambda: daemon.status().get("state") == "running" and len(daemon.ticks()) == 2)

    # Cut mid-line (inside a strategy's params): not TOML, refused by the loader.
    mid_line = full.index('label = "a fairly') + 10
    daemon.hangup(full[:mid_line], refusals=1)
    # Emptied (an editor's truncate-then-write caught half-way): no strategies.
    daemon.hangup("", refusals=2)
    # Cut at the line end just before the first [[strategies]]: valid, but no strategies.
    daemon.hangup(full[: full.index("[[strategies]]")], refusals=3)

    reasons = [e["reason"] for e in daemon.events("reload.refused")]
    assert all("\n" not in r for r in reasons), reasons
    assert "invalid TOML" in reasons[0]
    for reason in reasons[1:]:
        assert reason.startswith("the new config has no [[strategies]]"), reason
        assert "2 running strategies kept" in reason
        assert "[scheduler].allow_no_strategies = true" in reason
    assert daemon.events("reload.applied") == []
    # Nothing changed: both strategies still tick.
    before = daemon.ticks()
    assert sorted(before) == ["a", "b"]
    daemon.wait(lambda: all(daemon.ticks().get(n, 0) > before[n] for n in ("a", "b")))

    # Said explicitly: a file without strategies is applied.
    daemon.config.write_text(daemon.head("allow_no_strategies = true\n"))
    assert daemon.process is not None
    daemon.process.send_signal(signal.SIGHUP)
    daemon.wait(lambda: len(daemon.events("reload.applied")) == 1)
    [applied] = daemon.events("reload.applied")
    assert applied["summary"] == (
        "removed a, b; 0 unchanged; applied [scheduler].allow_no_strategies"
    )
    daemon.wait(lambda: daemon.ticks() == {})
    assert len(daemon.events("reload.refused")) == 3
    daemon.process.send_signal(signal.SIGTERM)
    assert daemon.process.wait(timeout=30) == 0, daemon.errors()


# --- secrets written in the config file -------------------------------------------------

SECRET = "s3cr3t-value-7f1e9a"
SECRETS = [  # (section, key, line in the file, environment variable, file setting)
    ("api", "api_key", f'api_key = "{SECRET}"', "BOT_API__API_KEY", "api_key_file"),
    (
        "wallet",
        "private_key",
        f'private_key = "ed25519-priv-0x{"5e" * 32}"',
        "BOT_WALLET__PRIVATE_KEY",
        "key_file",
    ),
    (
        "alerts",
        "webhook_url",
        f'webhook_url = "https://hooks.example/{SECRET}"',
        "BOT_ALERTS__WEBHOOK_URL",
        "webhook_url_file",
    ),
    (
        "alerts",
        "telegram_bot_token",
        f'telegram_bot_token = "123:{SECRET}"\ntelegram_chat_id = "42"',
        "BOT_ALERTS__TELEGRAM_BOT_TOKEN",
        "telegram_bot_token_file",
    ),
    ("console", "token", f'token = "{SECRET}"', "BOT_CONSOLE__TOKEN", "token_file"),
]


@pytest.mark.parametrize(("section", "key", "line", "env", "file_key"), SECRETS, ids=lambda v: v)
def test_a_secret_in_the_file_is_refused_and_named_but_the_environment_works(
    tmp_path: Path, section: str, key: str, line: str, env: str, file_key: str
) -> None:
    config = tmp_path / "bot.toml"
    config.write_text(f"[{section}]\n{line}\n")
    result = run_bot("config", "check", str(config), timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [
        f"bot: error: {config}: [{section}].{key}: secrets may not be written in the config "
        f"file; use {env} or [{section}].{file_key}"
    ]
    assert SECRET not in result.stdout + result.stderr and "5e5e" not in result.stderr

    # The same secret from the environment: accepted (the chat id stays in the file).
    value = line.split('"')[1]
    rest = "".join(f"{extra}\n" for extra in line.splitlines()[1:])
    config.write_text(f"[{section}]\n{rest}")
    result = run_bot("config", "check", str(config), env={env: value}, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"config OK: {config}")
    assert SECRET not in result.stdout + result.stderr


def test_a_secret_from_its_file_and_paper_keys_in_the_file_are_accepted(tmp_path: Path) -> None:
    key_file = tmp_path / "api-key"
    key_file.write_text(SECRET + "\n")
    key_file.chmod(0o600)
    config = tmp_path / "bot.toml"
    config.write_text(f'[api]\napi_key_file = "{key_file}"\n[paper]\napi_keys = ["paper-k"]\n')
    result = run_bot("config", "check", str(config), timeout=60)
    assert result.returncode == 0, result.stderr
    # The example itself (paper keys in the file, secrets only in comments) passes too.
    result = run_bot("config", "check", str(ROOT / "config.example.toml"), timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("config OK:")


def test_every_secret_setting_is_refused_in_the_file() -> None:
    """A new `SecretStr` setting must be added to `SECRET_FILE_KEYS` (and so refused)."""
    from pydantic import BaseModel, SecretStr

    from bot.config import SECRET_FILE_KEYS, Settings

    found = set()
    for section, field in Settings.model_fields.items():
        model = field.annotation
        if isinstance(model, type) and issubclass(model, BaseModel):
            for key, inner in model.model_fields.items():
                if SecretStr in getattr(inner.annotation, "__args__", (inner.annotation,)):
                    found.add((section, key))
    assert found == set(SECRET_FILE_KEYS)
    assert {(s, k) for s, k, *_ in SECRETS} == found
    for (section, _key), file_key in SECRET_FILE_KEYS.items():
        section_model = Settings.model_fields[section].annotation
        assert isinstance(section_model, type) and issubclass(section_model, BaseModel)
        assert file_key in section_model.model_fields
