"""Benchmark: the order tracker reconciling 10,000 orders (100 pages) into the journal.

Run from the repository root: `python bench/journal.py [orders] [--postgres]`.

The provider is a fake client serving pre-built `bot.api.models` records (5,000 DCA and
5,000 limit orders, each with 1–2 tx details, 100 per page: 100 pages of active orders),
so no network and no JSON parsing is timed; the journal is a real SQLite file (WAL,
`synchronous=FULL`) in a temporary folder. Measured:

* the first poll: every order inserted, with its transition and fills;
* "reconcile 10,000 orders with 5% changed": a poll after 5% of the orders changed status
  and amounts (limit: active → partially_filled with a new fill; DCA: one more slice
  filled, every fifth changed DCA now `filled`, which moves it to the completed list).
  Three rounds, each changing a different 5%; target ≤ 1 s (median);
* a poll with nothing changed (the steady state);
* journal bytes (database + WAL after a checkpoint) per 10,000 orders;
* the tracker's peak memory (tracemalloc) during a fourth 5%-changed poll.

With `--postgres` the same run follows on a fresh database of a throwaway PostgreSQL
cluster (harness/postgres.py: the system's `initdb`/`pg_ctl`, 127.0.0.1, `fsync=off`, so
commits cost no disk flush there, unlike SQLite's `synchronous=FULL`); its bytes are
`pg_database_size` after a checkpoint (the empty schema's ~8 MB catalog included).

The last lines are one-line summaries for CI logs (one per engine, beside the target).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sqlite3
import statistics
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, cast

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import structlog  # noqa: E402

from bot.api import GetOrdersRequest, OrderFilter, PanoraClient  # noqa: E402
from bot.api.models import FINAL_STATUSES, DcaOrder, LimitOrder, OrdersPage  # noqa: E402
from bot.clock import SteppedClock  # noqa: E402
from bot.engine.observe import observation_of  # noqa: E402
from bot.engine.tracker import OrderTracker, PollReport  # noqa: E402
from bot.journal import Journal  # noqa: E402

TARGET_S = 1.0
PAGE = 100
CHANGED = Decimal("0.05")
ROUNDS = 3
WALLET = "0x" + "5e" * 32
APT = {"address": "0x1::aptos_coin::AptosCoin", "symbol": "APT", "decimals": 8}
USDC = {
    "address": "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b",
    "symbol": "USDC",
    "decimals": 6,
}
START = datetime(2026, 1, 1, tzinfo=UTC)

Order = DcaOrder | LimitOrder


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _hex(kind: str, n: int, salt: int = 0) -> str:
    return f"0x{kind.encode().hex():0>8}{salt:08x}{n:048x}"


def _detail(kind: str, n: int, number: int, detail_type: str, amount: str) -> dict[str, Any]:
    base: dict[str, Any] = {
        "txId": _hex(kind, n, number),
        "txNumber": number,
        "type": detail_type,
        "attemptNumber": number - 1,
        "fromTokenAmount": amount,
        "fromTokenAmountUSD": amount,
        "toTokenAmount": "0" if detail_type == "created" else "1.99199857",
        "toTokenAmountUSD": "0" if detail_type == "created" else "9.95999285",
        "feeTokenAmount": "0" if detail_type == "created" else "0.005",
        "feeTokenAmountUSD": "0" if detail_type == "created" else "0.005",
        "time": _iso(START + timedelta(minutes=n + number)),
    }
    if detail_type == "filled":
        base["priceToTokenPerFromToken"] = "0.1992995067533766883441720860430215107554"
        base["priceFromTokenPerToToken"] = "5.017573883097717284"
        base["keeperWalletAddress"] = "0x" + "7a" * 32
    return base


def dca_record(n: int, completed: int, status: str = "active") -> DcaOrder:
    """A DCA of 10 slices of 10 USDC with `completed` slices filled."""
    spent = Decimal(10 * completed)
    details = [_detail("dca", n, 1, "created", "100")]
    details += [_detail("dca", n, k + 2, "filled", "10") for k in range(completed)]
    return DcaOrder.model_validate(
        {
            "panoraTxId": _hex("dca", n),
            "fromToken": USDC,
            "toToken": APT,
            "feeToken": USDC,
            "createdAtTime": _iso(START + timedelta(minutes=n)),
            "status": status,
            "fromTokenAmountSpent": str(spent),
            "fromTokenAmountBalance": str(100 - spent),
            "fromTokenAmountWithdrawn": "0",
            "toTokenAmountWithdrawn": str(Decimal("0.19919985") * completed),
            "avgPriceFromTokenPerToToken": "5.004045065763991341294803244377499772715",
            "avgPriceToTokenPerFromToken": "0.1998383281640820410205102551275637818909",
            "slippagePercentage": "1",
            "fromTokenAmountTotal": "100",
            "numberOfOrdersTotal": 10,
            "fromTokenAmountPerOrder": "10",
            "numberOfOrdersRemaining": 10 - completed,
            "numberOfOrdersCompleted": completed,
            "interval": {"value": "1", "timePeriod": "hour"},
            "nextOrderTime": _iso(START + timedelta(hours=completed + 1)),
            "minRateToTokenPerFromToken": "0",
            "maxRateToTokenPerFromToken": "Infinity",
            "platformId": "paper",
            "txDetails": details,
        }
    )


def limit_record(n: int, filled: int) -> LimitOrder:
    """A limit order selling 1 APT; `filled` partial fills of 0.25 APT each."""
    spent = Decimal("0.25") * filled
    details = [_detail("limit", n, 1, "created", "1")]
    details += [_detail("limit", n, k + 2, "filled", "0.25") for k in range(filled)]
    return LimitOrder.model_validate(
        {
            "panoraTxId": _hex("limit", n),
            "fromToken": APT,
            "toToken": USDC,
            "feeToken": APT,
            "createdAtTime": _iso(START + timedelta(minutes=n)),
            "status": "partially_filled" if filled else "active",
            "fromTokenAmountSpent": str(spent),
            "fromTokenAmountBalance": str(1 - spent),
            "fromTokenAmountWithdrawn": "0",
            "toTokenAmountWithdrawn": str(Decimal("1.5") * filled),
            "avgPriceFromTokenPerToToken": "0",
            "avgPriceToTokenPerFromToken": "0",
            "slippagePercentage": "5",
            "expireAtTime": None,
            "fromTokenAmount": "1",
            "rateToTokenPerFromToken": str(6 + n % 7),
            "numberOfOrdersCompleted": filled,
            "txDetails": details,
        }
    )


class Book:
    """The provider's orders of one wallet, as the fake client serves them."""

    def __init__(self, orders: int) -> None:
        half = orders // 2
        # Newest first, as the provider lists them. Orders start with 1 (limit: 0) fills,
        # so every order has 1–2 tx details.
        self.dca: dict[str, Order] = {}
        self.limit: dict[str, Order] = {}
        self.dca_state = dict.fromkeys(range(half), 1)
        self.limit_state = dict.fromkeys(range(orders - half), 0)
        for n in reversed(range(half)):
            dca = dca_record(n, 1)
            self.dca[dca.order_id] = dca
        for n in reversed(range(orders - half)):
            limit = limit_record(n, 0)
            self.limit[limit.order_id] = limit
        self.finished: list[tuple[str, str]] = []  # (kind, id), newest first

    def change(self, round_number: int) -> int:
        """Change a different 5% of the orders in each round; returns how many changed."""
        changed = 0
        for kind, state in (("dca", self.dca_state), ("limit", self.limit_state)):
            count = int(len(state) * CHANGED)
            live = [n for n in sorted(state) if self._live(kind, n)]
            start = (round_number * count) % max(1, len(live))
            for index, n in enumerate((live * 2)[start : start + count]):
                state[n] += 1
                if kind == "dca":
                    status = "filled" if index % 5 == 0 else "active"
                    record: Order = dca_record(n, state[n], status)
                    if status == "filled":
                        self.finished.insert(0, ("dca", record.order_id))
                    self.dca[record.order_id] = record
                else:
                    record = limit_record(n, min(state[n], 3))
                    self.limit[record.order_id] = record
                changed += 1
        return changed

    def _live(self, kind: str, n: int) -> bool:
        orders = self.dca if kind == "dca" else self.limit
        return orders[_hex(kind, n)].status not in FINAL_STATUSES


class FakeProvider:
    """`get_orders` over a `Book`: active pages, completed pages, lookups by id."""

    chain_id = 1

    def __init__(self, book: Book) -> None:
        self.book = book
        self.requests = 0

    async def get_orders(self, kind: str, request: GetOrdersRequest) -> OrdersPage[Any]:
        self.requests += 1
        orders = self.book.dca if kind == "dca" else self.book.limit
        if request.order_id is not None:
            found = orders.get(request.order_id)
            wanted = request.status == OrderFilter.COMPLETED
            hit = [found] if found is not None and found.is_final == wanted else []
            return OrdersPage(self.chain_id, request.wallet, 1, 1, hit)
        if request.status == OrderFilter.COMPLETED:
            listed = [orders[i] for k, i in self.book.finished if k == kind]
        else:
            listed = [o for o in orders.values() if not o.is_final]
        size = request.limit
        pages = max(1, -(-len(listed) // size))
        start = (request.page_number - 1) * size
        chunk = listed[start : start + size]
        return OrdersPage(self.chain_id, request.wallet, request.page_number, pages, chunk)


def journal_bytes(path: Path) -> int:
    """Database + WAL after a checkpoint (the journal stays open)."""
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def breakdown(journal: Journal, book: Book, clock: SteppedClock) -> list[str]:
    """Where a poll's time goes: its three big steps, each timed alone over every order."""
    records: list[tuple[Literal["dca", "limit"], Order]] = [
        *(("dca", o) for o in book.dca.values()),
        *(("limit", o) for o in book.limit.values()),
    ]
    start = time.perf_counter()
    observations = [observation_of(kind, order, WALLET) for kind, order in records]
    observe_s = time.perf_counter() - start
    start = time.perf_counter()
    for kind in ("dca", "limit"):
        journal.orders(kind=kind, wallet=WALLET, exclude_status=FINAL_STATUSES)
    live_s = time.perf_counter() - start
    clock.advance(timedelta(minutes=1))
    start = time.perf_counter()
    journal.observe_orders(observations, observed_at=clock.now(), source="poll")
    write_s = time.perf_counter() - start
    return [
        f"breakdown over {len(records)} unchanged records: "
        f"observation_of (snapshot + raw hash) {observe_s:.3f} s, "
        f"journal.orders (the live list, for unseen orders) {live_s:.3f} s, "
        f"journal.observe_orders {write_s:.3f} s"
    ]


async def timed_poll(tracker: OrderTracker, clock: SteppedClock) -> tuple[float, PollReport]:
    clock.advance(timedelta(minutes=1))
    start = time.perf_counter()
    report = await tracker.poll()
    return time.perf_counter() - start, report


def describe(label: str, seconds: float, report: PollReport) -> str:
    return (
        f"{label}: {seconds:.3f} s (pages {report.pages}, orders {report.orders_seen}, "
        f"transitions {report.transitions}, fills {report.fills}, events {len(report.events)})"
    )


@dataclass
class Figures:
    """One engine's figures."""

    engine: str
    changed_s: list[float]
    first_s: float
    same_s: float
    per_10k: int
    peak_mb: float

    @property
    def median(self) -> float:
        """The median of the 5%-changed polls."""
        return statistics.median(self.changed_s)

    def line(self) -> str:
        """The one summary line of this engine."""
        ok = "yes" if self.median <= TARGET_S else "no"
        return (
            f"journal: engine={self.engine} poll_10k_5pct_changed_s={self.median:.2f} "
            f"max_s={max(self.changed_s):.2f} first_poll_s={self.first_s:.2f} "
            f"unchanged_poll_s={self.same_s:.2f} bytes_per_10k={self.per_10k} "
            f"peak_mb={self.peak_mb:.0f} target_s={TARGET_S} ok={ok}"
        )


def postgres_bytes(url: str) -> int:
    """The database's size on disk (`pg_database_size`, tables, indexes and TOAST)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            connection.execute(text("CHECKPOINT"))
            size = connection.execute(text("SELECT pg_database_size(current_database())"))
            return int(size.scalar_one())
    finally:
        engine.dispose()


async def run(orders: int, url: str | None = None) -> Figures:
    """The benchmark on a temporary SQLite file, or on the empty database at `url`."""
    build_start = time.perf_counter()
    book = Book(orders)
    build_s = time.perf_counter() - build_start
    print(f"built {orders} records (model_validate, not timed below): {build_s:.2f} s")
    provider = FakeProvider(book)
    clock = SteppedClock(START)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        journal_url = url or f"sqlite:///{path}"

        def size() -> int:
            return postgres_bytes(journal_url) if url else journal_bytes(path)

        journal = Journal.open(journal_url)
        tracker = OrderTracker(cast(PanoraClient, provider), journal, clock, WALLET, page_size=PAGE)
        first_s, first = await timed_poll(tracker, clock)
        print(describe("first poll (all inserts)", first_s, first))
        assert first.orders_seen == orders and first.transitions == orders
        first_bytes = size()

        changed_s: list[float] = []
        for round_number in range(ROUNDS):
            changed = book.change(round_number)
            seconds, report = await timed_poll(tracker, clock)
            changed_s.append(seconds)
            print(
                describe(
                    f"poll, {changed} orders changed (round {round_number + 1})", seconds, report
                )
            )
            assert report.fills == changed, (report.fills, changed)

        same_s, same = await timed_poll(tracker, clock)
        print(describe("poll, nothing changed", same_s, same))
        assert same.transitions == 0 and same.fills == 0

        changed = book.change(ROUNDS)
        tracemalloc.start()
        tracemalloc.reset_peak()
        traced_s, report = await timed_poll(tracker, clock)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(describe(f"poll under tracemalloc (slowed), {changed} changed", traced_s, report))

        for line in breakdown(journal, book, clock):
            print(line)

        final_bytes = size()
        journal.close()
    per_10k = final_bytes * 10_000 // orders
    first_per_10k = first_bytes * 10_000 // orders
    peak_mb = peak / 2**20
    print(
        f"journal bytes: {first_bytes} after the first poll ({first_per_10k} per 10k orders), "
        f"{final_bytes} after {ROUNDS + 1} rounds of changes ({per_10k} per 10k orders)"
    )
    print(f"tracker peak memory (tracemalloc, 5% changed poll): {peak_mb:.1f} MiB")
    print(f"provider requests: {provider.requests}")
    engine = "postgresql" if url else "sqlite"
    return Figures(engine, changed_s, first_s, same_s, per_10k, peak_mb)


def _postgres_figures(orders: int) -> Figures:
    """The benchmark on a fresh database of a throwaway cluster (harness/postgres.py)."""
    from harness.postgres import missing_reason, start_cluster

    reason = missing_reason()
    if reason is not None:
        sys.exit(f"--postgres: {reason}")
    cluster = start_cluster()
    try:
        print(f"--- postgresql (throwaway cluster on 127.0.0.1:{cluster.port}, fsync off)")
        return asyncio.run(run(orders, cluster.url(cluster.create_database("bench"))))
    finally:
        cluster.stop()


def main(argv: list[str] | None = None) -> int:
    """Run on SQLite (and on PostgreSQL with `--postgres`); print the summary lines last."""
    parser = argparse.ArgumentParser(prog="journal", description=__doc__.split("\n")[0])
    parser.add_argument("orders", nargs="?", type=int, default=10_000)
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="run it again on a throwaway PostgreSQL cluster (harness/postgres.py)",
    )
    args = parser.parse_args(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    if args.postgres:
        print("--- sqlite")
    figures = [asyncio.run(run(args.orders))]
    if args.postgres:
        figures.append(_postgres_figures(args.orders))
    for each in figures:
        print(each.line())
    return 0 if all(f.median <= TARGET_S for f in figures) else 1


if __name__ == "__main__":
    raise SystemExit(main())
