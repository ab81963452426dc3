"""Benchmark of the paper market (issue #4).

1. Quotes per second in-process, on one core: through the core (`PaperMarket.quote`) and
   through the whole provider face (`httpx.ASGITransport`, JSON in and out).
   Target: ≥ 1,500 quotes/s.
2. Advancing one hour of simulated time with 10,000 live orders of which 1% are due in
   that hour. Target: ≤ 50 ms.

Run: `.venv/bin/python bench/paper_market.py` — the summary line is printed last.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from datetime import timedelta
from decimal import Decimal

import httpx

from bot.clock import SteppedClock
from bot.config import PaperSettings
from bot.paper.world import build_world

APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
KEY = "bench-key"


def _world():  # type: ignore[no-untyped-def]
    settings = PaperSettings(
        clock="stepped", api_keys=[KEY], rate_limit_per_second=1e9, rate_limit_burst=10**9
    )
    return build_world(settings)


def bench_core_quotes(n: int = 5000) -> float:
    world = _world()
    market = world.market
    apt, usdc = market.tokens.require(APT), market.tokens.require(USDC)
    market.quote(apt, usdc, amount_in=10**8)  # warm the pool and price paths
    start = time.perf_counter()
    for i in range(n):
        market.quote(apt, usdc, amount_in=10**8 + i)
    return n / (time.perf_counter() - start)


async def bench_face_quotes(n: int = 3000) -> float:
    world = _world()
    transport = httpx.ASGITransport(app=world.provider_api)
    async with httpx.AsyncClient(transport=transport, base_url="http://paper") as client:
        params = {"fromTokenAddress": APT, "toTokenAddress": USDC, "fromTokenAmount": "1"}
        await client.get("/swap/quote", params=params, headers={"x-api-key": KEY})
        start = time.perf_counter()
        for i in range(n):
            params["fromTokenAmount"] = f"1.{i:04d}"
            response = await client.get("/swap/quote", params=params, headers={"x-api-key": KEY})
            assert response.status_code == 200
        return n / (time.perf_counter() - start)


def bench_advance(
    live: int = 10_000, due_fraction: Decimal = Decimal("0.01"), runs: int = 5
) -> list[float]:
    """Median-able timings of advancing one hour with `live` orders, 1% due in the hour."""
    timings = []
    for _ in range(runs):
        world = _world()
        market = world.market
        clock = market.clock
        assert isinstance(clock, SteppedClock)
        apt, usdc = market.tokens.require(APT), market.tokens.require(USDC)
        owner = "0x" + "be" * 32
        market.fund(owner, usdc, 10**15)
        market.fund(owner, apt, 10**15)
        now = market.now
        due = int(live * due_fraction)
        half = (live - due) // 2
        # Due in the coming hour: DCA orders with a 30-minute delay (one slice each hour).
        for _ in range(due):
            market.dca.create(
                owner=owner,
                recipient=owner,
                sell=usdc,
                buy=apt,
                amount=10**7,
                amount_type="total",
                orders=10,
                interval=(1, "day"),
                delay=(30, "minute"),
                min_rate=None,
                max_rate=None,
                slippage=Decimal(1),
                now=now,
            )
        # Not due: DCA orders whose first slice is a week away…
        for _ in range(half):
            market.dca.create(
                owner=owner,
                recipient=owner,
                sell=usdc,
                buy=apt,
                amount=10**7,
                amount_type="total",
                orders=10,
                interval=(1, "day"),
                delay=(7, "day"),
                min_rate=None,
                max_rate=None,
                slippage=Decimal(1),
                now=now,
            )
        # …and limit orders far from the market (sell APT at 1,000 USDC).
        for _ in range(live - due - half):
            market.limit.create(
                owner=owner,
                recipient=owner,
                sell=apt,
                buy=usdc,
                amount=10**6,
                rate=Decimal(1000),
                slippage=Decimal(1),
                expiry=(30, "day"),
                now=now,
            )
        market.advance_to(now)  # settle creation-time checks outside the measurement
        target = now + timedelta(hours=1)
        clock.advance_to(target)
        start = time.perf_counter()
        market.advance_to(target)
        timings.append((time.perf_counter() - start) * 1000)
        filled = sum(1 for o in market.dca.orders_of(owner) if o.orders_executed == 1)
        assert filled == due, f"expected {due} slices, got {filled}"
        assert market.dca.live_count + market.limit.live_count == live
    return timings


def main() -> None:
    core = bench_core_quotes()
    face = asyncio.run(bench_face_quotes())
    advance = bench_advance()
    median_ms = statistics.median(advance)
    print(f"quotes/s core (PaperMarket.quote):        {core:,.0f}")
    print(f"quotes/s face (ASGITransport, JSON):      {face:,.0f}")
    print(
        f"advance 1 h, 10,000 live, 1% due: median {median_ms:.1f} ms "
        f"(runs: {', '.join(f'{t:.1f}' for t in advance)})"
    )
    ok = core >= 1500 and face >= 1500 and median_ms <= 50
    print(
        f"paper_market: quotes_core_per_s={core:.0f} quotes_face_per_s={face:.0f} "
        f"advance_1h_10k_ms={median_ms:.1f} targets=1500/s,50ms ok={'yes' if ok else 'no'}"
    )


if __name__ == "__main__":
    main()
