"""The hot path's shortcuts answer exactly what the plain computations answer.

A backtest runs the paper core's swap path thousands of times, so parts of it take
shortcuts: a batch of ledger moves, integer arithmetic for a quote's minimum, a lazily
worked-out price impact, records built without their per-field set-up, hashes of tx ids
continued from a per-order prefix, and pools that ask the price book for a token's price
point in one lookup. Each must give the very same result as the long way.
"""

from __future__ import annotations

import hashlib
import pickle
import random
from dataclasses import fields
from datetime import timedelta
from decimal import ROUND_FLOOR, ROUND_UP, Context, Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.paper.core.ledger import MARKET, InsufficientFunds, Ledger
from bot.paper.core.orders import OrderIds, TxDetailRecord
from bot.paper.core.pools import PoolBook, PoolSettings
from bot.paper.core.prices import PriceBook
from bot.paper.core.records import frozen_record
from bot.paper.core.registry import PaperTokens
from bot.paper.core.swaps import (
    FeeSettings,
    SwapExecution,
    SwapTerms,
    _impact,
    _min_out,
    execute_swap,
    quote_swap,
)
from tests.support.paper_engines import APT, T0, USDC

USDC_KEY, APT_KEY = USDC.address, APT.address
CTX80 = Context(prec=80)


def min_out_the_long_way(out: int, slippage: Decimal) -> int:
    keep = CTX80.divide(CTX80.multiply(Decimal(out), CTX80.subtract(Decimal(100), slippage)), 100)
    return int(keep.to_integral_value(rounding=ROUND_FLOOR, context=CTX80))


# --- the ledger's batch of moves -----------------------------------------------------------


def funded() -> Ledger:
    ledger = Ledger()
    ledger.mint("alice", USDC_KEY, 1_000)
    ledger.mint(MARKET, APT_KEY, 0)
    return ledger


MOVES = (
    (USDC_KEY, "alice", MARKET, 600),
    (USDC_KEY, MARKET, "fees", 6),
    (USDC_KEY, MARKET, "nobody", 0),
    (APT_KEY, MARKET, "alice", 55),
)


def test_a_batch_moves_what_the_single_transfers_move() -> None:
    one_by_one, batched = funded(), funded()
    one_by_one.begin()
    batched.begin()
    for move in MOVES:
        one_by_one.transfer(*move)
    batched.transfers(MOVES)
    assert batched.changes() == one_by_one.changes()
    assert batched.dump() == one_by_one.dump()
    batched.rollback()
    assert batched.dump() == funded().dump()


def test_a_short_source_moves_nothing_and_names_the_account() -> None:
    ledger = funded()
    ledger.begin()
    moves = ((APT_KEY, MARKET, "bob", 5), (USDC_KEY, "alice", MARKET, 5_000))
    with pytest.raises(InsufficientFunds, match="alice holds 1000") as raised:
        ledger.transfers(moves)
    assert (raised.value.needed, raised.value.held) == (5_000, 1_000)
    assert ledger.changes() == {}
    assert ledger.dump() == funded().dump()


def test_a_bad_amount_in_a_batch_moves_nothing() -> None:
    ledger = funded()
    with pytest.raises(ValueError, match="non-negative int"):
        ledger.transfers(((USDC_KEY, "alice", "bob", 5), (USDC_KEY, "alice", "bob", -1)))
    assert ledger.dump() == funded().dump()
    ledger.check_conservation()


# --- quotes ---------------------------------------------------------------------------------


@settings(max_examples=3000)
@given(
    out=st.integers(min_value=0, max_value=10**90),
    slippage=st.decimals(min_value=0, max_value=100, allow_nan=False, places=None),
)
def test_the_minimum_out_is_the_80_digit_computation(out: int, slippage: Decimal) -> None:
    assert _min_out(out, slippage) == min_out_the_long_way(out, slippage)


@pytest.mark.parametrize(
    "slippage",
    ["0", "0.5", "0.50", "5E-1", "99.999999", "100", "3." + "3" * 90, "1E-70", "1E+1"],
)
def test_the_minimum_out_for_awkward_slippages(slippage: str) -> None:
    for out in (1, 7, 10**18 + 3, 10**78 + 1, 10**79 + 7, 10**85):
        assert _min_out(out, Decimal(slippage)) == min_out_the_long_way(out, Decimal(slippage))


def book(depth: Decimal = Decimal("2000000")) -> tuple[PriceBook, PoolBook]:
    prices = PriceBook(7, PaperTokens([APT, USDC]), T0)
    return prices, PoolBook(prices, PoolSettings(depth_usd=depth))


def test_price_impact_is_worked_out_when_asked_and_is_the_formula() -> None:
    _prices, pools = book()
    fees = FeeSettings()
    fixed = quote_swap(pools, fees, USDC, APT, at=T0, amount_in=5_000_000_000, slippage=Decimal(1))
    auto = quote_swap(pools, fees, USDC, APT, at=T0, amount_in=5_000_000_000)
    assert "price_impact" not in fixed.__dict__  # not computed for an order's execution
    expected = _impact(fixed.reserves, fixed.amount_in, fixed.amount_out)
    assert fixed.price_impact == expected == auto.price_impact > 0
    twice = (auto.price_impact * 2).quantize(Decimal("0.1"), rounding=ROUND_UP)
    assert auto.slippage == min(Decimal(5), max(Decimal("0.5"), twice))  # `auto` used it
    again = SwapTerms(**{f.name: getattr(fixed, f.name) for f in fields(SwapTerms)})
    assert fixed == again  # the same record as the constructor's
    assert fixed.price_impact == again.price_impact


def test_fast_records_equal_the_constructors() -> None:
    values = {
        "sell": USDC,
        "buy": APT,
        "amount_in": 10,
        "amount_out": 3,
        "platform_fee": 1,
        "integrator_fee": 0,
    }
    made = frozen_record(SwapExecution, **values)
    assert made == SwapExecution(**values)
    assert hash(made) == hash(SwapExecution(**values))
    assert type(made) is SwapExecution


# --- tx ids ---------------------------------------------------------------------------------


def test_tx_ids_are_the_documented_hash_and_survive_a_snapshot() -> None:
    ids = OrderIds("seed")
    orders = ["0x" + f"{i:02x}" * 32 for i in range(70)]  # more than the kept prefixes
    for number in (1, 2, 10, 12_345):
        for order in orders:
            text = f"seed:tx:{order}:{number}"
            assert ids.tx(order, number) == "0x" + hashlib.sha256(text.encode()).hexdigest()
    restored = pickle.loads(pickle.dumps(ids))
    assert restored.tx(orders[0], 3) == ids.tx(orders[0], 3)
    assert restored.new("dca") == ids.new("dca")  # the counters went along


def test_records_still_read_back_from_a_snapshot() -> None:
    record = TxDetailRecord("0x1", 1, "filled", 1, 10, 3, 0, T0, price_to_per_from=Decimal(2))
    assert pickle.loads(pickle.dumps(record)) == record


# --- pools ----------------------------------------------------------------------------------


class StepsOnly:
    """The price book seen through the plain oracle interface (`usd`, `step_start`)."""

    def __init__(self, prices: PriceBook) -> None:
        self.prices = prices

    def usd(self, token: str, at: object) -> Decimal:
        return self.prices.usd(token, at)  # type: ignore[arg-type]

    def step_start(self, token: str, at: object) -> object:
        return self.prices.step_start(token, at)  # type: ignore[arg-type]


def test_pools_on_the_price_books_anchors_trade_as_on_plain_step_starts() -> None:
    prices, fast = book(Decimal("50000"))
    slow = PoolBook(StepsOnly(prices), PoolSettings(depth_usd=Decimal("50000")))
    fees = FeeSettings()
    rng = random.Random(5)
    at = T0
    done: list[list[tuple[int, int]]] = [[], []]
    for _ in range(300):
        at += timedelta(seconds=rng.choice([0, 1, 30, 60, 600, 3600]))
        sell, buy = (USDC, APT) if rng.random() < 0.6 else (APT, USDC)
        amount = rng.randint(1, 10**10)
        for pools, out in ((fast, done[0]), (slow, done[1])):
            ledger = Ledger()
            ledger.mint("w", sell.address, amount)
            terms = quote_swap(pools, fees, sell, buy, at=at, amount_in=amount, slippage=Decimal(1))
            executed = execute_swap(
                ledger,
                pools,
                fees,
                payer="w",
                recipient="w",
                sell=sell,
                buy=buy,
                at=at,
                exact_in=True,
                amount_in=amount,
                amount_out=terms.min_out,
                quoted=terms,
            )
            out.append((executed.amount_out, terms.min_out))
    assert done[0] == done[1]
    assert fast.snapshot() == slow.snapshot()


def test_a_pool_book_pickles_without_its_lookup_cache() -> None:
    _prices, pools = book()
    pools.pool(USDC, APT, T0)
    restored = pickle.loads(pickle.dumps(pools))
    assert restored.snapshot() == pools.snapshot()
    assert restored.pool(USDC, APT, T0).reserves(USDC) == pools.pool(USDC, APT, T0).reserves(USDC)
    older = PoolBook.__new__(PoolBook)  # a snapshot written before the cache existed
    older.__setstate__(
        {k: v for k, v in pools.__dict__.items() if k not in ("_pairs", "_anchors")}
        | {"_recent": {}}
    )
    assert older.pool(USDC, APT, T0).reserves(USDC) == pools.pool(USDC, APT, T0).reserves(USDC)
