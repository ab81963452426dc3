"""The fast paths of `bot report` over a year of fills give exactly what the plain ones give.

`checked_trade` against `Trade(...)`; `trades_of_order` (per-order values once, shared
fees, unchecked construction of plainly valid values) against the plain version it
replaced, errors included; the lots held as pairs against lots as objects; the journal's
batched, column-wise fill read and its µs price read against the plain reads, with
batches small enough to split an order's fills.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bot.journal.fills_read as fills_read
from bot.accounting import CostMethod, Fee, FeeKind, Trade
from bot.accounting.exact import EXACT, ZERO, ratio, total
from bot.accounting.from_journal import UNASSIGNED, trades_of_order
from bot.accounting.lots import CostBasis, Lot, Taken
from bot.accounting.prices import PriceBook, PricePoint, PriceSeries
from bot.accounting.records import Pair, checked_trade
from bot.app.report_load import load_records
from bot.clock import to_micros
from bot.journal import Journal
from bot.journal.fills_read import fills_by_order_row, price_micros
from bot.journal.rows import FillRow
from bot.journal.views import FillRecord, OrderObservation, OrderSnapshot, OrderView, PriceTickRow
from tests.unit.accounting.test_lean_paths import _mean_in_quote

T0 = datetime(2025, 6, 1, tzinfo=UTC)
WALLET = "0x" + "ab" * 32
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"

amounts = st.one_of(
    st.none(),
    st.integers(min_value=0, max_value=10**12).map(lambda n: Decimal(n).scaleb(-6)),
    st.sampled_from([Decimal("10"), Decimal("0.02"), Decimal("-1"), Decimal("Infinity")]),
)
moments = st.one_of(
    st.none(),
    st.integers(min_value=0, max_value=10**6).map(lambda m: T0 + timedelta(minutes=m)),
    st.sampled_from(
        [
            datetime(2025, 6, 1, 12, tzinfo=timezone(timedelta(hours=2))),  # another offset
            datetime(2025, 6, 1, 12),  # naive: refused
        ]
    ),
)
fill_rows = st.builds(
    FillRow,
    tx_id=st.sampled_from(["0xa", "0xb"]),
    type=st.sampled_from(["filled", "filled", "created", "cancelled"]),
    tx_number=st.one_of(st.none(), st.integers(1, 500)),
    from_amount=amounts,
    to_amount=amounts,
    fee_amount=amounts,
    time=moments,
    keeper=st.none(),
    price_to_per_from=st.none(),
    from_amount_usd=amounts,
    to_amount_usd=amounts,
    fee_amount_usd=amounts,
    recorded_at=st.just(T0),
)


def _order(strategy: str | None = "dca-apt") -> OrderView:
    return OrderView(
        kind="dca",
        order_id="0xorder",
        wallet=WALLET,
        from_token=USDC,
        to_token=APT,
        status="completed",
        amount_total=Decimal(100),
        strategy=strategy,
        row_id=1,
        created_at=T0,
        updated_at=T0,
        last_seen_at=T0,
    )


def _unit_price(usd: Decimal | None, amount: Decimal | None) -> Decimal | None:
    if usd is None or amount is None or amount <= 0 or usd <= 0:
        return None
    return ratio(usd, amount)


def _plain_trades_of_order(
    order: OrderView, fills: list[FillRow], fee_token: str | None = None
) -> list[Trade]:
    """`trades_of_order` as first written: every trade and fee made and checked anew."""
    trades: list[Trade] = []
    for fill in fills:
        if fill.type != "filled" or not fill.from_amount or not fill.to_amount:
            continue
        fee = fill.fee_amount or Decimal(0)
        number = "" if fill.tx_number is None else f"#{fill.tx_number}"
        trades.append(
            Trade(
                time=fill.time if fill.time is not None else fill.recorded_at,
                strategy=order.strategy or UNASSIGNED,
                wallet=order.wallet,
                ref=f"{order.kind}:{order.order_id}{number}",
                sold_token=order.from_token,
                sold=fill.from_amount,
                bought_token=order.to_token,
                bought=fill.to_amount,
                fees=(Fee(FeeKind.KEEPER, fee_token or order.from_token, fee, fill.fee_amount_usd),)
                if fee
                else (),
                sold_usd_price=_unit_price(fill.from_amount_usd, fill.from_amount),
                bought_usd_price=_unit_price(fill.to_amount_usd, fill.to_amount),
                label=fill.tx_id,
            )
        )
    return trades


def _outcome(make: Callable[[], list[Trade]]) -> list[Trade] | tuple[str, str]:
    """What `make()` gives, or the class and message of what it raised (compared)."""
    try:
        return make()
    except Exception as exc:
        return type(exc).__name__, str(exc)


@settings(max_examples=400, deadline=None)
@given(st.lists(fill_rows, max_size=8), st.sampled_from([None, "dca-apt"]), st.booleans())
def test_trades_of_an_order_are_the_plain_ones_errors_included(
    fills: list[FillRow], strategy: str | None, other_fee_token: bool
) -> None:
    order = _order(strategy)
    fee_token = "GUI" if other_fee_token else None
    fast = _outcome(lambda: trades_of_order(order, fills, fee_token=fee_token))
    plain = _outcome(lambda: _plain_trades_of_order(order, fills, fee_token))
    assert fast == plain
    if isinstance(fast, list):
        for made in fast:  # the same fields, of the same types, and an aware UTC time
            assert type(made) is Trade and made.time.tzinfo is UTC
            again = Trade(*(getattr(made, f.name) for f in dataclasses.fields(Trade)))
            assert again == made and repr(again) == repr(made)


def test_equal_fees_of_an_order_are_one_fee() -> None:
    fee = Decimal("0.02")
    nothing = (None, None, None, None, None)
    fills = [
        FillRow(f"0x{n}", "filled", n, Decimal(10), Decimal(2), fee, T0, *nothing, T0)
        for n in range(5)
    ]
    trades = trades_of_order(_order(), fills)
    assert len(trades) == 5 and len({id(t.fees) for t in trades}) == 1
    assert trades[0].fees == (Fee(FeeKind.KEEPER, USDC, Decimal("0.02")),)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 10**9).map(lambda m: T0 + timedelta(microseconds=m)),
    st.integers(0, 10**15).map(lambda n: Decimal(n).scaleb(-8)),
    st.integers(0, 10**15).map(lambda n: Decimal(n).scaleb(-6)),
    st.integers(0, 10**6),
    st.one_of(st.none(), st.decimals(min_value=0, max_value=10**6, places=4)),
)
def test_a_checked_trade_is_the_trade(
    time: datetime, sold: Decimal, bought: Decimal, octas: int, usd: Decimal | None
) -> None:
    fees = (Fee(FeeKind.KEEPER, "USDC", Decimal("0.02"), usd),)
    values = (time, "s", "w", "ref", "USDC", sold, "APT", bought, fees, octas, usd, usd, None, "l")
    made = checked_trade(*values)
    plain = Trade(*values)
    assert made == plain and hash(made) == hash(plain) and repr(made) == repr(plain)
    assert dataclasses.astuple(made) == dataclasses.astuple(plain)
    assert dataclasses.replace(made, label="x") == dataclasses.replace(plain, label="x")


class _PlainBasis:
    """`CostBasis` as first written: each lot a mutable object."""

    def __init__(self, method: CostMethod) -> None:
        self.method = method
        self.lots: dict[str, deque[Lot]] = {}

    def add(self, token: str, quantity: Decimal, cost: Decimal) -> None:
        if quantity <= ZERO:
            return
        lots = self.lots.setdefault(token, deque())
        if self.method is CostMethod.AVERAGE and lots:
            lots[0].quantity = EXACT.add(lots[0].quantity, quantity)
            lots[0].cost = EXACT.add(lots[0].cost, cost)
        else:
            lots.append(Lot(quantity, cost))

    def take(self, token: str, quantity: Decimal) -> Taken:
        lots = self.lots.get(token)
        left, cost = quantity, ZERO
        while lots and left > ZERO:
            lot = lots[0]
            if lot.quantity <= left:
                cost = EXACT.add(cost, lot.cost)
                left = EXACT.subtract(left, lot.quantity)
                lots.popleft()
                continue
            share = ratio(EXACT.multiply(lot.cost, left), lot.quantity)
            cost = EXACT.add(cost, share)
            lot.quantity = EXACT.subtract(lot.quantity, left)
            lot.cost = EXACT.subtract(lot.cost, share)
            left = ZERO
        if lots is not None and not lots:
            del self.lots[token]
        return Taken(cost, left)

    def held(self) -> dict[str, Lot]:
        return {
            token: Lot(total(lot.quantity for lot in lots), total(lot.cost for lot in lots))
            for token, lots in self.lots.items()
        }


small = st.integers(0, 10**6).map(lambda n: Decimal(n).scaleb(-3))


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(list(CostMethod)),
    st.lists(st.tuples(st.booleans(), st.sampled_from(["APT", "GUI"]), small, small), max_size=30),
)
def test_lots_as_pairs_are_lots_as_objects(
    method: CostMethod, steps: list[tuple[bool, str, Decimal, Decimal]]
) -> None:
    basis, plain = CostBasis(method), _PlainBasis(method)
    for buying, token, quantity, cost in steps:
        if buying:
            basis.add(token, quantity, cost)
            plain.add(token, quantity, cost)
        else:
            taken, expected = basis.take(token, quantity), plain.take(token, quantity)
            assert taken == expected
            assert str(taken.cost) == str(expected.cost)  # the same digits, too
        assert basis.held() == plain.held()


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    path = tmp_path / "bot.db"
    with Journal.open(f"sqlite:///{path}") as writer:
        observations = []
        for index in range(4):
            snapshot = OrderSnapshot(
                kind="dca",
                order_id=f"0xorder{index}",
                wallet=WALLET,
                from_token=USDC if index % 2 == 0 else APT,
                to_token=APT if index % 2 == 0 else USDC,
                status="completed",
                amount_total=Decimal(50),
                strategy=f"s{index % 2}",
                provider_created_at=T0,
            )
            fills = [FillRecord(f"0x{index}c", "created", 1, Decimal(50), time=T0)]
            fills += [
                FillRecord(
                    f"0x{index}f{n}",
                    "filled",
                    n + 2,
                    Decimal(10),
                    Decimal("1.9") + Decimal(n + index).scaleb(-3),
                    Decimal("0.02") if n % 2 else None,
                    T0 + timedelta(minutes=7 * n + index),
                    "0x" + "7a" * 32,
                    None,
                    Decimal("10.01") if n == 1 else None,
                )
                for n in range(5)
            ]
            observations.append(OrderObservation(snapshot, fills=fills))
        # Two polls: the second adds fills, so an order's fills are not all together.
        writer.observe_orders(observations[:2], observed_at=T0, source="poll")
        writer.observe_orders(observations, observed_at=T0 + timedelta(hours=1), source="poll")
        writer.add_price_ticks(
            [
                PriceTickRow(T0 + timedelta(minutes=5 * n), token, Decimal(price) + n % 4)
                for n in range(40)
                for token, price in ((APT, "5.5"), (USDC, "1"))
            ]
        )
    with Journal.open(f"sqlite:///{path}", readonly=True) as reader:
        yield reader


def test_small_batches_and_a_small_memory_read_the_same(
    journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    fills = fills_by_order_row(journal)
    loaded = {name: load_records(journal, name) for name in (None, "s0", "s1")}
    assert sum(len(rows) for rows in fills.values()) == 24
    monkeypatch.setattr(fills_read, "_BATCH", 3)  # an order's fills over several batches
    monkeypatch.setattr(fills_read, "_SHARED", 2)  # texts seen forgotten at every batch
    assert fills_by_order_row(journal) == fills
    for name, expected in loaded.items():
        again = load_records(journal, name)
        assert again.trades == expected.trades and again.latest == expected.latest
        for token in (APT, USDC):
            series, before = again.book.series(token), expected.book.series(token)
            assert series is not None and before is not None
            assert series.columns() == before.columns()


def test_a_series_of_prices_read_in_micros_is_the_series_of_the_ticks(journal: Journal) -> None:
    for token in (APT, USDC, "0x1::nothing::Here"):
        ticks = journal.price_ticks(token)
        micros, prices = price_micros(journal, token)
        assert list(micros) == [to_micros(t.timestamp) for t in ticks]
        assert prices == [t.usd_price for t in ticks]
        if ticks:
            times = [t.timestamp for t in ticks]
            assert (
                PriceSeries.of_micros(token, micros, prices).columns()
                == PriceSeries.of_columns(token, times, prices).columns()
            )
    assert [list(column) for column in price_micros(journal, "0x1::nothing::Here")] == [[], []]


def test_a_series_of_micros_out_of_order_is_the_series_of_its_points() -> None:
    times = [T0 + timedelta(minutes=m) for m in (5, 1, 3, 3)]
    prices = [Decimal(p) for p in ("1.5", "2", "3", "4")]
    micros = [to_micros(t) for t in times]
    assert (
        PriceSeries.of_micros("APT", micros, prices).columns()
        == PriceSeries.of_columns("APT", times, prices).columns()
    )
    with pytest.raises(ValueError, match="price of APT"):
        PriceSeries.of_micros("APT", micros[:2], [Decimal(1), Decimal(-1)])
    with pytest.raises(ValueError, match="2 times, 1 prices"):
        PriceSeries.of_micros("APT", micros[:2], [Decimal(1)])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=3000),
            st.integers(min_value=0, max_value=10**6).map(lambda n: Decimal(n).scaleb(-3)),
            st.integers(min_value=0, max_value=10**4).map(lambda n: Decimal(n).scaleb(-2)),
        ),
        max_size=12,
    ),
    st.integers(-100, 3100),
    st.integers(0, 3200),
)
def test_the_mean_of_prices_recorded_together_is_the_merged_mean(
    points: list[tuple[int, Decimal, Decimal]], first: int, length: int
) -> None:
    """Both series at the same moments (the recorder's way) take the aligned path."""
    book = PriceBook.of_points(
        {
            "APT": [PricePoint(T0 + timedelta(minutes=m), b) for m, b, _ in points],
            "USDC": [PricePoint(T0 + timedelta(minutes=m), q) for m, _, q in points],
        }
    )
    pair = Pair(base="APT", quote="USDC")
    start = T0 + timedelta(minutes=first)
    for end in (start + timedelta(minutes=length), start):
        expected = _mean_in_quote(book, pair, start, end)
        found = book.mean_in_quote(pair, start, end)
        assert found == expected and str(found) == str(expected)
