"""A strategy's actions carried out against the paper core, as the paper world's service would.

`CoreBroker` takes the same `Action`s the live executor does and applies them to the
`PaperMarket` directly (no HTTP, no journal, no signer), reading each one the way the
client writes it and the paper service reads it, by the same rules (`bot.order_rules`):
human amounts rounded down to the token's decimals, percentages truncated after one
decimal, the service's defaults (DCA slippage 1%, limit slippage 5%, swap slippage
`auto`). Orders are escrowed at creation (the paper world's `escrow` style; with
`onchain`, the deposit lands at the same moment on a stepped clock, so the fills are the
same). A swap is quoted, then executed with the quote's minimum as the router call
carries it: priced worse by the backtest's slippage, it reverts when that is beyond the
swap's own slippage.

Like the executor, each idempotency key of a strategy is carried out once per run: a
repeated key is answered with its outcome, never executed again — unless it failed
(nothing applied), when it is carried out afresh, as a live key that failed is. An ExactOut
swap never sells more than the `max_sell_amount` the engine set (as the executor signs).

`CoreBroker` is the engine's `Broker` port in a backtest; it also keeps what the other
ports read of a run: the intents' states and each order's strategy (`bot.backtest.ports`),
the day's spend and the live orders (`RiskView`, the risk checker's `SpendLedger`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Literal

from bot import order_rules as rules
from bot.aptos.tokens import Token, TokenBook, TokenLookupError
from bot.domain import PROVIDER_LIVE_STATUSES, OrderKind
from bot.engine.actions import Action, CancelDca, CancelLimit, CreateDca, CreateLimit, Swap
from bot.engine.ports import ActionOutcome
from bot.money import to_base_units_down
from bot.paper.core.dca import DcaOrder
from bot.paper.core.ledger import InsufficientFunds
from bot.paper.core.limit import LimitOrder
from bot.paper.core.market import PaperMarket
from bot.paper.core.orders import OrderStateError, UnknownOrder
from bot.paper.core.swaps import SlippageExceeded, SwapError, execute_swap, quote_swap

__all__ = ["CoreBroker", "RiskView", "SwapRecord"]


@dataclass(frozen=True)
class SwapRecord:
    """One executed swap, in base units (`fee`: the platform fee, of the sold token)."""

    key: str
    time: datetime
    sell: Token
    buy: Token
    sold: int
    bought: int
    fee: int


@dataclass(frozen=True)
class _Spend:
    """A carried-out action's spend, for the risk checker's daily sums."""

    strategy: str
    day: date
    token: str
    amount: Decimal


class _Refused(Exception):
    """The service (or the client before it) would refuse the request."""


class CoreBroker:
    """Carries out the strategies' actions on the market, for one wallet (`Broker`)."""

    def __init__(
        self, market: PaperMarket, wallet: str, tokens: TokenBook, allowed: Iterable[str]
    ) -> None:
        self.market = market
        self.wallet = wallet
        self.tokens = tokens
        self.allowed = frozenset(allowed)
        """Keys of the tokens with a price series: the only ones that can be traded."""
        self.outcomes: dict[tuple[str, str], ActionOutcome] = {}
        """(strategy, idempotency key) → outcome, in the order first carried out."""
        self.intents: dict[str, dict[str, str]] = {}
        """Strategy → idempotency key → the state of its last attempt (`ctx.intents`)."""
        self.orders: list[tuple[str, str]] = []
        """(kind, order id) of every order created, oldest first."""
        self.owners: dict[tuple[str, str], str] = {}
        """(kind, order id) → the strategy that created the order."""
        self.swaps: list[SwapRecord] = []
        self._spends: list[_Spend] = []
        self._open: list[DcaOrder | LimitOrder] = []

    # --- what the risk checker reads (the journal's answers, from the run) ---------------

    def spent_on(self, day: date, token: str, strategy: str | None = None) -> Decimal:
        """Sum spent of `token` (key) by confirmed actions (of `strategy`) on UTC `day`."""
        return sum(
            (
                s.amount
                for s in self._spends
                if s.day == day and s.token == token and strategy in (None, s.strategy)
            ),
            Decimal(0),
        )

    def live_orders(self) -> list[DcaOrder | LimitOrder]:
        """The orders created in this run that can still trade (oldest first)."""
        self._open = [o for o in self._open if o.status in PROVIDER_LIVE_STATUSES]
        return list(self._open)

    # --- carrying out ---------------------------------------------------------------------

    async def carry_out(self, strategy: str, action: Action) -> ActionOutcome:
        """Do the action once per strategy and key; a failure is an outcome, not an error."""
        known = self.outcomes.get((strategy, action.key))
        if known is not None and known.state != "failed":
            return ActionOutcome(
                known.state, known.order_id, detail="already done under this key", duplicate=True
            )
        created = len(self.orders)
        try:
            order_id = self._apply(action)
        # ValueError: a broken rule (`order_rules.RuleError`) or the order engines' own checks;
        # ArithmeticError: a number the core's exact arithmetic cannot hold.
        except (
            _Refused,
            InsufficientFunds,
            TokenLookupError,
            ValueError,
            LookupError,
            ArithmeticError,
        ) as exc:
            outcome = ActionOutcome("failed", detail=str(exc))
        else:
            outcome = ActionOutcome("confirmed", order_id)
            for order in self.orders[created:]:
                self.owners[order] = strategy
            sell = getattr(action, "sell", None)
            if sell is not None and action.spend > 0:
                token = self.tokens.find(sell).address
                self._spends.append(_Spend(strategy, self.market.now.date(), token, action.spend))
        self.outcomes[(strategy, action.key)] = outcome
        self.intents.setdefault(strategy, {})[action.key] = outcome.state
        return outcome

    def _apply(self, action: Action) -> str | None:
        if isinstance(action, CreateDca):
            return self._create_dca(action)
        if isinstance(action, CreateLimit):
            return self._create_limit(action)
        if isinstance(action, CancelDca | CancelLimit):
            kind = OrderKind.DCA if isinstance(action, CancelDca) else OrderKind.LIMIT
            return self._cancel(kind, action)
        self._swap(action)
        return None

    def _pair(self, sell_name: str, buy_name: str) -> tuple[Token, Token]:
        sell, buy = self.tokens.find(sell_name), self.tokens.find(buy_name)
        if sell.keys == buy.keys:
            raise _Refused("fromTokenAddress and toTokenAddress must differ")
        for token in (sell, buy):
            if token.address not in self.allowed:
                raise _Refused(f"no price series for {token.symbol} ({token.address})")
        return sell, buy

    def _create_dca(self, action: CreateDca) -> str:
        sell, buy = self._pair(action.sell, action.buy)
        amount_type = rules.amount_type(action.amount_type)
        units = _units("fromTokenAmount.value", action.amount, sell)
        delay = None
        if action.delay_value is not None or action.delay_period is not None:
            delay = rules.period("delay", action.delay_value, action.delay_period, minimum=0)
        low, high = rules.rate_bounds(action.min_rate, action.max_rate)
        slippage = rules.dca_slippage(action.slippage)
        count = rules.whole_number("numberOfOrders", action.orders)
        rules.split(units, count, amount_type)
        order = self.market.dca.create(
            owner=self.wallet,
            recipient=self.wallet,
            sell=sell,
            buy=buy,
            amount=units,
            amount_type=amount_type,
            orders=count,
            interval=rules.period("interval", action.interval_value, action.interval_period),
            delay=delay,
            min_rate=low,
            max_rate=high,
            slippage=rules.DCA_DEFAULT_SLIPPAGE if slippage is None else slippage,
            now=self.market.now,
        )
        self.orders.append(("dca", order.order_id))
        self._open.append(order)
        return order.order_id

    def _create_limit(self, action: CreateLimit) -> str:
        sell, buy = self._pair(action.sell, action.buy)
        rate = rules.limit_rate(action.rate)
        expiry = None
        if action.expiry_value is not None or action.expiry_period is not None:
            expiry = rules.period("expiry", action.expiry_value, action.expiry_period)
        chosen = rules.slippage(action.slippage)
        order = self.market.limit.create(
            owner=self.wallet,
            recipient=self.wallet,
            sell=sell,
            buy=buy,
            amount=_units("fromTokenAmount", action.amount, sell),
            rate=rate,
            slippage=chosen if isinstance(chosen, Decimal) else rules.LIMIT_DEFAULT_SLIPPAGE,
            expiry=expiry,
            now=self.market.now,
        )
        self.orders.append(("limit", order.order_id))
        self._open.append(order)
        return order.order_id

    def _cancel(self, kind: OrderKind, action: CancelDca | CancelLimit) -> str:
        engine = self.market.dca if kind == "dca" else self.market.limit
        try:
            order = engine.get(action.order_id)
        except UnknownOrder:
            raise _Refused(f"order not found: {action.order_id}") from None
        if order.owner != self.wallet:
            raise _Refused(f"order not found for this wallet: {action.order_id}")
        if order.status not in PROVIDER_LIVE_STATUSES:
            raise _Refused(f"order {action.order_id} is {order.status}, not active")
        try:
            engine.cancel(action.order_id, self.market.now, owner=self.wallet)
        except OrderStateError as exc:
            raise _Refused(str(exc)) from None
        return action.order_id

    def _swap(self, action: Swap) -> None:
        sell, buy = self._pair(action.sell, action.buy)
        market = self.market
        exact_in = action.sell_amount is not None
        amount = action.sell_amount if exact_in else action.buy_amount
        if amount is None:  # Swap's own validation gives exactly one of the two
            raise _Refused("a swap needs sell_amount or buy_amount")
        units = _units(
            "fromTokenAmount" if exact_in else "toTokenAmount", amount, sell if exact_in else buy
        )
        slippage = rules.slippage(action.slippage)
        chosen: Decimal | Literal["auto"] = rules.AUTO if slippage is None else slippage
        now = market.now
        cap = action.max_sell_amount  # ExactOut: the engine's bound, as the executor signs
        cap_units = None if exact_in or cap is None else to_base_units_down(cap, sell.decimals)
        try:
            terms = quote_swap(
                market.pools,
                market.config.fees,
                sell,
                buy,
                at=now,
                amount_in=units if exact_in else None,
                amount_out=None if exact_in else units,
                slippage=chosen,
            )
            done = execute_swap(
                market.ledger,
                market.pools,
                market.config.fees,
                payer=self.wallet,
                recipient=self.wallet,
                sell=sell,
                buy=buy,
                at=now,
                exact_in=terms.exact_in,
                amount_in=terms.max_in if cap_units is None else min(terms.max_in, cap_units),
                amount_out=terms.min_out,
                adverse_pct=market.config.execution_slippage_pct,
            )
        except SlippageExceeded as exc:
            raise _Refused(f"the swap reverted: {exc}") from None
        except InsufficientFunds as exc:
            raise _Refused(f"the swap reverted: {exc}") from None
        except SwapError as exc:
            raise _Refused(str(exc)) from None
        fee = done.platform_fee + done.integrator_fee
        self.swaps.append(
            SwapRecord(action.key, now, sell, buy, done.amount_in, done.amount_out, fee)
        )


class RiskView:
    """The two questions `RiskChecker` asks its journal, answered from the run itself.

    Open orders are the wallet's live orders in the market; the day's spend is what the
    strategy's confirmed actions spent that UTC day.
    """

    def __init__(self, broker: CoreBroker) -> None:
        self.broker = broker

    def orders(
        self, *, status: Iterable[str] | None = None, wallet: str | None = None
    ) -> list[DcaOrder | LimitOrder]:
        """The wallet's orders with one of `status` (the checker counts the live ones)."""
        found = self.broker.live_orders()
        wanted = None if status is None else frozenset(status)
        return [o for o in found if wanted is None or o.status in wanted]

    def spent_today(
        self,
        strategy: str | None,
        wallet: str,
        token: str,
        day: date,
        *,
        states: Iterable[str] = ("confirmed",),
    ) -> Decimal:
        """What confirmed actions (of `strategy`; None: all) spent of `token` on UTC `day`."""
        return self.broker.spent_on(day, token, strategy)


def _units(field: str, amount: Decimal, token: Token) -> int:
    """A human amount in base units, rounded down as the service does; must be ≥ 1 unit."""
    return rules.base_units(field, amount, token.decimals, token.symbol)
