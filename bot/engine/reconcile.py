"""Reconciliation: settle intents whose outcome is unknown, at start-up and after an unknown.

An intent left `sent` (the process died mid-request) or `unknown` (no complete answer) is
matched against what really happened:

* create_dca / create_limit: linked to an order only on evidence the bot produced itself
  (engine/evidence.py), never on parameters alone: the order journaled with the intent
  (the createOrder answer's id; after a crash between "order journaled" and "intent
  confirmed" too) → `confirmed`; a deposit the intent signed that committed → `confirmed`
  with the order it names (journaled from the intent when the provider does not list it:
  the money is there); its deposit failed or expired → `failed` (nothing was funded); a
  deposit that may still commit → stays `unknown`. Without evidence: `unknown` within the
  grace period; after it `failed`, unless an unlinked order of this wallet looks like the
  intent (same kind, tokens, amount, rate or orders/interval, created after it): that one
  may be the intent's own order whose answer was lost, or someone else's, so the intent is
  held `unknown` (logged once, for a person to settle with `settle_by_hand`: `bot reconcile
  --fail/--link`) rather than linked on looks or
  failed into a second order. Never two orders for one intent: a linked order is not
  linked again.
* cancel_*: the order is seen cancelled → `confirmed`.
* Orders listed for another wallet (`observe.foreign_wallet`) are ignored: never linked,
  counted and logged once per id.
* swap: by its transactions' journaled fates (settled first, below): one committed →
  `confirmed`; all settled, none committed → `failed`; no transaction was ever signed →
  `failed` (POST /swap spends nothing by itself); one that may still commit → `unknown`,
  whatever the grace period.

An intent left `planned` (the process died after recording it, before sending anything)
→ `failed` at once: nothing left the process, so the strategy may act again.

Anything still unmatched after `grace` → `failed`, and the strategy may act again (a create
with a look-alike is held, above). Inside the grace period it stays `unknown` (a pending
deposit, a slow provider).

First, the wallet's transactions the journal holds as signed, submitted or unknown (their
signer died before their fate was known) are settled by hash and, when `by_hash` does not
show them committed, by the account's sequence number (engine/tx_fates.py): a 404 is not
"lost"; `expired` only when the number is unused at a ledger time past the expiration. A
number used by a transaction the journal does not know is a foreign signer
(`foreign_signer`, `on_foreign_signer`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Final

from bot.api import OrderFilter, PanoraClient
from bot.api.models import DcaOrder, LimitOrder
from bot.api.paging import iter_orders
from bot.aptos.tokens import TokenBook, TokenLookupError
from bot.chain import ChainError, NodeClient
from bot.chain.errors import ForeignSigner
from bot.clock import Clock
from bot.domain import CANCEL_DONE_STATUSES, OrderKind
from bot.engine.evidence import Deposits, deposits_of, id_key, order_tx_hashes
from bot.engine.journal_roles import SettlementLedger
from bot.engine.observe import ForeignOrders, foreign_wallet, observation_of
from bot.engine.swap_fills import record_fill
from bot.engine.tx_fates import UNFINISHED_TX, TransactionFates, swap_fate
from bot.journal import IntentView, JournalError, OrderSnapshot
from bot.logging import get_logger

__all__ = ["STALE_SENT", "Reconciler", "Resolution"]

STALE_SENT: Final = timedelta(minutes=30)
"""A `sent` intent this old has no execution left (a run waits at most a few minutes for
its transaction): a running daemon's reconcile settles it like an `unknown` one."""

Order = DcaOrder | LimitOrder
Claimed = dict[tuple[str, str], int]
"""(kind, order id) → the intent the journal links the order to."""
_CLOCK_SKEW: Final = timedelta(minutes=2)
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
        journal: SettlementLedger,
        client: PanoraClient,
        clock: Clock,
        wallet: str,
        tokens: TokenBook,
        node: NodeClient | None = None,
        grace: timedelta = timedelta(minutes=15),
        stale_sent: timedelta = STALE_SENT,
        on_foreign_signer: Callable[[ForeignSigner], None] | None = None,
    ) -> None:
        self.journal = journal
        self.client = client
        self.clock = clock
        self.wallet = wallet
        self.tokens = tokens
        self.node = node
        self.grace = grace
        self.stale_sent = stale_sent
        self.fates = (
            TransactionFates(journal, node, clock, wallet, on_foreign_signer)
            if node is not None
            else None
        )
        """Settles the wallet's unfinished transactions (None without a node)."""
        self.foreign = ForeignOrders()
        """Records listed for another wallet, ignored (each id logged once)."""
        self._held: set[int] = set()  # intents held for a person, logged once each
        self._log = get_logger("reconcile", wallet=wallet)

    async def run(self, *, in_flight: bool = True) -> list[Resolution]:
        """Settle what can be settled now; returns one resolution per intent examined.

        Args:
            in_flight: also settle intents left `planned` or `sent` and their transactions
                (at start-up, when no execution can still own them). A running daemon
                passes False: it settles `unknown` intents, whose executions are over, and
                `sent` ones older than `stale_sent` (an execution cancelled mid-way: no
                execution lasts that long).
        """
        now = self.clock.now()
        states = ("planned", "sent", "unknown") if in_flight else ("sent", "unknown")
        busy: set[int] = set()
        if not in_flight:  # executions under way own their intents, unless long over
            busy = {
                i.id
                for i in self.journal.intents(states=("planned", "sent"))
                if i.state == "planned" or not self._stale(i, now)
            }
        await self.settle_transactions(skip_intents=busy)
        open_intents = [
            i
            for i in self.journal.intents(states=states)
            if i.wallet == self.wallet and i.id not in busy
        ]
        if not open_intents:
            return []
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
                detail = (
                    "found in flight at start-up"
                    if in_flight
                    else f"sent for over {self.stale_sent} while running: its execution is over"
                )
                self.journal.set_intent_state(intent.id, "unknown", at=now, detail=detail)
        orders = {kind: await self._provider_orders(kind) for kind in OrderKind}
        claimed: Claimed = {
            (o.kind, o.order_id): o.intent_id
            for o in self.journal.orders(wallet=self.wallet)
            if o.intent_id is not None
        }
        for intent in sorted(open_intents, key=lambda i: (i.created_at, i.id)):
            try:
                resolution = await self._settle(intent, orders, claimed)
            except JournalError as exc:  # this intent waits for the next run; the rest go on
                self._log.error("reconcile.not_settled", intent=intent.id, error=str(exc))
                resolution = Resolution(intent.id, "unknown", None, f"not settled: {exc}")
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
            1 for tx in self.journal.transactions(states=UNFINISHED_TX) if tx.sender == self.wallet
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
        How a fate is proven: engine/tx_fates.py.
        """
        if self.fates is None:
            return 0
        moved = 0
        for tx in self.journal.transactions(states=UNFINISHED_TX):
            if tx.sender != self.wallet or tx.intent_id in (skip_intents or set()):
                continue
            try:
                moved += await self.fates.settle(tx)
            except ChainError:
                return moved  # the node is unreachable: the next run tries again
        return moved

    @property
    def foreign_signer(self) -> ForeignSigner | None:
        """The first foreign signer seen using this wallet's sequence numbers, if any."""
        return self.fates.foreign_signer if self.fates is not None else None

    async def _provider_orders(self, kind: OrderKind) -> list[Order]:
        """Every listed order of our wallet; records of another wallet are left out."""
        found: list[Order] = []
        for status in (OrderFilter.ACTIVE, OrderFilter.COMPLETED):
            pages = iter_orders(
                self.client, kind, self.wallet, status, max_pages=_PAGES, tx_details=False
            )
            async for result in pages:
                found.extend(self._ours(kind, result.orders, result.wallet))
        return found

    def _ours(self, kind: OrderKind, orders: Sequence[Order], page_wallet: object) -> list[Order]:
        ours: list[Order] = []
        for order in orders:
            claim = foreign_wallet(order, self.wallet, page_wallet)
            if claim is None:
                ours.append(order)
            elif self.foreign.first_sighting(kind, order.order_id):
                self._log.warning(
                    "reconcile.foreign_order", kind=kind, order_id=order.order_id, listed_for=claim
                )
        return ours

    async def settle_by_hand(
        self, intent_id: int, *, order_id: str | None, reason: str
    ) -> Resolution:
        """A person settles an intent the bot holds `unknown` (`bot reconcile --fail/--link`).

        `order_id` None: the intent is failed (its key runs again: the person says nothing
        was placed). Else the order (listed for this wallet, of the intent's kind and
        tokens, linked to no other intent) is linked and the intent confirmed.

        Raises:
            ValueError: no such intent of this wallet, not `unknown`, or an order that
                cannot be its.
        """
        intent = next((i for i in self.journal.intents() if i.id == intent_id), None)
        if intent is None or intent.wallet != self.wallet:
            raise ValueError(f"no intent {intent_id} of wallet {self.wallet}")
        if intent.state != "unknown":
            raise ValueError(
                f"intent {intent_id} is {intent.state}, not unknown: nothing to settle"
            )
        now = self.clock.now()
        if order_id is None:
            signed = deposits_of(self.journal.transactions(intent_id=intent.id))
            if signed.committed or signed.open:  # its money moved, or still may
                what = "committed" if signed.committed else "may still commit"
                raise ValueError(
                    f"intent {intent_id} signed a transaction that {what}: it cannot be "
                    "failed by hand (bot reconcile settles it from the chain)"
                )
        if order_id is None and intent.kind in ("create_dca", "create_limit"):
            kind_of: OrderKind = OrderKind.DCA if intent.kind == "create_dca" else OrderKind.LIMIT
            linked = {
                (o.kind, o.order_id) for o in self.journal.orders(wallet=self.wallet) if o.intent_id
            }
            lookalike = next(
                (
                    o
                    for o in await self._provider_orders(kind_of)
                    if (kind_of, o.order_id) not in linked and self._looks_like(intent, kind_of, o)
                ),
                None,
            )
            if lookalike is not None:  # failing it would let the strategy place a second one
                raise ValueError(
                    f"{kind_of} order {lookalike.order_id} of this wallet looks like intent "
                    f"{intent_id}'s: --link {intent_id} --order {lookalike.order_id} if it is, "
                    "or cancel that order first"
                )
        if order_id is None:
            detail = f"failed by hand: {reason}"
            self.journal.set_intent_state(intent.id, "failed", at=now, detail=detail, error=detail)
            self._log.warning("reconcile.by_hand", intent=intent.id, state="failed", reason=reason)
            return Resolution(intent.id, "failed", None, detail)
        if intent.kind not in ("create_dca", "create_limit"):
            raise ValueError(f"intent {intent_id} is a {intent.kind}: only a create links an order")
        kind: OrderKind = OrderKind.DCA if intent.kind == "create_dca" else OrderKind.LIMIT
        listed = await self._provider_orders(kind)
        record = next((o for o in listed if id_key(o.order_id) == id_key(order_id)), None)
        if record is None:
            raise ValueError(f"the provider lists no {kind} order {order_id} for this wallet")
        if not self._same_tokens(intent, record):
            raise ValueError(f"order {order_id} trades other tokens than intent {intent_id}")
        claimed: Claimed = {
            (o.kind, o.order_id): o.intent_id
            for o in self.journal.orders(wallet=self.wallet)
            if o.intent_id is not None
        }
        resolution = self._confirm(
            intent, kind, record, record.order_id, claimed, f"linked by hand: {reason}"
        )
        if resolution.state != "confirmed":
            raise ValueError(resolution.detail.removeprefix("held: "))
        self.journal.set_intent_state(
            intent.id, "confirmed", at=now, order_id=resolution.order_id, detail=resolution.detail
        )
        self._log.warning(
            "reconcile.by_hand", intent=intent.id, state="confirmed", order_id=record.order_id
        )
        return resolution

    def _stale(self, intent: IntentView, now: datetime) -> bool:
        return now - intent.updated_at > self.stale_sent

    def _expired(self, intent: IntentView) -> bool:
        return self.clock.now() - intent.created_at > self.grace

    async def _settle(
        self, intent: IntentView, orders: dict[OrderKind, list[Order]], claimed: Claimed
    ) -> Resolution:
        if intent.kind in ("create_dca", "create_limit"):
            kind = OrderKind.DCA if intent.kind == "create_dca" else OrderKind.LIMIT
            return self._settle_create(intent, kind, orders[kind], claimed)
        if intent.kind in ("cancel_dca", "cancel_limit"):
            kind = OrderKind.DCA if intent.kind == "cancel_dca" else OrderKind.LIMIT
            wanted = str(intent.action.get("order_id"))
            for order in orders[kind]:
                if order.order_id == wanted and order.status in CANCEL_DONE_STATUSES:
                    return Resolution(intent.id, "confirmed", wanted, "the order is cancelled")
        elif intent.kind == "swap":
            return await self._settle_swap(intent)
        if self._expired(intent):
            return Resolution(intent.id, "failed", None, "nothing matched within the grace period")
        return Resolution(intent.id, "unknown")

    def _settle_create(
        self, intent: IntentView, kind: OrderKind, listed: list[Order], claimed: Claimed
    ) -> Resolution:
        """A create, by the evidence the bot produced (engine/evidence.py), else held or failed."""
        own = sorted(oid for (k, oid), owner in claimed.items() if k == kind and owner == intent.id)
        if own:  # the createOrder answer's id, journaled with the intent before it was confirmed
            return Resolution(intent.id, "confirmed", own[0], "the order journaled with it")
        answered = intent.order_id  # the createOrder answer's id, noted when it arrived
        if answered is not None:
            record = next((o for o in listed if id_key(o.order_id) == id_key(answered)), None)
            if record is not None:  # listed: it exists and is funded
                return self._confirm(
                    intent, kind, record, record.order_id, claimed, "named by its answer"
                )
        deposits = deposits_of(self.journal.transactions(intent_id=intent.id))
        if deposits.committed:
            return self._by_deposit(intent, kind, listed, claimed, deposits)
        if deposits.open:
            return Resolution(intent.id, "unknown", None, "a deposit it signed may still commit")
        if deposits.dead:
            return Resolution(intent.id, "failed", None, "its deposit failed or expired: unfunded")
        if not self._expired(intent):
            return Resolution(
                intent.id, "unknown", None, "no evidence yet (waiting for the grace period)"
            )
        lookalike = next(
            (
                o
                for o in listed
                if (kind, o.order_id) not in claimed and self._looks_like(intent, kind, o)
            ),
            None,
        )
        if lookalike is None:
            return Resolution(intent.id, "failed", None, "nothing matched within the grace period")
        detail = (
            f"held: order {lookalike.order_id} of this wallet looks like it, but nothing the "
            "bot produced links them (an answer lost, or not its order): settle it by hand"
        )
        if intent.id not in self._held:
            self._held.add(intent.id)
            self._log.warning(
                "reconcile.held", intent=intent.id, order_id=lookalike.order_id, detail=detail
            )
        return Resolution(intent.id, "unknown", None, detail)

    def _by_deposit(
        self,
        intent: IntentView,
        kind: OrderKind,
        listed: list[Order],
        claimed: Claimed,
        deposits: Deposits,
    ) -> Resolution:
        """A committed deposit of the intent: the order it names (or whose details carry it)."""
        record: Order | None
        if deposits.named:  # the order id the signer checked the call names: it decides
            named = deposits.named[0]
            record = next((o for o in listed if id_key(o.order_id) == id_key(named)), None)
            order_id: str | None = record.order_id if record is not None else named
        else:
            committed = set(deposits.committed)
            record = next((o for o in listed if deposits.in_arguments(o.order_id)), None) or next(
                (o for o in listed if order_tx_hashes(o) & committed), None
            )
            order_id = record.order_id if record is not None else None
        if order_id is None:  # money moved, but to which order: never failed, never guessed
            return Resolution(
                intent.id, "unknown", None, "held: its deposit committed but names no order"
            )
        return self._confirm(
            intent, kind, record, order_id, claimed, "named by its committed deposit"
        )

    def _confirm(
        self,
        intent: IntentView,
        kind: OrderKind,
        record: Order | None,
        order_id: str,
        claimed: Claimed,
        why: str,
    ) -> Resolution:
        """Link `order_id` (the bot's own evidence names it) to the intent, and confirm it."""
        owner = claimed.get((kind, order_id))
        if owner is not None and owner != intent.id:
            return Resolution(
                intent.id, "unknown", None, f"held: order {order_id} is linked to intent {owner}"
            )
        try:
            if record is not None and self._same_tokens(intent, record):
                self._link(intent, kind, record)
            else:  # not listed (yet): journaled as the executor would have; the tracker follows
                self._link_from_action(intent, kind, order_id)
        except (KeyError, ValueError, ArithmeticError, TokenLookupError, JournalError) as exc:
            return Resolution(
                intent.id, "unknown", None, f"held: order {order_id} cannot be journaled: {exc}"
            )
        claimed[(kind, order_id)] = intent.id
        return Resolution(intent.id, "confirmed", order_id, why)

    def _same_tokens(self, intent: IntentView, order: Order) -> bool:
        try:
            sell = self.tokens.find(str(intent.action["sell"]))
            buy = self.tokens.find(str(intent.action["buy"]))
        except (KeyError, TokenLookupError):
            return False
        return (
            self.tokens.get(order.from_token.address) == sell
            and self.tokens.get(order.to_token.address) == buy
        )

    def _looks_like(self, intent: IntentView, kind: OrderKind, order: Order) -> bool:
        """Same kind, tokens, amount and terms, created after the intent: never a link."""
        action = intent.action
        if not self._same_tokens(intent, order):
            return False
        created = order.created_at
        if created is not None and created < intent.created_at - _CLOCK_SKEW:
            return False
        try:
            spend = Decimal(str(action["spend_amount"]))
            rate = Decimal(str(action["rate"])) if isinstance(order, LimitOrder) else None
        except (KeyError, ArithmeticError):
            return False
        if isinstance(order, LimitOrder):
            return order.from_token_amount == spend and order.rate_to_token_per_from_token == rate
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

    def _link(self, intent: IntentView, kind: OrderKind, order: Order) -> None:
        observation = observation_of(kind, order, self.wallet)
        linked = replace(observation.snapshot, strategy=intent.strategy, intent_id=intent.id)
        self.journal.upsert_order(
            linked, observed_at=self.clock.now(), source="reconcile", raw_hash=observation.raw_hash
        )

    def _link_from_action(self, intent: IntentView, kind: OrderKind, order_id: str) -> None:
        """Journal an order the provider does not list, from the intent's own action."""
        action = intent.action
        rate = action.get("rate")
        self.journal.upsert_order(
            OrderSnapshot(
                kind=kind,
                order_id=order_id,
                wallet=self.wallet,
                from_token=self.tokens.find(str(action["sell"])).address,
                to_token=self.tokens.find(str(action["buy"])).address,
                status="active",
                amount_total=Decimal(str(action["spend_amount"])),
                strategy=intent.strategy,
                intent_id=intent.id,
                rate=Decimal(str(rate)) if rate is not None and kind == "limit" else None,
            ),
            observed_at=self.clock.now(),
            source="reconcile",
        )

    async def _settle_swap(self, intent: IntentView) -> Resolution:
        """By its transactions' journaled fates (settled first); unknown while one may land."""
        fate = swap_fate(self.journal.transactions(intent_id=intent.id))
        if fate is None:
            return Resolution(intent.id, "unknown", None, "a transaction of it may still commit")
        if fate[0] == "confirmed":  # what it sold and received, from its own transaction
            record_fill(self.journal, intent.id, self.tokens, at=self.clock.now())
        return Resolution(intent.id, fate[0], None, fate[1])
