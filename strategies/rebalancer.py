"""Rebalancer: swap toward target weights when the portfolio drifts past a band.

Each token's value is its wallet balance × its USD price (a token without a USD price is
valued by quoting its balance into the hub, `quote_token`). When any weight is more than
`band_percent` percentage points from its target, one exact-in `Swap` goes from the most
overweight token into the most underweight one, for the smaller of the first's excess and
the second's shortfall (in USD, converted to the sold token). Trades under `min_trade` USD
are skipped. At most one swap per `cooldown` window: the key is
`<instance>:rebalance:<window>`, so a repeated tick before the balances move never swaps
twice.
"""

from __future__ import annotations

from decimal import ROUND_DOWN, Decimal
from typing import ClassVar

from pydantic import Field, model_validator

from bot.engine.strategy import (
    Action,
    Context,
    Period,
    Slippage,
    Strategy,
    StrategyParams,
    Swap,
    period_length,
    window,
)

__all__ = ["Rebalancer", "RebalancerParams"]


class RebalancerParams(StrategyParams):
    """Parameters of `rebalancer`.

    Attributes:
        weights: token (symbol or address) → target weight (0–1); at least two tokens,
            adding up to exactly 1.
        band_percent: how far (percentage points) a weight may drift before a swap.
        quote_token: the hub, e.g. `USDC`: values tokens that have no USD price.
        min_trade: the smallest swap worth making, in USD (default 10).
        cooldown: the least time between two swaps, e.g. `"1 hour"` (the default).
        amount_places: decimals kept in swap amounts (rounded down; ≤ the token's).
        slippage: optional slippage percent (0–100) or `"auto"`.
    """

    weights: dict[str, Decimal] = Field(min_length=2)
    band_percent: Decimal = Field(gt=0, lt=100)
    quote_token: str = Field(default="USDC", min_length=1)
    min_trade: Decimal = Field(default=Decimal(10), ge=0)
    cooldown: Period = "1 hour"
    amount_places: int = Field(default=6, ge=0, le=18)
    slippage: Slippage | None = None

    @model_validator(mode="after")
    def _consistent(self) -> RebalancerParams:
        for token, weight in self.weights.items():
            if not Decimal(0) <= weight <= Decimal(1):
                raise ValueError(f"weight of {token} must be between 0 and 1")
        if sum(self.weights.values(), Decimal(0)) != 1:
            raise ValueError("the weights must add up to 1")
        return self


class Rebalancer(Strategy[RebalancerParams]):
    """Swap toward target weights when drift exceeds a band (one swap per window).

    State: none; the balances and prices of the tick decide.
    """

    name: ClassVar[str] = "rebalancer"

    def tokens(self) -> list[str]:
        """The tokens whose prices and balances it needs: the weights' and the hub."""
        return [*self.params.weights, self.params.quote_token]

    async def on_tick(self, ctx: Context) -> list[Action]:
        """Nothing inside the band; outside, one swap from most over- to most underweight."""
        prices: dict[str, Decimal] = {}
        values: dict[str, Decimal] = {}
        for token in self.params.weights:
            balance = _balance(ctx, token)
            if balance is None:  # unknown is not zero: never trade on a missing balance
                ctx.log.warning("rebalancer.no_balance", token=token)
                return []
            price = await self._usd(ctx, token, balance)
            if price is None:
                ctx.log.warning("rebalancer.no_price", token=token)
                return []
            prices[token], values[token] = price, balance * price
        total = sum(values.values(), Decimal(0))
        if total <= 0:
            return []
        drift = {t: values[t] / total - w for t, w in self.params.weights.items()}
        if max(abs(d) for d in drift.values()) * 100 <= self.params.band_percent:
            return []
        over = max(drift, key=lambda t: drift[t])
        under = min(drift, key=lambda t: drift[t])
        usd = min(drift[over], -drift[under]) * total
        quantum = Decimal(1).scaleb(-self.params.amount_places)
        amount = (usd / prices[over]).quantize(quantum, rounding=ROUND_DOWN)
        if usd < self.params.min_trade or amount <= 0:
            ctx.log.info("rebalancer.too_small", usd=str(usd), min_trade=str(self.params.min_trade))
            return []
        at = window(ctx.now, period_length(self.params.cooldown))
        ctx.log.info("rebalancer.swap", sell=over, buy=under, amount=str(amount), usd=str(usd))
        return [
            Swap(
                key=f"{self.instance}:rebalance:{at}",
                sell=over,
                buy=under,
                sell_amount=amount,
                slippage=self.params.slippage,
            )
        ]

    async def _usd(self, ctx: Context, token: str, balance: Decimal) -> Decimal | None:
        """A token's USD price: from the tick's prices, else by quoting into the hub."""
        info = ctx.price(token)
        if info is not None and info.usd is not None and info.usd > 0:
            return info.usd
        if balance <= 0:
            return Decimal(0)  # nothing held: its value is 0 whatever the price
        hub = ctx.price(self.params.quote_token)
        if ctx.quote is None or hub is None or hub.usd is None:
            return None
        bought = await ctx.quote(token, self.params.quote_token, balance)
        return None if bought is None else bought * hub.usd / balance


def _balance(ctx: Context, name: str) -> Decimal | None:
    """The wallet's balance of a token given by key or symbol; None when not known."""
    info = ctx.price(name)
    keys = [name, *(k for k, v in ctx.prices.items() if info is not None and v.token == info.token)]
    return next((ctx.balances[k] for k in keys if k in ctx.balances), None)
