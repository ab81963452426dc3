"""DCA slices run in one go (`dca_run.run_slices`) equal the same slices run one event each.

Two markets get the same random orders, series, swaps, cancels and time steps; in one
the general path runs every slot (`run_slices` patched to run none), in the other the
market runs them in runs. Everything must be equal: every tx detail, every order's
counters, every ledger balance (in the same insertion order), every pool, the events
counted.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any
from unittest.mock import patch

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.backtest.paths import ArrayPath, constant_path
from bot.clock import SteppedClock, to_micros
from bot.paper.core import dca
from bot.paper.core.market import MarketConfig, PaperMarket
from bot.paper.core.pools import PoolSettings
from bot.paper.core.registry import PaperTokens
from bot.paper.core.swaps import FeeSettings, SwapError, execute_swap, quote_swap

T0 = datetime(2026, 3, 1, tzinfo=UTC)
WALLET = "0x" + "a1" * 32
TOKENS = PaperTokens.from_token_list()
APT = TOKENS.book.find("APT")
USDC = TOKENS.book.find("USDC")
PERIODS = ("minute", "hour", "day", "month")


def walk(seed: int, points: int, step_s: int, price: int) -> ArrayPath:
    """A random walk of integer coefficients (×10⁻⁶ USD), one point per `step_s`."""
    rng = np.random.default_rng(seed)
    moves = rng.integers(-300, 301, size=points)
    coefs = np.maximum(1, price + np.cumsum(moves * (price // 10_000 + 1)))
    start = to_micros(T0 - timedelta(days=1))
    times = start + np.arange(points, dtype=np.int64) * step_s * 1_000_000
    return ArrayPath(times, coefs.astype(np.int64), -6)


order_params = st.fixed_dictionaries(
    {
        "sell_apt": st.booleans(),
        "amount": st.integers(1, 10**9),
        "orders": st.integers(1, 40),
        "interval": st.tuples(st.integers(1, 3), st.sampled_from(PERIODS)),
        "delay": st.none() | st.tuples(st.integers(0, 90), st.just("minute")),
        "low": st.none() | st.decimals("0.01", "20", places=2),
        "high": st.none() | st.decimals("0.05", "50", places=2),
        "slippage": st.decimals("0", "3", places=1),
        # Orders made at whole hours share slot times: which runs first then matters.
        "at_minute": st.sampled_from([0, 60, 120]) | st.integers(0, 600),
    }
)
scenario = st.fixed_dictionaries(
    {
        "replayed": st.booleans(),
        "seed": st.integers(0, 2**16),
        "step_s": st.sampled_from([60, 300, 3600, 7200]),
        "usdc_moves": st.booleans(),
        "depth": st.sampled_from([Decimal(50), Decimal(5_000), Decimal(2_000_000)]),
        "adverse": st.sampled_from([Decimal(0), Decimal("0.3"), Decimal(2)]),
        "keeper_bps": st.sampled_from([0, 5, 300]),
        "orders": st.lists(order_params, min_size=1, max_size=3),
        "swaps": st.lists(
            st.tuples(st.integers(1, 60 * 24 * 40), st.integers(1, 10**8)), max_size=4
        ),
        "cancel": st.none() | st.tuples(st.integers(0, 2), st.integers(1, 60 * 24 * 60)),
        "steps": st.lists(st.integers(1, 60 * 24 * 20), min_size=1, max_size=8),
    }
)


def market_of(case: dict[str, Any]) -> PaperMarket:
    replayed = None
    if case["replayed"]:
        usdc = (
            walk(case["seed"] + 1, 3_000, case["step_s"], 1_000_000)
            if case["usdc_moves"]
            else constant_path(Decimal(1))
        )
        replayed = {APT.address: walk(case["seed"], 40_000, case["step_s"], 8_000_000)}
        replayed[USDC.address] = usdc
    config = MarketConfig(
        seed=case["seed"],
        start=T0,
        price_step_seconds=case["step_s"],
        pools=PoolSettings(depth_usd=case["depth"]),
        fees=FeeSettings(),
        keeper_fee_bps=case["keeper_bps"],
        execution_slippage_pct=case["adverse"],
    )
    market = PaperMarket(config, SteppedClock(T0), TOKENS, replayed=replayed)
    market.fund(WALLET, APT, 10**15)
    market.fund(WALLET, USDC, 10**15)
    return market


def play(case: dict[str, Any], *, in_runs: bool) -> tuple[Any, ...]:
    """Run the scenario; returns everything observable of the market afterwards."""
    market = market_of(case)
    created: list[tuple[datetime, dict[str, Any]]] = sorted(
        ((T0 + timedelta(minutes=o["at_minute"]), o) for o in case["orders"]),
        key=lambda item: item[0],
    )
    swaps = sorted((T0 + timedelta(minutes=m), units) for m, units in case["swaps"])
    ids: list[str] = []
    processed = 0
    now = T0
    for step in case["steps"]:
        target = now + timedelta(minutes=step)
        stops = sorted({t for t, _ in created if now <= t < target} | {target})
        for stop in stops:
            processed += market.advance_to(stop)
            for at, params in [c for c in created if c[0] == stop]:
                ids.append(create(market, params, at))
                created.remove((at, params))
            for at, units in [s for s in swaps if s[0] <= stop]:
                swap(market, units, stop)
                swaps.remove((at, units))
            cancel = case["cancel"]
            if cancel is not None and ids and T0 + timedelta(minutes=cancel[1]) <= stop:
                order = market.dca.get(ids[cancel[0] % len(ids)])
                if order.status == "active":
                    market.dca.cancel(order.order_id, stop, owner=WALLET)
        now = target
    del in_runs  # (how the market ran is the caller's patch)
    orders = [market.dca.get(i) for i in ids]
    return (
        processed,
        [(o.status, o.spent, o.received, o.withdrawn, o.fees_paid, o.attempts) for o in orders],
        [(o.orders_done, o.orders_executed, o.next_at, o.details) for o in orders],
        [(account, list(book.items())) for account, book in market.ledger._balances.items()],
        market.pools.snapshot(),
        market.events.peek_time(),
    )


def create(market: PaperMarket, params: dict[str, Any], at: datetime) -> str:
    sell, buy = (APT, USDC) if params["sell_apt"] else (USDC, APT)
    low, high = params["low"], params["high"]
    if low is not None and high is not None and low > high:
        low, high = high, low
    order = market.dca.create(
        owner=WALLET,
        recipient=WALLET,
        sell=sell,
        buy=buy,
        amount=max(params["amount"], params["orders"]),
        amount_type="total",
        orders=params["orders"],
        interval=params["interval"],
        delay=params["delay"],
        min_rate=low,
        max_rate=high,
        slippage=params["slippage"],
        now=at,
    )
    return order.order_id


def swap(market: PaperMarket, units: int, at: datetime) -> None:
    """A trade of someone else between the slices: the pool moves."""
    try:
        terms = quote_swap(market.pools, market.config.fees, APT, USDC, at=at, amount_in=units)
        execute_swap(
            market.ledger,
            market.pools,
            market.config.fees,
            payer=WALLET,
            recipient=WALLET,
            sell=APT,
            buy=USDC,
            at=at,
            exact_in=True,
            amount_in=units,
            amount_out=terms.min_out,
        )
    except SwapError:
        pass


def slot_by_slot(case: dict[str, Any]) -> tuple[Any, ...]:
    with patch.object(dca, "run_slices", lambda *_args: 0):
        return play(case, in_runs=False)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=scenario)
def test_slices_run_in_one_go_equal_slices_run_one_event_each(case: dict[str, Any]) -> None:
    assert play(case, in_runs=True) == slot_by_slot(case)


def test_a_year_of_hourly_slices_runs_in_one_go_between_daily_steps() -> None:
    case = {
        "replayed": True,
        "seed": 7,
        "step_s": 60,
        "usdc_moves": False,
        "depth": Decimal(2_000_000),
        "adverse": Decimal("0.1"),
        "keeper_bps": 5,
        "orders": [
            {
                "sell_apt": False,
                "amount": 10**7 * 24 * 30,
                "orders": 24 * 30,
                "interval": (1, "hour"),
                "delay": None,
                "low": None,
                "high": None,
                "slippage": Decimal(1),
                "at_minute": 0,
            }
        ],
        "swaps": [(60 * 24 * 3 + 7, 10**9)],
        "cancel": None,
        "steps": [60 * 24] * 31,
    }
    calls: list[int] = []
    real = dca.run_slices

    def counted(*args: Any) -> int:
        ran = real(*args)
        calls.append(ran)
        return ran

    with patch.object(dca, "run_slices", counted):
        in_runs = play(case, in_runs=True)
    assert in_runs == slot_by_slot(case)
    assert in_runs[0] == 24 * 30  # every slice counted as one event
    # A day's slices at a time (the first day's run has both of its ends).
    assert calls[0] == 25 and set(calls[1:-1]) == {24} and sum(calls) == 24 * 30
    (details,) = [d for *_, d in in_runs[2]]
    assert [d.type for d in details].count("filled") == 24 * 30


def test_a_fee_first_charged_on_the_last_slice_lands_as_the_slices_would_move_it() -> None:
    # A slice of 1,025 units pays a keeper fee (3%: 30 units) but no platform fee (995
    # units swapped: 10 bps of it round to 0); the last one, with the remainder, pays
    # both. Its fee account is made after the keeper's, as one event a slice makes them.
    order = {
        "sell_apt": False,
        "amount": 1025 * 10 + 9,
        "orders": 10,
        "interval": (1, "hour"),
        "delay": None,
        "low": None,
        "high": None,
        "slippage": Decimal(1),
        "at_minute": 0,
    }
    case = {
        "replayed": True,
        "seed": 3,
        "step_s": 60,
        "usdc_moves": False,
        "depth": Decimal(2_000_000),
        "adverse": Decimal(0),
        "keeper_bps": 300,
        "orders": [order],
        "swaps": [],
        "cancel": None,
        "steps": [60 * 24],
    }
    in_runs = play(case, in_runs=True)
    assert in_runs == slot_by_slot(case)
    accounts = [account for account, _book in in_runs[3]]
    assert accounts.index("fees:keeper") < accounts.index("fees:platform")
