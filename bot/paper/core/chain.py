"""`PaperChain`: an Aptos node's transaction path over the paper market.

Admission (`submit`) checks what a node checks, with the shared codec: the BCS decodes,
the Ed25519 signature verifies and its key is the sender's, the chain id, the expiration
against the ledger timestamp (the paper clock), the sequence number, gas money. Accepted
transactions wait in a per-account queue and commit in sequence-number order when due
(`process`): a gap waits until it fills or the transaction expires; one whose number
another transaction used is dropped. Execution runs the call (`execute.py`) inside a
ledger savepoint: an abort undoes every effect but the gas. `simulate` runs the same code
and undoes everything. Another signer of an account can be played (`commit_foreign`):
its transaction uses the account's next number and does nothing else (`chain_history.py`);
so can a key rotated elsewhere (`rotate_key`).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

from aptos_sdk.account_address import AccountAddress
from aptos_sdk.authenticator import Ed25519Authenticator
from aptos_sdk.transactions import SignedTransaction

from bot.aptos.address import Address
from bot.aptos.codec import CodecError
from bot.aptos.transactions import (
    TransactionError,
    decode_signed_transaction,
    entry_function,
    is_zero_signature,
    sender_address,
    transaction_hash,
    verify_signature,
)
from bot.clock import MICROS_PER_SECOND, to_micros
from bot.domain import APT_COIN_TYPE as APT
from bot.paper.core.chain_history import ForeignTx
from bot.paper.core.execute import Executor, TxEffects
from bot.paper.core.market import PaperMarket
from bot.paper.core.modules import ModuleRegistry

__all__ = ["NodeError", "NodeSettings", "PaperChain", "TxRecord"]

GAS_ACCOUNT: Final = "gas"
# Validation status codes of the Aptos VM, as nodes report them.
SEQUENCE_NUMBER_TOO_OLD: Final = 3
SEQUENCE_NUMBER_TOO_NEW: Final = 4
INVALID_SIGNATURE: Final = 1
INVALID_AUTH_KEY: Final = 2
INSUFFICIENT_BALANCE_FOR_FEE: Final = 5
TRANSACTION_EXPIRED: Final = 6
SENDING_ACCOUNT_DOES_NOT_EXIST: Final = 7
BAD_CHAIN_ID: Final = 28


class NodeError(Exception):
    """A refusal in the node's error shape `{message, error_code, vm_error_code}`."""

    def __init__(
        self, status: int, message: str, error_code: str, vm_error_code: int | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_code = error_code
        self.vm_error_code = vm_error_code

    def body(self) -> dict[str, Any]:
        """The JSON error body."""
        return {
            "message": self.message,
            "error_code": self.error_code,
            "vm_error_code": self.vm_error_code,
        }


def _validation(code_name: str, code: int) -> NodeError:
    return NodeError(
        400, f"Invalid transaction: Type: Validation Code: {code_name}", "vm_error", code
    )


@dataclass(frozen=True)
class NodeSettings:
    """The node's behaviour and its seeded faults (all off by default)."""

    chain_id: int = 4
    gas_unit_price: int = 100
    commit_delay_seconds: float = 0.0
    mempool_capacity: int = 1000
    vm_error_sequence: bool = False
    seed: int = 11
    mempool_full: float = 0.0
    lost: float = 0.0
    slow_commit_seconds: float = 0.0
    slow_commit: float = 0.0
    consume_sequence: float = 0.0
    lose_first: int = 0
    """Deterministic faults for tests: lose the first N accepted transactions…"""
    drop_first_answers: int = 0
    """…and drop the answer to the first N accepted submissions (they are applied)…"""
    foreign_first: int = 0
    """…and let another signer take the number of the first N accepted transactions."""
    by_hash_404: float = 0.0
    """Read fault: `by_hash` answers 404 for a transaction the node holds."""
    stale_account: float = 0.0
    """Read fault: an account read (or listing) answers from an older ledger state."""
    stale_seconds: float = 30.0
    """How much ledger time a stale read lags."""
    refuse_first: tuple[int, ...] = ()
    """Deterministic, for tests: the first submissions are answered with these statuses,
    one each (507 mempool full, 429 rate limited), and not applied."""
    ledger_headers: bool = True
    """False: answers carry no `X-Aptos-*` headers (a proxy that strips them)."""
    gas_in_balance_changes: bool = False
    """True: `balance_changes` count the gas fee in the sender's APT (as some nodes do)."""
    router_pays_to: str | None = None
    """Fault: the router pays the bought token to this address, whatever its recipient
    argument says (a hostile or upgraded router contract)."""


@dataclass
class TxRecord:
    """One transaction the node accepted (or simulated)."""

    hash: str
    signed: SignedTransaction
    sender: str
    sequence_number: int
    received_at: datetime
    commit_at: datetime
    lost: bool = False
    version: int | None = None
    effects: TxEffects | None = None
    committed_at: datetime | None = None
    payload: dict[str, Any] = field(default_factory=dict)

    @property
    def expiration(self) -> int:
        """Expiration, in seconds since the epoch."""
        return int(self.signed.transaction.expiration_timestamps_secs)


class PaperChain:
    """Accounts, sequence numbers, the mempool and committed transactions."""

    def __init__(self, market: PaperMarket, settings: NodeSettings | None = None) -> None:
        self.market = market
        self.settings = settings or NodeSettings()
        self.modules = ModuleRegistry()
        self.executor = Executor(market, self.modules)
        self.version = 0
        self.sequence: dict[str, int] = {}
        self.auth_keys: dict[str, str] = {}
        self._pending: dict[str, dict[int, TxRecord]] = {}
        self._by_hash: dict[str, TxRecord] = {}
        self._rng = random.Random(self.settings.seed)  # noqa: S311 - simulation
        self.submitted = 0
        self.committed = 0
        self.refused = 0
        self._answers_to_drop = self.settings.drop_first_answers

    # --- reads ----------------------------------------------------------------------------

    @property
    def ledger_timestamp_us(self) -> int:
        """The ledger timestamp in microseconds: the paper clock."""
        return to_micros(self.market.now)

    def account_exists(self, address: str) -> bool:
        """An account exists once it was funded or has sent a transaction."""
        return address in self.sequence or bool(self.market.ledger.balances(address))

    def sequence_number(self, address: str) -> int:
        """The next sequence number the chain expects from `address`."""
        return self.sequence.get(address, 0)

    def transaction(self, tx_hash: str) -> TxRecord | None:
        """A known transaction (pending or committed); lost ones are unknown."""
        record = self._by_hash.get(tx_hash.lower())
        return None if record is None or record.lost else record

    @property
    def foreign(self) -> dict[str, ForeignTx]:
        """Transactions another signer committed, by hash (snapshots before #15 have none)."""
        found: dict[str, ForeignTx] = self.__dict__.setdefault("_foreign", {})
        return found

    def foreign_transaction(self, tx_hash: str) -> ForeignTx | None:
        """A transaction another signer committed, by hash (None once pruned)."""
        found = self.foreign.get(tx_hash.lower())
        return None if found is None or found.pruned else found

    def commit_foreign(self, sender: str, *, pruned: bool = False) -> ForeignTx:
        """Another signer of `sender` commits a transaction with its next sequence number.

        It does nothing else (the paper world cannot know what it did; it costs no gas).
        A transaction of ours waiting with that number can then never commit. `pruned`:
        the node shows it nowhere (neither by hash nor in the account's listing).
        """
        number = self.sequence_number(sender)
        self.version += 1
        digest = hashlib.sha256(f"foreign:{sender}:{number}:{self.version}".encode()).hexdigest()
        now = self.market.now
        record = ForeignTx(
            hash="0x" + digest,
            sender=sender,
            sequence_number=number,
            version=self.version,
            committed_at=now,
            expiration=to_micros(now) // MICROS_PER_SECOND + 60,
            pruned=pruned,
        )
        self.foreign[record.hash] = record
        self.sequence[sender] = number + 1
        return record

    def auth_key(self, address: str) -> str:
        """`address`'s authentication key (as an address): its own unless rotated."""
        return self.auth_keys.get(address, address)

    def rotate_key(self, address: str, auth_key: str) -> None:
        """The account's key was rotated elsewhere: only `auth_key` may sign for it now."""
        self.auth_keys[address] = str(Address.parse(auth_key))

    def pending_count(self) -> int:
        """Transactions waiting in the mempool."""
        return sum(len(queue) for queue in self._pending.values())

    # --- admission ------------------------------------------------------------------------

    def _decode(self, data: bytes) -> SignedTransaction:
        try:
            return decode_signed_transaction(data)
        except (TransactionError, CodecError, ValueError) as exc:
            raise NodeError(
                400, f"invalid BCS signed transaction: {exc}", "invalid_input"
            ) from None

    def _check(
        self, signed: SignedTransaction, *, simulation: bool, estimate_max_gas: bool = False
    ) -> str:
        raw = signed.transaction
        sender = str(sender_address(signed))
        auth = signed.authenticator.authenticator
        if not isinstance(auth, Ed25519Authenticator):
            raise _validation("INVALID_SIGNATURE", INVALID_SIGNATURE)
        if simulation:
            if verify_signature(signed) and not is_zero_signature(signed):
                raise NodeError(
                    400, "Simulated transactions must not have a valid signature", "invalid_input"
                )
        elif not verify_signature(signed):
            raise _validation("INVALID_SIGNATURE", INVALID_SIGNATURE)
        key_address = str(Address.from_bytes(AccountAddress.from_key(auth.public_key).address))
        if key_address != self.auth_key(sender):
            raise _validation("INVALID_AUTH_KEY", INVALID_AUTH_KEY)
        if raw.chain_id != self.settings.chain_id:
            raise _validation("BAD_CHAIN_ID", BAD_CHAIN_ID)
        if raw.expiration_timestamps_secs * MICROS_PER_SECOND <= self.ledger_timestamp_us:
            raise _validation("TRANSACTION_EXPIRED", TRANSACTION_EXPIRED)
        if not self.account_exists(sender):
            raise _validation("SENDING_ACCOUNT_DOES_NOT_EXIST", SENDING_ACCOUNT_DOES_NOT_EXIST)
        if simulation and raw.sequence_number > self.sequence_number(sender):
            # A simulation runs now, so it needs exactly the next sequence number.
            raise _validation("SEQUENCE_NUMBER_TOO_NEW", SEQUENCE_NUMBER_TOO_NEW)
        if raw.sequence_number < self.sequence_number(sender):
            if self.settings.vm_error_sequence:
                raise _validation("SEQUENCE_NUMBER_TOO_OLD", SEQUENCE_NUMBER_TOO_OLD)
            raise NodeError(400, "sequence number too old", "sequence_number_too_old")
        fee = raw.max_gas_amount * raw.gas_unit_price
        if not estimate_max_gas and self.market.ledger.balance(sender, APT) < fee:
            raise _validation(
                "INSUFFICIENT_BALANCE_FOR_TRANSACTION_FEE", INSUFFICIENT_BALANCE_FOR_FEE
            )
        return sender

    def submit(self, data: bytes) -> TxRecord:
        """Admit a signed transaction to the mempool (HTTP 202), or raise `NodeError`."""
        signed = self._decode(data)
        refused = getattr(self, "refused", 0)  # snapshots before #17 have none
        if refused < len(self.settings.refuse_first):
            status = self.settings.refuse_first[refused]
            self.refused = refused + 1
            if status == 507:
                raise NodeError(507, "mempool is full", "mempool_is_full")
            raise NodeError(status, "too many requests", "rate_limited")
        tx_hash = transaction_hash(data)
        known = self._by_hash.get(tx_hash)
        if known is not None:
            return known  # the same bytes again (even once committed): idempotent, as a node is
        sender = str(sender_address(signed))
        if self._draw(self.settings.consume_sequence) and self.account_exists(sender):
            self.commit_foreign(sender)  # another signer used this account's next number
        sender = self._check(signed, simulation=False)
        if self.pending_count() >= self.settings.mempool_capacity or self._draw(
            self.settings.mempool_full
        ):
            raise NodeError(507, "mempool is full", "mempool_is_full")
        if signed.transaction.sequence_number in self._pending.get(sender, {}):
            # A real mempool refuses a different transaction for a pending number (a
            # restarted process that read the committed sequence number would send one).
            raise NodeError(
                400,
                "another transaction with this sequence number is pending",
                "invalid_transaction_update",
            )
        now = self.market.now
        delay = self.settings.commit_delay_seconds
        if self._draw(self.settings.slow_commit):
            delay += self.settings.slow_commit_seconds
        record = TxRecord(
            hash=tx_hash,
            signed=signed,
            sender=sender,
            sequence_number=signed.transaction.sequence_number,
            received_at=now,
            commit_at=now + timedelta(seconds=delay),
            lost=self._draw(self.settings.lost) or self.submitted < self.settings.lose_first,
            payload=self.executor.payload_json(entry_function(signed)),
        )
        self._by_hash[tx_hash] = record
        self.submitted += 1
        if not record.lost:
            self._pending.setdefault(sender, {})[record.sequence_number] = record
            if len(self.foreign) < self.settings.foreign_first:
                self.commit_foreign(sender)  # another signer's transaction gets there first
        return record

    def transactions(self) -> list[TxRecord]:
        """Every transaction the node accepted (pending, lost or committed), oldest first."""
        return list(self._by_hash.values())

    def take_dropped_answer(self) -> bool:
        """True while the answers of the first accepted submissions are to be dropped."""
        if self._answers_to_drop > 0:
            self._answers_to_drop -= 1
            return True
        return False

    def _draw(self, probability: float) -> bool:
        return probability > 0 and self._rng.random() < probability

    # --- commits --------------------------------------------------------------------------

    def process(self) -> int:
        """Commit every due transaction in sequence order; drop expired ones. Returns commits."""
        now = self.market.now
        done = 0
        for sender in list(self._pending):
            queue = self._pending[sender]
            for seq in sorted(queue):
                expired = queue[seq].expiration * MICROS_PER_SECOND <= self.ledger_timestamp_us
                if expired or seq < self.sequence_number(sender):
                    # Expired before it could run, or its number used by another
                    # transaction: never executed.
                    queue.pop(seq).lost = True
            while (ready := queue.get(self.sequence_number(sender))) is not None:
                if ready.commit_at > now:
                    break
                del queue[ready.sequence_number]
                self._commit(ready, now)
                done += 1
            if not queue:
                del self._pending[sender]
        return done

    def _commit(self, record: TxRecord, now: datetime) -> None:
        raw = record.signed.transaction
        effects = self.executor.run(
            record.sender,
            entry_function(record.signed),
            now,
            dry=False,
            pay_to=self.settings.router_pays_to,
        )
        gas_fee = min(effects.gas_used, raw.max_gas_amount) * raw.gas_unit_price
        held = self.market.ledger.balance(record.sender, APT)
        self.market.ledger.transfer(APT, record.sender, GAS_ACCOUNT, min(gas_fee, held))
        self.sequence[record.sender] = record.sequence_number + 1
        self.auth_keys.setdefault(record.sender, record.sender)
        self.version += 1
        record.version = self.version
        record.effects = effects
        record.committed_at = now
        self.committed += 1

    def simulate(self, data: bytes, *, estimate_max_gas: bool = False) -> TxRecord:
        """Run a zero-signature transaction against the current state and undo it all.

        With `estimate_max_gas` (the node's `estimate_max_gas_amount` flag) the account
        need not hold APT for the transaction's `max_gas_amount` up front.
        """
        signed = self._decode(data)
        sender = self._check(signed, simulation=True, estimate_max_gas=estimate_max_gas)
        now = self.market.now
        effects = self.executor.run(
            sender, entry_function(signed), now, dry=True, pay_to=self.settings.router_pays_to
        )
        return TxRecord(
            hash=transaction_hash(data),
            signed=signed,
            sender=sender,
            sequence_number=signed.transaction.sequence_number,
            received_at=now,
            commit_at=now,
            effects=effects,
            committed_at=now,
            payload=self.executor.payload_json(entry_function(signed)),
        )
