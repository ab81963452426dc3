"""Recurring DCA: keep one DCA order running between two tokens, renewed when it ends.

Each tick: while one of this strategy's DCA orders is live, nothing happens. Otherwise a
new DCA is created for the next *generation*. The generation (kept in state) moves on only
once the previous order is seen final (filled, cancelled, expired, refunded), so the key
`<instance>:dca:<generation>` is the same on every tick until then: a repeated tick, or a
tick before the new order shows up in the journal, never creates a second DCA.

A DCA the user cancelled (`bot cancel`, or outside the bot) is not renewed at once: the
strategy says so once in its log and waits until the cancelled run would have ended (its
creation + `orders` × `interval`), unless `replace_cancelled = true`. This module also
holds what the built-ins share: periods, slippage, and who cancelled an order
(`cancelled_by_user`, `new_user_cancels`, `note_user_cancels`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Final, Literal

from pydantic import AfterValidator, Field, model_validator

from bot.engine.strategy import (
    Action,
    Context,
    CreateDca,
    OrderInfo,
    Strategy,
    StrategyParams,
)

if TYPE_CHECKING:
    from bot.engine.events import OrderEvent

__all__ = [
    "NOTED_CANCELS",
    "Period",
    "RecurringDca",
    "RecurringDcaParams",
    "SlippageParam",
    "cancelled_by_user",
    "new_user_cancels",
    "note_user_cancels",
    "parse_period",
    "period_length",
]

_SECONDS: Final = {"minute": 60, "hour": 3600, "day": 86400, "week": 604800, "month": 2592000}
_PERIOD_RE: Final = re.compile(r"^\s*(\d+)\s*(minute|hour|day|week|month)s?\s*$", re.IGNORECASE)


def parse_period(text: str) -> tuple[int, str]:
    """`"6 hour"` → `(6, "hour")`; the unit is one of minute, hour, day, week, month.

    A plural (`"2 days"`) is accepted. Raises `ValueError` for anything else.
    """
    match = _PERIOD_RE.match(text)
    if match is None or int(match.group(1)) < 1:
        raise ValueError(
            f"{text!r} is not a period: use a whole number ≥ 1 and one of minute, hour, "
            "day, week, month (e.g. '1 day')"
        )
    return int(match.group(1)), match.group(2).lower()


def period_length(text: str) -> timedelta:
    """How long a period lasts (`"12 hour"` → 12 h; a month counts as 30 days)."""
    number, unit = parse_period(text)
    return timedelta(seconds=number * _SECONDS[unit])


def _normal_period(text: str) -> str:
    number, unit = parse_period(text)
    return f"{number} {unit}"


def _check_slippage(value: Decimal | str) -> Decimal | str:
    if isinstance(value, Decimal) and not Decimal(0) <= value <= Decimal(100):
        raise ValueError("slippage must be between 0 and 100 (or 'auto')")
    return value


NOTED_CANCELS: Final = "user_cancelled"
"""State key: the ids of the orders whose cancel by the user was already logged."""
_NOTED_KEPT: Final = 100


def cancelled_by_user(ctx: Context, instance: str, order: OrderInfo) -> bool:
    """Whether `order` was cancelled by someone else than the strategy `instance` itself.

    A built-in cancels its own orders under the key `<instance>:cancel:<order id>`, so its
    cancels are in `ctx.intents`; one whose intent failed sent nothing. Any other cancel is
    the user's: `bot cancel` (an intent of the command line's) or one made outside the bot
    (the provider lists the order `cancelled`).
    """
    if order.status != "cancelled":
        return False
    own = ctx.intents.get(f"{instance}:cancel:{order.order_id}")
    return own is None or own == "failed"


def _noted(ctx: Context) -> list[str]:
    stored = ctx.state.get(NOTED_CANCELS)
    return [str(i) for i in stored] if isinstance(stored, list) else []


def new_user_cancels(ctx: Context, instance: str, orders: Sequence[OrderInfo]) -> list[OrderInfo]:
    """The orders among `orders` the user cancelled and `note_user_cancels` has not noted."""
    noted = _noted(ctx)
    return [o for o in orders if cancelled_by_user(ctx, instance, o) and o.order_id not in noted]


def note_user_cancels(ctx: Context, orders: Sequence[OrderInfo], event: str, **fields: Any) -> None:
    """Log each of `orders` (from `new_user_cancels`) once, as `event`, and remember it.

    The ids are kept in state (`NOTED_CANCELS`, the latest 100): a cancel is reported,
    and acted on, by the first tick that sees it, not by every tick after.
    """
    if not orders:
        return
    for order in orders:
        ctx.log.info(event, order=order.order_id, **fields)
    kept = [*_noted(ctx), *(o.order_id for o in orders)]
    ctx.save(NOTED_CANCELS, kept[-_NOTED_KEPT:])


Period = Annotated[str, AfterValidator(_normal_period)]
"""A period parameter such as `"6 hour"`, validated and written `"<n> <unit>"`."""
SlippageParam = Annotated[Decimal | Literal["auto"], AfterValidator(_check_slippage)]
"""A slippage parameter: a percent from 0 to 100, or `"auto"`."""


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


class RecurringDca(Strategy):
    """Keep a DCA running between two tokens, renewed on completion, with optional rate bounds.

    State: `generation` (int, the DCA being kept), `counted` (the id of the last
    finished order already counted) and `user_cancelled` (cancels already logged).
    """

    name: ClassVar[str] = "recurring_dca"
    Params: ClassVar[type[StrategyParams]] = RecurringDcaParams

    def __init__(self, instance: str, params: StrategyParams) -> None:
        """A recurring DCA named `instance` with validated `RecurringDcaParams`."""
        if not isinstance(params, RecurringDcaParams):
            raise TypeError("recurring_dca needs RecurringDcaParams")
        super().__init__(instance, params)
        self.p = params

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
        number, unit = parse_period(self.p.interval)
        return [
            CreateDca(
                key=self.key(generation),
                sell=self.p.from_token,
                buy=self.p.to_token,
                amount=self.p.amount_per_order,
                amount_type="perorder",
                orders=self.p.orders,
                interval_value=number,
                interval_period=unit,
                min_rate=self.p.min_rate,
                max_rate=self.p.max_rate,
                slippage=self.p.slippage,
            )
        ]

    async def on_order_event(self, ctx: Context, event: OrderEvent) -> list[Action]:
        """Renew at once when a DCA order changes (same decision, same keys, as a tick)."""
        return await self.on_tick(ctx) if event.kind == "dca" else []

    def resumes_at(self, cancelled: OrderInfo) -> datetime:
        """When the run of a DCA the user cancelled would have ended: the next one's time.

        Its creation + `orders` × `interval` (the parameters as they are now).
        """
        return cancelled.created_at + self.p.orders * period_length(self.p.interval)

    def _held(self, ctx: Context, newest: OrderInfo) -> bool:
        """True while the newest DCA, cancelled by the user, holds the next one back."""
        if self.p.replace_cancelled or newest.order_id == ctx.state.get("counted"):
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
