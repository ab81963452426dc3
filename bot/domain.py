"""The bot's shared vocabulary: order kinds and statuses, time periods, risk rules, the router.

One home for the names every layer speaks (the API client, the paper service and core,
the engine, the backtest, the CLI). The enums are `StrEnum`s, so a member *is* its wire
string: `OrderStatus.FILLED == "filled"`, it formats, hashes, serialises and is stored as
`"filled"`, and a plain string from the wire is found in the sets below.

This module imports nothing of the bot: any layer may import it.
"""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from typing import Final, Literal

__all__ = [
    "APT_COIN_TYPE",
    "APT_FA_ADDRESS",
    "CANCEL_DONE_STATUSES",
    "CAP_RULES",
    "CLOSED_STATUSES",
    "DCA_STATUSES",
    "FINAL_STATUSES",
    "LIMIT_STATUSES",
    "LIVE_ORDER_STATUSES",
    "PROVIDER_LIVE_STATUSES",
    "ROUTER_FUNCTION",
    "ROUTER_MODULE_ADDRESS",
    "TIME_PERIODS",
    "OrderKind",
    "OrderStatus",
    "RiskRule",
    "Slippage",
]

Slippage = Decimal | Literal["auto"]
"""A swap's slippage: a percent, or "auto" (the provider chooses)."""


class OrderKind(StrEnum):
    """The two kinds of provider order (the `/dca/...` and `/limit/...` endpoints)."""

    DCA = "dca"
    LIMIT = "limit"


class OrderStatus(StrEnum):
    """An order's status: the provider's six, the paper core's `pending`, and our two.

    `MISSING` and `LOST` are the journal's own: a live order the provider no longer lists
    (not final), and one an authoritative provider does not know (final).
    """

    PENDING = "pending"
    """Paper core only: created, its deposit not yet seen (the provider never lists it)."""
    ACTIVE = "active"
    PARTIALLY_FILLED = "partially_filled"
    FILLED = "filled"
    CANCELLED = "cancelled"
    REFUNDED = "refunded"
    EXPIRED = "expired"
    MISSING = "missing"
    """Ours: a live order the provider no longer lists, even by id (not final)."""
    LOST = "lost"
    """Ours: an order an authoritative provider does not know (`close_unknown`): final."""


DCA_STATUSES: Final = frozenset(
    {OrderStatus.ACTIVE, OrderStatus.FILLED, OrderStatus.CANCELLED, OrderStatus.REFUNDED}
)
"""The statuses the provider gives a DCA order."""
LIMIT_STATUSES: Final = frozenset(
    {
        OrderStatus.ACTIVE,
        OrderStatus.PARTIALLY_FILLED,
        OrderStatus.FILLED,
        OrderStatus.CANCELLED,
        OrderStatus.REFUNDED,
        OrderStatus.EXPIRED,
    }
)
"""The statuses the provider gives a limit order."""
PROVIDER_LIVE_STATUSES: Final = frozenset({OrderStatus.ACTIVE, OrderStatus.PARTIALLY_FILLED})
"""Provider statuses of an order that may still trade (the `active` filter's members)."""
FINAL_STATUSES: Final = frozenset(
    {OrderStatus.FILLED, OrderStatus.CANCELLED, OrderStatus.REFUNDED, OrderStatus.EXPIRED}
)
"""Statuses after which an order changes no more (the `completed` filter's members)."""
CANCEL_DONE_STATUSES: Final = frozenset({OrderStatus.CANCELLED, OrderStatus.REFUNDED})
"""Final statuses in which a cancel has nothing left to do: the order is stopped and its
unsold amount returned (the spec does not say more of `refunded`)."""
CLOSED_STATUSES: Final = FINAL_STATUSES | {OrderStatus.LOST}
"""Statuses after which the journal never asks for an order again."""
LIVE_ORDER_STATUSES: Final = (
    OrderStatus.ACTIVE,
    OrderStatus.PARTIALLY_FILLED,
    OrderStatus.MISSING,
)
"""Journal statuses of an order that may still trade (`missing`: not listed lately)."""

TIME_PERIODS: Final[tuple[str, ...]] = ("minute", "hour", "day", "week", "month")
"""The time periods of a DCA interval or a limit order's delay, as the wire names them."""


class RiskRule(StrEnum):
    """The rules the risk checker refuses an action by (a refusal's `rule`)."""

    UNKNOWN_TOKEN = "unknown token"  # noqa: S105 - a rule name, not a password
    BANNED_TOKEN = "banned token"  # noqa: S105 - a rule name, not a password
    ALLOWED_TOKENS = "allowed tokens"
    MAX_SLIPPAGE = "max slippage"
    MAX_OPEN_ORDERS = "max open orders"
    PER_TRANSACTION_CAP = "per-transaction cap"
    DAILY_SPEND_CAP = "daily spend cap"
    STRATEGY_BUDGET = "strategy budget"
    REFERENCE_PRICE = "reference price"
    """No reference price to bound an ExactOut swap by (the engine's check)."""


CAP_RULES: Final = frozenset(
    {
        RiskRule.PER_TRANSACTION_CAP,
        RiskRule.DAILY_SPEND_CAP,
        RiskRule.STRATEGY_BUDGET,
        RiskRule.MAX_OPEN_ORDERS,
    }
)
"""The risk rules that are caps (a refusal by one of them is alerted)."""


APT_COIN_TYPE: Final = "0x1::aptos_coin::AptosCoin"
"""APT as a coin type: the native token, which pays the gas."""
APT_FA_ADDRESS: Final = "0xa"
"""APT as a fungible asset (its paired FA metadata address)."""


ROUTER_MODULE_ADDRESS: Final = "0x1c3206329806286fd2223647c9f9b130e66baeb6d7224a18c1f642ffe48f3b4c"
"""The address of the provider's router module on Aptos mainnet."""
ROUTER_FUNCTION: Final = f"{ROUTER_MODULE_ADDRESS}::panora_swap::router_entry"
"""The entry function every provider swap calls (the signer's default allow-list)."""
