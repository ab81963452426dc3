"""What the node answers, parsed: ledger info, accounts, simulations, transactions.

Numbers are exact integers (the node writes u64 values as decimal strings); times are aware
UTC. A body that does not have the contract's shape raises `MalformedNodeResponse`.

Balance changes (`balance_changes`, a list of `{account, asset, delta}` with `delta` a signed
decimal string of base units and `asset` a coin type or FA address) are what the signer's
policy judges. The paper node reports them on every simulated and committed transaction,
with the gas fee included in the sender's APT delta. A real node reports a write-set
(`changes`) instead; deriving balance changes from it is not implemented, so a simulation
without `balance_changes` parses with `balance_changes = None` and the policy refuses it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from bot.aptos.address import Address, AddressError
from bot.aptos.tokens import TokenLookupError, token_key
from bot.chain.errors import MalformedNodeResponse
from bot.clock import from_micros

__all__ = [
    "AccountInfo",
    "AccountState",
    "BalanceChange",
    "LedgerInfo",
    "LedgerStamp",
    "NodeStats",
    "SimulationResult",
    "TxLookup",
    "TxStatus",
    "account_deltas",
    "parse_account_transaction",
    "parse_balance_changes",
    "parse_uint",
]

_UINT_RE: Final = re.compile(r"[0-9]{1,78}")
_INT_RE: Final = re.compile(r"-?[0-9]{1,78}")
_HASH_RE: Final = re.compile(r"0x[0-9a-fA-F]{64}")


def parse_uint(value: object, field: str, *, endpoint: str = "") -> int:
    """A non-negative integer from a JSON number or decimal string (never a float or bool)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and _UINT_RE.fullmatch(value):
        return int(value)
    raise MalformedNodeResponse(
        f"{field} is not an unsigned integer: {value!r:.40}", endpoint=endpoint
    )


def _signed_int(value: object, field: str, endpoint: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _INT_RE.fullmatch(value):
        return int(value)
    raise MalformedNodeResponse(f"{field} is not an integer: {value!r:.40}", endpoint=endpoint)


def _object(body: object, endpoint: str) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise MalformedNodeResponse(
            f"expected a JSON object, got {type(body).__name__}", endpoint=endpoint
        )
    return body


def _list_of_objects(value: object, field: str, endpoint: str) -> tuple[dict[str, Any], ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        raise MalformedNodeResponse(f"{field} is not a list of objects", endpoint=endpoint)
    return tuple(dict(v) for v in value)


@dataclass(frozen=True)
class LedgerInfo:
    """`GET /v1`: the chain and the node's latest ledger state."""

    chain_id: int
    ledger_version: int
    ledger_timestamp_us: int
    block_height: int = 0
    epoch: int = 0

    @property
    def timestamp(self) -> datetime:
        """The ledger time (aware UTC)."""
        return from_micros(self.ledger_timestamp_us)

    @classmethod
    def from_json(cls, body: object, *, endpoint: str = "GET /v1") -> LedgerInfo:
        """Parse the ledger-info object."""
        data = _object(body, endpoint)
        return cls(
            chain_id=parse_uint(data.get("chain_id"), "chain_id", endpoint=endpoint),
            ledger_version=parse_uint(
                data.get("ledger_version"), "ledger_version", endpoint=endpoint
            ),
            ledger_timestamp_us=parse_uint(
                data.get("ledger_timestamp"), "ledger_timestamp", endpoint=endpoint
            ),
            block_height=parse_uint(data.get("block_height", 0), "block_height", endpoint=endpoint),
            epoch=parse_uint(data.get("epoch", 0), "epoch", endpoint=endpoint),
        )


@dataclass(frozen=True)
class AccountInfo:
    """`GET /v1/accounts/{a}`: the next sequence number and the authentication key."""

    sequence_number: int
    authentication_key: bytes

    @classmethod
    def from_json(cls, body: object, *, endpoint: str) -> AccountInfo:
        """Parse `{sequence_number, authentication_key}`."""
        data = _object(body, endpoint)
        auth = data.get("authentication_key")
        if not isinstance(auth, str) or not re.fullmatch(r"0x[0-9a-fA-F]{64}", auth):
            raise MalformedNodeResponse(
                "authentication_key is not 0x + 64 hex digits", endpoint=endpoint
            )
        return cls(
            sequence_number=parse_uint(
                data.get("sequence_number"), "sequence_number", endpoint=endpoint
            ),
            authentication_key=bytes.fromhex(auth[2:]),
        )


@dataclass(frozen=True)
class AccountState:
    """An account read with the ledger state it was read at (the answer's headers).

    A node behind a load balancer, or lagging, may answer from an older ledger version
    than an earlier answer: `ledger_timestamp_us` says how old this read is (None when the
    node sent no `X-Aptos-Ledger-TimestampUsec`).
    """

    info: AccountInfo
    ledger_version: int | None
    ledger_timestamp_us: int | None


@dataclass(frozen=True)
class BalanceChange:
    """One account's balance of one asset moved by `delta` base units (negative: fell)."""

    account: Address
    asset: str
    """Canonical token key (`bot.aptos.tokens.token_key`): coin type or FA address."""
    delta: int

    def as_json(self) -> dict[str, str]:
        """The wire form `{account, asset, delta}`."""
        return {"account": str(self.account), "asset": self.asset, "delta": str(self.delta)}


def account_deltas(
    changes: tuple[BalanceChange, ...] | None, account: Address
) -> dict[str, int] | None:
    """`account`'s net change of each asset (base units) in `changes`; None: none reported.

    Assets the account's changes net to zero are left out.
    """
    if changes is None:
        return None
    deltas: Counter[str] = Counter()
    for change in changes:
        if change.account == account:
            deltas[change.asset] += change.delta
    return {asset: delta for asset, delta in sorted(deltas.items()) if delta != 0}


def parse_balance_changes(value: object, *, endpoint: str = "") -> tuple[BalanceChange, ...] | None:
    """Parse a `balance_changes` list; None when the node gave none (absent or null)."""
    if value is None:
        return None
    changes: list[BalanceChange] = []
    for i, item in enumerate(_list_of_objects(value, "balance_changes", endpoint)):
        try:
            account = Address.parse(item["account"])
            asset = token_key(item["asset"])
        except (KeyError, TypeError, AddressError, TokenLookupError) as exc:
            raise MalformedNodeResponse(f"balance_changes[{i}]: {exc}", endpoint=endpoint) from None
        delta = _signed_int(item.get("delta"), f"balance_changes[{i}].delta", endpoint)
        changes.append(BalanceChange(account, asset, delta))
    return tuple(changes)


@dataclass(frozen=True)
class SimulationResult:
    """`POST /v1/transactions/simulate`: what the transaction would do now."""

    success: bool
    vm_status: str
    gas_used: int
    gas_unit_price: int
    events: tuple[dict[str, Any], ...]
    changes: tuple[dict[str, Any], ...]
    balance_changes: tuple[BalanceChange, ...] | None
    tx_hash: str = ""

    @property
    def gas_fee(self) -> int:
        """Octas of APT the simulated gas costs (`gas_used × gas_unit_price`)."""
        return self.gas_used * self.gas_unit_price

    @classmethod
    def from_json(cls, body: object, *, endpoint: str) -> SimulationResult:
        """Parse the node's answer: a list holding one transaction (or that object alone)."""
        if isinstance(body, list):
            if len(body) != 1:
                raise MalformedNodeResponse(
                    f"expected one simulated transaction, got {len(body)}", endpoint=endpoint
                )
            body = body[0]
        data = _object(body, endpoint)
        success = data.get("success")
        if not isinstance(success, bool):
            raise MalformedNodeResponse("success is not a boolean", endpoint=endpoint)
        return cls(
            success=success,
            vm_status=str(data.get("vm_status", "")),
            gas_used=parse_uint(data.get("gas_used"), "gas_used", endpoint=endpoint),
            gas_unit_price=parse_uint(
                data.get("gas_unit_price", 0), "gas_unit_price", endpoint=endpoint
            ),
            events=_list_of_objects(data.get("events"), "events", endpoint),
            changes=_list_of_objects(data.get("changes"), "changes", endpoint),
            balance_changes=parse_balance_changes(data.get("balance_changes"), endpoint=endpoint),
            tx_hash=str(data.get("hash", "")),
        )


@dataclass(frozen=True)
class TxStatus:
    """`GET /v1/transactions/by_hash/{h}`: pending, or committed with its result."""

    tx_hash: str
    pending: bool
    success: bool = False
    vm_status: str = ""
    gas_used: int = 0
    gas_unit_price: int = 0
    version: int | None = None
    events: tuple[dict[str, Any], ...] = ()
    balance_changes: tuple[BalanceChange, ...] | None = None
    timestamp: datetime | None = None
    sender: Address | None = None
    sequence_number: int | None = None

    @property
    def committed(self) -> bool:
        """True once the transaction is on chain (successful or not)."""
        return not self.pending

    @classmethod
    def from_json(cls, body: object, *, tx_hash: str, endpoint: str) -> TxStatus:
        """Parse a pending or committed (`user_transaction`) transaction."""
        data = _object(body, endpoint)
        kind = data.get("type")
        sender, sequence = _sender_and_sequence(data, endpoint)
        if kind == "pending_transaction":
            return cls(tx_hash=tx_hash, pending=True, sender=sender, sequence_number=sequence)
        if kind != "user_transaction":
            raise MalformedNodeResponse(
                f"unexpected transaction type {kind!r:.40}", endpoint=endpoint
            )
        success = data.get("success")
        if not isinstance(success, bool):
            raise MalformedNodeResponse("success is not a boolean", endpoint=endpoint)
        stamp = data.get("timestamp")
        return cls(
            tx_hash=tx_hash,
            pending=False,
            success=success,
            vm_status=str(data.get("vm_status", "")),
            gas_used=parse_uint(data.get("gas_used"), "gas_used", endpoint=endpoint),
            gas_unit_price=parse_uint(
                data.get("gas_unit_price", 0), "gas_unit_price", endpoint=endpoint
            ),
            version=parse_uint(data.get("version"), "version", endpoint=endpoint),
            events=_list_of_objects(data.get("events"), "events", endpoint),
            balance_changes=parse_balance_changes(data.get("balance_changes"), endpoint=endpoint),
            timestamp=(
                from_micros(parse_uint(stamp, "timestamp", endpoint=endpoint))
                if stamp is not None
                else None
            ),
            sender=sender,
            sequence_number=sequence,
        )


def _sender_and_sequence(
    data: Mapping[str, Any], endpoint: str
) -> tuple[Address | None, int | None]:
    """A transaction's `sender` and `sequence_number`, when the answer carries them."""
    sender: Address | None = None
    raw_sender = data.get("sender")
    if raw_sender is not None:
        try:
            sender = Address.parse(str(raw_sender))
        except AddressError:
            raise MalformedNodeResponse(
                f"sender is not an address: {raw_sender!r:.40}", endpoint=endpoint
            ) from None
    raw_sequence = data.get("sequence_number")
    sequence = (
        parse_uint(raw_sequence, "sequence_number", endpoint=endpoint)
        if raw_sequence is not None
        else None
    )
    return sender, sequence


def parse_account_transaction(
    body: object, *, sender: Address, sequence_number: int, endpoint: str
) -> TxStatus | None:
    """The committed transaction of `sender` numbered `sequence_number` in an account listing.

    `body` is `GET /v1/accounts/{a}/transactions?start=n&limit=…`'s answer: the account's
    committed user transactions from sequence number n on, oldest first. None when the
    listing does not start with number n (empty: not committed as far as this node knows;
    a later number: n is pruned from this node). An entry of another sender, or one whose
    hash is not 0x + 64 hex digits, is a malformed answer.
    """
    if not isinstance(body, list):
        raise MalformedNodeResponse(
            f"expected a JSON list of transactions, got {type(body).__name__}", endpoint=endpoint
        )
    if not body:
        return None
    first = _object(body[0], endpoint)
    tx_hash = first.get("hash")
    if not isinstance(tx_hash, str) or not _HASH_RE.fullmatch(tx_hash):
        raise MalformedNodeResponse(
            f"hash is not 0x + 64 hex digits: {tx_hash!r:.40}", endpoint=endpoint
        )
    status = TxStatus.from_json(first, tx_hash=tx_hash.lower(), endpoint=endpoint)
    if status.pending:
        raise MalformedNodeResponse(
            "an account listing holds a pending transaction", endpoint=endpoint
        )
    if status.sender != sender:
        raise MalformedNodeResponse(
            f"asked for {sender}'s transactions, got one of {status.sender}", endpoint=endpoint
        )
    if status.sequence_number is None:
        raise MalformedNodeResponse("the transaction has no sequence_number", endpoint=endpoint)
    return status if status.sequence_number == sequence_number else None


@dataclass(frozen=True)
class TxLookup:
    """A `by_hash` answer: the status (None: not found) and the answer's ledger time (µs)."""

    status: TxStatus | None
    ledger_timestamp_us: int | None
    ledger_version: int | None = None


@dataclass(frozen=True)
class LedgerStamp:
    """A ledger timestamp the node reported, and when (local monotonic seconds) we saw it."""

    timestamp_us: int
    observed_at: float


class NodeStats:
    """Requests sent, per `METHOD route` (the benchmark counts round trips with it)."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()

    @property
    def total(self) -> int:
        """All requests sent (retries included)."""
        return sum(self.requests.values())
