"""Benchmark of the backtester (issue #10) on a synthetic year of 1-minute prices.

Inputs (made first, untimed, and cached in $TMPDIR/bot-bench-backtest): `bot series
synth` files — APT for a year at 1-minute steps (525,600 ticks), and 10 tokens × 1 year.
USDC has no series: the backtester pegs it at 1 USD.

Timed, for each of two strategies:
* dca: recurring_dca, 10 USDC → APT every hour (one order of 8,760 slices), ticking daily;
* ladder: limit_ladder, 5 rungs 2% apart, re-placed past 5% drift or after 7 days, daily;
the backtest itself in-process after the prices are loaded (median of 5), the whole
process (`python -m bot backtest …`, once), and its peak RSS (getrusage of the child).

Then 10 tokens × 1 year with one DCA per token, in a fresh process each time, the wall
time of it all (imports, reading the 10-token file, the ten backtests): the file read
once, then the ten runs on every core, in worker processes forked after the read, as
`bot backtest --sweep` runs a grid — the figure the target is for; and, for reference,
the same ten runs one after another in that one process.

The DCA is also run from the same year written as CSV (525,600 rows): reading CSV must not
cost the memory target.

Targets (issue #17): backtest ≤ 0.15 s, process ≤ 1.0 s, peak ≤ 150 MB per strategy and for
the CSV input; 10 tokens ≤ 3 s.
Run: `.venv/bin/python bench/backtest.py` — the summary line is printed last.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from bot.clock import parse_utc

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
START = "2025-01-01T00:00:00Z"
END_EXCLUSIVE = "2026-01-01T00:00:00Z"
END = (parse_utc(END_EXCLUSIVE) - timedelta(minutes=1)).isoformat().replace("+00:00", "Z")
TEN = ["APT", "WBTC", "xBTC", "RION", "ECHO", "MKL", "AMI", "THL", "GUI", "lzWETH"]
CACHE = Path(os.environ.get("TMPDIR", tempfile.gettempdir())) / "bot-bench-backtest"

STRATEGIES: dict[str, dict[str, Any]] = {
    "dca": {
        "plugin": "recurring_dca",
        "schedule": "1d",
        "params": {
            "from_token": "USDC",
            "to_token": "APT",
            "amount_per_order": "10",
            "orders": 8760,
            "interval": "1 hour",
        },
    },
    "ladder": {
        "plugin": "limit_ladder",
        "schedule": "1d",
        "params": {
            "sell_token": "USDC",
            "buy_token": "APT",
            "rungs": 5,
            "spacing_percent": "2",
            "amount_per_rung": "10",
            "redrift_percent": "5",
            "expiry": "7 day",
        },
    },
}


def synth(out: Path, tokens: list[str]) -> Path:
    """A cached `bot series synth` file (the paper world's walks, seed 42)."""
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name("partial-" + out.name)
    command = [PYTHON, "-m", "bot", "series", "synth", "--out", str(partial)]
    command += ["--tokens", ",".join(tokens), "--from", START, "--to", END_EXCLUSIVE]
    subprocess.run([*command, "--step", "60s", "--force"], check=True, cwd=ROOT)
    partial.replace(out)
    return out


def entry(name: str) -> Any:
    from bot.cli.backtest_cmd import parse_schedule  # as the timed CLI run reads it
    from bot.config import StrategyEntry

    spec = STRATEGIES[name]
    return StrategyEntry(
        name=name,
        plugin=spec["plugin"],
        schedule=parse_schedule(spec["schedule"]),
        params=spec["params"],
    )


def in_process(name: str, prices: Path, runs: int = 5) -> float:
    """Median wall time of the backtest itself, the prices already loaded."""
    from bot.backtest.feed import load_feed
    from bot.backtest.runner import _registry, run_backtest
    from bot.backtest.spec import BacktestSpec

    feed = load_feed(prices, key_of=_registry().key_of)
    spec = BacktestSpec(
        strategy=entry(name), start=parse_utc(START), end=parse_utc(END), prices=prices
    )
    timings = []
    for _ in range(runs):
        began = time.perf_counter()
        result = run_backtest(spec, feed=feed)
        timings.append(time.perf_counter() - began)
        assert not result.errors, result.errors
    return statistics.median(timings)


_CHILD = """
import resource, subprocess, sys, time
began = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - began
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{wall} {peak} {done.returncode}")
sys.stderr.write(done.stderr[-2000:])
"""


def whole_process(name: str, prices: Path) -> tuple[float, float]:
    """(wall seconds, peak MB) of `python -m bot backtest …` in a fresh process."""
    spec = STRATEGIES[name]
    params = json.dumps(spec["params"])
    command = [PYTHON, "-m", "bot", "backtest", "--strategy", spec["plugin"], "--params"]
    command += [params, "--schedule", spec["schedule"], "--from", START, "--to", END]
    command += ["--prices", str(prices)]
    # A wrapper process measures its one child: RUSAGE_CHILDREN is that child alone.
    out = subprocess.run(
        [PYTHON, "-c", _CHILD, *command], capture_output=True, text=True, cwd=ROOT, check=True
    )
    wall, peak, code = out.stdout.split()
    if code != "0":
        raise RuntimeError(f"bot backtest failed ({code}): {out.stderr}")
    return float(wall), float(peak)


_TEN = """
import multiprocessing, os, sys, time
from pathlib import Path
began = time.perf_counter()
from bot.backtest.feed import load_feed
from bot.backtest.runner import _registry, run_backtest
from bot.backtest.spec import BacktestSpec
from bot.clock import parse_utc
from bot.config import StrategyEntry
path, start, end = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
workers, symbols = int(sys.argv[4]), sys.argv[5:]
feed = load_feed(path, key_of=_registry().key_of)

def one(symbol):
    entry = StrategyEntry(
        name=f"dca-{symbol}", plugin="recurring_dca", schedule={"interval_seconds": 86400},
        params={"from_token": "USDC", "to_token": symbol, "amount_per_order": "10",
                "orders": 8760, "interval": "1 hour"},
    )
    spec = BacktestSpec(strategy=entry, start=parse_utc(start), end=parse_utc(end), prices=path)
    result = run_backtest(spec, feed=feed)
    assert len(result.fills) == 8760 and not result.errors, (symbol, result.errors)
    return symbol

if workers == 1:
    done = [one(s) for s in symbols]
else:  # forked after the load: every worker has the prices without reading them again
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        done = pool.map(one, symbols, chunksize=1)
assert done == symbols
print(time.perf_counter() - began)
"""


def ten_tokens(prices: Path, workers: int) -> float:
    """Wall seconds of one process: imports, the 10-token file, ten DCA backtests."""
    out = subprocess.run(
        [PYTHON, "-c", _TEN, str(prices), START, END, str(workers), *TEN],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return float(out.stdout.split()[-1])


def main() -> None:
    from bot.logging import configure_logging

    configure_logging(level="warning")
    one = synth(CACHE / "apt-1y-1m.parquet", ["APT"])
    ten = synth(CACHE / "ten-1y-1m.parquet", TEN)
    one_csv = synth(CACHE / "apt-1y-1m.csv", ["APT"])
    parts = []
    for name in STRATEGIES:
        backtest = in_process(name, one)
        process, peak = whole_process(name, one)
        line = f"{name}: backtest={backtest:.3f}s process={process:.2f}s peak={peak:.0f}MB"
        print(line, flush=True)
        parts.append(line)
    backtest = in_process("dca", one_csv)
    process, peak = whole_process("dca", one_csv)
    line = f"dca from CSV: backtest={backtest:.3f}s process={process:.2f}s peak={peak:.0f}MB"
    print(line, flush=True)
    parts.append(line)
    cores = os.cpu_count() or 1
    every_core = ten_tokens(ten, cores)
    one_core = ten_tokens(ten, 1)
    parts.append(f"10-token dca: {every_core:.2f}s on {cores} cores (one core: {one_core:.2f}s)")
    print(" | ".join(parts))


if __name__ == "__main__":
    main()
