"""Actions: what a strategy (or the `bot cancel` verb) asks the executor to do.

Each action is immutable, carries exact `Decimal` amounts in human units and token
identities (coin type or FA address), and an idempotency key: the executor records one
intent per (strategy, key), so a repeated tick never doubles an order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from bot.money import format_decimal

if TYPE_CHECKING:  # annotations only: strategies need not import the HTTP client
    from bot.api.params import Slippage

__all__ = [
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


def describe(action: Action) -> str:
    """One line a person can read."""
    if isinstance(action, CreateDca):
        per = "in total" if action.amount_type == "total" else "per order"
        return (
            f"create DCA: {format_decimal(action.amount)} {action.sell} {per} → "
            f"{action.buy}, {action.orders} orders every {action.interval_value} "
            f"{action.interval_period}"
        )
    if isinstance(action, CreateLimit):
        return (
            f"create limit: sell {format_decimal(action.amount)} {action.sell} for "
            f"{action.buy} at ≥ {format_decimal(action.rate)} {action.buy}/{action.sell}"
        )
    if isinstance(action, CancelDca | CancelLimit):
        kind = "DCA" if isinstance(action, CancelDca) else "limit"
        return f"cancel {kind} order {action.order_id}"
    amount = action.sell_amount if action.sell_amount is not None else action.buy_amount
    amount = amount if amount is not None else Decimal(0)
    side = "sell" if action.sell_amount is not None else "buy"
    return f"swap: {side} {format_decimal(amount)} ({action.sell} → {action.buy})"


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
