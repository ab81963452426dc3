"""Reconciliation: settle intents whose outcome is unknown, at start-up and after an unknown.

An intent left `sent` (the process died mid-request) or `unknown` (no complete answer) is
matched against what really happened:

* create_dca / create_limit: a provider order of the same kind, wallet, tokens and amount
  (limit: rate; DCA: number of orders and interval) created no earlier than the intent, and
  not already linked to another intent → `confirmed` with its id. Never two orders for one
  intent: an order, once linked, is not matched again.
* cancel_*: the order is seen cancelled → `confirmed`.
* swap: its recorded transaction, looked up by hash: committed → `confirmed` or `failed`;
  no transaction was ever signed → `failed` (POST /swap spends nothing by itself).

An intent left `planned` (the process died after recording it, before sending anything)
→ `failed` at once: nothing left the process, so the strategy may act again.

Anything still unmatched after `grace` → `failed`, and the strategy may act again. Inside
the grace period it stays `unknown` (a pending deposit, a slow provider).

First, the wallet's transactions the journal holds as signed, submitted or unknown (their
signer died before their fate was known) are looked up by hash: committed → `committed`
or `failed`; unknown to the node at a ledger time past their expiration → `expired`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from decimal import Decimal
from typing import Final, Literal

from bot.api import GetOrdersRequest, OrderFilter, PanoraClient
from bot.api.models import DcaOrder, LimitOrder
from bot.aptos.tokens import TokenBook, TokenLookupError
from bot.chain import ChainError, NodeClient
from bot.clock import Clock
from bot.engine.observe import observation_of
from bot.journal import IntentView, Journal
from bot.logging import get_logger

__all__ = ["Reconciler", "Resolution"]

OrderKind = Literal["dca", "limit"]
_CLOCK_SKEW: Final = timedelta(minutes=2)
_UNFINISHED_TX: Final = ("signed", "submitted", "unknown")
_PAGES: Final = 10


@dataclass(frozen=True)
class Resolution:
    """What reconciliation decided for one intent."""

    intent_id: int
    state: str
    order_id: str | None = None
    detail: str = ""


class Reconciler:
    """Settles `sent`/`unknown` intents of one wallet."""

    def __init__(
        self,
        *,
        journal: Journal,
        client: PanoraClient,
        clock: Clock,
        wallet: str,
        tokens: TokenBook,
        node: NodeClient | None = None,
        grace: timedelta = timedelta(minutes=15),
    ) -> None:
        self.journal = journal
        self.client = client
        self.clock = clock
        self.wallet = wallet
        self.tokens = tokens
        self.node = node
        self.grace = grace
        self._log = get_logger("reconcile", wallet=wallet)

    async def run(self, *, in_flight: bool = True) -> list[Resolution]:
        """Settle what can be settled now; returns one resolution per intent examined.

        Args:
            in_flight: also settle intents left `planned` or `sent` and their transactions
                (at start-up, when no execution can still own them). A running daemon
                passes False: it settles only `unknown` intents, whose executions are over.
        """
        states = ("planned", "sent", "unknown") if in_flight else ("unknown",)
        busy: set[int] = set()
        if not in_flight:
            busy = {i.id for i in self.journal.intents(states=("planned", "sent"))}
        await self.settle_transactions(skip_intents=busy)
        open_intents = [i for i in self.journal.intents(states=states) if i.wallet == self.wallet]
        if not open_intents:
            return []
        now = self.clock.now()
        results: list[Resolution] = []
        for intent in [i for i in open_intents if i.state == "planned"]:
            # The executor moves planned → sent with no await in between, so a planned
            # intent seen here belongs to a process that died before sending anything.
            detail = "never sent: found planned at start-up"
            self.journal.set_intent_state(intent.id, "failed", at=now, detail=detail, error=detail)
            results.append(Resolution(intent.id, "failed", None, detail))
        open_intents = [i for i in open_intents if i.state != "planned"]
        if not open_intents:
            return results
        for intent in open_intents:
            if intent.state == "sent":
                self.journal.set_intent_state(
                    intent.id, "unknown", at=now, detail="found in flight at start-up"
                )
        orders = {kind: await self._provider_orders(kind) for kind in ("dca", "limit")}
        claimed = {
            (o.kind, o.order_id)
            for o in self.journal.orders(wallet=self.wallet)
            if o.intent_id is not None
        }
        for intent in sorted(open_intents, key=lambda i: (i.created_at, i.id)):
            resolution = await self._settle(intent, orders, claimed)
            results.append(resolution)
            if resolution.state != "unknown":
                self.journal.set_intent_state(
                    intent.id,
                    resolution.state,
                    at=self.clock.now(),
                    order_id=resolution.order_id,
                    detail=resolution.detail or None,
                    error=resolution.detail if resolution.state == "failed" else None,
                )
                self._log.info(
                    "reconcile.settled",
                    intent=intent.id,
                    state=resolution.state,
                    order_id=resolution.order_id,
                    detail=resolution.detail,
                )
        return results

    def unfinished_transactions(self) -> int:
        """How many of the wallet's transactions have no known fate yet."""
        return sum(
            1 for tx in self.journal.transactions(states=_UNFINISHED_TX) if tx.sender == self.wallet
        )

    async def drain_transactions(
        self,
        *,
        timeout_seconds: float,
        poll_seconds: float,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> int:
        """Wait until the wallet's unfinished transactions commit, fail or expire.

        At start-up, before anything new is signed: the node's sequence number counts
        committed transactions only, so a transaction signed now would take the number of
        one an earlier process left pending (refused by a real mempool, or worse).
        Returns how many are still unfinished when `timeout_seconds` ran out.
        """
        waited = 0.0
        while True:
            await self.settle_transactions()
            left = self.unfinished_transactions()
            if not left or self.node is None or waited >= timeout_seconds:
                if left:
                    self._log.warning("reconcile.transactions_unsettled", count=left)
                return left
            await sleep(poll_seconds)
            waited += poll_seconds

    async def settle_transactions(self, skip_intents: set[int] | None = None) -> int:
        """Record the fate of the wallet's unfinished transactions; returns how many moved.

        Transactions of `skip_intents` (still being executed) are left to their signer.
        """
        if self.node is None:
            return 0
        moved = 0
        for tx in self.journal.transactions(states=_UNFINISHED_TX):
            if tx.sender != self.wallet or tx.intent_id in (skip_intents or set()):
                continue
            try:
                lookup = await self.node.lookup_transaction(tx.hash)
            except ChainError:
                return moved  # the node is unreachable: the next run tries again
            status = lookup.status
            if status is not None and status.committed:
                state = "committed" if status.success else "failed"
                self.journal.update_transaction(
                    tx.hash,
                    state,
                    at=self.clock.now(),
                    gas_used=status.gas_used or None,
                    vm_status=status.vm_status or None,
                )
            elif status is None and _past_expiration(
                tx.payload_summary, lookup.ledger_timestamp_us
            ):
                self.journal.update_transaction(tx.hash, "expired", at=self.clock.now())
            else:
                continue
            moved += 1
            self._log.info("reconcile.transaction", tx_hash=tx.hash)
        return moved

    async def _provider_orders(self, kind: OrderKind) -> list[DcaOrder | LimitOrder]:
        found: list[DcaOrder | LimitOrder] = []
        for status in (OrderFilter.ACTIVE, OrderFilter.COMPLETED):
            page = 1
            while page <= _PAGES:
                result = await self.client.get_orders(
                    kind,
                    GetOrdersRequest(
                        chain_id=self.client.chain_id,
                        wallet=self.wallet,
                        status=status,
                        page_number=page,
                        limit=50,
                        tx_details=False,
                    ),
                )
                found.extend(result.orders)
                if page >= result.total_pages or not result.orders:
                    break
                page += 1
        return found

    def _expired(self, intent: IntentView) -> bool:
        return self.clock.now() - intent.created_at > self.grace

    async def _settle(
        self,
        intent: IntentView,
        orders: dict[str, list[DcaOrder | LimitOrder]],
        claimed: set[tuple[str, str]],
    ) -> Resolution:
        if intent.kind in ("create_dca", "create_limit"):
            kind: OrderKind = "dca" if intent.kind == "create_dca" else "limit"
            for order in orders[kind]:
                if (kind, order.order_id) not in claimed and self._matches(intent, kind, order):
                    claimed.add((kind, order.order_id))
                    self._link(intent, kind, order)
                    return Resolution(intent.id, "confirmed", order.order_id, "matched an order")
        elif intent.kind in ("cancel_dca", "cancel_limit"):
            kind = "dca" if intent.kind == "cancel_dca" else "limit"
            wanted = str(intent.action.get("order_id"))
            for order in orders[kind]:
                if order.order_id == wanted and order.status in ("cancelled", "refunded"):
                    return Resolution(intent.id, "confirmed", wanted, "the order is cancelled")
        elif intent.kind == "swap":
            return await self._settle_swap(intent)
        if self._expired(intent):
            return Resolution(intent.id, "failed", None, "nothing matched within the grace period")
        return Resolution(intent.id, "unknown")

    def _matches(self, intent: IntentView, kind: OrderKind, order: DcaOrder | LimitOrder) -> bool:
        action = intent.action
        try:
            sell = self.tokens.find(str(action["sell"]))
            buy = self.tokens.find(str(action["buy"]))
        except (KeyError, TokenLookupError):
            return False
        if self.tokens.get(order.from_token.address) != sell:
            return False
        if self.tokens.get(order.to_token.address) != buy:
            return False
        created = order.created_at
        if created is not None and created < intent.created_at - _CLOCK_SKEW:
            return False
        spend = Decimal(str(action.get("spend_amount")))
        if isinstance(order, LimitOrder):
            return (
                order.from_token_amount == spend
                and order.rate_to_token_per_from_token == Decimal(str(action["rate"]))
            )
        interval = order.interval
        return (
            order.from_token_amount_total == spend
            and order.number_of_orders_total in (None, action.get("orders"))
            and (
                interval is None
                or (interval.value, interval.time_period)
                == (action.get("interval_value"), action.get("interval_period"))
            )
        )

    def _link(self, intent: IntentView, kind: OrderKind, order: DcaOrder | LimitOrder) -> None:
        observation = observation_of(kind, order, self.wallet)
        linked = replace(observation.snapshot, strategy=intent.strategy, intent_id=intent.id)
        self.journal.upsert_order(
            linked, observed_at=self.clock.now(), source="reconcile", raw_hash=observation.raw_hash
        )

    async def _settle_swap(self, intent: IntentView) -> Resolution:
        hashes = [t.hash for t in self.journal.transactions(intent_id=intent.id)]
        if not hashes:
            return Resolution(intent.id, "failed", None, "no transaction was ever signed")
        if self.node is not None:
            for tx_hash in reversed(hashes):
                try:
                    lookup = await self.node.lookup_transaction(tx_hash)
                except ChainError:
                    return Resolution(intent.id, "unknown", None, "node unreachable")
                status = lookup.status
                if status is not None and status.committed:
                    state = "confirmed" if status.success else "failed"
                    return Resolution(intent.id, state, None, status.vm_status)
        if self._expired(intent):
            return Resolution(intent.id, "failed", None, "no transaction committed in time")
        return Resolution(intent.id, "unknown")


def _past_expiration(payload_summary: str, ledger_us: int | None) -> bool:
    """True when the node's ledger time is at or past the transaction's expiration."""
    try:
        expiration = int(json.loads(payload_summary)["expiration_timestamp_secs"])
    except (ValueError, KeyError, TypeError):
        return False
    return ledger_us is not None and ledger_us >= expiration * 1_000_000
