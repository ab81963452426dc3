"""Many wallets on one PostgreSQL journal: N daemons × M strategies on one paper world.

`run_many(options)` makes one folder per wallet (its own key, its own config naming the
same `[journal].url`, the first M of the five built-in strategies of harness/whole_bot.py,
with the same strategy names in every wallet on purpose: the journal is scoped per
wallet), serves one paper world on an accelerated clock that funds every wallet, and
starts one real `bot run` process per wallet. During the run `bot status --all --json`
must list every daemon; after it the daemons are stopped (SIGTERM), the world is settled
and frozen, each wallet runs `bot reconcile`, and the journal is checked:

* no lock errors in any daemon's log (`LOCK_ERRORS`: the advisory lock refused, SQLite's
  or PostgreSQL's lock and serialization failures, deadlocks);
* every wallet's rows are its own: `orders.wallet`, `intents.wallet`,
  `strategy_state.wallet`, `transactions.sender` name one of the run's wallets; an order's
  intent is of the order's wallet; every order the journal files under a wallet is one the
  world holds for that wallet;
* no duplicate intents: (wallet, strategy, idempotency key) unique;
* nothing lost: per wallet, the audit of harness/audit.py (every order the world has is in
  the journal with its status and fills, every intent settled with its one effect or none,
  every committed transaction journaled, the wallet's balances conserved).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

from sqlalchemy import create_engine, text

from bot.journal import Journal
from bot.money import to_base_units
from harness.audit import Audit, audit
from harness.whole_bot import BotRun, Rig, RigOptions, wait_for_transactions

__all__ = ["LOCK_ERRORS", "ManyOptions", "ManyReport", "RowFindings", "run_many", "wallet_rows"]

LOCK_ERRORS: Final = re.compile(
    r"another process trades|database is locked|deadlock detected|could not obtain lock"
    r"|LockNotAvailable|SerializationFailure|could not serialize|lock timeout|advisory lock",
    re.IGNORECASE,
)
"""What a lock problem looks like in a daemon's log (stderr and stdout)."""
_SPLIT: Final = "\n[[strategies]]\n"


@dataclass(frozen=True)
class ManyOptions:
    """One run: how many wallets and strategies, for how long, on which journal."""

    folder: Path
    journal_url: str
    wallets: int = 5
    strategies: int = 5
    sim_days: float = 10.0
    speed: float = 4320.0
    """Simulated seconds per real second (10 days in 200 s)."""
    seed: int = 11


@dataclass
class ManyReport:
    """What one run found."""

    wallets: list[str] = field(default_factory=list)
    real_seconds: float = 0.0
    exits: list[str] = field(default_factory=list)
    """Daemons that exited by themselves during the run (target: none)."""
    stop_exits: list[int] = field(default_factory=list)
    lock_errors: list[str] = field(default_factory=list)
    status_listed: int = 0
    status_fresh: int = 0
    """Listed daemons running and beating (not stale)."""
    status_ok: int = 0
    """Listed daemons ok: fresh and healthy by their own verdict."""
    status_problems: list[str] = field(default_factory=list)
    """The `health` of listed daemons that are not ok."""
    status_exit: int | None = None
    reconcile_exits: list[int] = field(default_factory=list)
    stuck_tx: int = 0
    foreign_rows: list[str] = field(default_factory=list)
    """Rows of a wallet not in the run, or filed under the wrong wallet."""
    duplicate_intents: int = 0
    rows: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per table, rows per wallet."""
    audits: dict[str, Audit] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Every check passed."""
        return (
            not self.exits
            and all(code == 0 for code in self.stop_exits)
            and not self.lock_errors
            and self.status_listed == self.status_fresh == len(self.wallets)
            and all(code == 0 for code in self.reconcile_exits)
            and self.stuck_tx == 0
            and not self.foreign_rows
            and self.duplicate_intents == 0
            and all(a.clean for a in self.audits.values())
            and all(sum(a.intents.values()) > 0 for a in self.audits.values())
        )

    def summary(self) -> str:
        """The one summary line."""
        audits = self.audits.values()
        intents = sum(sum(a.intents.values()) for a in audits)
        per_wallet = "/".join(str(sum(a.intents.values())) for a in audits)
        return (
            f"many_wallets: daemons={len(self.wallets)} real_s={self.real_seconds:.0f} "
            f"intents={intents} ({per_wallet}) orders={sum(a.world_orders for a in audits)} "
            f"committed_tx={sum(a.committed_tx for a in audits)} "
            f"lock_errors={len(self.lock_errors)} foreign_rows={len(self.foreign_rows)} "
            f"duplicate_intents={self.duplicate_intents} "
            f"lost={sum(a.missing + a.lost_fills + a.lost_transitions for a in audits)} "
            f"unsettled={sum(a.unsettled for a in audits)} "
            f"duplicates={sum(a.duplicates + a.double_tx for a in audits)} "
            f"status_all={self.status_listed}/{len(self.wallets)} listed, "
            f"{self.status_fresh} running, {self.status_ok} healthy "
            f"exits={len(self.exits)} ok={'yes' if self.ok else 'no'}"
        )


class WalletRig(Rig):
    """One wallet's folder: its key and config, the shared journal and paper world."""

    def __init__(self, folder: Path, options: RigOptions, journal_url: str, strategies: int):
        self.strategies = strategies
        self.funded: list[str] = []
        """Wallets the world funds when served from this rig (empty: its own)."""
        super().__init__(folder, options)
        self.journal_url = journal_url
        self.write_config(self.url)

    def write_config(self, url: str | None = None, *, faults: bool = True) -> None:
        """The rig's config with the first `strategies` built-ins and every funded wallet."""
        super().write_config(url, faults=faults)
        head, _, rest = self.config.read_text().partition(_SPLIT)
        blocks = rest.split(_SPLIT)[: self.strategies]
        body = head + "".join(_SPLIT + block for block in blocks)
        if self.funded:
            entries = ", ".join(
                f'{{ wallet = "{wallet}", token = "{token}", amount = "{amount}" }}'
                for wallet in self.funded
                for token, amount in self.options.funding.items()
            )
            body = re.sub(r"(?m)^funding = \[.*\]$", lambda _: f"funding = [{entries}]", body)
        self.config.write_text(body if body.endswith("\n") else body + "\n")


def run_many(options: ManyOptions) -> ManyReport:
    """Run the wallets' daemons for `sim_days` simulated days, settle, check (see above)."""
    rig_options = RigOptions(speed=options.speed, seed=options.seed, expiry_real_seconds=4.0)
    rigs = [
        WalletRig(_folder(options.folder, n), rig_options, options.journal_url, options.strategies)
        for n in range(options.wallets)
    ]
    host = rigs[0]
    host.funded = [rig.wallet for rig in rigs]
    report = ManyReport(wallets=[rig.wallet for rig in rigs])
    bots: list[BotRun] = []
    try:
        _serve(rigs)
        began = time.monotonic()
        bots = [rig.start_bot() for rig in rigs]
        duration = options.sim_days * 86_400 / options.speed
        asked = False
        while (now := time.monotonic()) < began + duration:
            if not asked and now >= began + duration * 0.6:
                asked = True
                _status_all(host, report)
            for rig, bot in zip(rigs, bots, strict=True):
                if not bot.alive():
                    report.exits.append(f"{rig.wallet}: exit {bot.process.returncode}")
                    bots[bots.index(bot)] = rig.start_bot()
            time.sleep(0.2)
        report.real_seconds = time.monotonic() - began
        report.stop_exits = [bot.terminate() for bot in bots]
        report.lock_errors = _lock_errors(rigs)
        report.stuck_tx = wait_for_transactions(host, 60.0)
        host.stop_world()
        _serve(rigs, clock="stepped")
        for rig in rigs:
            done = rig.cli("reconcile", "--grace-minutes", "0")
            report.reconcile_exits.append(done.returncode)
        host.stop_world()
        _check_rows(options.journal_url, rigs, report)
    finally:
        for bot in bots:
            bot.kill()
        for rig in rigs:
            rig.close()
    return report


def _folder(root: Path, n: int) -> Path:
    folder = root / f"wallet-{n + 1}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _serve(rigs: list[WalletRig], clock: str | None = None) -> None:
    """Serve the world from the first rig; point every rig's config at it."""
    faults = clock is None
    url = rigs[0].start_world(clock=clock, faults=faults)
    for rig in rigs[1:]:
        rig.url = url
        rig.write_config(url, faults=faults)


def _status_all(host: WalletRig, report: ManyReport) -> None:
    done = host.cli("status", "--all", "--json", timeout=60)
    report.status_exit = done.returncode
    try:
        answer: Any = json.loads(done.stdout)
    except ValueError:
        report.exits.append(f"bot status --all --json: {(done.stdout + done.stderr)[-300:]}")
        return
    daemons = answer.get("daemons", answer) if isinstance(answer, dict) else answer
    listed = [d for d in daemons if isinstance(d, dict) and d.get("wallet") in report.wallets]
    report.status_listed = len(listed)
    report.status_fresh = sum(1 for d in listed if d.get("state") == "running" and not d["stale"])
    report.status_ok = sum(1 for d in listed if d.get("ok") is True)
    report.status_problems = [f"{d['wallet']}: {d.get('health')}" for d in listed if not d["ok"]]


def _lock_errors(rigs: list[WalletRig]) -> list[str]:
    found: list[str] = []
    for rig in rigs:
        for path in sorted(rig.logs.glob("bot-*.*")):
            for line in path.read_text(errors="replace").splitlines():
                if LOCK_ERRORS.search(line):
                    found.append(f"{path.parent.parent.name}/{path.name}: {line[:200]}")
    return found


@dataclass
class RowFindings:
    """The cross-wallet checks of a whole database (see `wallet_rows`)."""

    rows: dict[str, dict[str, int]]
    """Per table, rows per wallet."""
    foreign: list[str]
    """Rows of a wallet not among the expected ones, or linked across wallets."""
    duplicate_intents: int
    """(wallet, strategy, idempotency key) groups holding more than one intent."""
    filed: list[tuple[str, str, str]]
    """Every order as (kind, order id, wallet)."""


def wallet_rows(url: str, wallets: set[str]) -> RowFindings:
    """Per-wallet row counts and every row not of `wallets` or linked across wallets (SQL)."""
    rows: dict[str, dict[str, int]] = {}
    foreign: list[str] = []
    engine = create_engine(url)
    try:
        with engine.connect() as db:
            for table, column in (
                ("orders", "wallet"),
                ("intents", "wallet"),
                ("strategy_state", "wallet"),
                ("transactions", "sender"),
                ("daemons", "wallet"),
            ):
                query = f"SELECT {column}, count(*) FROM {table} GROUP BY {column}"  # noqa: S608 - our names
                counts = {str(w): int(n) for w, n in db.execute(text(query))}
                rows[table] = counts
                foreign += [
                    f"{table}: {n} rows of {w}" for w, n in counts.items() if w not in wallets
                ]
            crossed = db.execute(
                text(
                    "SELECT o.order_id, o.wallet, i.wallet FROM orders o "
                    "JOIN intents i ON i.id = o.intent_id WHERE i.wallet <> o.wallet"
                )
            ).all()
            foreign += [f"order {o} of {w} linked to an intent of {iw}" for o, w, iw in crossed]
            duplicates = int(
                db.execute(
                    text(
                        "SELECT count(*) FROM (SELECT 1 FROM intents "
                        "GROUP BY wallet, strategy, idempotency_key HAVING count(*) > 1) d"
                    )
                ).scalar_one()
            )
            filed = [
                (str(k), str(o), str(w))
                for k, o, w in db.execute(text("SELECT kind, order_id, wallet FROM orders"))
            ]
    finally:
        engine.dispose()
    return RowFindings(rows, foreign, duplicates, filed)


def _check_rows(url: str, rigs: list[WalletRig], report: ManyReport) -> None:
    """Cross-wallet checks in SQL over the whole database, then each wallet's audit."""
    wallets = set(report.wallets)
    world = rigs[0].load_world()
    found = wallet_rows(url, wallets)
    report.rows, report.duplicate_intents = found.rows, found.duplicate_intents
    report.foreign_rows += found.foreign
    held = {
        (kind, order.order_id, wallet)
        for wallet in wallets
        for kind, orders in (
            ("dca", world.market.dca.orders_of(wallet)),
            ("limit", world.market.limit.orders_of(wallet)),
        )
        for order in orders
    }
    report.foreign_rows += [
        f"{kind} order {order_id} filed under {wallet}, not the world's order of that wallet"
        for kind, order_id, wallet in found.filed
        if (kind, order_id, wallet) not in held
    ]
    for rig in rigs:
        funding = {
            world.market.tokens.find(symbol).address: to_base_units(
                Decimal(amount), world.market.tokens.find(symbol).decimals
            )
            for symbol, amount in rig.options.funding.items()
        }
        journal = Journal.open(url, readonly=True, wallet=rig.wallet)
        try:
            report.audits[rig.wallet] = audit(journal, world, rig.wallet, funding)
        finally:
            journal.close()
