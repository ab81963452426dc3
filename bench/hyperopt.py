"""Benchmark of `bot hyperopt` (issue #20): 200 trials of the limit ladder over a year.

Input (made first, untimed, cached in $TMPDIR/bot-bench-backtest, shared with
bench/backtest.py): `bot series synth` APT for a year at 1-minute steps (525,600 ticks),
seed 42; USDC has no series (pegged at 1 USD).

Timed: the whole `python -m bot hyperopt` process (imports, reading the year once, the
search, the report: ranking, importances, best.toml, plots) for a limit ladder ticking
daily, searching spacing, rungs, re-drift and expiry with TPE (seed 1) on a fresh SQLite
study, with `--jobs 2` (two worker processes forked after the read) and, for the speed-up,
`--jobs 1`.

Target (issue #20): 200 trials on 2 cores ≤ 45 s wall.
Run: `.venv/bin/python bench/hyperopt.py` (`--quick`: 20 trials over a month, for CI;
`--no-compare`: skip the one-worker run; `--postgres`: the study on a throwaway
PostgreSQL cluster started with the system's initdb/pg_ctl, as the tests do). The summary
line is printed last.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
CACHE = Path(os.environ.get("TMPDIR", tempfile.gettempdir())) / "bot-bench-backtest"
YEAR = ("2025-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "apt-1y-1m.parquet")
MONTH = ("2025-01-01T00:00:00Z", "2025-02-01T00:00:00Z", "apt-1mo-1m.parquet")
FIXED = "sell_token=USDC,buy_token=APT,amount_per_rung=10"
SPACE = "spacing_percent=0.5..5,rungs=1..10,redrift_percent=2..10,expiry=[1 day,3 day,7 day]"


def synth(start: str, end: str, name: str) -> Path:
    """A cached `bot series synth` file of APT (the paper world's walk, seed 42)."""
    out = CACHE / name
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name("partial-" + out.name)
    command = [PYTHON, "-m", "bot", "series", "synth", "--out", str(partial), "--tokens", "APT"]
    command += ["--from", start, "--to", end, "--step", "60s", "--force"]
    subprocess.run(command, check=True, cwd=ROOT)
    partial.replace(out)
    return out


def search(
    prices: Path, start: str, end: str, trials: int, jobs: int, storage: str | None = None
) -> tuple[float, str]:
    """(wall seconds, stdout) of one `bot hyperopt` process on a fresh study."""
    out = CACHE / f"hyperopt-{trials}-{jobs}"
    shutil.rmtree(out, ignore_errors=True)
    shared = ["--storage", storage, "--study", f"bench-{jobs}-{time.time_ns()}"] if storage else []
    command = [PYTHON, "-m", "bot", "hyperopt", "--strategy", "limit_ladder", "--params", FIXED]
    command += ["--space", SPACE, "--schedule", "1d", "--from", start, "--to", end]
    command += ["--prices", str(prices), "--trials", str(trials), "--jobs", str(jobs)]
    command += ["--seed", "1", "--out", str(out), *shared]
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    wall = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"bot hyperopt failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 trials over a month")
    parser.add_argument("--no-compare", action="store_true", help="skip the one-worker run")
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="keep the study in a throwaway PostgreSQL cluster (harness/postgres.py)",
    )
    args = parser.parse_args()
    if args.postgres:
        sys.path.insert(0, str(ROOT))
        from harness.postgres import missing_reason, start_cluster

        reason = missing_reason()
        if reason:
            sys.exit(f"--postgres: {reason}")
        cluster = start_cluster()
        try:
            run(args, cluster.url())
        finally:
            cluster.stop()
        return
    run(args, None)


def run(args: argparse.Namespace, storage: str | None) -> None:
    start, end, name = MONTH if args.quick else YEAR
    trials = 20 if args.quick else 200
    prices = synth(start, end, name)
    wall, stdout = search(prices, start, end, trials, jobs=2, storage=storage)
    found = re.search(r"study (\S+): (\d+) trials, (\d+) completed", stdout)
    again = re.search(r"(\d+) of them a point drawn again", stdout)
    assert found, stdout[-2000:]
    best = re.search(r"trial \d+, return (\S+)", stdout)
    print(stdout.split("\n\n")[1], flush=True)  # the ranking
    line = (
        f"hyperopt: storage={'postgresql' if storage else 'sqlite'} "
        f"trials={found.group(2)} completed={found.group(3)} "
        f"drawn_again={again.group(1) if again else 0} jobs=2 "
        f"wall_s={wall:.1f} best_return={best.group(1)[:10] if best else '-'}"
    )
    if not args.no_compare:
        one, alone = search(prices, start, end, trials, jobs=1, storage=storage)
        repeated = re.search(r"(\d+) of them a point drawn again", alone)
        line += f" one_worker_s={one:.1f} (drawn_again={repeated.group(1) if repeated else 0})"
        line += f" ratio={wall / one:.2f}"
    target = "" if args.quick else " (target: 200 trials on 2 cores <= 45 s)"
    print(line + target)


if __name__ == "__main__":
    main()
