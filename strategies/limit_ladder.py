"""Limit ladder: N limit buys spaced below the market, re-placed when the market drifts.

The ladder is anchored at the market price of `buy_token` in `sell_token` (from the tick's
USD prices: usd(buy) / usd(sell)). Rung k (1…N) sells `amount_per_rung` of `sell_token`
at a price k × `spacing_percent` below the anchor, i.e. at a rate (buy per sell) of
1 / (anchor × (1 − k × spacing / 100)). While the market stays within `redrift_percent` of
the anchor (and the ladder has not expired) nothing happens; past it, the live rungs are
cancelled and a new ladder is placed around the new price, under a new generation.

Keys: rung `<instance>:ladder:<generation>:<k>`, cancel `<instance>:cancel:<order id>`.

A rung the user cancelled (`bot cancel`, or outside the bot) is not placed again within its
ladder: the strategy says so once in its log, and the next ladder (drift, expiry) is placed
with every rung as usual. With `replace_cancelled = true` such a cancel makes the ladder
re-place itself at the next tick, as after a drift.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, localcontext
from typing import Any, ClassVar

from pydantic import Field, model_validator

from bot.engine.strategy import (
    Action,
    CancelLimit,
    Context,
    CreateLimit,
    OrderInfo,
    Period,
    Slippage,
    Strategy,
    StrategyParams,
    new_user_cancels,
    note_user_cancels,
    parse_period,
    period_length,
)

__all__ = ["LimitLadder", "LimitLadderParams", "rung_rate"]


class LimitLadderParams(StrategyParams):
    """Parameters of `limit_ladder`.

    Attributes:
        sell_token: what the rungs pay with (symbol or address), e.g. `USDC`.
        buy_token: what they buy, e.g. `APT`.
        rungs: how many limit orders (1–50).
        spacing_percent: the gap between rungs, percent of the anchor price (rungs ×
            spacing must stay below 100).
        amount_per_rung: how much of `sell_token` each rung sells (> 0).
        redrift_percent: re-place the ladder once the market moved more than this from
            the anchor (> 0).
        expiry: optional lifetime of each rung, e.g. `"1 day"`; the ladder is re-placed
            when it is over.
        slippage: optional slippage percent (0–100) or `"auto"`.
        replace_cancelled: re-place the ladder at the next tick when the user cancelled
            one of its rungs (default false: the rung stays empty until the next ladder).
    """

    sell_token: str = Field(min_length=1)
    buy_token: str = Field(min_length=1)
    rungs: int = Field(ge=1, le=50)
    spacing_percent: Decimal = Field(gt=0)
    amount_per_rung: Decimal = Field(gt=0)
    redrift_percent: Decimal = Field(gt=0)
    expiry: Period | None = None
    slippage: Slippage | None = None
    replace_cancelled: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> LimitLadderParams:
        if self.sell_token.lower() == self.buy_token.lower():
            raise ValueError("sell_token and buy_token must differ")
        if self.rungs * self.spacing_percent >= 100:
            raise ValueError("rungs × spacing_percent must be below 100")
        return self


def rung_rate(anchor: Decimal, k: int, spacing_percent: Decimal) -> Decimal:
    """The rate (buy per sell, 12 significant digits) of rung `k` below `anchor`.

    `anchor` is the price of the bought token in the sold token (e.g. USDC per APT).
    """
    with localcontext() as decimal_ctx:
        decimal_ctx.prec = 12
        return Decimal(1) / (anchor * (1 - k * spacing_percent / 100))


class LimitLadder(Strategy[LimitLadderParams]):
    """N limit buys spaced below the market, re-placed when the market drifts, with expiry.

    State: `anchor` (Decimal, the price the ladder was placed at), `generation` (int),
    `placed_at` (when) and `user_cancelled` (cancels already logged).
    """

    name: ClassVar[str] = "limit_ladder"

    def tokens(self) -> list[str]:
        """The pair the rungs trade (both priced: the anchor is their ratio)."""
        return [self.params.sell_token, self.params.buy_token]

    def market_price(self, ctx: Context) -> Decimal | None:
        """The price of `buy_token` in `sell_token` now, or None without both USD prices."""
        sell, buy = ctx.price(self.params.sell_token), ctx.price(self.params.buy_token)
        if sell is None or buy is None or sell.usd is None or buy.usd is None:
            return None
        if sell.usd <= 0 or buy.usd <= 0:
            return None
        return buy.usd / sell.usd

    async def on_tick(self, ctx: Context) -> list[Action]:
        """Place the ladder; re-place it past the drift band or after expiry; else nothing."""
        price = self.market_price(ctx)
        if price is None:
            ctx.log.warning(
                "limit_ladder.no_price", sell=self.params.sell_token, buy=self.params.buy_token
            )
            return []
        anchor = _decimal(ctx.state.get("anchor"))
        generation = int(ctx.state.get("generation") or 0)
        if anchor is None or anchor <= 0:
            return self._place(ctx, generation, price)
        drift = abs(price - anchor) / anchor * 100
        placed_at = ctx.state.get("placed_at")
        expired = (
            self.params.expiry is not None
            and isinstance(placed_at, datetime)
            and ctx.now >= placed_at + period_length(self.params.expiry)
        )
        cancelled = self._user_cancelled(ctx, placed_at)
        by_user = bool(cancelled) and self.params.replace_cancelled
        note_user_cancels(
            ctx,
            cancelled,
            "limit_ladder.user_cancelled",
            hint="re-placing the ladder (replace_cancelled = true)"
            if by_user
            else "not placed again before the next ladder (drift or expiry)",
        )
        if drift <= self.params.redrift_percent and not expired and not by_user:
            # Rungs of this ladder that never took (refused, or failed: their key was freed)
            # are asked for again, so a ladder funded late fills in, and one refused keeps
            # saying so (the daemon counts it stuck) instead of resting silently.
            return [a for a in self._rungs(generation, anchor) if a.key not in ctx.intents]
        ctx.log.info(
            "limit_ladder.replace",
            anchor=str(anchor),
            price=str(price),
            expired=expired,
            user_cancelled=len(cancelled) if by_user else 0,
        )
        cancels: list[Action] = [
            CancelLimit(key=f"{self.instance}:cancel:{o.order_id}", order_id=o.order_id)
            for o in ctx.live_orders("limit")
            if _same(ctx, o.sell, self.params.sell_token)
            and _same(ctx, o.buy, self.params.buy_token)
        ]
        return cancels + self._place(ctx, generation + 1, price)

    def _user_cancelled(self, ctx: Context, placed_at: Any) -> list[OrderInfo]:
        """The current ladder's rungs the user cancelled, not noted before."""
        if not isinstance(placed_at, datetime):
            return []
        rungs = [
            o
            for o in ctx.orders
            if o.kind == "limit"
            and o.strategy in (None, self.instance)
            and o.created_at >= placed_at  # placed by this ladder, not an earlier one
            and _same(ctx, o.sell, self.params.sell_token)
            and _same(ctx, o.buy, self.params.buy_token)
        ]
        return new_user_cancels(ctx, self.instance, rungs)

    def _place(self, ctx: Context, generation: int, anchor: Decimal) -> list[Action]:
        ctx.save("anchor", anchor)
        ctx.save("generation", generation)
        ctx.save("placed_at", ctx.now)
        return list(self._rungs(generation, anchor))

    def _rungs(self, generation: int, anchor: Decimal) -> list[CreateLimit]:
        """The ladder of `generation` around `anchor`: the same keys and rates every time."""
        expiry = parse_period(self.params.expiry) if self.params.expiry is not None else None
        return [
            CreateLimit(
                key=f"{self.instance}:ladder:{generation}:{k}",
                sell=self.params.sell_token,
                buy=self.params.buy_token,
                amount=self.params.amount_per_rung,
                rate=rung_rate(anchor, k, self.params.spacing_percent),
                expiry_value=expiry[0] if expiry else None,
                expiry_period=expiry[1] if expiry else None,
                slippage=self.params.slippage,
            )
            for k in range(1, self.params.rungs + 1)
        ]


def _decimal(value: Any) -> Decimal | None:
    return Decimal(str(value)) if isinstance(value, Decimal | int | str) else None


def _same(ctx: Context, a: str, b: str) -> bool:
    """Whether two token names (keys or symbols) are the same token."""
    info_a, info_b = ctx.price(a), ctx.price(b)
    if info_a is not None and info_b is not None:
        return info_a.token == info_b.token
    return a.lower() == b.lower()
