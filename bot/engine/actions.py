"""Actions: what a strategy (or the `bot cancel` verb) asks the executor to do.

Each action is immutable, carries exact `Decimal` amounts in human units and token
identities (coin type or FA address), and an idempotency key: the executor records one
intent per (strategy, key), so a repeated tick never doubles an order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final, Literal

from bot.domain import Slippage
from bot.money import format_decimal
from bot.price_view import Bound, PriceConvention

__all__ = [
    "DEFAULT_CONVENTION",
    "Action",
    "CancelDca",
    "CancelLimit",
    "CreateDca",
    "CreateLimit",
    "Swap",
    "action_json",
    "check_actions",
    "describe",
]


@dataclass(frozen=True, kw_only=True)
class _Base:
    key: str
    """Idempotency key, unique per strategy: the same key is never executed twice."""

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key.strip():
            raise ValueError("an action needs a non-empty idempotency key")


@dataclass(frozen=True, kw_only=True)
class CreateDca(_Base):
    """Start a DCA: spend `amount` (total or per order) of `sell` on `buy` in slices."""

    sell: str
    buy: str
    amount: Decimal
    amount_type: Literal["total", "perorder"] = "total"
    orders: int
    interval_value: int
    interval_period: str
    min_rate: Decimal | None = None
    max_rate: Decimal | None = None
    delay_value: int | None = None
    delay_period: str | None = None
    slippage: Decimal | None = None

    @property
    def spend(self) -> Decimal:
        """The most this action can spend of `sell`."""
        return self.amount if self.amount_type == "total" else self.amount * self.orders


@dataclass(frozen=True, kw_only=True)
class CreateLimit(_Base):
    """Sell `amount` of `sell` for at least `rate` of `buy` per unit, until expiry."""

    sell: str
    buy: str
    amount: Decimal
    rate: Decimal
    expiry_value: int | None = None
    expiry_period: str | None = None
    slippage: Slippage | None = None

    @property
    def spend(self) -> Decimal:
        """The most this action can spend of `sell`."""
        return self.amount


@dataclass(frozen=True, kw_only=True)
class CancelDca(_Base):
    """Cancel a DCA order by its provider id."""

    order_id: str
    spend: Decimal = field(default=Decimal(0), init=False)


@dataclass(frozen=True, kw_only=True)
class CancelLimit(_Base):
    """Cancel a limit order by its provider id."""

    order_id: str
    spend: Decimal = field(default=Decimal(0), init=False)


@dataclass(frozen=True, kw_only=True)
class Swap(_Base):
    """Swap now: ExactIn with `sell_amount`, or ExactOut with `buy_amount`."""

    sell: str
    buy: str
    sell_amount: Decimal | None = None
    buy_amount: Decimal | None = None
    slippage: Slippage | None = None
    max_sell_amount: Decimal | None = None
    """ExactOut: the most that may be sold. Left out, the engine sets it from the tick's
    reference price and `[risk]` before the risk check, so caps and budgets count it."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.sell_amount is None) == (self.buy_amount is None):
            raise ValueError("a swap needs exactly one of sell_amount and buy_amount")
        if self.max_sell_amount is not None and (
            self.buy_amount is None or not self.max_sell_amount > 0
        ):
            raise ValueError("max_sell_amount bounds an ExactOut swap and must be above 0")

    @property
    def spend(self) -> Decimal:
        """The most this swap can spend of `sell` (ExactOut: its `max_sell_amount`)."""
        return self.sell_amount or self.max_sell_amount or Decimal(0)


Action = CreateDca | CreateLimit | CancelDca | CancelLimit | Swap

_KIND: dict[type[Any], str] = {
    CreateDca: "create_dca",
    CreateLimit: "create_limit",
    CancelDca: "cancel_dca",
    CancelLimit: "cancel_limit",
    Swap: "swap",
}


def action_kind(action: Action) -> str:
    """The intent kind of an action (`create_dca`, …)."""
    return _KIND[type(action)]


def action_json(action: Action) -> dict[str, Any]:
    """The action as journal JSON.

    Every field, plus `spend_token` and `spend_amount` (the journal's daily-spend contract).
    """
    data: dict[str, Any] = {"type": action_kind(action)}
    for name in action.__dataclass_fields__:
        value = getattr(action, name)
        if value is not None:
            data[name] = value
    sell = getattr(action, "sell", None)
    if sell is not None:
        data["spend_token"] = sell
        data["spend_amount"] = action.spend
    return data


DEFAULT_CONVENTION: Final = PriceConvention()
"""The default `[display].price_quote` preference, without a token book."""


def describe(action: Action, convention: PriceConvention | None = None) -> str:
    """One line a person can read.

    Prices as `convention` shows them; the default is the default preference list with no
    token book (tokens are matched and named as the action gives them).
    """
    prices = convention or DEFAULT_CONVENTION
    if isinstance(action, CreateDca):
        per = "in total" if action.amount_type == "total" else "per order"
        line = (
            f"create DCA: {format_decimal(action.amount)} {prices.label(action.sell)} {per} → "
            f"{prices.label(action.buy)}, {action.orders} orders every {action.interval_value} "
            f"{action.interval_period}"
        )
        limits: tuple[tuple[Decimal | None, Bound], ...] = (
            (action.min_rate, "min"),
            (action.max_rate, "max"),
        )
        bounds = [
            str(price)
            for rate, bound in limits
            if rate is not None
            and (price := prices.of_rate(rate, got=action.buy, paid=action.sell, bound=bound))
        ]
        return line + (f", only at {' and '.join(bounds)}" if bounds else "")
    if isinstance(action, CreateLimit):
        return "create limit: " + _limit_terms(action, prices)
    if isinstance(action, CancelDca | CancelLimit):
        kind = "DCA" if isinstance(action, CancelDca) else "limit"
        return f"cancel {kind} order {action.order_id}"
    amount = action.sell_amount if action.sell_amount is not None else action.buy_amount
    amount = amount if amount is not None else Decimal(0)
    side = "sell" if action.sell_amount is not None else "buy"
    return (
        f"swap: {side} {format_decimal(amount)} "
        f"({prices.label(action.sell)} → {prices.label(action.buy)})"
    )


def _limit_terms(action: CreateLimit, prices: PriceConvention) -> str:
    """`buy APT with 25 USDC at ≤ 4.931 USDC per APT` (or `sell … for … at ≥ …`)."""
    sell, buy = prices.label(action.sell), prices.label(action.buy)
    amount = format_decimal(action.amount)
    price = prices.of_rate(action.rate, got=action.buy, paid=action.sell, bound="min")
    if price is None:  # not a positive rate: said as given
        terms = f"sell {amount} {sell} for {buy} at rate {format_decimal(action.rate)}"
    elif prices.quote_of(action.sell, action.buy) == action.sell:
        terms = f"buy {buy} with {amount} {sell} at {price}"
    else:
        terms = f"sell {amount} {sell} for {buy} at {price}"
    if action.expiry_value is not None:
        terms += f", expires after {action.expiry_value} {action.expiry_period or ''}".rstrip()
    return terms


def check_actions(actions: Any) -> list[Action]:
    """`actions` itself when it is a list of actions (what a strategy hook must return).

    Raises:
        TypeError: anything else.
    """
    if not isinstance(actions, list) or not all(
        isinstance(a, CreateDca | CreateLimit | CancelDca | CancelLimit | Swap) for a in actions
    ):
        raise TypeError(f"on_tick must return a list of actions, got {type(actions).__name__}")
    return actions
