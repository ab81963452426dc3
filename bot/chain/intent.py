"""What the caller means a transaction to do: the policy judges the simulation against it."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

from bot.aptos.address import Address
from bot.aptos.tokens import Token

__all__ = ["Intent", "IntentKind"]


class IntentKind(StrEnum):
    """What a transaction is meant to do."""

    SWAP = "swap"
    DEPOSIT = "deposit"
    """Create an order: move the order's amount into the order module's escrow."""
    WITHDRAW = "withdraw"
    """Cancel/withdraw: the sender's balances may only rise (gas aside)."""


def _check_amount(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer of base units, got {value!r}")


@dataclass(frozen=True)
class Intent:
    """What the caller means a transaction to do, in base units (from the quote or order).

    Attributes:
        kind: swap, deposit or withdraw.
        sender: the account that signs.
        sell: the token sold or deposited (None for a withdraw).
        sell_amount: ExactIn: the amount sold; ExactOut: the most that may be sold. The
            bot's own number (the strategy's action, bounded by its reference price), never
            the provider's.
        fee_amount: fees the sender may pay in the sold token on top of `sell_amount` (0:
            every fee is inside it, as the router takes it).
        buy: the token bought (swaps).
        min_out: the least the recipient must receive of `buy`: computed by the bot from
            its reference price and the allowed slippage (ExactOut: the exact amount bought).
        expected_out: the quote's expected output (for the slippage check), if known.
        slippage_percent: the slippage the quote was asked with, if known.
        recipient: who receives the bought token (default: the sender).
        escrow: the order module's escrow account for a deposit, when known.
        exact_out: True when `sell_amount` is a maximum (ExactOut), not the exact amount.
        order_id: the order a deposit funds or a withdraw cancels: the call must name it.
    """

    kind: IntentKind
    sender: Address
    sell: Token | None = None
    sell_amount: int = 0
    fee_amount: int = 0
    buy: Token | None = None
    min_out: int = 0
    expected_out: int | None = None
    slippage_percent: Decimal | None = None
    recipient: Address | None = None
    escrow: Address | None = None
    exact_out: bool = False
    order_id: str | None = None

    def __post_init__(self) -> None:
        for name in ("sell_amount", "fee_amount", "min_out"):
            _check_amount(name, getattr(self, name))
        if self.expected_out is not None:
            _check_amount("expected_out", self.expected_out)
        if self.slippage_percent is not None and not isinstance(self.slippage_percent, Decimal):
            raise ValueError("slippage_percent must be a Decimal")

    @property
    def receiver(self) -> Address:
        """The recipient of the bought token."""
        return self.recipient or self.sender

    def summary(self) -> dict[str, Any]:
        """JSON-ready summary for the journal (addresses and amounts as text)."""

        def token(t: Token | None) -> str | None:
            return t.address if t is not None else None

        return {
            "kind": str(self.kind),
            "sender": str(self.sender),
            "sell": token(self.sell),
            "sell_amount": str(self.sell_amount),
            "fee_amount": str(self.fee_amount),
            "buy": token(self.buy),
            "min_out": str(self.min_out),
            "recipient": str(self.receiver),
            "escrow": str(self.escrow) if self.escrow else None,
            "exact_out": self.exact_out,
            "order_id": self.order_id,
        }
