"""Intents: what a strategy asked for, durably recorded before anything is sent.

An intent moves along `INTENT_MOVES` (planned → sent → confirmed | failed | unknown …) and
every move is logged in `intent_transitions`. `spent_today` sums what intents spent.
A key whose intent failed runs again: the failed intent is retired under
`<key>~failed-<id>` and a fresh one takes the key (`record_intent`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal, Inexact, InvalidOperation, localcontext
from typing import Any, Final

from sqlmodel import Session, col
from sqlmodel import select as sm_select

from bot.aptos.tokens import TokenLookupError, token_key
from bot.journal import canon
from bot.journal.base import JournalBase
from bot.journal.codec import decode_json
from bot.journal.errors import JournalError
from bot.journal.models import Intent, IntentTransition
from bot.journal.views import IntentTransitionView, IntentView

__all__ = [
    "INTENT_FINAL_STATES",
    "INTENT_KINDS",
    "INTENT_MOVES",
    "INTENT_STATES",
    "RETIRED_MARK",
    "IntentsMixin",
    "retired_key",
]

INTENT_KINDS: Final = frozenset(
    {"create_dca", "create_limit", "cancel_dca", "cancel_limit", "swap"}
)
INTENT_STATES: Final = ("planned", "sent", "confirmed", "failed", "unknown", "reconciled")
INTENT_MOVES: Final[Mapping[str, frozenset[str]]] = {
    # planned → failed: refused or broken before anything was sent.
    "planned": frozenset({"sent", "failed"}),
    "sent": frozenset({"confirmed", "failed", "unknown"}),
    "unknown": frozenset({"reconciled", "failed", "confirmed"}),
    "confirmed": frozenset(),
    "failed": frozenset(),
    "reconciled": frozenset(),
}
INTENT_FINAL_STATES: Final = frozenset(s for s, moves in INTENT_MOVES.items() if not moves)
RETIRED_MARK: Final = "~failed-"
"""Between a retired intent's key and its id: `<key>~failed-<id>` (see `record_intent`)."""


class IntentsMixin(JournalBase):
    """Recording intents, moving them along their state machine, and reading them back."""

    def record_intent(
        self,
        strategy: str,
        wallet: str,
        kind: str,
        idempotency_key: str,
        action: Mapping[str, Any],
        *,
        at: datetime,
    ) -> IntentView:
        """Record what a strategy asked for, durably, in state `planned`.

        When (wallet, strategy, idempotency_key) is already recorded, the stored intent is returned
        untouched with `existing=True` (the new `action` is not compared or stored) — unless
        it `failed`: nothing of it was applied, so the key is free to run again. The failed
        intent is then retired (kept as history under the key `<key>~failed-<id>`, with a
        transition saying so) and a fresh `planned` intent is recorded under the key.

        Raises:
            JournalError: unknown kind, bad wallet (or another wallet than the one this
                journal is opened for), an action that is not exact JSON.
        """
        if kind not in INTENT_KINDS:
            raise JournalError(f"intent kind {kind!r} is not one of {sorted(INTENT_KINDS)}")
        if not idempotency_key:
            raise JournalError("idempotency key is empty")
        canonical_wallet = self._require_own(wallet, "an intent")
        action_json = canon.json_text(dict(action), "action")
        moment = canon.aware(at)
        with self._writing() as session:
            found = session.exec(
                sm_select(Intent).where(
                    Intent.wallet == canonical_wallet,
                    Intent.strategy == strategy,
                    Intent.idempotency_key == idempotency_key,
                )
            ).first()
            if found is not None:
                if found.state != "failed":
                    return _intent_view(found, existing=True)
                _retire(session, found, moment)
            row = Intent(
                strategy=strategy,
                wallet=canonical_wallet,
                kind=kind,
                idempotency_key=idempotency_key,
                action_json=action_json,
                created_at=moment,
                state="planned",
                updated_at=moment,
            )
            session.add(row)
            session.flush()
            session.add(
                IntentTransition(
                    intent_id=canon.row_id(row.id), from_state=None, state="planned", at=moment
                )
            )
            return _intent_view(row)

    def set_intent_state(
        self,
        intent_id: int,
        state: str,
        *,
        at: datetime,
        detail: str | None = None,
        order_id: str | None = None,
        tx_hash: str | None = None,
        error: str | None = None,
    ) -> IntentView:
        """Move an intent along its state machine and log the move.

        planned → sent | failed; sent → confirmed | failed | unknown;
        unknown → reconciled | failed | confirmed; confirmed, failed, reconciled are final.
        `order_id`, `tx_hash`, `error` are stored when given (never cleared).

        Raises:
            JournalError: unknown intent, or an illegal move (naming both states).
        """
        moment = canon.aware(at)
        canonical_hash = canon.tx_hash(tx_hash) if tx_hash is not None else None
        with self._writing() as session:
            row = session.get(Intent, intent_id)
            if row is None or not self._visible(row.wallet):
                raise JournalError(f"no intent {intent_id}")
            if state not in INTENT_MOVES.get(row.state, frozenset()):
                raise JournalError(
                    f"intent {intent_id}: illegal move {row.state} → {state}"
                    + (" (final state)" if row.state in INTENT_FINAL_STATES else "")
                )
            session.add(
                IntentTransition(
                    intent_id=intent_id, from_state=row.state, state=state, at=moment, detail=detail
                )
            )
            row.state = state
            row.updated_at = moment
            if order_id is not None:
                row.order_id = order_id
            if canonical_hash is not None:
                row.tx_hash = canonical_hash
            if error is not None:
                row.error = error
            session.add(row)
            session.flush()
            return _intent_view(row)

    def note_intent_order(self, intent_id: int, order_id: str) -> None:
        """Record the order a `sent` intent created, the moment the answer names it.

        No state change: reconciliation links the order to the intent by this id (the
        bot's own evidence) if the process dies before the intent is confirmed.

        Raises:
            JournalError: unknown intent, or one that is not `sent`.
        """
        with self._writing() as session:
            row = session.get(Intent, intent_id)
            if row is None or not self._visible(row.wallet) or row.state != "sent":
                raise JournalError(f"intent {intent_id}: an order is noted only while sent")
            row.order_id = order_id
            session.add(row)

    def intent(self, intent_id: int) -> IntentView | None:
        """One intent by id."""
        with self._reading() as session:
            row = session.get(Intent, intent_id)
            return None if row is None or not self._visible(row.wallet) else _intent_view(row)

    def intent_by_key(self, strategy: str, idempotency_key: str) -> IntentView | None:
        """One intent by its strategy and idempotency key."""
        with self._reading() as session:
            row = session.exec(
                sm_select(Intent)
                .where(
                    Intent.strategy == strategy,
                    Intent.idempotency_key == idempotency_key,
                    *self._scoped(Intent.wallet),
                )
                .order_by(col(Intent.id))
            ).first()
            return None if row is None else _intent_view(row)

    def intents(
        self, states: Iterable[str] | None = None, strategy: str | None = None
    ) -> list[IntentView]:
        """Intents (oldest first), optionally only in `states` / of one strategy."""
        query = sm_select(Intent).where(*self._scoped(Intent.wallet))
        if states is not None:
            query = query.where(col(Intent.state).in_(list(states)))
        if strategy is not None:
            query = query.where(Intent.strategy == strategy)
        with self._reading() as session:
            return [_intent_view(r) for r in session.exec(query.order_by(col(Intent.id)))]

    def intent_states(self, strategy: str) -> dict[str, str]:
        """{idempotency key: state} of one strategy's intents (oldest first), two columns only.

        What a strategy's context needs on every tick, without decoding every intent.
        """
        query = (
            sm_select(Intent.idempotency_key, Intent.state)
            .where(Intent.strategy == strategy, *self._scoped(Intent.wallet))
            .order_by(col(Intent.id))
        )
        with self._reading() as session:
            return {key: state for key, state in session.exec(query)}

    def intent_history(self, intent_id: int) -> list[IntentTransitionView]:
        """Every state an intent went through, in order."""
        query = sm_select(IntentTransition).where(IntentTransition.intent_id == intent_id)
        if self.wallet is not None:
            query = query.join(Intent, col(Intent.id) == col(IntentTransition.intent_id)).where(
                Intent.wallet == self.wallet
            )
        query = query.order_by(col(IntentTransition.id))
        with self._reading() as session:
            return [
                IntentTransitionView(r.intent_id, r.from_state, r.state, r.at, r.detail)
                for r in session.exec(query)
            ]

    def spent_today(
        self,
        strategy: str | None,
        wallet: str,
        token: str,
        day: date,
        *,
        states: Iterable[str] = ("confirmed",),
    ) -> Decimal:
        """Sum of `spend_amount` of the intents created on UTC `day` that spend `token`.

        Contract: an intent's action carries `"spend_token"` (coin type or FA address, any
        spelling) and `"spend_amount"` (a `Decimal`, int or decimal string, human units).
        Intents without them spend nothing. Only intents in `states` count (default:
        confirmed; a risk check may pass `("sent", "unknown", "confirmed")` to count money
        that may be in flight). `strategy=None` sums over every strategy.
        """
        start = datetime.combine(day, time(0), tzinfo=UTC)
        query = sm_select(Intent).where(
            Intent.wallet == canon.wallet(wallet),
            col(Intent.state).in_(list(states)),
            col(Intent.created_at) >= start,
            col(Intent.created_at) < start + timedelta(days=1),
        )
        if strategy is not None:
            query = query.where(Intent.strategy == strategy)
        wanted = canon.token(token)
        amounts: list[Decimal] = []
        with self._reading() as session:
            for row in session.exec(query):
                action = decode_json(row.action_json)
                if not isinstance(action, dict):
                    continue
                spend_token, amount = action.get("spend_token"), action.get("spend_amount")
                if not isinstance(spend_token, str) or amount is None:
                    continue
                try:
                    same = token_key(spend_token) == wanted
                except TokenLookupError:
                    continue
                if same:
                    amounts.append(_spend_amount(amount, canon.row_id(row.id)))
        return _exact_sum(amounts)


def retired_key(idempotency_key: str, intent_id: int) -> str:
    """The key a failed intent is kept under once its key runs again."""
    return f"{idempotency_key}{RETIRED_MARK}{intent_id}"


def _retire(session: Session, row: Intent, moment: datetime) -> None:
    """Move a failed intent off its key (the unique (wallet, strategy, key)), as history."""
    intent_id = canon.row_id(row.id)
    row.idempotency_key = retired_key(row.idempotency_key, intent_id)
    session.add(row)
    session.add(
        IntentTransition(
            intent_id=intent_id,
            from_state="failed",
            state="failed",
            at=moment,
            detail=f"retired for a retry: kept as {row.idempotency_key}",
        )
    )
    session.flush()  # the key is free before the fresh intent is inserted


def _intent_view(row: Intent, *, existing: bool = False) -> IntentView:
    action = decode_json(row.action_json)
    return IntentView(
        id=canon.row_id(row.id),
        strategy=row.strategy,
        wallet=row.wallet,
        kind=row.kind,
        idempotency_key=row.idempotency_key,
        action=action if isinstance(action, dict) else {"value": action},
        created_at=row.created_at,
        state=row.state,
        updated_at=row.updated_at,
        order_id=row.order_id,
        tx_hash=row.tx_hash,
        error=row.error,
        existing=existing,
    )


def _spend_amount(value: object, intent_id: int) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, Decimal | int | str):
        raise JournalError(f"intent {intent_id}: spend_amount {value!r} is not exact")
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise JournalError(f"intent {intent_id}: spend_amount {value!r} is not a number") from None
    if not amount.is_finite():
        raise JournalError(f"intent {intent_id}: spend_amount {value!r} is not finite")
    return amount


def _exact_sum(amounts: Sequence[Decimal]) -> Decimal:
    """Sum without rounding (the default 28-digit context would round large sums)."""
    if not amounts:
        return Decimal(0)
    highest = max(a.adjusted() for a in amounts) + len(str(len(amounts))) + 1
    lowest = min(int(a.as_tuple().exponent) for a in amounts)
    with localcontext() as ctx:
        ctx.prec = max(ctx.prec, highest - lowest + 2)
        ctx.traps[Inexact] = True
        return sum(amounts, Decimal(0))
