"""Recurring DCA: keep one DCA order running between two tokens, renewed when it ends.

Each tick: while one of this strategy's DCA orders is live, nothing happens. Otherwise a
new DCA is created for the next *generation*. The generation (kept in state) moves on only
once the previous order is seen final (filled, cancelled, expired, refunded), so the key
`<instance>:dca:<generation>` is the same on every tick until then: a repeated tick, or a
tick before the new order shows up in the journal, never creates a second DCA.
"""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Final, Literal

from pydantic import AfterValidator, Field, model_validator

from bot.engine.strategy import (
    Action,
    Context,
    CreateDca,
    Strategy,
    StrategyParams,
)

if TYPE_CHECKING:
    from bot.engine.events import OrderEvent

__all__ = [
    "Period",
    "RecurringDca",
    "RecurringDcaParams",
    "SlippageParam",
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
    """

    from_token: str = Field(min_length=1)
    to_token: str = Field(min_length=1)
    amount_per_order: Decimal = Field(gt=0)
    orders: int = Field(ge=1)
    interval: Period
    min_rate: Decimal | None = Field(default=None, gt=0)
    max_rate: Decimal | None = Field(default=None, gt=0)
    slippage: Decimal | None = Field(default=None, ge=0, le=100)

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

    State: `generation` (int, the DCA being kept) and `counted` (the id of the last
    finished order already counted).
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
        """Create the next DCA when none is live; nothing while one is."""
        dcas = [o for o in ctx.orders if o.kind == "dca"]  # newest first
        if any(o.live for o in dcas):
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


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | str | Decimal) else 0
