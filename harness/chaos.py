"""Chaos: SIGKILL the daemon at random and chosen moments, restart it, audit the result.

`run_chaos(options)` serves one paper world (accelerated clock, on-chain order style:
every order is funded by a deposit transaction the bot signs; commits are delayed so a
transaction spends a while between submit and commit) and runs `bot run` with all five
built-in strategies against it, killing it `kills` times. Each run draws its kill from a
seeded generator (`--seed` reproduces the schedule; the processes' own timing still
varies a little from run to run):

* `random`: after a random delay (start-up and reconciliation included);
* `mid_request`: a random moment (within the world's added latency) after the daemon hands
  a createOrder/cancelOrder to its client;
* `mid_tx`: a random moment (within the commit delay) after signed bytes go to the node;
* `failpoint:<name>`: the daemon kills itself at a named failpoint (bot/engine/failpoints.py):
  after the intent is journaled, with the request in flight, after the answer but before
  it is recorded, or between signing and submitting.

A trigger that does not come within `max_wait` seconds falls back to a plain kill. Then
one clean run (reconciliation at start, ticks, tracker polls, SIGTERM), a wait until no
signed transaction can still land, the world frozen (restarted on a stepped clock from
its snapshot), `bot reconcile --grace-minutes 0` and the audit (harness/audit.py).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from harness.audit import Audit
from harness.whole_bot import BotRun, Rig, RigOptions, settle_and_audit

__all__ = ["ChaosOptions", "ChaosReport", "finish", "run_chaos"]

FAILPOINTS: Final = ("after_intent", "after_send", "after_response", "before_submit")
MODES: Final = (
    ("random", 4),
    ("mid_request", 2),
    ("mid_tx", 2),
    *((f"failpoint:{name}", 1) for name in FAILPOINTS),
)
LATENCY_MS: Final = 40
SIGKILL_CODE: Final = -9


@dataclass(frozen=True)
class ChaosOptions:
    """One chaos run."""

    kills: int
    seed: int
    folder: Path
    speed: float = 120.0
    commit_delay: float = 0.4
    """Real seconds a transaction waits between submit and commit (the mid_tx window)."""
    max_wait: float = 10.0
    """Longest wait for a kill's trigger before killing anyway (seconds)."""
    random_delay: tuple[float, float] = (0.3, 5.0)
    settle_seconds: float = 6.0
    """How long the final clean run trades before SIGTERM."""
    read_faults: float = 0.0
    """Rate of node read faults: `by_hash` 404s for held transactions, stale account reads."""
    order_style: str = "onchain"
    """The world's order style: "onchain" (deposits signed by the bot) or "escrow"."""
    journal_url: str | None = None
    """The journal (a PostgreSQL URL); None: a SQLite file in `folder`."""


@dataclass
class ChaosReport:
    """What a chaos run did and what the audit found."""

    kills: int = 0
    modes: Counter[str] = field(default_factory=Counter)
    fallbacks: int = 0
    """Kills whose trigger never came (a plain kill instead)."""
    exits: list[str] = field(default_factory=list)
    """The daemon ending by itself (not killed): each is a finding."""
    final_exit: int | None = None
    reconcile_exit: int | None = None
    stuck_tx: int = 0
    audit: Audit = field(default_factory=Audit)
    wall_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Every target met."""
        return (
            self.audit.clean
            and not self.exits
            and self.final_exit == 0
            and self.reconcile_exit == 0
            and self.stuck_tx == 0
        )

    def summary(self) -> str:
        """The one summary line (figures first, the issue's names)."""
        a = self.audit
        return (
            f"kills={self.kills} duplicates={a.duplicates} missing={a.missing} "
            f"double_tx={a.double_tx} lost_transitions={a.lost_transitions} "
            f"conserved={'yes' if a.conserved else 'no'} orphans={a.orphans} "
            f"mislinked={a.mislinked} wrong_effects={a.wrong_effects} unsettled={a.unsettled} "
            f"unrecorded_tx={a.unrecorded_tx} stale_tx={a.stale_tx} lost_fills={a.lost_fills} "
            f"stuck_tx={self.stuck_tx} daemon_exits={len(self.exits)} "
            f"intents={sum(a.intents.values())} orders={a.world_orders} "
            f"committed_tx={a.committed_tx} fallbacks={self.fallbacks} "
            f"wall_s={self.wall_seconds:.0f} ok={'yes' if self.ok else 'no'}"
        )


def rig_options(options: ChaosOptions) -> RigOptions:
    """The chaos world: some latency (mid-request windows) and delayed commits."""
    node_faults = (
        {"by_hash_404": str(options.read_faults), "stale_account": str(options.read_faults)}
        if options.read_faults
        else {}
    )
    return RigOptions(
        speed=options.speed,
        seed=options.seed,
        order_style=options.order_style,
        commit_delay_real_seconds=options.commit_delay,
        provider_faults={"latency_ms": str(LATENCY_MS)},
        node_faults=node_faults,
        journal_url=options.journal_url,
    )


def _one_kill(rig: Rig, rng: random.Random, options: ChaosOptions, report: ChaosReport) -> None:
    mode = rng.choices([m for m, _ in MODES], weights=[w for _, w in MODES])[0]
    delay = rng.uniform(*options.random_delay)
    offset = rng.random()
    report.modes[mode] += 1
    failpoint = mode.split(":", 1)[1] if mode.startswith("failpoint:") else None
    bot = rig.start_bot(failpoint=failpoint)
    triggered = True
    if mode == "random":
        _sleep_while_alive(bot, delay)
    elif mode == "mid_request":
        triggered = bot.wait_stamp({"order-call"}, options.max_wait) is not None
        time.sleep(offset * LATENCY_MS / 1000)
    elif mode == "mid_tx":
        triggered = bot.wait_stamp({"tx-submit"}, options.max_wait) is not None
        time.sleep(offset * options.commit_delay)
    else:
        triggered = _sleep_while_alive(bot, options.max_wait)
    alive = bot.alive()
    code = bot.kill()
    if not alive and code != SIGKILL_CODE:
        report.exits.append(f"run {bot.log.name} ({mode}): exit {code}: {bot.stderr_tail(5)}")
    if not triggered and alive:
        report.fallbacks += 1
    report.kills += 1


def _sleep_while_alive(bot: BotRun, seconds: float) -> bool:
    """Sleep up to `seconds`; False when the process is still alive at the end."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not bot.alive():
            return True
        time.sleep(0.02)
    return False


def run_chaos(options: ChaosOptions, progress: Callable[[str], None] | None = None) -> ChaosReport:
    """Kill the daemon `options.kills` times, then settle and audit (see the module doc)."""
    began = time.monotonic()
    report = ChaosReport()
    rig = Rig(options.folder, rig_options(options))
    rng = random.Random(options.seed)  # noqa: S311 - a kill schedule, not cryptography
    try:
        rig.start_world()
        for n in range(options.kills):
            _one_kill(rig, rng, options, report)
            if progress is not None and (n + 1) % 10 == 0:
                progress(f"{n + 1} kills, {time.monotonic() - began:.0f} s")
        finish(rig, report, options.settle_seconds)
    finally:
        rig.close()
    report.wall_seconds = time.monotonic() - began
    return report


def finish(rig: Rig, report: ChaosReport, settle_seconds: float) -> None:
    """A clean run (reconcile at start, trade, SIGTERM), then settle and audit."""
    bot = rig.start_bot()
    time.sleep(settle_seconds)
    report.final_exit = bot.terminate()
    if report.final_exit != 0:
        report.exits.append(f"final run: exit {report.final_exit}: {bot.stderr_tail(5)}")
    settled = settle_and_audit(rig)
    report.stuck_tx = settled.stuck_tx
    report.reconcile_exit = settled.reconcile_exit
    if settled.reconcile_exit != 0:
        report.exits.append(
            f"bot reconcile: exit {settled.reconcile_exit}: {settled.reconcile_output}"
        )
    report.audit = settled.audit
