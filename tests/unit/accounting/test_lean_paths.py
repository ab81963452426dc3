"""The fast paths of `bot report` give exactly what the plain ones give.

The journal's bulk reads (`bot.journal.fills_read`) against its ORM reads on a real
SQLite file; the report's loader against the per-order path it replaced; the price
series built from columns, the merged mean, the memoised bucket keys and the totals
summed from buckets against their straightforward versions.
"""

from __future__ import annotations

import dataclasses
import gc
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.accounting import (
    BucketPeriod,
    CostMethod,
    Fee,
    FeeKind,
    Pair,
    PriceBook,
    PricePoint,
    PriceSeries,
    Trade,
    account,
    bucket_of,
    zone_of,
)
from bot.accounting.buckets import bucket_keys
from bot.accounting.exact import EXACT, ratio
from bot.accounting.from_journal import price_book, trades_of_order
from bot.app.errors import SetupError
from bot.app.report import ReportRequest, _CollectorPause, build_report
from bot.app.report_load import load_trades
from bot.clock import to_micros
from bot.journal import Journal
from bot.journal.fills_read import fills_by_order_row, order_views, price_micros
from bot.journal.rows import FillRow
from bot.journal.views import (
    FillRecord,
    FillView,
    OrderObservation,
    OrderSnapshot,
    PriceTickRow,
)

T0 = datetime(2026, 3, 28, 20, tzinfo=UTC)  # a daylight-saving change in Europe next day
WALLET = "0x" + "ab" * 32
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
GUI = "0xe4ccb6d39136469f376242c31b34d10515c8eaaa38092f804db8e08a8f53c5b2::assets_v1::EchoCoin002"


def _fills(prefix: str, count: int, start: datetime) -> list[FillRecord]:
    fills = [FillRecord(f"{prefix}c", "created", 1, Decimal(10 * count), time=start)]
    for n in range(count):
        fills.append(
            FillRecord(
                f"{prefix}f{n}",
                "filled",
                n + 2,
                Decimal("10"),
                Decimal("1.9") + Decimal(n).scaleb(-3),
                Decimal("0.02") if n % 2 else None,
                None if n == 3 else start + timedelta(hours=5 * n),  # one without a time
                "0x" + "7a" * 32,
                Decimal("0.19"),
                Decimal("10.01") if n % 3 == 0 else None,  # the provider's USD values
                Decimal("9.99") if n % 3 == 0 else None,
                Decimal("0.02") if n % 6 == 0 else None,
            )
        )
    return fills


@pytest.fixture(params=["sqlite", "postgresql"])
def journal(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Journal]:
    """The same journal on each engine (the bulk reads are plain SQL: both must agree)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'bot.db'}"
    else:
        url = str(request.getfixturevalue("pg_database_url"))
    with Journal.open(url) as writer:
        orders = []
        for index, (strategy, sold, bought) in enumerate(
            [
                ("dca-apt", USDC, APT),
                ("dca-gui", USDC, GUI),
                ("dca-apt", USDC, APT),
                (None, APT, USDC),
            ]
        ):
            snapshot = OrderSnapshot(
                kind="dca" if index < 3 else "limit",
                order_id=f"0xorder{index}",
                wallet=WALLET,
                from_token=sold,
                to_token=bought,
                status="active",
                amount_total=Decimal(100),
                strategy=strategy,
                max_rate=Decimal("Infinity") if index == 0 else None,
                provider_created_at=T0,
            )
            start = T0 + timedelta(hours=index)
            orders.append(OrderObservation(snapshot, fills=_fills(f"0x{index}", 6, start)))
        writer.observe_orders(orders, observed_at=T0 + timedelta(days=3), source="poll")
        ticks = [
            PriceTickRow(T0 + timedelta(minutes=37 * n), token, Decimal(price) + n)
            for n in range(60)
            for token, price in ((APT, "5.5"), (USDC, "1"))
        ]
        writer.add_price_ticks(ticks)
    with Journal.open(url, readonly=True) as reader:
        yield reader


def test_a_fill_row_has_the_fill_views_fields_in_order() -> None:
    assert FillRow._fields == tuple(f.name for f in dataclasses.fields(FillView))


def test_the_bulk_reads_give_what_the_orm_reads_give(journal: Journal) -> None:
    orders = journal.orders()
    assert order_views(journal) == orders
    every = fills_by_order_row(journal)
    apt = fills_by_order_row(journal, strategy="dca-apt")
    assert set(apt) == {o.row_id for o in orders if o.strategy == "dca-apt"}
    for order in orders:
        views = journal.fills(order.kind, order.order_id)
        assert len(views) == 7
        assert every[order.row_id] == [FillRow(*dataclasses.astuple(v)) for v in views]
    for token in (APT, USDC, GUI):  # GUI: no prices
        ticks = journal.price_ticks(token)
        micros, prices = price_micros(journal, token)
        assert list(micros) == [to_micros(t.timestamp) for t in ticks]
        assert prices == [t.usd_price for t in ticks]


def test_the_loader_gives_what_the_per_order_path_gives(journal: Journal) -> None:
    for strategy in (None, "dca-apt", "dca-gui"):
        trades, book, latest = load_trades(journal, strategy)
        expected = [
            trade
            for order in journal.orders()
            if strategy is None or order.strategy == strategy
            for trade in trades_of_order(order, journal.fills(order.kind, order.order_id))
        ]
        assert trades == expected
        assert len(trades) == {None: 24, "dca-apt": 12, "dca-gui": 6}[strategy]
        tokens = sorted({t for trade in trades for t in (trade.sold_token, trade.bought_token)})
        ticks = [tick for token in tokens for tick in journal.price_ticks(token)]
        plain = price_book(ticks)
        for minutes in range(-60, 60 * 40, 17):
            moment = T0 + timedelta(minutes=minutes)
            for token in tokens:
                assert book.usd_at(token, moment) == plain.usd_at(token, moment)
        moments = [tick.timestamp for tick in ticks] + [trade.time for trade in trades]
        assert latest == max(moments)


def test_the_report_restores_the_garbage_collector(journal: Journal) -> None:
    assert gc.isenabled()
    report = build_report(journal, ReportRequest(period=BucketPeriod.DAY), [])
    assert gc.isenabled() and report.summaries
    with pytest.raises(SetupError, match="unknown strategy"):
        build_report(journal, ReportRequest(strategy="nope"), [])
    assert gc.isenabled()
    gc.disable()
    try:
        build_report(journal, ReportRequest(), [])
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()


def test_reports_in_two_threads_resume_the_collector_when_both_are_done() -> None:
    pause = _CollectorPause()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with pause():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with pause():
            second_in.set()
            first_out.wait(5)
            seen.append(gc.isenabled())  # the first is done, this one still runs
        seen.append(gc.isenabled())

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == [False, True] and gc.isenabled()


def test_a_series_of_columns_is_the_series_of_its_points() -> None:
    times = [T0 + timedelta(minutes=m) for m in (5, 1, 3, 3, 9)]
    prices = [Decimal(p) for p in ("1.5", "2", "3", "4", "0")]
    points = [PricePoint(t, p) for t, p in zip(times, prices, strict=True)]
    ordered = sorted(range(5), key=lambda i: (times[i], i))
    for pick in (ordered[:2] + ordered[3:], ordered, list(range(5))):  # sorted, dup, unsorted
        series = PriceSeries.of_columns("APT", [times[i] for i in pick], [prices[i] for i in pick])
        plain = PriceSeries("APT", [points[i] for i in pick])
        assert series.columns() == plain.columns()
        assert len(series) == len(plain)
    with pytest.raises(ValueError, match="price of APT"):
        PriceSeries.of_columns("APT", times[:2], [Decimal(1), Decimal(-1)])
    with pytest.raises(ValueError, match="price of APT"):
        PriceSeries.of_columns("APT", times[:2], [Decimal(1), 2.5])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="2 times, 1 prices"):
        PriceSeries.of_columns("APT", times[:2], [Decimal(1)])


def _mean_in_quote(book: PriceBook, pair: Pair, start: datetime, end: datetime) -> Decimal | None:
    """The time-weighted mean as first written (a sorted union of moments, then a walk)."""
    base, quote = book.series(pair.base), book.series(pair.quote)
    if base is None or quote is None:
        return None
    base_steps, quote_steps = base.steps(start, end), quote.steps(start, end)
    moments = sorted({t for t, _ in base_steps} | {t for t, _ in quote_steps})
    steps: list[tuple[int, Decimal]] = []
    b = q = -1
    for moment in moments:
        while b + 1 < len(base_steps) and base_steps[b + 1][0] <= moment:
            b += 1
        while q + 1 < len(quote_steps) and quote_steps[q + 1][0] <= moment:
            q += 1
        if b >= 0 and q >= 0 and quote_steps[q][1] > 0:
            steps.append((moment, ratio(base_steps[b][1], quote_steps[q][1])))
    if not steps:
        return None
    end_us = (end - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    if steps[0][0] >= end_us:
        return steps[0][1]
    weighted = Decimal(0)
    following = [s[0] for s in steps[1:]] + [end_us]
    for (t, price), nxt in zip(steps, following, strict=True):
        weighted = EXACT.add(weighted, EXACT.multiply(price, Decimal(nxt - t)))
    return ratio(weighted, Decimal(end_us - steps[0][0]))


series_points = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=3000),
        st.integers(min_value=0, max_value=10**6).map(lambda n: Decimal(n).scaleb(-3)),
    ),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(series_points, series_points, st.integers(-100, 3100), st.integers(0, 3200))
def test_the_merged_mean_is_the_mean_of_the_union_of_moments(
    base: list[tuple[int, Decimal]], quote: list[tuple[int, Decimal]], first: int, length: int
) -> None:
    book = PriceBook.of_points(
        {
            "APT": [PricePoint(T0 + timedelta(minutes=m), p) for m, p in base],
            "USDC": [PricePoint(T0 + timedelta(minutes=m), p) for m, p in quote],
        }
    )
    pair = Pair(base="APT", quote="USDC")
    start = T0 + timedelta(minutes=first)
    for end in (start + timedelta(minutes=length), start):
        assert book.mean_in_quote(pair, start, end) == _mean_in_quote(book, pair, start, end)


@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin", "Asia/Kathmandu", "America/St_Johns"])
@pytest.mark.parametrize("period", list(BucketPeriod))
def test_memoised_bucket_keys_are_bucket_of(zone: str, period: BucketPeriod) -> None:
    tz = zone_of(zone)
    key = bucket_keys(period, tz)
    moment = datetime(2026, 3, 25, tzinfo=UTC)
    while moment < datetime(2026, 4, 3, tzinfo=UTC):
        assert key(moment) == bucket_of(moment, period, tz), moment
        moment += timedelta(minutes=15)


def test_totals_with_buckets_are_the_totals_without() -> None:
    trades = []
    for n in range(40):
        buying = n % 3 != 2
        trades.append(
            Trade(
                time=T0 + timedelta(hours=7 * n),
                strategy="s",
                wallet="w",
                ref=f"r{n}",
                sold_token="USDC" if buying else "APT",
                sold=Decimal("10") if buying else Decimal("1.5"),
                bought_token="APT" if buying else "USDC",
                bought=Decimal("2") if buying else Decimal("8.25"),
                fees=(Fee(FeeKind.KEEPER, "GUI", Decimal("0.1")),) if n % 4 == 0 else (),
                gas_octas=1000 * n,
                gas_usd=Decimal("0.01") if n % 5 == 0 else None,
            )
        )
    book = PriceBook.of_points(
        {
            "APT": [PricePoint(T0 + timedelta(hours=h), Decimal(5) + h % 7) for h in range(300)],
            "USDC": [PricePoint(T0, Decimal(1))],
        }
    )
    for method in CostMethod:
        plain = account(trades, book, valued_at=T0 + timedelta(days=20), method=method)
        for period in BucketPeriod:
            for zone in ("UTC", "Europe/Berlin"):
                summary = account(
                    trades,
                    book,
                    valued_at=T0 + timedelta(days=20),
                    method=method,
                    period=period,
                    zone=zone,
                )
                assert summary.totals == plain.totals
                assert summary.totals.fees_unvalued == 10  # GUI has no price
