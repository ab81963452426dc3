"""The whole bot over loopback, as real processes: `bot paper serve` and `bot run`.

A `Rig` owns one folder: the config (TOML, rewritten when the world's URL changes), the
wallet's key file, the journal, the paper world's snapshot and the processes' logs. It
starts the paper world (`bot paper serve --port 0`, on an accelerated clock, or stepped
to freeze it for the final audit) and the daemon (`bot run`, through
harness/bot_child.py, which adds stamps on stderr and changes nothing else), and
runs CLI verbs (`bot reconcile`).

The daemon trades on the wall clock (a served world is reached over HTTP, and the bot's
runtime then uses `RealClock`), while the world runs `speed` times faster: the
strategies' schedules are a few real seconds, and every simulated duration the bot hands
the world (transaction expiry, the deposit grace) is scaled so it lasts a few real
seconds too.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

import httpx

from bot.chain import new_key_file
from bot.config import PaperSettings
from bot.journal import Journal
from bot.money import to_base_units
from bot.paper.world import PaperWorld, build_world
from harness.audit import Audit, audit
from harness.bot_child import STAMP

ROOT = Path(__file__).resolve().parents[1]
PAPER_KEY = "whole-bot-paper-key"
HEADERS = {"x-api-key": PAPER_KEY}

STRATEGIES = """
[[strategies]]
name = "dca"
plugin = "recurring_dca"
schedule = {{ interval_seconds = {tick} }}
[strategies.params]
from_token = "USDC"
to_token = "APT"
amount_per_order = "5"
orders = 2
interval = "1 minute"
slippage = "1"

[[strategies]]
name = "ladder"
plugin = "limit_ladder"
schedule = {{ interval_seconds = {tick} }}
[strategies.params]
sell_token = "USDC"
buy_token = "APT"
rungs = 3
spacing_percent = "0.5"
amount_per_rung = "10"
redrift_percent = "{redrift}"
expiry = "1 hour"

[[strategies]]
name = "dips"
plugin = "dip_buyer"
schedule = {{ interval_seconds = {tick} }}
[strategies.params]
sell_token = "USDC"
buy_token = "APT"
amount = "5"
drop_percent = "0.1"
use_change_24h = false
ma_ticks = 3
cooldown = "1 minute"
slippage = "1"

[[strategies]]
name = "profit"
plugin = "take_profit"
schedule = {{ interval_seconds = {tick} }}
[strategies.params]
token = "APT"
quote_token = "USDC"
entry_from = ["dca", "ladder"]
reprice_band_percent = "0.1"
targets = [
  {{ percent_above = "0.3", fraction = "0.02" }},
  {{ percent_above = "0.6", fraction = "0.02" }},
]
expiry = "1 hour"

[[strategies]]
name = "mix"
plugin = "rebalancer"
schedule = {{ interval_seconds = {tick} }}
[strategies.params]
weights = {{ APT = "0.5", USDC = "0.5" }}
band_percent = "1"
quote_token = "USDC"
min_trade = "5"
cooldown = "1 minute"
slippage = "1"
"""
"""All five built-in strategies, tuned to act every few real seconds."""


def strategies_toml(*, tick_seconds: int, redrift_percent: str = "0.3") -> str:
    """The five built-ins, each ticking every `tick_seconds` real seconds."""
    return STRATEGIES.format(tick=tick_seconds, redrift=redrift_percent)


@dataclass(frozen=True)
class RigOptions:
    """What a rig's world and daemon look like."""

    speed: float = 120.0
    """Simulated seconds per real second in the world."""
    seed: int = 42
    order_style: str = "onchain"
    tick_seconds: int = 2
    tracker_seconds: int = 1
    expiry_real_seconds: float = 8.0
    """Transactions expire this many real seconds after signing (scaled by `speed`)."""
    commit_delay_real_seconds: float = 0.0
    read_timeout_seconds: float = 5.0
    provider_faults: Mapping[str, str] = field(default_factory=dict)
    """`[paper.faults]` keys → TOML values (e.g. `{"server_error": '"0.05"'}`)."""
    node_faults: Mapping[str, str] = field(default_factory=dict)
    """`[paper.node]` keys → TOML values."""
    funding: Mapping[str, str] = field(default_factory=lambda: {"USDC": "200000", "APT": "20000"})
    redrift_percent: str = "0.3"
    journal_url: str | None = None
    """The journal's URL (e.g. a PostgreSQL database); None: `bot.db` in the folder."""


class Rig:
    """One folder holding a whole bot: config, key, journal, snapshot and logs."""

    def __init__(self, folder: Path, options: RigOptions) -> None:
        self.folder = folder
        self.options = options
        self.config = folder / "bot.toml"
        self.key_file = folder / "wallet.key"
        self.journal_path = folder / "bot.db"
        self.journal_url = options.journal_url or f"sqlite:///{self.journal_path}"
        self.snapshot = folder / "world.snapshot"
        self.logs = folder / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.wallet = str(new_key_file(self.key_file))
        self.start = datetime.now(UTC).replace(microsecond=0)
        self.url: str | None = None
        self.world: subprocess.Popen[str] | None = None
        self._bots: list[BotRun] = []
        self._runs = 0
        self.write_config()

    # --- config -------------------------------------------------------------------------

    def write_config(self, url: str | None = None, *, faults: bool = True) -> None:
        """(Re)write the TOML: the world's URL once known; faults on or off."""
        o = self.options
        provider = o.provider_faults if faults else {}
        node = o.node_faults if faults else {}
        expiry = max(60, round(o.expiry_real_seconds * o.speed))
        funding = ", ".join(
            f'{{ wallet = "{self.wallet}", token = "{token}", amount = "{amount}" }}'
            for token, amount in o.funding.items()
        )
        lines = [
            f'[journal]\nurl = "{self.journal_url}"',
            f'[wallet]\nkey_file = "{self.key_file}"',
            f'[daemon]\nlock_dir = "{self.folder / "locks"}"',
            '[log]\nformat = "json"\nlevel = "info"',
            f"[api]\nread_timeout_seconds = {o.read_timeout_seconds}\nmax_attempts = 4\n"
            "backoff_base_seconds = 0.1\nbackoff_cap_seconds = 2.0",
            f"[chain]\nexpiration_seconds = {expiry}\npoll_interval_seconds = 0.1\n"
            "first_poll_delay_seconds = 0.05\nwait_timeout_seconds = 30.0",
            f"[scheduler]\ntracker_interval_seconds = {o.tracker_seconds}\n"
            "commands_interval_seconds = 2\nstrategy_timeout_seconds = 30\n"
            "misfire_grace_seconds = 5",
            "[paper]\n"
            + (f'url = "{url}"\n' if url else "")
            + f'clock = "accelerated"\nspeed = {o.speed}\nseed = {o.seed}\n'
            f'start = "{self.start.isoformat().replace("+00:00", "Z")}"\n'
            f'order_style = "{o.order_style}"\napi_keys = ["{PAPER_KEY}"]\n'
            "rate_limit_per_second = 1000.0\nrate_limit_burst = 1000\n"
            f"pending_grace_seconds = {expiry * 2}\n"
            f'snapshot_file = "{self.snapshot}"\nfunding = [{funding}]',
            "[paper.faults]\n"
            + f"seed = {o.seed}\n"
            + "".join(f"{k} = {v}\n" for k, v in provider.items()),
            "[paper.node]\n"
            + f"seed = {o.seed + 1}\n"
            + f"commit_delay_seconds = {o.commit_delay_real_seconds * o.speed}\n"
            + "".join(f"{k} = {v}\n" for k, v in node.items()),
        ]
        text = (
            "\n\n".join(lines)
            + "\n"
            + strategies_toml(tick_seconds=o.tick_seconds, redrift_percent=o.redrift_percent)
        )
        self.config.write_text(text)

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a child: no inherited `BOT_…`, plus `extra`."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
        env.update(extra)
        return env

    # --- the paper world ---------------------------------------------------------------

    def start_world(
        self, *, clock: str | None = None, faults: bool = True, timeout: float = 30.0
    ) -> str:
        """Serve the world (restored from the snapshot when there is one); returns its URL."""
        self.write_config(self.url, faults=faults)
        command = [sys.executable, "-m", "bot", "-c", str(self.config), "paper", "serve"]
        command += ["--port", "0"] + (["--clock", clock] if clock else [])
        err = (self.logs / "world.err").open("a")
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
            command, stdout=subprocess.PIPE, stderr=err, text=True, cwd=ROOT, env=self.env()
        )
        err.close()
        assert process.stdout is not None
        found: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_read_url, args=(process.stdout, found), daemon=True).start()
        deadline = time.monotonic() + timeout
        url = None
        while url is None and process.poll() is None and time.monotonic() < deadline:
            try:
                url = found.get(timeout=0.2)
            except queue.Empty:
                continue
        if url is None:
            process.kill()
            raise RuntimeError(f"bot paper serve did not start (see {self.logs / 'world.err'})")
        self.world, self.url = process, url
        self.write_config(url, faults=faults)
        return url

    def stop_world(self) -> None:
        """Stop the world with SIGTERM (it writes its snapshot)."""
        if self.world is None:
            return
        _terminate(self.world, 30)
        self.world = None

    def load_world(self) -> PaperWorld:
        """The world as its snapshot left it, in this process (on a stepped clock)."""
        settings = PaperSettings(
            clock="stepped", seed=self.options.seed, snapshot_file=self.snapshot
        )
        return build_world(settings)

    # --- over HTTP ----------------------------------------------------------------------

    def http(self) -> httpx.Client:
        """A client for the served world."""
        assert self.url is not None
        return httpx.Client(base_url=self.url, headers=HEADERS, timeout=10)

    # --- the daemon and the CLI ----------------------------------------------------------

    def start_bot(self, *, failpoint: str | None = None) -> BotRun:
        """Start `bot run` (through the stamping wrapper)."""
        extra = {"BOT_FAILPOINT": failpoint} if failpoint else {}
        self._runs += 1
        self._bots = [b for b in self._bots if b.alive()]
        run = BotRun.start(
            [sys.executable, "-m", "harness.bot_child", "-c", str(self.config), "run"],
            env=self.env(**extra),
            log=self.logs / f"bot-{self._runs:04d}",
        )
        self._bots.append(run)
        return run

    def cli(self, *args: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
        """Run one `bot` verb with this config."""
        return subprocess.run(  # noqa: S603 - our own interpreter and arguments
            [sys.executable, "-m", "bot", "-c", str(self.config), *args],
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def close(self) -> None:
        """Kill any daemon still running, stop the world."""
        for bot in self._bots:
            bot.kill()
        self._bots = []
        self.stop_world()


@dataclass
class Settled:
    """The end of a run: what could not settle, the final reconcile, the audit."""

    stuck_tx: int
    reconcile_exit: int
    reconcile_output: str
    audit: Audit


def settle_and_audit(rig: Rig, *, tx_timeout: float = 60.0) -> Settled:
    """Settle a stopped daemon's world, reconcile, and audit the journal against it.

    Waits until no transaction can still land, freezes the world (restarted on a stepped
    clock, faults off), runs `bot reconcile --grace-minutes 0` (settles what nothing
    matched, one tracker poll), then audits the journal against the world.
    """
    stuck = wait_for_transactions(rig, tx_timeout)
    rig.stop_world()
    rig.start_world(clock="stepped", faults=False)
    done = rig.cli("reconcile", "--grace-minutes", "0")
    rig.stop_world()
    output = (done.stdout + done.stderr)[-2000:]
    return Settled(stuck, done.returncode, output, audit_rig(rig))


def audit_rig(rig: Rig) -> Audit:
    """Audit the rig's journal against its world's snapshot."""
    world = rig.load_world()
    funding: dict[str, int] = {}
    for symbol, amount in rig.options.funding.items():
        token = world.market.tokens.find(symbol)
        funding[token.address] = to_base_units(Decimal(amount), token.decimals)
    journal = Journal.open(rig.journal_url, readonly=True)
    try:
        return audit(journal, world, rig.wallet, funding)
    finally:
        journal.close()


def wait_for_transactions(rig: Rig, timeout: float) -> int:
    """Wait until every journaled transaction has committed or can no longer land.

    Returns how many are still pending at the world after `timeout` seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        journal = Journal.open(rig.journal_url, readonly=True)
        try:
            rows = [t for t in journal.transactions() if t.state not in ("committed", "failed")]
        finally:
            journal.close()
        pending = 0
        with rig.http() as http:
            ledger_s = int(http.get("/v1").json()["ledger_timestamp"]) // 1_000_000
            for row in rows:
                answer = http.get(f"/v1/transactions/by_hash/{row.hash}")
                expiry = int(json.loads(row.payload_summary)["expiration_timestamp_secs"])
                landing = answer.status_code == 200 and answer.json()["type"] != "user_transaction"
                pending += landing or (answer.status_code == 404 and ledger_s < expiry)
        if pending == 0 or time.monotonic() > deadline:
            return pending
        time.sleep(0.5)


@dataclass
class BotRun:
    """One `bot run` process: stamps from stderr on a queue, logs in files, RSS on demand."""

    process: subprocess.Popen[str]
    stamps: queue.Queue[tuple[float, str, str]]
    log: Path
    stats: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def start(cls, command: list[str], *, env: dict[str, str], log: Path) -> BotRun:
        """Spawn the process; a thread copies its stderr to `log.err` and picks the stamps."""
        out = log.with_suffix(".out").open("w")
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
            command, stdout=out, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env
        )
        out.close()
        run = cls(process, queue.Queue(), log)
        assert process.stderr is not None
        threading.Thread(target=run._drain, args=(process.stderr,), daemon=True).start()
        return run

    def _drain(self, stream: IO[str]) -> None:
        with self.log.with_suffix(".err").open("w") as copy:
            for line in iter(stream.readline, ""):
                copy.write(line)
                if line.startswith(STAMP + " "):
                    _, kind, detail = [*line.rstrip("\n").split(" ", 2), "", ""][:3]
                    if kind == "stats":
                        self.stats = json.loads(detail)
                    self.stamps.put((time.monotonic(), kind, detail))

    @property
    def pid(self) -> int:
        """The process id."""
        return self.process.pid

    def alive(self) -> bool:
        """True while the process runs."""
        return self.process.poll() is None

    def wait_stamp(self, kinds: set[str], timeout: float) -> tuple[float, str, str] | None:
        """The next stamp of one of `kinds` within `timeout` seconds (None: none, or exited)."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                stamp = self.stamps.get(timeout=min(left, 0.2))
            except queue.Empty:
                if not self.alive():
                    return None
                continue
            if stamp[1] in kinds:
                return stamp
        return None

    def kill(self) -> int:
        """SIGKILL (if still running); returns the exit code."""
        if self.alive():
            self.process.send_signal(signal.SIGKILL)
        return self.process.wait()

    def terminate(self, timeout: float = 60.0) -> int:
        """SIGTERM and wait (SIGKILL after `timeout`); returns the exit code."""
        return _terminate(self.process, timeout)

    def stderr_tail(self, lines: int = 30) -> str:
        """The last lines the process wrote on stderr."""
        path = self.log.with_suffix(".err")
        return "\n".join(path.read_text().splitlines()[-lines:]) if path.exists() else ""


def rss_kb(pid: int, field_name: str = "VmRSS") -> int | None:
    """`VmRSS` (or another `field_name`, e.g. `VmHWM`) of a process, in kB, from /proc.

    None once the process is gone.
    """
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _read_url(stream: IO[str], found: queue.Queue[str]) -> None:
    for line in iter(stream.readline, ""):
        if line.startswith("paper world on "):
            found.put(line.split()[-1])


def _terminate(process: subprocess.Popen[str], timeout: float) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
    return process.wait()
