"""Benchmark: 5 daemons × 5 strategies on one PostgreSQL journal for 10 simulated days.

Run from the repository root:

    python bench/many_wallets.py [--wallets 5] [--strategies 5] [--sim-days 10]
                                 [--speed 4320] [--seed 11] [--keep DIR]

A throwaway PostgreSQL cluster (harness/postgres.py) holds the one journal; five wallets,
each with its own key and config naming that journal and the same five built-in
strategies (same names in every wallet: the journal is scoped per wallet), each traded by
its own `bot run` process against one `bot paper serve` world on an accelerated clock
(`--speed` simulated seconds per real second: 10 days take ~200 s). During the run
`bot status --all` must list every daemon; after it (SIGTERM, settle, one `bot reconcile`
per wallet) the journal is checked (harness/many_wallets.py): no lock errors in any log,
every row its own wallet's, no duplicate intents, nothing lost (per-wallet audit against
the world: every order the world has is journaled, every intent has its outcome).

The last line is the summary; the exit code is 0 when every check passes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.many_wallets import ManyOptions, ManyReport, run_many  # noqa: E402
from harness.postgres import missing_reason, start_cluster  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run on a throwaway cluster, print the findings and the summary."""
    parser = argparse.ArgumentParser(prog="many_wallets", description=__doc__.split("\n")[0])
    parser.add_argument("--wallets", type=int, default=5, help="daemons, one wallet each")
    parser.add_argument("--strategies", type=int, default=5, help="built-ins per wallet (1–5)")
    parser.add_argument("--sim-days", type=float, default=10.0, help="simulated days")
    parser.add_argument("--speed", type=float, default=4320.0, help="the world's clock speed")
    parser.add_argument("--seed", type=int, default=11, help="seed of the world")
    parser.add_argument("--keep", type=Path, help="keep the run's folder here (configs, logs)")
    args = parser.parse_args(argv)
    if args.wallets < 1 or not 1 <= args.strategies <= 5:
        parser.error("--wallets must be ≥ 1 and --strategies 1–5")
    if args.sim_days <= 0 or args.speed <= 0:
        parser.error("--sim-days and --speed must be positive")
    reason = missing_reason()
    if reason is not None:
        sys.exit(f"many_wallets: PostgreSQL cannot run here: {reason}")
    cluster = start_cluster()
    try:
        url = cluster.url(cluster.create_database("wallets"))
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            return _run(args, url, Path(tempfile.mkdtemp(prefix="wallets-", dir=args.keep)))
        with tempfile.TemporaryDirectory(prefix="wallets-") as tmp:
            return _run(args, url, Path(tmp))
    finally:
        cluster.stop()


def _run(args: argparse.Namespace, url: str, folder: Path) -> int:
    real = args.sim_days * 86_400 / args.speed
    print(
        f"many_wallets: {args.wallets} daemons × {args.strategies} strategies, "
        f"{args.sim_days:g} simulated days (~{real:.0f} s), journal {url}, folder {folder}",
        flush=True,
    )
    report = run_many(
        ManyOptions(
            folder=folder,
            journal_url=url,
            wallets=args.wallets,
            strategies=args.strategies,
            sim_days=args.sim_days,
            speed=args.speed,
            seed=args.seed,
        )
    )
    _print(report)
    print(report.summary())
    return 0 if report.ok else 1


def _print(report: ManyReport) -> None:
    for table, counts in report.rows.items():
        print(f"{table}: " + ", ".join(f"{w[:10]}…={n}" for w, n in sorted(counts.items())))
    for wallet, found in report.audits.items():
        states = ", ".join(f"{s}={n}" for s, n in sorted(found.intents.items()))
        print(
            f"{wallet[:10]}…: intents {states}; world orders {found.world_orders}, "
            f"committed tx {found.committed_tx}, clean {'yes' if found.clean else 'no'}"
        )
        for problem in found.problems[:5]:
            print(f"  problem: {problem}")
    print(
        f"bot status --all: exit {report.status_exit}, {report.status_listed} listed, "
        f"{report.status_fresh} running, {report.status_ok} healthy"
    )
    for line in report.status_problems:
        print(f"  not healthy: {line[:300]}")
    print(
        f"stop exits {report.stop_exits}, reconcile exits {report.reconcile_exits}, "
        f"stuck tx {report.stuck_tx}"
    )
    for line in report.exits + report.lock_errors[:10] + report.foreign_rows[:10]:
        print(f"problem: {line}")


if __name__ == "__main__":
    raise SystemExit(main())
