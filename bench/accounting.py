"""Benchmark of the accounting and `bot report` (issue #18) over 100,000 journal fills.

Input (built once, untimed, and cached in $TMPDIR/bot-bench-accounting): a real SQLite
journal written through the journal's own writer API (`Journal.observe_orders` in batches
of orders, `Journal.add_price_block` for the prices) holding a year (2025) of three
strategies on one wallet, 100,000 executions (`filled` records) in all, plus one `created`
record per order:

* dca-apt: a DCA of USDC into APT, a 10 USDC slice every 10 minutes (52,560 slices, in
  orders of 240), a keeper fee of 0.02 USDC each;
* dca-btc: a DCA of USDC into WBTC every 20 minutes (26,280 slices, orders of 240);
* grid-apt: limit orders alternately buying APT with USDC and selling it back, each
  filled in 1–4 parts (21,160 fills): sales take part-lots under FIFO;
* recorded USD prices of APT, WBTC and USDC every 15 minutes (35,040 ticks each); with
  `--dense-prices`, as `[record]` keeps them by default: every minute for the last 90
  days and hourly before (135,600 ticks each).

Timed, in-process (median of N runs):
(a) the accounting alone: `by_strategy` over the 100,000 `Trade`s, FIFO, buckets by day;
(b) the whole `bot report --by day` command in-process (typer's runner, output captured):
    settings, the journal opened read-only, `build_report` (fills → trades, ticks → price
    book, the accounting) and the console table; as the command runs it, its strategies
    in parts at once in as many processes as this one may run on (`bot.app.report_workers`);
(b1) the same in one process, as on a machine of one processor, run by run beside (b)
     (the machine's speed drifts: both meet it as it is), and their ratio;
and (c) the `python -m bot report --by day` process: wall time (median) and its peak RSS
(getrusage of the child, as bench/backtest.py measures it: the largest of it and the
parts it forked). The in-process peak of (b) is also traced (tracemalloc, one extra run;
Python allocations of this process only).

Targets (issue #18): a report over 100,000 fills ≤ 1 s, peak memory ≤ 200 MB.
The in-process figures also give the CPU time, the parts' included (the machine may be
shared). Building the
journal takes ~20–40 s the first time.
Run: `.venv/bin/python bench/accounting.py [--quick] [--runs N] [--dense-prices]` —
`--quick` uses a tenth of the fills (the same year of prices) and 3 runs (the CI smoke run,
tests/integration/test_bench_accounting_quick.py); the summary line is printed last.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from bisect import bisect_right
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bot.accounting import BucketPeriod, CostMethod, by_strategy  # noqa: E402
from bot.app.report_workers import processors  # noqa: E402
from bot.journal import Journal, JournalError  # noqa: E402
from bot.journal.fills_read import fills_by_order_row  # noqa: E402
from bot.journal.views import FillRecord, OrderObservation, OrderSnapshot  # noqa: E402

PYTHON = sys.executable
CACHE = Path(os.environ.get("TMPDIR", tempfile.gettempdir())) / "bot-bench-accounting"
FORMAT = 2  # bump when the journal built here changes (the cache is keyed by it)
TARGET_S = 1.0
TARGET_MB = 200.0
START = datetime(2025, 1, 1, tzinfo=UTC)
YEAR = timedelta(days=365)
WALLET = "0x" + "5e" * 32
KEEPER = "0x" + "7a" * 32
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
WBTC = "0x68844a0d7f2587e726ad0579f3d640865bb4162c08a4589eeda3f9689ec52a3d"
SLICES_PER_ORDER = 240
TICK = timedelta(minutes=15)
MINUTE, HOUR = timedelta(minutes=1), timedelta(hours=1)
RETAINED = timedelta(days=90)  # `[record] retention_days`: older ticks are hourly
APT_DECIMALS = Decimal("0.00000001")
USDC_DECIMALS = Decimal("0.000001")


def _walk(start: Decimal, steps: int, seed: int, places: Decimal) -> list[Decimal]:
    """A deterministic random walk of `steps` prices (±0.4 % a step), exact decimals."""
    state = seed
    prices: list[Decimal] = []
    price = start
    for _ in range(steps):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        move = Decimal((state >> 33) % 801 - 400) / Decimal(100_000)
        price = (price * (1 + move)).quantize(places)
        prices.append(price)
    return prices


class World:
    """The prices of the year, one a tick, and the fills made against them."""

    def __init__(self, scale: int, dense: bool = False) -> None:
        if dense:  # as `[record]` keeps them: every minute for 90 days, hourly before
            recent = START + YEAR - RETAINED
            self.times = [START + HOUR * i for i in range(int((recent - START) / HOUR))]
            self.times += [recent + MINUTE * i for i in range(int(RETAINED / MINUTE))]
        else:
            self.times = [START + TICK * i for i in range(int(YEAR / TICK))]
        self.ticks = len(self.times)
        self.apt = _walk(Decimal("5.5"), self.ticks, 7, Decimal("0.0001"))
        self.wbtc = _walk(Decimal("65000"), self.ticks, 11, Decimal("0.01"))
        self.usdc = [Decimal("1")] * self.ticks
        self.scale = scale  # 1: 100,000 fills; 10: 10,000

    def price(self, series: list[Decimal], moment: datetime) -> Decimal:
        return series[max(bisect_right(self.times, moment) - 1, 0)]

    def observations(self) -> list[OrderObservation]:
        """Every order with its fills (dca-apt, dca-btc, grid-apt)."""
        found = self._dca("dca-apt", APT, self.apt, timedelta(minutes=10 * self.scale))
        found += self._dca("dca-btc", WBTC, self.wbtc, timedelta(minutes=20 * self.scale))
        found += self._grid(21_160 // self.scale)
        return found

    def _dca(
        self, name: str, token: str, series: list[Decimal], every: timedelta
    ) -> list[OrderObservation]:
        slices = int(YEAR / every)
        found: list[OrderObservation] = []
        for first in range(0, slices, SLICES_PER_ORDER):
            count = min(SLICES_PER_ORDER, slices - first)
            order_id = f"0x{name.encode().hex()}{first:016x}"
            created = START + every * first
            fills = [FillRecord(f"{order_id}c", "created", 1, Decimal(10 * count), time=created)]
            got = Decimal(0)
            for k in range(count):
                at = created + every * k + timedelta(seconds=7)
                bought = (Decimal("9.98") / self.price(series, at)).quantize(APT_DECIMALS)
                got += bought
                fills.append(
                    FillRecord(
                        f"{order_id}f{k:04d}",
                        "filled",
                        k + 2,
                        Decimal(10),
                        bought,
                        Decimal("0.02"),
                        at,
                        KEEPER,
                    )
                )
            snapshot = OrderSnapshot(
                kind="dca",
                order_id=order_id,
                wallet=WALLET,
                from_token=USDC,
                to_token=token,
                status="completed",
                amount_total=Decimal(10 * count),
                strategy=name,
                amount_spent=Decimal(10 * count),
                amount_balance=Decimal(0),
                to_amount_received=got,
                orders_total=count,
                orders_completed=count,
                provider_created_at=created,
            )
            found.append(OrderObservation(snapshot, fills=fills))
        return found

    def _grid(self, fills_total: int) -> list[OrderObservation]:
        """Limit orders alternately buying 20 USDC of APT and selling 3 APT, 1–4 parts each."""
        found: list[OrderObservation] = []
        made = 0
        n = 0
        every = YEAR / (fills_total / 2.5)
        while made < fills_total:
            parts = min(1 + n % 4, fills_total - made)
            buying = n % 2 == 0
            created = START + every * n
            order_id = f"0x6c696d{n:012x}"
            total = Decimal(20) if buying else Decimal(3)
            each = total / parts
            fills = [FillRecord(f"{order_id}c", "created", 1, total, time=created)]
            for k in range(parts):
                at = created + timedelta(minutes=13 * (k + 1))
                price = self.price(self.apt, at)
                sold = each.quantize(USDC_DECIMALS if buying else APT_DECIMALS)
                bought = (sold / price if buying else sold * price).quantize(
                    APT_DECIMALS if buying else USDC_DECIMALS
                )
                fills.append(
                    FillRecord(f"{order_id}f{k}", "filled", k + 2, sold, bought, None, at, KEEPER)
                )
            made += parts
            snapshot = OrderSnapshot(
                kind="limit",
                order_id=order_id,
                wallet=WALLET,
                from_token=USDC if buying else APT,
                to_token=APT if buying else USDC,
                status="completed",
                amount_total=total,
                strategy="grid-apt",
                provider_created_at=created,
            )
            found.append(OrderObservation(snapshot, fills=fills))
            n += 1
        return found


def build(path: Path, scale: int, dense: bool) -> tuple[int, float]:
    """Write the journal at `path` (cached); (fills, seconds it took to build, 0 if cached)."""
    if path.exists():
        try:
            with Journal.open(f"sqlite:///{path}", readonly=True) as journal:
                rows = fills_by_order_row(journal).values()
                return sum(1 for fills in rows for f in fills if f.type == "filled"), 0.0
        except JournalError as exc:  # an older schema: built again
            print(f"cached journal unusable ({exc}): building it again", flush=True)
            path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name("partial-" + path.name)
    for stale in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        stale.unlink(missing_ok=True)
    began = time.perf_counter()
    world = World(scale, dense)
    observations = world.observations()
    fills = sum(1 for o in observations for f in o.fills if f.type == "filled")
    with Journal.open(f"sqlite:///{partial}") as journal:
        for first in range(0, len(observations), 100):
            journal.observe_orders(
                observations[first : first + 100], observed_at=START + YEAR, source="poll"
            )
        sources = [None] * world.ticks
        for token, symbol, series in (
            (APT, "APT", world.apt),
            (WBTC, "WBTC", world.wbtc),
            (USDC, "USDC", world.usdc),
        ):
            journal.add_price_block(token, symbol, world.times, series, sources)
    partial.replace(path)
    return fills, time.perf_counter() - began


def write_config(folder: Path, journal: Path) -> Path:
    config = folder / "bench.toml"
    config.write_text(
        f'mode = "paper"\n[wallet]\naddress = "{WALLET}"\n[journal]\nurl = "sqlite:///{journal}"\n'
        '[accounting]\ntime_zone = "UTC"\ncost_basis = "fifo"\n',
        encoding="utf-8",
    )
    return config


def accounting_alone(journal_path: Path, runs: int) -> tuple[float, float, int]:
    """(median seconds, median CPU seconds, trades) of `by_strategy` over the journal's
    trades, prepared untimed."""
    from bot.app.report import ReportRequest, build_report
    from bot.app.report_load import load_trades

    with Journal.open(f"sqlite:///{journal_path}", readonly=True) as journal:
        trades, book, _latest = load_trades(journal, None)  # as `bot report` reads them
        request = ReportRequest(period=BucketPeriod.DAY)
        build_report(journal, request, [])  # warm the imports and caches
    valued_at = max(t.time for t in trades)
    timings, cpu = [], []
    for _ in range(runs):
        began, began_cpu = time.perf_counter(), time.process_time()
        summaries = by_strategy(
            trades,
            book,
            valued_at=valued_at,
            method=CostMethod.FIFO,
            period=BucketPeriod.DAY,
            zone="UTC",
        )
        timings.append(time.perf_counter() - began)
        cpu.append(time.process_time() - began_cpu)
        assert sum(s.totals.trades for s in summaries.values()) == len(trades)
    return statistics.median(timings), statistics.median(cpu), len(trades)


@dataclass(frozen=True)
class Timed:
    """Medians of runs of `bot report`: wall and CPU seconds (its parts' included)."""

    seconds: float
    cpu: float


def whole_report(config: Path, runs: int) -> tuple[Timed, Timed, float, int]:
    """`bot report --by day` run in-process: as the command runs it, and in one process.

    The command itself (typer's test runner invokes the `bot` app in this process, its
    output captured): settings, the journal opened read-only, `build_report`, the table.
    As the command runs it, it splits the report across as many processes as this one
    may run on (`bot.app.report_workers`); in one process, as on a machine of one
    processor. The two alternate, run by run, so that both meet the machine as it is at
    the time (its speed drifts). Returns (as the command, in one process, the traced
    peak MB of the first, lines).
    """
    from typer.testing import CliRunner

    import bot.app.report_workers as workers
    from bot.cli import app

    processors = workers.processors
    runner = CliRunner()
    arguments = ["-c", str(config), "report", "--by", "day"]

    def once(one_process: bool = False) -> int:
        if one_process:
            workers.processors = lambda *_: 1  # bench-only
        try:
            result = runner.invoke(app, arguments)
        finally:
            workers.processors = processors
        if result.exit_code != 0:
            raise RuntimeError(f"bot report failed ({result.exit_code}): {result.output[-2000:]}")
        return len(result.output.splitlines())

    lines = once()  # warm: imports, the token list
    once(one_process=True)
    timings: dict[bool, list[float]] = {False: [], True: []}
    cpu: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(runs):
        for one_process in (False, True):
            began, began_cpu = time.perf_counter(), _cpu_seconds()
            once(one_process)
            timings[one_process].append(time.perf_counter() - began)
            cpu[one_process].append(_cpu_seconds() - began_cpu)
    tracemalloc.start()
    tracemalloc.reset_peak()
    once()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    split, single = (
        Timed(statistics.median(timings[one]), statistics.median(cpu[one])) for one in (False, True)
    )
    return split, single, peak / 2**20, lines


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its children that ended (the report's parts)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


_CHILD = """
import resource, subprocess, sys, time
began = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - began
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{wall} {peak} {done.returncode} {len(done.stdout.splitlines())}")
sys.stderr.write(done.stderr[-2000:])
"""


def whole_process(config: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of `python -m bot -c CONFIG report --by day`."""
    command = [PYTHON, "-m", "bot", "-c", str(config), "report", "--by", "day"]
    # A wrapper process measures its one child: RUSAGE_CHILDREN is that child and the
    # report's parts it forked (the largest of them: each part is a process of its own).
    out = subprocess.run(
        [PYTHON, "-c", _CHILD, *command], capture_output=True, text=True, cwd=ROOT, check=True
    )
    wall, peak, code, _lines = out.stdout.split()
    if code != "0":
        raise RuntimeError(f"bot report failed ({code}): {out.stderr}")
    return float(wall), float(peak)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 fills, fewer runs")
    parser.add_argument("--runs", type=int, default=None, help="runs per median")
    parser.add_argument(
        "--dense-prices",
        action="store_true",
        help="prices as `[record]` keeps them by default (1 min for 90 days, hourly before)",
    )
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    runs = args.runs or (3 if args.quick else 5)
    from bot.logging import configure_logging

    configure_logging(level="warning")
    dense = "-dense" if args.dense_prices else ""
    journal_path = CACHE / f"journal-v{FORMAT}-{100_000 // scale}{dense}.db"
    fills, built_s = build(journal_path, scale, args.dense_prices)
    how = f"built in {built_s:.1f} s" if built_s else "cached"
    print(f"journal: {fills} fills, {journal_path} ({how})", flush=True)
    alone_s, alone_cpu, trades = accounting_alone(journal_path, runs)
    print(
        f"(a) accounting alone ({trades} trades, by day, FIFO): {alone_s:.3f} s "
        f"(CPU {alone_cpu:.3f} s)",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as folder:
        config = write_config(Path(folder), journal_path)
        split, single, traced_mb, lines = whole_report(config, runs)
        report_s, report_cpu, single_s = split.seconds, split.cpu, single.seconds
        print(
            f"(b) report in-process ({lines} lines, up to {processors()} processes): "
            f"{report_s:.3f} s (CPU {report_cpu:.3f} s), traced peak {traced_mb:.0f} MB",
            flush=True,
        )
        print(
            f"(b1) the same in one process, run for run beside it: {single_s:.3f} s "
            f"(CPU {single.cpu:.3f} s); ratio {report_s / single_s:.2f}",
            flush=True,
        )
        process = [whole_process(config) for _ in range(runs)]
    process_s = statistics.median(wall for wall, _ in process)
    peak_mb = max(peak for _, peak in process)
    print(f"(c) bot report process: {process_s:.2f} s, peak RSS {peak_mb:.0f} MB", flush=True)
    ok = report_s <= TARGET_S and peak_mb <= TARGET_MB
    print(
        f"accounting: fills={fills} account_s={alone_s:.3f} report_s={report_s:.3f} "
        f"report_cpu_s={report_cpu:.3f} one_process_s={single_s:.3f} "
        f"process_s={process_s:.2f} peak_mb={peak_mb:.0f} traced_mb={traced_mb:.0f} "
        f"runs={runs} target_s={TARGET_S} target_mb={TARGET_MB:.0f} ok={'yes' if ok else 'no'}"
    )
    return 0 if ok or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
