"""Properties over generated trades: buckets add up to the total; FIFO and average cost
agree on everything but the order in which cost is taken."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.accounting import (
    BucketPeriod,
    CostMethod,
    Fee,
    FeeKind,
    Figures,
    PriceBook,
    PricePoint,
    Trade,
    account,
)
from bot.accounting.exact import total

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TOKENS = ("APT", "USDC", "GUI")
ZONES = ("UTC", "Europe/Berlin", "America/New_York", "Pacific/Kiritimati", "Asia/Kathmandu")

amounts = st.integers(min_value=1, max_value=10**12).map(lambda n: Decimal(n).scaleb(-6))
prices = st.integers(min_value=1, max_value=10**9).map(lambda n: Decimal(n).scaleb(-4))
minutes = st.integers(min_value=0, max_value=120 * 24 * 60)


@st.composite
def trades(draw: st.DrawFn) -> Trade:
    """Any trade between two of the tokens, sometimes with fees, gas and own prices."""
    sold, bought = draw(st.permutations(TOKENS))[:2]
    fees = tuple(
        Fee(draw(st.sampled_from(list(FeeKind))), draw(st.sampled_from(TOKENS)), draw(amounts))
        for _ in range(draw(st.integers(0, 2)))
    )
    gas = draw(st.integers(0, 10**7))
    return Trade(
        time=T0 + timedelta(minutes=draw(minutes)),
        strategy=draw(st.sampled_from(("a", "b"))),
        wallet="w",
        ref=f"r{draw(st.integers(0, 10**6))}",
        sold_token=sold,
        sold=draw(amounts),
        bought_token=bought,
        bought=draw(amounts),
        fees=fees,
        gas_octas=gas,
        gas_usd=draw(st.none() | amounts) if gas else None,
        sold_usd_price=draw(st.none() | prices),
    )


@st.composite
def books(draw: st.DrawFn) -> PriceBook:
    """Each token priced at a few moments (GUI sometimes never)."""
    points: dict[str, list[PricePoint]] = {}
    for token in TOKENS:
        if token == "GUI" and draw(st.booleans()):
            continue
        moments = draw(st.lists(minutes, min_size=1, max_size=8))
        points[token] = [
            PricePoint(T0 + timedelta(minutes=m), draw(prices)) for m in [-1, *moments]
        ]
    return PriceBook.of_points(points)


def _sum_by_token(parts: list[dict[str, Decimal]]) -> dict[str, Decimal]:
    sums: dict[str, Decimal] = {}
    for part in parts:
        for token, amount in part.items():
            sums[token] = sums.get(token, Decimal(0)) + amount
    return dict(sorted(sums.items()))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(trades(), max_size=30),
    books(),
    st.sampled_from(list(BucketPeriod)),
    st.sampled_from(ZONES),
    st.sampled_from(list(CostMethod)),
)
def test_buckets_add_up_to_the_total(
    generated: list[Trade], book: PriceBook, period: BucketPeriod, zone: str, method: CostMethod
) -> None:
    summary = account(
        generated,
        book,
        valued_at=T0 + timedelta(days=121),
        period=period,
        zone=zone,
        method=method,
    )
    totals: Figures = summary.totals
    parts = [b.figures for b in summary.buckets]
    assert sum(p.trades for p in parts) == totals.trades == len(generated)
    assert _sum_by_token([p.invested for p in parts]) == totals.invested
    assert _sum_by_token([p.received for p in parts]) == totals.received
    for name in ("traded_usd", "fees_usd", "gas_usd", "realised_usd"):
        assert total(getattr(p, name) for p in parts) == getattr(totals, name), name
    assert sum(p.gas_octas for p in parts) == totals.gas_octas
    assert sum(p.gas_unvalued for p in parts) == totals.gas_unvalued
    assert sum(p.fees_unvalued for p in parts) == totals.fees_unvalued
    for kind, by_token in totals.fees.items():
        assert _sum_by_token([p.fees.get(kind, {}) for p in parts]) == by_token
    firsts = [b.first for b in summary.buckets]
    assert firsts == sorted(set(firsts))


@st.composite
def round_trips(draw: st.DrawFn) -> list[Trade]:
    """APT bought with USDC and sold back in any order, everything sold by the end."""
    result: list[Trade] = []
    held = Decimal(0)
    steps = draw(st.lists(st.tuples(st.booleans(), amounts, prices), min_size=1, max_size=25))
    for index, (is_buy, amount, price) in enumerate(steps):
        when = T0 + timedelta(hours=index)
        if is_buy or held == 0:
            result.append(_trade(when, "USDC", amount * price, "APT", amount, index))
            held += amount
        else:
            part = min(amount, held)
            result.append(_trade(when, "APT", part, "USDC", part * price, index))
            held -= part
    if held:
        final_price = draw(prices)
        result.append(
            _trade(T0 + timedelta(hours=len(steps)), "APT", held, "USDC", held * final_price, -1)
        )
    return result


def _trade(
    when: datetime, sold_token: str, sold: Decimal, bought_token: str, bought: Decimal, n: int
) -> Trade:
    return Trade(
        time=when,
        strategy="s",
        wallet="w",
        ref=f"t{n}",
        sold_token=sold_token,
        sold=sold,
        bought_token=bought_token,
        bought=bought,
    )


@settings(max_examples=200, deadline=None)
@given(round_trips())
def test_fifo_and_average_agree_when_everything_is_sold(generated: list[Trade]) -> None:
    # USDC at 1 USD throughout, APT valued by what each trade says it paid or got.
    book = PriceBook.of_points({"USDC": [PricePoint(T0 - timedelta(days=1), Decimal(1))]})
    end = T0 + timedelta(days=30)
    fifo = account(generated, book, valued_at=end, method=CostMethod.FIFO)
    average = account(generated, book, valued_at=end, method=CostMethod.AVERAGE)
    assert fifo.totals.invested == average.totals.invested
    assert fifo.totals.received == average.totals.received
    assert fifo.totals.realised_usd == average.totals.realised_usd
    assert [h.token for h in fifo.holdings] == [h.token for h in average.holdings] == ["USDC"]
    # The realised gain of the APT round trips: USDC got back − USDC paid, exactly.
    paid = total(t.sold for t in generated if t.sold_token == "USDC")
    got = total(t.bought for t in generated if t.bought_token == "USDC")
    assert fifo.totals.realised_usd == got - paid
