"""The fault soak: the daemon against a paper world that misbehaves on purpose, for days.

`run_soak(options)` serves one paper world on an accelerated clock (`sim_days` simulated
days take `sim_days × 86400 / speed` real seconds) with a fault profile, and runs
`bot run` with all five built-in strategies against it, never restarting it unless it
exits by itself (each such restart is counted: the target is 0). Profiles:

* `none`: no faults;
* `light`: 5% of provider requests, and 5% of transaction submissions;
* `heavy`: 20% of provider requests — 429 with Retry-After, 500, a timeout (answered
  after the client gave up: applied), the connection dropped after the request was
  applied, a truncated body (applied) in equal shares — and 20% of submissions (mempool
  full: refused; lost: accepted, never committed); node reads lie too: 10% of `by_hash`
  answers are 404 for a transaction the node holds, 10% of account reads are stale.

Measured: the client's requests, retries and errors by kind (from the daemon's own
counters, stamped after every tracker poll), the signer's resends and re-signings (from
its JSON log), the daemon's RSS every second (growth from the end of the warm-up to the
end of the run), and, after the run (see `settle_and_audit`), intents against the
world's effects: each applied exactly once, or not at all when it failed.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from harness.audit import Audit
from harness.whole_bot import BotRun, Rig, RigOptions, rss_kb, settle_and_audit

__all__ = ["PROFILES", "SoakOptions", "SoakReport", "run_soak"]

_EACH_HEAVY: Final = "0.04"
_EACH_LIGHT: Final = "0.01"
PROFILES: Final[Mapping[str, tuple[dict[str, str], dict[str, str]]]] = {
    "none": ({}, {}),
    "light": (
        {k: _EACH_LIGHT for k in ("rate_limited", "server_error", "timeout")}
        | {"drop_after_apply": _EACH_LIGHT, "malformed_body": _EACH_LIGHT},
        {"mempool_full": "0.025", "lost": "0.025"},
    ),
    "heavy": (
        {k: _EACH_HEAVY for k in ("rate_limited", "server_error", "timeout")}
        | {"drop_after_apply": _EACH_HEAVY, "malformed_body": _EACH_HEAVY},
        {"mempool_full": "0.1", "lost": "0.1", "by_hash_404": "0.1", "stale_account": "0.1"},
    ),
}
"""Fault profile → (`[paper.faults]`, `[paper.node]`) settings."""
READ_TIMEOUT_S: Final = 3.0
SIGNER_EVENTS: Final = (
    "chain.resend_same_bytes",
    "chain.resign_after_expiry",
    "chain.resign_after_stale_sequence",
    "chain.submit_outcome_unknown",
)


@dataclass(frozen=True)
class SoakOptions:
    """One soak run."""

    sim_days: float
    faults: str
    folder: Path
    speed: float = 4320.0
    """Simulated seconds per real second (30 days in 10 minutes)."""
    seed: int = 7
    warm_up_fraction: float = 0.2
    """The first part of the run is warm-up: memory growth is measured after it."""


@dataclass
class SoakReport:
    """Figures of one soak run."""

    sim_days: float = 0.0
    faults: str = "none"
    real_seconds: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)
    signer: Counter[str] = field(default_factory=Counter)
    restarts: int = 0
    exits: list[str] = field(default_factory=list)
    stop_exit: int | None = None
    unknown_before_reconcile: int = 0
    rss_kb: list[tuple[float, int]] = field(default_factory=list)
    world_rss_kb: list[tuple[float, int]] = field(default_factory=list)
    py_blocks: list[tuple[float, int]] = field(default_factory=list)
    """Memory blocks the daemon's Python holds, after each order poll."""
    """The paper world's process (not a target: it keeps a log of every request)."""
    warm_up_s: float = 0.0
    stuck_tx: int = 0
    reconcile_exit: int | None = None
    audit: Audit = field(default_factory=Audit)

    @property
    def rss_growth_pct(self) -> float:
        """Growth (%) of the median RSS of the run's last tenth over its first tenth.

        Both tenths are of the samples taken after the warm-up.
        """
        return _growth(self.rss_kb, self.warm_up_s)

    @property
    def py_growth_pct(self) -> float:
        """The same for the Python memory blocks (objects kept alive)."""
        return _growth(self.py_blocks, self.warm_up_s)

    @property
    def rss_mb(self) -> tuple[float, float]:
        """(after warm-up, peak) in MB."""
        kept = [kb for t, kb in self.rss_kb if t >= self.warm_up_s]
        if not kept:
            return 0.0, 0.0
        return kept[0] / 1024, max(kb for _, kb in self.rss_kb) / 1024

    def _world_mb(self) -> str:
        if not self.world_rss_kb:
            return "-"
        first, last = self.world_rss_kb[0][1], self.world_rss_kb[-1][1]
        return f"{first / 1024:.0f}->{last / 1024:.0f}"

    @property
    def ok(self) -> bool:
        """Every target met (memory: ≤ 10% growth after warm-up)."""
        return (
            self.restarts == 0
            and self.stop_exit == 0
            and self.reconcile_exit == 0
            and self.stuck_tx == 0
            and self.audit.clean
            and self.rss_growth_pct <= 10.0
        )

    def summary(self) -> str:
        """The one summary line."""
        a = self.audit
        errors = ",".join(f"{k}:{v}" for k, v in sorted(self.stats.get("errors", {}).items()))
        signer = ",".join(f"{k.split('.', 1)[1]}:{v}" for k, v in sorted(self.signer.items()))
        start_mb, peak_mb = self.rss_mb
        return (
            f"sim_days={self.sim_days:g} faults={self.faults} real_s={self.real_seconds:.0f} "
            f"requests={self.stats.get('requests', 0)} retries={self.stats.get('retries', 0)} "
            f"errors={errors or '-'} node_requests={self.stats.get('node_requests', 0)} "
            f"signer={signer or '-'} intents={sum(a.intents.values())} "
            f"applied_once={a.applied_once} duplicates={a.duplicates} "
            f"wrong_effects={a.wrong_effects} missing={a.missing} double_tx={a.double_tx} "
            f"lost_transitions={a.lost_transitions} conserved={'yes' if a.conserved else 'no'} "
            f"unknown_before_reconcile={self.unknown_before_reconcile} "
            f"restarts={self.restarts} rss_mb={start_mb:.0f}->{peak_mb:.0f} "
            f"rss_growth_pct={self.rss_growth_pct:.1f} "
            f"py_blocks_growth_pct={self.py_growth_pct:.1f} world_rss_mb={self._world_mb()} "
            f"ok={'yes' if self.ok else 'no'}"
        )


def rig_options(options: SoakOptions) -> RigOptions:
    """The soak's world: the profile's faults, a fast clock, short real timeouts."""
    provider, node = PROFILES[options.faults]
    if provider:
        provider = {**provider, "timeout_seconds": str(READ_TIMEOUT_S + 1)}
    return RigOptions(
        speed=options.speed,
        seed=options.seed,
        expiry_real_seconds=4.0,
        read_timeout_seconds=READ_TIMEOUT_S,
        provider_faults={k: f'"{v}"' if k != "timeout_seconds" else v for k, v in provider.items()},
        node_faults=node,
    )


def run_soak(options: SoakOptions, progress: Callable[[str], None] | None = None) -> SoakReport:
    """Run the daemon for `sim_days` simulated days under the fault profile; audit."""
    if options.faults not in PROFILES:
        raise ValueError(f"faults must be one of {', '.join(PROFILES)}, not {options.faults!r}")
    report = SoakReport(sim_days=options.sim_days, faults=options.faults)
    duration = options.sim_days * 86_400 / options.speed
    report.warm_up_s = duration * options.warm_up_fraction
    rig = Rig(options.folder, rig_options(options))
    try:
        rig.start_world()
        began = time.monotonic()
        bot = rig.start_bot()
        sampler = _Sampler(lambda: bot.pid, began)
        world = rig.world
        assert world is not None
        world_sampler = _Sampler(lambda: world.pid, began)
        sampler.start()
        world_sampler.start()
        next_note = began + 60
        while (now := time.monotonic()) < began + duration:
            if not bot.alive():
                report.restarts += 1
                report.exits.append(f"exit {bot.process.returncode}: {bot.stderr_tail(5)}")
                _collect(bot, report)
                bot = rig.start_bot()
            blocks = bot.stats.get("py_blocks")
            if isinstance(blocks, int) and (
                not report.py_blocks or report.py_blocks[-1][1] != blocks
            ):
                report.py_blocks.append((now - began, blocks))
            if progress is not None and now >= next_note:
                progress(f"{(now - began) * options.speed / 86_400:.1f} simulated days")
                next_note += 60
            time.sleep(0.2)
        report.real_seconds = time.monotonic() - began
        sampler.stop()
        world_sampler.stop()
        report.rss_kb, report.world_rss_kb = sampler.samples, world_sampler.samples
        pairs = zip(sampler.samples, world_sampler.samples, strict=False)  # a sample may miss
        rows = "".join(f"{t:.1f},{kb},{w}\n" for (t, kb), (_, w) in pairs)
        (options.folder / "rss.csv").write_text("seconds,daemon_rss_kb,world_rss_kb\n" + rows)
        report.stop_exit = bot.terminate()
        _collect(bot, report)
        report.unknown_before_reconcile = _open_intents(rig)
        settled = settle_and_audit(rig)
        report.stuck_tx = settled.stuck_tx
        report.reconcile_exit = settled.reconcile_exit
        report.audit = settled.audit
    finally:
        rig.close()
    return report


def _growth(samples: list[tuple[float, int]], after: float) -> float:
    """Growth (%) of the median of the last tenth of `samples` over their first tenth.

    Only samples taken after `after` count; 0 with too few of them.
    """
    kept = [value for t, value in samples if t >= after]
    if len(kept) < 20:
        return 0.0
    tenth = max(1, len(kept) // 10)
    first, last = statistics.median(kept[:tenth]), statistics.median(kept[-tenth:])
    return (last - first) / first * 100


def _collect(bot: BotRun, report: SoakReport) -> None:
    """Fold one daemon process's counters and signer events into the report."""
    for key, value in bot.stats.items():
        if key == "py_blocks":
            continue  # a level, not a count
        if isinstance(value, int):
            report.stats[key] = report.stats.get(key, 0) + value
        elif isinstance(value, dict):  # errors by kind, per-strategy counters
            merged = Counter(report.stats.get(key, {}))
            merged.update(value)
            report.stats[key] = dict(merged)
    path = bot.log.with_suffix(".err")
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.startswith("{") and any(name in line for name in SIGNER_EVENTS):
            event = json.loads(line).get("event", "")
            if event in SIGNER_EVENTS:
                report.signer[event] += 1


def _open_intents(rig: Rig) -> int:
    from bot.journal import Journal

    journal = Journal.open(rig.journal_url, readonly=True)
    try:
        return len(journal.intents(states=("planned", "sent", "unknown")))
    finally:
        journal.close()


class _Sampler:
    """Samples a process's RSS once a second on a thread: (seconds since start, kB)."""

    def __init__(self, pid: Callable[[], int], began: float) -> None:
        self._pid = pid
        self._began = began
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.samples: list[tuple[float, int]] = []

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            kb = rss_kb(self._pid())
            if kb is not None:
                self.samples.append((time.monotonic() - self._began, kb))
