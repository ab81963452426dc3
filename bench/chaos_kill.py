"""Chaos: SIGKILL `bot run` N times while it trades, then compare the journal with the world.

Run from the repository root:

    python bench/chaos_kill.py --runs 200 --seed 1 [--speed 120] [--commit-delay 0.4]
        [--read-faults 0.2] [--order-style onchain|escrow] [--keep DIR]

A `bot paper serve` process (accelerated clock, on-chain order style, its state kept
across the run) and `bot run` with all five built-in strategies (schedules of a few real
seconds). The daemon is killed `--runs` times: after random delays, mid-request (a
createOrder/cancelOrder in flight), mid-transaction (between submit and commit) and at
the named failpoints; it is restarted each time. Then one clean run, the world frozen,
`bot reconcile --grace-minutes 0` and an audit of the journal against the world
(harness/chaos.py, harness/audit.py): duplicate orders, orders missing from
the journal, transactions committed twice, lost transitions and fills, conservation of
tokens. `--seed` reproduces the kill schedule.

The last line is the summary (`kills=… duplicates=… missing=… double_tx=…
lost_transitions=… conserved=yes …`); the exit code is 0 when every target is met.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.chaos import ChaosOptions, run_chaos  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run, print the findings and the summary line last."""
    parser = argparse.ArgumentParser(prog="chaos_kill", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="how many kills (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the kill schedule")
    parser.add_argument("--speed", type=float, default=120.0, help="the world's clock speed")
    parser.add_argument(
        "--commit-delay",
        type=float,
        default=0.4,
        help="real seconds between submit and commit (the mid-transaction window)",
    )
    parser.add_argument(
        "--read-faults",
        type=float,
        default=0.0,
        help="rate of node read faults: by_hash 404s and stale account reads (e.g. 0.2)",
    )
    parser.add_argument(
        "--order-style",
        choices=("onchain", "escrow"),
        default="onchain",
        help="the world's order style (default onchain)",
    )
    parser.add_argument("--keep", type=Path, help="keep the run's folder here (logs, journal)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix="chaos-", dir=args.keep))
        return _run(args, folder)
    with tempfile.TemporaryDirectory(prefix="chaos-") as tmp:
        return _run(args, Path(tmp))


def _run(args: argparse.Namespace, folder: Path) -> int:
    print(
        f"chaos: {args.runs} kills, seed {args.seed}, read faults {args.read_faults}, "
        f"{args.order_style} orders, folder {folder}",
        flush=True,
    )
    report = run_chaos(
        ChaosOptions(
            kills=args.runs,
            seed=args.seed,
            folder=folder,
            speed=args.speed,
            commit_delay=args.commit_delay,
            read_faults=args.read_faults,
            order_style=args.order_style,
        ),
        progress=lambda line: print(f"chaos: {line}", flush=True),
    )
    print("kill modes: " + ", ".join(f"{m}={n}" for m, n in sorted(report.modes.items())))
    print("intents: " + ", ".join(f"{s}={n}" for s, n in sorted(report.audit.intents.items())))
    for line in report.exits:
        print(f"daemon exit: {line}")
    for problem in report.audit.problems:
        print(f"problem: {problem}")
    print(report.summary())
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
