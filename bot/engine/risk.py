"""Risk checks on an action, before its intent is written (`[risk]`, per-strategy budgets).

Refused actions are never journaled as intents: the refusal is logged and counted, with a
one-line reason. Daily spend is counted from the journal (so it survives restarts),
including money that may be in flight (intents sent or unknown).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Final

from bot.aptos.tokens import Token, TokenBook, TokenLookupError
from bot.config import RiskSettings
from bot.domain import LIVE_ORDER_STATUSES, RiskRule
from bot.engine.actions import Action, CreateDca, CreateLimit, Swap
from bot.engine.ports import SpendLedger

__all__ = ["COUNTED_STATES", "RiskChecker", "RiskRefusal"]

COUNTED_STATES: Final = ("sent", "unknown", "confirmed")
"""Intent states whose spend counts against the daily caps (money possibly in flight)."""


@dataclass(frozen=True)
class RiskRefusal:
    """Why an action may not go ahead."""

    rule: RiskRule
    reason: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.reason}"


class RiskChecker:
    """Checks actions against `[risk]` and per-strategy budgets (spend per UTC day)."""

    def __init__(
        self,
        risk: RiskSettings,
        journal: SpendLedger,
        tokens: TokenBook,
        *,
        budgets: Mapping[str, Mapping[str, Decimal]] | None = None,
    ) -> None:
        self.risk = risk
        self.journal = journal
        self.tokens = tokens
        self.budgets = {s: dict(b) for s, b in (budgets or {}).items()}
        self._allowed = {self.resolve(name) for name in risk.allowed_tokens}

    def resolve(self, name: str) -> str:
        """The token address of a configured name (the name itself when unknown)."""
        try:
            return self.tokens.find(name).address
        except TokenLookupError:
            return name

    def _cap(self, caps: Mapping[str, Decimal], token: Token) -> Decimal | None:
        for name, cap in caps.items():
            if self.resolve(name) == token.address:
                return cap
        return None

    def check(
        self, strategy: str, wallet: str, action: Action, now: datetime
    ) -> RiskRefusal | None:
        """None when the action may proceed, else the first rule it breaks."""
        for name in (getattr(action, "sell", None), getattr(action, "buy", None)):
            if name is None:
                continue
            try:
                token = self.tokens.find(name)
            except TokenLookupError:
                return RiskRefusal(RiskRule.UNKNOWN_TOKEN, f"{name!r} is not a known token")
            if token.banned:
                return RiskRefusal(RiskRule.BANNED_TOKEN, f"{token.symbol} is tagged Banned")
            if self._allowed and token.address not in self._allowed:
                return RiskRefusal(
                    RiskRule.ALLOWED_TOKENS, f"{token.symbol} is not in [risk].allowed_tokens"
                )
        slippage = getattr(action, "slippage", None)
        if isinstance(slippage, Decimal) and slippage > self.risk.max_slippage_percent:
            return RiskRefusal(
                RiskRule.MAX_SLIPPAGE,
                f"{slippage}% is above "
                f"[risk].max_slippage_percent = {self.risk.max_slippage_percent}%",
            )
        if isinstance(action, CreateDca | CreateLimit):
            live = len(self.journal.orders(status=LIVE_ORDER_STATUSES, wallet=wallet))
            if live >= self.risk.max_open_orders:
                return RiskRefusal(
                    RiskRule.MAX_OPEN_ORDERS,
                    f"{live} open orders already "
                    f"([risk].max_open_orders = {self.risk.max_open_orders})",
                )
        if not isinstance(action, CreateDca | CreateLimit | Swap) or action.spend <= 0:
            return None
        token = self.tokens.find(action.sell)
        cap = self._cap(self.risk.per_transaction_caps, token)
        if cap is not None and action.spend > cap:
            return RiskRefusal(
                RiskRule.PER_TRANSACTION_CAP,
                f"{action.spend} {token.symbol} is above the cap of {cap}",
            )
        day = now.date()
        for caps, who, label in (
            (self.risk.daily_spend_caps, None, RiskRule.DAILY_SPEND_CAP),
            (self.budgets.get(strategy, {}), strategy, RiskRule.STRATEGY_BUDGET),
        ):
            cap = self._cap(caps, token)
            if cap is None:
                continue
            spent = self.journal.spent_today(who, wallet, token.address, day, states=COUNTED_STATES)
            if spent + action.spend > cap:
                return RiskRefusal(
                    label, f"{spent} {token.symbol} spent today + {action.spend} would exceed {cap}"
                )
        return None
