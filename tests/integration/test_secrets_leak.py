"""Secrets: a whole session of the bot with known key material, then every byte searched.

The session, all real subprocesses against a `bot paper serve` world on loopback:
* `bot run` (JSON logs, debug level) for a few seconds: a DCA strategy whose on-chain deposit
  the key signs, a swap strategy whose payload the signer refuses (the world pays swaps to
  someone else: `test_pay_to`), the order tracker, heartbeats and the status file, alerts
  to a webhook and a Telegram API that are unreachable (their URL and token are secrets);
* the CLI verbs: config show/check, keys address, prices, quote, orders, status, doctor,
  journal export, reconcile;
* a failing signer: the refused swap above, and `bot once` with the node unreachable
  (an exception trace);
* a crash: `bot once` SIGKILLed at `before_submit` (signed, hash journaled, bytes not sent),
  then `bot reconcile`;
* an error quoting credentials: a strategy plugin whose exception message contains the API
  key and the AIP-80 key (as a careless library's might).

Then every byte of every process's stdout and stderr, and of every file the bot wrote
(journal database with its -wal/-shm, status file, lock files, exports), is searched for the
private key (hex with/without 0x, upper case, AIP-80, base64 of the 32 bytes and of nacl's
64-byte form, the raw bytes), the API key, the webhook URL's token and the bot token.
Zero hits, and the session really used them (a signed transaction, accepted API calls) —
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from nacl.signing import SigningKey

from tests.support.loopback import closed_port
from tests.support.paper_server import paper_serve

SEED = hashlib.sha256(b"secrets-leak: never print me").digest()
API_KEY = "pk-7Q2x9VtR4mZ8sLw3-leaktest"
WEBHOOK_TOKEN = "hooktok-V7c2N9q4R1x8-leaktest"
BOT_TOKEN = "123456789:AAH-telegramTok3n-leaktest"
THIEF = "0x" + "7e" * 32
RUN_SECONDS = 6


def needles() -> dict[str, bytes]:
    """Every form of every secret, as bytes (hex forms are searched case-insensitively)."""
    nacl_secret = bytes(SigningKey(SEED)._signing_key)  # seed ‖ public key, 64 bytes
    forms = {
        "key hex": SEED.hex(),
        "key AIP-80": "ed25519-priv-0x" + SEED.hex(),
        "key base64": base64.b64encode(SEED).decode(),
        "key base64url": base64.urlsafe_b64encode(SEED).decode().rstrip("="),
        "key base64 unpadded": base64.b64encode(SEED).decode().rstrip("="),
        "nacl secret hex": nacl_secret.hex(),
        "nacl secret base64": base64.b64encode(nacl_secret).decode(),
        "API key": API_KEY,
        "webhook token": WEBHOOK_TOKEN,
        "bot token": BOT_TOKEN,
    }
    found = {name: text.encode() for name, text in forms.items()}
    found["key raw bytes"] = SEED
    return found


def hits(data: bytes) -> list[str]:
    """The names of the secret forms found in `data`."""
    lowered = data.lower()
    found = []
    for name, needle in needles().items():
        hexlike = "hex" in name or "AIP-80" in name
        if (needle.lower() in lowered) if hexlike else (needle in data):
            found.append(name)
    return found


@dataclass
class Session:
    """Everything the session printed (by step) and the folder it wrote into."""

    folder: Path
    secret_env: dict[str, str]
    outputs: dict[str, bytes] = field(default_factory=dict)
    codes: dict[str, int] = field(default_factory=dict)
    written_by_test: set[Path] = field(default_factory=set)

    def env(self, **extra: str) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
        return base | self.secret_env | extra

    def write(self, name: str, text: str, mode: int = 0o644) -> Path:
        """A file of the test's own (config, key, plugin): not searched."""
        path = self.folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(mode)
        self.written_by_test.add(path)
        return path

    def bot(self, name: str, config: Path, *args: str, **env: str) -> int:
        """Run `bot -c CONFIG ARGS…`, keep its output under `name`, return its exit code."""
        result = subprocess.run(
            [sys.executable, "-m", "bot", "-c", str(config), *args],
            capture_output=True,
            env=self.env(**env),
            cwd=self.folder,
            timeout=120,
            check=False,
        )
        self.outputs[f"{name} stdout"] = result.stdout
        self.outputs[f"{name} stderr"] = result.stderr
        self.codes[name] = result.returncode
        return result.returncode

    def run_daemon(self, config: Path) -> None:
        """`bot run` for RUN_SECONDS, then SIGTERM."""
        process = subprocess.Popen(
            [sys.executable, "-m", "bot", "-c", str(config), "--log-format", "json", "run"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env(),
            cwd=self.folder,
        )
        time.sleep(RUN_SECONDS)
        self.snapshot("bot.db", "while running")  # the -wal is gone after a clean exit
        process.send_signal(signal.SIGTERM)
        self.outputs["run stdout"], self.outputs["run stderr"] = process.communicate(timeout=60)
        self.codes["run"] = process.returncode

    def snapshot(self, database: str, label: str) -> None:
        """Copy a journal with its -wal/-shm as they are now (a checkpoint may delete them)."""
        target = self.folder / label
        target.mkdir(exist_ok=True)
        for path in self.folder.glob(f"{database}*"):
            shutil.copyfile(path, target / path.name)

    def files(self) -> Iterator[Path]:
        """Every file the bot wrote (not the config, key and plugin files the test wrote).

        Python's compiled copy of a plugin the test wrote (`__pycache__/leaky.*.pyc`, made
        wherever PYTHONDONTWRITEBYTECODE is unset) is the test's own input too.
        """
        plugins = {w.stem for w in self.written_by_test if w.suffix == ".py"}
        for path in sorted(self.folder.rglob("*")):
            compiled = path.parent.name == "__pycache__" and path.name.split(".")[0] in plugins
            if path.is_file() and path not in self.written_by_test and not compiled:
                yield path


PLUGINS = '''
"""Test plugin: a swap every minute (its payload is hostile in this world)."""

from decimal import Decimal
from typing import ClassVar

from bot.engine.strategy import Action, Context, Strategy, StrategyParams, Swap


class Nibble(Strategy):
    """Swap 1 USDC into APT every minute."""

    name: ClassVar[str] = "nibble"
    Params: ClassVar[type[StrategyParams]] = StrategyParams

    async def on_tick(self, ctx: Context) -> list[Action]:
        minute = ctx.now.strftime("%Y%m%dT%H%M")
        return [Swap(key=f"{self.instance}:{minute}", sell="USDC", buy="APT",
                     sell_amount=Decimal(1))]
'''
LEAKY = f'''
"""Test plugin: fails with an error quoting credentials (as a careless library might)."""

from typing import ClassVar

from bot.engine.strategy import Action, Context, Strategy, StrategyParams


class Leaky(Strategy):
    """Always fails."""

    name: ClassVar[str] = "leaky"
    Params: ClassVar[type[StrategyParams]] = StrategyParams

    async def on_tick(self, ctx: Context) -> list[Action]:
        raise RuntimeError({f"upstream refused {API_KEY} for ed25519-priv-0x{SEED.hex()}"!r})
'''
DAEMON_STRATEGIES = """
[[strategies]]
name = "leak-dca"
plugin = "recurring_dca"
schedule = { interval_seconds = 2 }
params = { from_token = "USDC", to_token = "APT", amount_per_order = "5", \
interval = "1 minute", orders = 3 }

[[strategies]]
name = "leak-swap"
plugin = "nibble"
schedule = { interval_seconds = 2 }
"""
CRASH_STRATEGY = """
[[strategies]]
name = "crash-dca"
plugin = "recurring_dca"
schedule = { interval_seconds = 60 }
params = { from_token = "USDC", to_token = "APT", amount_per_order = "5", \
interval = "1 hour", orders = 2 }
"""
LEAKY_STRATEGY = """
[[strategies]]
name = "leak-error"
plugin = "leaky"
schedule = { interval_seconds = 60 }
"""


def bot_config(s: Session, url: str, journal: str, port: int, strategies: str) -> str:
    """A paper-mode config against the served world; secrets come from the environment."""
    return f"""
mode = "paper"

[paper]
url = "{url}"
api_keys = ["{API_KEY}"]

[wallet]
key_file = "{s.folder / "wallet.key"}"

[journal]
url = "sqlite:///{s.folder / journal}"

[log]
format = "json"
level = "debug"

[scheduler]
tracker_interval_seconds = 1
commands_interval_seconds = 1
strategy_dirs = ["{s.folder / "plugins"}"]

[risk]
max_slippage_percent = "5"

[daemon]
heartbeat_seconds = 1
lock_dir = "{s.folder / "locks"}"

[alerts]
telegram_chat_id = "42"
telegram_api_url = "http://127.0.0.1:{port}"
max_attempts = 1
timeout_seconds = 0.5
{strategies}"""


def world_config(wallet: str) -> str:
    return f"""
[paper]
clock = "accelerated"
speed = 60.0
api_keys = ["{API_KEY}"]
rate_limit_per_second = 1000.0
rate_limit_burst = 1000
test_pay_to = "{THIEF}"
funding = [
  {{ wallet = "{wallet}", token = "USDC", amount = "5000" }},
  {{ wallet = "{wallet}", token = "APT", amount = "20" }},
]
"""


VERBS = {
    "config show": ["config", "show"],
    "config check": ["config", "check"],
    "keys address": ["keys", "address"],
    "prices": ["prices", "APT", "USDC"],
    "quote": ["quote", "APT", "USDC", "--sell", "1"],
    "orders": ["orders"],
    "orders --json": ["orders", "--json"],
    "status": ["status"],
    "status --json": ["status", "--json"],
    "doctor": ["doctor"],
    "journal export": ["journal", "export", "-f", "json", "-o", "export.json"],
    "reconcile": ["reconcile"],
}


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    from bot.chain.keys import account_address, load_private_key

    port = closed_port()  # the webhook and the Telegram API: nobody answers
    s = Session(
        tmp_path_factory.mktemp("leak"),
        {
            "BOT_API__API_KEY": API_KEY,
            "BOT_ALERTS__WEBHOOK_URL": f"http://127.0.0.1:{port}/hook/{WEBHOOK_TOKEN}",
            "BOT_ALERTS__TELEGRAM_BOT_TOKEN": BOT_TOKEN,
        },
    )
    key_file = s.write("wallet.key", f"ed25519-priv-0x{SEED.hex()}\n", 0o600)
    s.write("plugins/nibble.py", PLUGINS)
    s.write("plugins/leaky.py", LEAKY)
    wallet = str(account_address(load_private_key(key_file, None)))
    world = s.write("world.toml", world_config(wallet))
    with paper_serve(world) as (url, server):
        config = s.write("bot.toml", bot_config(s, url, "bot.db", port, DAEMON_STRATEGIES))
        crash = s.write("crash.toml", bot_config(s, url, "crash.db", port, CRASH_STRATEGY))
        leaky = s.write("leaky.toml", bot_config(s, url, "leaky.db", port, LEAKY_STRATEGY))
        down = s.write("down.toml", bot_config(s, f"http://127.0.0.1:{port}", "down.db", port, ""))
        s.run_daemon(config)
        for name, args in VERBS.items():
            s.bot(name, config, *args)
        s.bot("keys address --key-file", down, "keys", "address", "--key-file", str(key_file))
        s.bot("once, node down", down, "once")
        s.bot(QUOTED, leaky, "once")
        s.bot("once, killed before submit", crash, "once", BOT_FAILPOINT="before_submit")
        s.snapshot("crash.db", "after the crash")
        s.bot("reconcile after the crash", crash, "reconcile")
    assert server.stdout is not None and server.stderr is not None
    s.outputs["paper serve stdout"] = server.stdout.read().encode()
    s.outputs["paper serve stderr"] = server.stderr.read().encode()
    yield s


QUOTED = "once, an error quoting credentials"


def test_the_session_really_used_the_secrets(session: Session) -> None:
    run_out = session.outputs["run stdout"].decode()
    assert session.codes["run"] == 0, session.outputs["run stderr"][-2000:]
    # With JSON logs `bot run` says what it did in its JSON log only (stdout stays empty).
    assert run_out == ""
    run_err = session.outputs["run stderr"].decode().splitlines()
    records = [json.loads(line) for line in run_err if line.startswith("{")]
    actions = [r for r in records if r.get("event") == "action"]
    assert any(  # key + API key
        r["strategy"] == "leak-dca"
        and r["action"].startswith("create DCA")
        and r["state"] == "confirmed"
        for r in actions
    ), actions
    # The hostile swap met the signer.
    assert any("refused before signing" in (r.get("detail") or "") for r in actions), actions
    with sqlite3.connect(session.folder / "bot.db") as db:
        signed = db.execute("SELECT count(*) FROM transactions").fetchone()[0]
    assert signed >= 1
    assert session.codes["once, killed before submit"] == -signal.SIGKILL, (
        session.outputs["once, killed before submit stdout"][-1500:]
        + session.outputs["once, killed before submit stderr"][-1500:]
    )
    assert session.codes["once, node down"] != 0
    assert session.codes["keys address"] == 0 and session.codes["prices"] == 0


def test_no_secret_in_any_output(session: Session) -> None:
    leaks = {
        name: found
        for name, data in session.outputs.items()
        if (found := hits(data)) and name != f"{QUOTED} stdout"
    }
    assert leaks == {}


def test_an_error_quoting_credentials_is_masked_in_the_logs(session: Session) -> None:
    logs = session.outputs[f"{QUOTED} stderr"]
    assert b"strategy.failed" in logs and b"[REDACTED]" in logs
    assert hits(logs) == []


def test_an_error_quoting_credentials_is_masked_on_the_console(session: Session) -> None:
    out = session.outputs[f"{QUOTED} stdout"]
    assert b"leak-error: FAILED: RuntimeError" in out
    assert hits(out) == []


def test_no_secret_in_any_file_the_bot_wrote(session: Session) -> None:
    written = list(session.files())
    names = {p.name for p in written}
    assert {"bot.db", "crash.db", "crash.db-wal", "bot.db-wal", "export.json"} <= names, names
    leaks = {str(p): found for p in written if (found := hits(p.read_bytes()))}
    assert leaks == {}
