"""Recurring DCA: keep one DCA order running between two tokens, renewed when it ends.

Each tick: while one of this strategy's DCA orders is live, nothing happens. Otherwise a
new DCA is created for the next *generation*. The generation (kept in state) moves on only
once the previous order is seen final (filled, cancelled, expired, refunded), so the key
`<instance>:dca:<generation>` is the same on every tick until then: a repeated tick, or a
tick before the new order shows up in the journal, never creates a second DCA.

A DCA the user cancelled (`bot cancel`, or outside the bot) is not renewed at once: the
strategy says so once in its log and waits until the cancelled run would have ended (its
creation + `orders` × `interval`), unless `replace_cancelled = true`.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, ClassVar

from pydantic import Field, model_validator

from bot.engine.strategy import (
    NOTED_CANCELS,
    Action,
    Context,
    CreateDca,
    OrderEvent,
    OrderInfo,
    Period,
    Strategy,
    StrategyParams,
    cancelled_by_user,
    new_user_cancels,
    note_user_cancels,
    parse_period,
    period_length,
)

__all__ = [
    "NOTED_CANCELS",
    "RecurringDca",
    "RecurringDcaParams",
    "cancelled_by_user",
    "new_user_cancels",
    "note_user_cancels",
]
# The user-cancel helpers (and NOTED_CANCELS) live in `bot.engine.strategy`; they stay
# importable from here, where plugins written for earlier versions found them.


class RecurringDcaParams(StrategyParams):
    """Parameters of `recurring_dca`.

    Attributes:
        from_token: the token spent (symbol or address), e.g. `USDC`.
        to_token: the token bought, e.g. `APT`.
        amount_per_order: how much of `from_token` each slice spends (> 0).
        orders: slices per DCA order (≥ 1); the order ends after the last one.
        interval: time between slices, e.g. `"1 day"`, `"6 hour"`.
        min_rate / max_rate: optional bounds on the rate, in `to_token` per `from_token`
            (USDC→APT: APT per USDC, i.e. 1 / the APT price); a slice outside is skipped.
        slippage: optional slippage percent for each slice (0–100).
        replace_cancelled: renew at once after a DCA the user cancelled (default false:
            wait until the cancelled run would have ended).
    """

    from_token: str = Field(min_length=1)
    to_token: str = Field(min_length=1)
    amount_per_order: Decimal = Field(gt=0)
    orders: int = Field(ge=1)
    interval: Period
    min_rate: Decimal | None = Field(default=None, gt=0)
    max_rate: Decimal | None = Field(default=None, gt=0)
    slippage: Decimal | None = Field(default=None, ge=0, le=100)
    replace_cancelled: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> RecurringDcaParams:
        if self.from_token.lower() == self.to_token.lower():
            raise ValueError("from_token and to_token must differ")
        low, high = self.min_rate, self.max_rate
        if low is not None and high is not None and low > high:
            raise ValueError("min_rate must not exceed max_rate")
        return self


class RecurringDca(Strategy[RecurringDcaParams]):
    """Keep a DCA running between two tokens, renewed on completion, with optional rate bounds.

    State: `generation` (int, the DCA being kept), `counted` (the id of the last
    finished order already counted) and `user_cancelled` (cancels already logged).
    """

    name: ClassVar[str] = "recurring_dca"

    def tokens(self) -> list[str]:
        """The pair it trades."""
        return [self.params.from_token, self.params.to_token]

    def key(self, generation: int) -> str:
        """The idempotency key of the DCA of one generation."""
        return f"{self.instance}:dca:{generation}"

    async def on_tick(self, ctx: Context) -> list[Action]:
        """Create the next DCA when none is live; nothing while one is, or while held."""
        dcas = [o for o in ctx.orders if o.kind == "dca"]  # newest first
        if any(o.live for o in dcas):
            return []
        if dcas and self._held(ctx, dcas[0]):
            return []
        generation = _int(ctx.state.get("generation"))
        if dcas and dcas[0].order_id != ctx.state.get("counted"):
            # The newest order is final and not yet counted: move to the next generation.
            # With lost state, the finished orders still give a generation never used.
            finished = sum(1 for o in dcas if not o.live)
            generation = max(generation + 1, finished)
            ctx.save("generation", generation)
            ctx.save("counted", dcas[0].order_id)
            ctx.log.info(
                "recurring_dca.renew",
                finished=dcas[0].order_id,
                status=dcas[0].status,
                generation=generation,
            )
        number, unit = parse_period(self.params.interval)
        return [
            CreateDca(
                key=self.key(generation),
                sell=self.params.from_token,
                buy=self.params.to_token,
                amount=self.params.amount_per_order,
                amount_type="perorder",
                orders=self.params.orders,
                interval_value=number,
                interval_period=unit,
                min_rate=self.params.min_rate,
                max_rate=self.params.max_rate,
                slippage=self.params.slippage,
            )
        ]

    async def on_order_event(self, ctx: Context, event: OrderEvent) -> list[Action]:
        """Renew at once when a DCA order changes (same decision, same keys, as a tick)."""
        return await self.on_tick(ctx) if event.kind == "dca" else []

    def resumes_at(self, cancelled: OrderInfo) -> datetime:
        """When the run of a DCA the user cancelled would have ended: the next one's time.

        Its creation + `orders` × `interval` (the parameters as they are now).
        """
        return cancelled.created_at + self.params.orders * period_length(self.params.interval)

    def _held(self, ctx: Context, newest: OrderInfo) -> bool:
        """True while the newest DCA, cancelled by the user, holds the next one back."""
        if self.params.replace_cancelled or newest.order_id == ctx.state.get("counted"):
            return False  # renewing at once, or the renewal is already under way
        if not cancelled_by_user(ctx, self.instance, newest):
            return False
        resumes = self.resumes_at(newest)
        waiting = ctx.now < resumes
        note_user_cancels(
            ctx,
            new_user_cancels(ctx, self.instance, [newest]),
            "recurring_dca.user_cancelled",
            renews_at=resumes.isoformat(),
            hint="not renewed before then (replace_cancelled = true renews at once)"
            if waiting
            else "its run is over: renewed now",
        )
        return waiting


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | str | Decimal) else 0
