"""The executor: an action becomes an effect exactly once, through the journal.

For every action: record the intent (planned) → mark it sent → call the API → sign the
`txData` when one comes back (the signer hands the transaction hash to the journal, filed
under the intent's id, before the bytes leave) → record the outcome. The intent's state
machine is the journal's: planned → sent → confirmed | failed | unknown; unknown →
confirmed | failed | reconciled.

A request whose outcome is unknown (timeout, dropped connection, 5xx, crash) is never
resent: the intent stays `unknown` and `reconcile` (engine/reconcile.py) settles it from
the provider's orders and the chain. So does any unexpected exception inside an action
(a bug, a journal error): nothing is left `sent` while the daemon runs.

The provider's answers are untrusted (docs/signer.md, "Trust model"): what the signer holds
a transaction to comes from the action and the bot's own reference price
(`engine.swap_bounds`), never from the quote; a cancel's or deposit's transaction must name
its order.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, Final

from bot.api import (
    ApiError,
    CancelOrderRequest,
    DcaCreateRequest,
    LimitCreateRequest,
    NotSent,
    OutcomeUnknown,
    PanoraClient,
    SwapRequest,
)
from bot.api.models import OrderResult, SwapResponseExactIn, TxData
from bot.aptos.address import Address, FunctionId
from bot.aptos.tokens import Token, TokenBook
from bot.chain import (
    ChainError,
    ForeignSigner,
    Intent,
    IntentKind,
    Refused,
    Signer,
    SubmitOutcomeUnknown,
    TransactionExpired,
    TransactionFailed,
)
from bot.clock import Clock
from bot.domain import OrderKind
from bot.engine import failpoints
from bot.engine.actions import (
    Action,
    CancelDca,
    CancelLimit,
    CreateDca,
    CreateLimit,
    Swap,
    action_json,
    action_kind,
)
from bot.engine.journal_roles import IntentLedger
from bot.engine.recorder import JournalRecorder
from bot.engine.reference import FeedReference, PriceReference, ReferenceUnavailable
from bot.engine.swap_bounds import (
    SwapBounds,
    SwapLimits,
    bounds_exact_in,
    bounds_exact_out,
    quote_deviation,
)
from bot.engine.swap_fills import record_fill
from bot.journal import OrderSnapshot
from bot.logging import get_logger, redact
from bot.money import from_base_units, to_base_units, to_base_units_down

__all__ = ["ExecutionResult", "Executor"]

_IN_FLIGHT_KILL_DELAY: Final = 0.005  # the `after_send` failpoint: the request is out


@dataclass(frozen=True)
class ExecutionResult:
    """What became of one action."""

    intent_id: int
    state: str
    order_id: str | None = None
    tx_hash: str | None = None
    detail: str = ""
    duplicate: bool = False


class _Settled(Exception):
    """Internal: the intent reached a state; carry it out of the flow."""

    def __init__(self, state: str, detail: str = "", tx_hash: str | None = None) -> None:
        super().__init__(detail)
        self.state = state
        self.detail = detail
        self.tx_hash = tx_hash


class Executor:
    """Runs actions for one wallet, recording every step in the journal.

    The signer, when given, must record to this executor's journal (a `JournalRecorder`
    given to it when it was built): the executor reads back from the journal what was
    signed for an intent, to tell "nothing was sent" from "the outcome is unknown".
    """

    def __init__(
        self,
        *,
        journal: IntentLedger,
        client: PanoraClient,
        clock: Clock,
        wallet: str,
        tokens: TokenBook,
        signer: Signer | None = None,
        reference: PriceReference | None = None,
        limits: SwapLimits | None = None,
    ) -> None:
        if signer is not None:
            recorder = signer.recorder
            # One journal seen in two roles: the signer's log and this executor's ledger.
            records_to: object = recorder.journal if isinstance(recorder, JournalRecorder) else None
            if records_to is not journal:
                raise ValueError(
                    "the signer must record to the executor's journal: build it with "
                    "JournalRecorder(journal, clock)"
                )
        self.journal = journal
        self.client = client
        self.clock = clock
        self.wallet = str(Address.parse(wallet))
        self.tokens = tokens
        self.signer = signer
        self.reference: PriceReference = reference or FeedReference(client)
        self.limits = limits or SwapLimits(Decimal(3), Decimal(1))
        self._log = get_logger("executor", wallet=self.wallet)

    def _token(self, name: str) -> Token:
        return self.tokens.find(name)

    async def execute(self, strategy: str, action: Action) -> ExecutionResult:
        """Carry out one action exactly once (per strategy and idempotency key).

        Raises:
            TokenLookupError: the action names a token nobody knows (nothing is recorded).
        """
        data = action_json(action)
        if "spend_token" in data:  # the journal's spend sums need the address, not a symbol
            data["spend_token"] = self._token(data["spend_token"]).address
        intent = self.journal.record_intent(
            strategy,
            self.wallet,
            action_kind(action),
            action.key,
            data,
            at=self.clock.now(),
        )
        if intent.existing:
            return ExecutionResult(
                intent.id,
                intent.state,
                intent.order_id,
                intent.tx_hash,
                "already recorded under this key",
                duplicate=True,
            )
        failpoints.hit("after_intent")
        self.journal.set_intent_state(intent.id, "sent", at=self.clock.now())
        try:
            try:
                order_id, tx_hash = await self._carry_out(intent.id, strategy, action)
            except _Settled:
                raise
            except Exception as exc:  # a bug or a journal error: never leave it `sent`
                self._log.error(
                    "executor.unexpected", intent=intent.id, error=f"{type(exc).__name__}: {exc}"
                )
                raise _Settled("unknown", f"unexpected {type(exc).__name__}: {exc}") from None
        except _Settled as settled:
            settled.detail = redact(settled.detail)  # journaled: never a secret
            self.journal.set_intent_state(
                intent.id,
                settled.state,
                at=self.clock.now(),
                tx_hash=settled.tx_hash,
                error=settled.detail if settled.state == "failed" else None,
                detail=settled.detail or None,
            )
            self._log.info(
                "executor.settled", intent=intent.id, state=settled.state, detail=settled.detail
            )
            return ExecutionResult(intent.id, settled.state, None, settled.tx_hash, settled.detail)
        self.journal.set_intent_state(
            intent.id, "confirmed", at=self.clock.now(), order_id=order_id, tx_hash=tx_hash
        )
        self._log.info("executor.confirmed", intent=intent.id, order_id=order_id, tx_hash=tx_hash)
        return ExecutionResult(intent.id, "confirmed", order_id, tx_hash)

    async def _call(self, request: Any) -> Any:
        """Await an API call; map its failure to the intent's state."""
        try:
            if failpoints.armed("after_send"):
                task = asyncio.ensure_future(request)
                await asyncio.sleep(_IN_FLIGHT_KILL_DELAY)
                failpoints.hit("after_send")
                result = await task
            else:
                result = await request
        except NotSent as exc:
            raise _Settled("failed", f"not sent: {exc}") from None
        except OutcomeUnknown as exc:
            raise _Settled("unknown", str(exc)) from None
        except (ApiError, ValueError) as exc:
            raise _Settled("failed", str(exc)) from None
        failpoints.hit("after_response")
        return result

    async def _carry_out(
        self, intent_id: int, strategy: str, action: Action
    ) -> tuple[str | None, str | None]:
        if isinstance(action, Swap):
            return await self._swap(intent_id, action)
        if isinstance(action, CreateDca | CreateLimit):
            return await self._create(intent_id, strategy, action)
        return await self._cancel(intent_id, action)

    async def _create(
        self, intent_id: int, strategy: str, action: CreateDca | CreateLimit
    ) -> tuple[str | None, str | None]:
        sell, buy = self._token(action.sell), self._token(action.buy)
        chain_id = self.client.chain_id
        if isinstance(action, CreateDca):
            kind = "dca"
            result: OrderResult = await self._call(
                self.client.create_dca_order(
                    DcaCreateRequest(
                        chain_id=chain_id,
                        to_wallet=self.wallet,
                        from_token=sell.address,
                        to_token=buy.address,
                        amount=action.amount,
                        amount_type=action.amount_type,
                        interval_value=action.interval_value,
                        interval_period=action.interval_period,
                        number_of_orders=action.orders,
                        min_rate=action.min_rate,
                        max_rate=action.max_rate,
                        delay_value=action.delay_value,
                        delay_period=action.delay_period,
                        slippage=action.slippage,
                        from_decimals=sell.decimals,
                    )
                )
            )
        else:
            kind = "limit"
            result = await self._call(
                self.client.create_limit_order(
                    LimitCreateRequest(
                        chain_id=chain_id,
                        from_token=sell.address,
                        to_token=buy.address,
                        from_wallet=self.wallet,
                        to_wallet=self.wallet,
                        amount=action.amount,
                        rate=action.rate,
                        slippage=action.slippage,
                        expiry_value=action.expiry_value,
                        expiry_period=action.expiry_period,
                        from_decimals=sell.decimals,
                    )
                )
            )
        order_id = result.order_id
        if order_id is None:
            raise _Settled("unknown", "createOrder answered without an order id")
        self.journal.note_intent_order(intent_id, order_id)  # evidence, before anything else
        tx_hash = None
        tx_data = result.tx_data
        if tx_data is not None:
            escrow = FunctionId.parse(tx_data.function).address
            intent = Intent(
                kind=IntentKind.DEPOSIT,
                sender=Address.parse(self.wallet),
                sell=sell,
                sell_amount=to_base_units(action.spend, sell.decimals),
                escrow=escrow,
                order_id=order_id,
            )
            tx_hash = await self._sign(intent_id, tx_data, intent)
        self.journal.upsert_order(
            OrderSnapshot(
                kind=kind,
                order_id=order_id,
                wallet=self.wallet,
                from_token=sell.address,
                to_token=buy.address,
                status="active",
                amount_total=action.spend,
                strategy=strategy,
                intent_id=intent_id,
                rate=action.rate if isinstance(action, CreateLimit) else None,
            ),
            observed_at=self.clock.now(),
            source="create",
        )
        failpoints.hit("after_order")
        return order_id, tx_hash

    async def _cancel(
        self, intent_id: int, action: CancelDca | CancelLimit
    ) -> tuple[str | None, str | None]:
        kind = OrderKind.DCA if isinstance(action, CancelDca) else OrderKind.LIMIT
        result: OrderResult = await self._call(
            self.client.cancel_order(
                kind, CancelOrderRequest(action.order_id, to_wallet=self.wallet)
            )
        )
        tx_hash = None
        if result.tx_data is not None:
            intent = Intent(
                kind=IntentKind.WITHDRAW,
                sender=Address.parse(self.wallet),
                order_id=action.order_id,
            )
            tx_hash = await self._sign(intent_id, result.tx_data, intent)
        return action.order_id, tx_hash

    async def _swap(self, intent_id: int, action: Swap) -> tuple[str | None, str | None]:
        sell, buy = self._token(action.sell), self._token(action.buy)
        bounds = await self._bounds(action, sell, buy)
        exact_in = action.sell_amount is not None
        response = await self._call(
            self.client.swap(
                SwapRequest(
                    from_token=sell.address,
                    to_token=buy.address,
                    from_amount=from_base_units(bounds.sell_amount, sell.decimals)
                    if exact_in
                    else None,
                    to_amount=None if exact_in else from_base_units(bounds.min_out, buy.decimals),
                    to_wallet=self.wallet,
                    slippage=action.slippage,
                )
            )
        )
        best = response.best
        if best.tx_data is None:
            raise _Settled("failed", "POST /swap answered without txData")
        if isinstance(response, SwapResponseExactIn):
            quoted = _units(best.to_token_amount, buy)
        else:
            quoted = _units(best.from_token_amount, sell)
        deviation = quote_deviation(quoted, bounds.reference)
        limit = self.limits.max_reference_deviation_percent
        if abs(deviation) > limit:
            raise _Settled(
                "failed",
                f"refused before signing: the quote is {deviation:+.2f}% off the reference "
                f"price ({self.reference.source}); at most {limit}% is allowed "
                "([risk].max_reference_deviation_percent)",
            )
        intent = Intent(
            kind=IntentKind.SWAP,
            sender=Address.parse(self.wallet),
            sell=sell,
            sell_amount=bounds.sell_amount,
            buy=buy,
            min_out=bounds.min_out,
            exact_out=not exact_in,
        )
        tx_hash = await self._sign(intent_id, best.tx_data, intent)
        # What it sold and received, from its own committed transaction (never the quote).
        # A journal error here leaves the intent `unknown`: the reconciler records it.
        record_fill(self.journal, intent_id, self.tokens, at=self.clock.now())
        return None, tx_hash

    async def _bounds(self, action: Swap, sell: Token, buy: Token) -> SwapBounds:
        """The swap's own numbers from the action, the reference price and `[risk]`."""
        try:
            rate = await self.reference.rate(sell, buy)
        except ReferenceUnavailable as exc:
            raise _Settled("failed", f"not sent: no reference price: {exc}") from None
        slippage = action.slippage if isinstance(action.slippage, Decimal) else None
        tolerance = self.limits.tolerance(slippage)
        if action.sell_amount is not None:
            units = _units(action.sell_amount, sell)
            if units <= 0:
                raise _Settled("failed", f"not sent: {action.sell_amount} {sell.symbol} is 0")
            return bounds_exact_in(units, rate, sell, buy, tolerance)
        units = _units(action.buy_amount or Decimal(0), buy)
        if units <= 0:
            raise _Settled("failed", f"not sent: {action.buy_amount} {buy.symbol} is 0")
        bounds = bounds_exact_out(units, rate, sell, buy, tolerance)
        if action.max_sell_amount is not None:  # what the risk check counted: never more
            most = min(bounds.sell_amount, _units(action.max_sell_amount, sell))
            bounds = replace(bounds, sell_amount=most)
        return bounds

    async def _sign(self, intent_id: int, tx_data: TxData, intent: Intent) -> str:
        if self.signer is None:
            raise _Settled("failed", "a transaction must be signed but no key is configured")
        try:
            outcome = await self.signer.execute(tx_data.as_json(), intent, intent_id=intent_id)
        except Refused as exc:
            raise _Settled("failed", f"refused before signing: {exc}") from None
        except (TransactionFailed, TransactionExpired, ForeignSigner) as exc:
            # ForeignSigner: another signer took this transaction's sequence number, so it
            # can never execute; the signer is paused from now on.
            raise _Settled("failed", str(exc), self._last_signed(intent_id)) from None
        except (SubmitOutcomeUnknown, ChainError) as exc:
            # The journal holds a hash before any signed bytes leave: without one, nothing
            # was signed (the account unfunded, the node down before signing…) and nothing
            # can ever execute — `failed`, and the key is free to run again.
            signed = self._last_signed(intent_id) or (
                exc.tx_hash if isinstance(exc, SubmitOutcomeUnknown) else None
            )
            if signed is None:
                raise _Settled("failed", f"not sent: {exc}") from None
            raise _Settled("unknown", str(exc), signed) from None
        return outcome.tx_hash

    def _last_signed(self, intent_id: int) -> str | None:
        """The last transaction the signer recorded for `intent_id` (None: nothing signed)."""
        txs = self.journal.transactions(intent_id=intent_id)
        return txs[-1].hash if txs else None


def _units(amount: Decimal | int, token: Token) -> int:
    """Human amount → base units, rounding down any digits beyond the token's decimals."""
    return to_base_units_down(Decimal(amount), token.decimals)
