"""The live adapters: the engine's ports over the Panora client, the node and the journal.

Every way of running the bot for real — the daemon, `bot once`, the paper world — plugs
these into the engine (`live_engine`); a backtest plugs in `bot.backtest.ports` instead.

* `LiveMarket` (`MarketData`): one `/prices` call for the tokens asked and the gas token,
  balances read from the node, quotes from `GET /swap/quote`;
* `JournalOrders` (`OrderView`): the journal's orders of a strategy with their fills, one
  query each, and its intents' states;
* `JournalStateStore` (`StateStore`): the journal's `strategy_state` table.

The journal answers the risk checker's `SpendLedger` as it is; the order tracker
(`bot.engine.tracker`) is the live `OrderEvents`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from bot.api import ApiError, PanoraClient, SwapRequest
from bot.api.models import SwapResponseExactIn
from bot.aptos.address import Address
from bot.aptos.tokens import Token, TokenBook, TokenLookupError
from bot.chain import NodeClient
from bot.chain.policy import GAS_TOKEN_KEYS
from bot.clock import Clock
from bot.engine.engine import Engine
from bot.engine.ports import Broker, MarketData, OrderEvents, OrderView, StateStore
from bot.engine.risk import RiskChecker
from bot.engine.strategy import FillInfo, OrderInfo, PriceInfo, Strategy
from bot.journal import Journal
from bot.logging import get_logger
from bot.price_view import PriceConvention

__all__ = [
    "JournalOrders",
    "JournalStateStore",
    "LiveMarket",
    "LivePorts",
    "live_engine",
    "live_ports",
]


def gas_token(tokens: TokenBook) -> Token | None:
    """The token that pays for gas (APT), as the book knows it; None when it does not."""
    return next((t for key in sorted(GAS_TOKEN_KEYS) if (t := tokens.get(key)) is not None), None)


class LiveMarket:
    """Prices from `/prices`, balances from the node, quotes from `/swap/quote`."""

    def __init__(
        self, client: PanoraClient, node: NodeClient | None, tokens: TokenBook, wallet: str
    ) -> None:
        self.client = client
        self.node = node
        self.tokens = tokens
        self.wallet = wallet
        self.gas = gas_token(tokens)
        self._log = get_logger("engine")

    async def prices(self, names: Sequence[str]) -> dict[str, PriceInfo]:
        """One `/prices` call for the tokens named and the gas token; each by both its ids.

        Only these are asked for, so the answer does not grow with the provider's whole
        token list.
        """
        keys = set(self.tokens.tokens_named(names))
        if self.gas is not None:
            keys.add(self.gas.address)
        listing = await self.client.get_prices(sorted(keys))
        prices = {}
        for r in listing.records:
            key = r.token_address or r.fa_address
            if key:
                info = PriceInfo(key, r.symbol or "?", r.usd_price, r.price_change_24h)
                for name in {r.token_address, r.fa_address} - {None}:
                    prices[str(name)] = info
        return prices

    async def balances(self, names: Sequence[str]) -> dict[str, Decimal]:
        """The wallet's balances read from the node (none without a node)."""
        balances: dict[str, Decimal] = {}
        if self.node is None:
            return balances
        wanted = self.tokens.tokens_named(names)
        if self.gas is not None:
            wanted.setdefault(self.gas.address, self.gas)
        for token in wanted.values():
            try:
                units = await self.node.balance(Address.parse(self.wallet), token.address)
            except Exception as exc:  # a balance is informative, never fatal
                self._log.debug("balance.unavailable", token=token.symbol, error=str(exc))
                continue
            balances[token.address] = Decimal(units).scaleb(-token.decimals)
        return balances

    async def quote(self, sell: str, buy: str, amount: Decimal) -> Decimal | None:
        """What `GET /swap/quote` says selling `amount` of `sell` buys (None: no answer)."""
        try:
            response = await self.client.quote(
                SwapRequest(
                    self.tokens.find(sell).address,
                    self.tokens.find(buy).address,
                    from_amount=amount,
                )
            )
        except (ApiError, TokenLookupError, ValueError):
            return None
        return response.best.to_token_amount if isinstance(response, SwapResponseExactIn) else None


class JournalOrders:
    """The journal's orders and intents, as a strategy's context lists them."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def orders_of(self, strategies: Sequence[str]) -> list[OrderInfo]:
        """The strategies' orders with their fills (one query per strategy), newest first."""
        infos = []
        for name in dict.fromkeys(strategies):
            fills = self.journal.fills_by_order(name)  # one query, not one per order
            for o in self.journal.orders(strategy=name):
                records = fills.get((o.kind, o.order_id), [])
                infos.append(
                    OrderInfo(
                        o.kind,
                        o.order_id,
                        o.status,
                        o.from_token,
                        o.to_token,
                        o.amount_total,
                        o.amount_spent,
                        o.to_amount_received,
                        o.rate,
                        o.created_at,
                        o.strategy,
                        tuple(
                            FillInfo(
                                f.tx_id, f.type, f.from_amount, f.to_amount, f.fee_amount, f.time
                            )
                            for f in records
                        ),
                    )
                )
        return sorted(infos, key=lambda o: o.created_at, reverse=True)

    def owner_of(self, kind: str, order_id: str) -> str | None:
        """The strategy the journal links the order to."""
        order = self.journal.order(kind, order_id)
        return None if order is None else order.strategy

    def intent_states(self, strategy: str) -> dict[str, str]:
        """The journal's intents of `strategy`: key → state."""
        return self.journal.intent_states(strategy)


class JournalStateStore:
    """The journal's strategy state: what every real run reads and writes."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def load(self, strategy: str) -> dict[str, Any]:
        """The journal's values of `strategy`."""
        return self.journal.states(strategy)

    def save(self, strategy: str, values: Mapping[str, Any], *, at: datetime) -> None:
        """Write `values` to the journal in one transaction."""
        self.journal.set_states(strategy, values, at=at)


@dataclass(frozen=True)
class LivePorts:
    """The engine's ports over one client, node and journal."""

    market: MarketData
    orders: OrderView
    state_store: StateStore


def live_ports(
    *,
    client: PanoraClient,
    journal: Journal,
    tokens: TokenBook,
    wallet: str,
    node: NodeClient | None = None,
) -> LivePorts:
    """The live adapters of one wallet (see the module docstring)."""
    return LivePorts(
        LiveMarket(client, node, tokens, wallet), JournalOrders(journal), JournalStateStore(journal)
    )


def live_engine(
    *,
    client: PanoraClient,
    journal: Journal,
    clock: Clock,
    wallet: str,
    tokens: TokenBook,
    broker: Broker,
    risk: RiskChecker,
    strategies: Iterable[Strategy],
    node: NodeClient | None = None,
    tracker: OrderEvents | None = None,
    timeout_seconds: float = 30.0,
    state_store: StateStore | None = None,
    stuck_after: int = 3,
    paused: Iterable[str] = (),
    convention: PriceConvention | None = None,
) -> Engine:
    """The engine of a live or paper run: its ports over `client`, `node` and `journal`.

    `state_store`: where the strategies' state lives (default: the journal; a dry run
    passes its overlay). `tracker`: the order tracker (None: no order events, a dry run).
    """
    ports = live_ports(client=client, journal=journal, tokens=tokens, wallet=wallet, node=node)
    return Engine(
        market=ports.market,
        orders=ports.orders,
        state_store=state_store or ports.state_store,
        clock=clock,
        wallet=wallet,
        tokens=tokens,
        broker=broker,
        risk=risk,
        strategies=strategies,
        tracker=tracker,
        timeout_seconds=timeout_seconds,
        stuck_after=stuck_after,
        paused=paused,
        convention=convention,
    )
