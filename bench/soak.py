"""Fault soak: `bot run` against a misbehaving paper world for simulated days.

Run from the repository root:

    python bench/soak.py --sim-days 30 --faults heavy [--speed 4320] [--seed 7] [--keep DIR]

A `bot paper serve` process on an accelerated clock (`--speed` simulated seconds per real
second: 30 days take 10 minutes at the default) injecting faults — `heavy`: 20% of
provider requests (429 + Retry-After, 500, timeouts, connections dropped after the
request was applied, malformed bodies) and 20% of transaction submissions (mempool full,
lost); `light`: 5%; `none` — and `bot run` with all five built-in strategies. Reported:
requests, retries, errors by kind, the signer's resends and re-signings, intents against
effects applied exactly once (after a final reconcile, harness/audit.py), daemon
restarts (target 0) and the daemon's memory (target: ≤ 10% growth after the warm-up,
the first fifth of the run).

The last line is the summary; the exit code is 0 when every target is met.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.soak import PROFILES, SoakOptions, run_soak  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run, print the findings and the summary line last."""
    parser = argparse.ArgumentParser(prog="soak", description=__doc__.split("\n")[0])
    parser.add_argument("--sim-days", type=float, default=30.0, help="simulated days")
    parser.add_argument("--faults", choices=sorted(PROFILES), default="heavy")
    parser.add_argument("--speed", type=float, default=4320.0, help="the world's clock speed")
    parser.add_argument("--seed", type=int, default=7, help="seed of the world and its faults")
    parser.add_argument("--keep", type=Path, help="keep the run's folder here (logs, journal)")
    args = parser.parse_args(argv)
    if args.sim_days <= 0 or args.speed <= 0:
        parser.error("--sim-days and --speed must be positive")
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        return _run(args, Path(tempfile.mkdtemp(prefix="soak-", dir=args.keep)))
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        return _run(args, Path(tmp))


def _run(args: argparse.Namespace, folder: Path) -> int:
    real = args.sim_days * 86_400 / args.speed
    print(f"soak: {args.sim_days:g} days, faults {args.faults}, ~{real:.0f} s, folder {folder}")
    report = run_soak(
        SoakOptions(
            sim_days=args.sim_days,
            faults=args.faults,
            folder=folder,
            speed=args.speed,
            seed=args.seed,
        ),
        progress=lambda line: print(f"soak: {line}", flush=True),
    )
    print("intents: " + ", ".join(f"{s}={n}" for s, n in sorted(report.audit.intents.items())))
    print(f"strategy errors: {report.stats.get('strategy_errors', {})}")
    for line in report.exits:
        print(f"daemon exit: {line}")
    for problem in report.audit.problems:
        print(f"problem: {problem}")
    print(report.summary())
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
