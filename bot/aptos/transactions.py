"""Aptos user transactions: build, sign, serialise, decode, verify and hash.

Two clients use this module: the signer (entry function → `RawTransaction` → Ed25519 signature →
BCS bytes + hash) and the paper world's node (submitted bytes → `SignedTransaction` → signature
check → hash). Everything is aptos-sdk's stable v1 types; only the hash and a strict decoder are
ours (aptos-sdk 0.11 has no hash helper, and its `TypeTag` reader cannot read primitive or vector
type arguments).

Signing message (node's `RawTransaction::sign`): `sha3_256(b"APTOS::RawTransaction") || BCS(raw)`.

Transaction hash (node's `Transaction::hash()`, from `#[derive(CryptoHasher, BCSCryptoHash)]` on
`enum Transaction { UserTransaction(SignedTransaction), GenesisTransaction(..), … }`): a
`CryptoHasher` hashes `sha3_256(sha3_256(b"APTOS::" + type name) || BCS(value))`; the type name is
`Transaction`, and the BCS of the enum value is the variant index as a ULEB128 byte — `0x00` for
`UserTransaction` — followed by the BCS of the `SignedTransaction`. Hence
`sha3_256( sha3_256(b"APTOS::Transaction") || 0x00 || BCS(SignedTransaction) )`, the same
construction as aptos-sdk 0.12's `SignedTransaction.hash()` and the TypeScript SDK's
`generateUserTransactionHash`.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

from aptos_sdk import ed25519
from aptos_sdk.account_address import AccountAddress
from aptos_sdk.authenticator import (
    AccountAuthenticator,
    Authenticator,
    Ed25519Authenticator,
    SingleSenderAuthenticator,
)
from aptos_sdk.bcs import Deserializer
from aptos_sdk.transactions import (
    EntryFunction,
    ModuleId,
    RawTransaction,
    SignedTransaction,
    TransactionPayload,
)
from aptos_sdk.type_tag import TypeTag

from bot.aptos.address import Address
from bot.aptos.codec import DecodeError, read_bytes, read_exact, read_length, read_uleb128
from bot.aptos.movetypes import (
    STRUCT_VARIANT,
    VECTOR_VARIANT,
    PrimitiveTag,
    VectorTag,
    struct_type_tag,
)

__all__ = [
    "RAW_TRANSACTION_PREFIX",
    "TRANSACTION_PREFIX",
    "TransactionError",
    "build_raw_transaction",
    "decode_signed_transaction",
    "entry_function",
    "is_zero_signature",
    "read_identifier",
    "read_type_tag",
    "sender_address",
    "sign_transaction",
    "signed_bytes",
    "signing_message",
    "simulation_transaction",
    "transaction_hash",
    "verify_signature",
]

RAW_TRANSACTION_PREFIX: Final = hashlib.sha3_256(b"APTOS::RawTransaction").digest()
TRANSACTION_PREFIX: Final = hashlib.sha3_256(b"APTOS::Transaction").digest()
USER_TRANSACTION_VARIANT: Final = b"\x00"  # `Transaction::UserTransaction` is variant 0
ENTRY_FUNCTION_PAYLOAD: Final = 2  # `TransactionPayload::EntryFunction`
_ZERO_SIGNATURE: Final = bytes(64)
_U64_MAX: Final = (1 << 64) - 1
_MAX_TAG_DEPTH: Final = 64
_IDENT_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class TransactionError(ValueError):
    """A transaction that cannot be built, or submitted bytes that are not a valid one."""


def _check_uint(name: str, value: object, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= maximum:
        raise TransactionError(f"{name} must be an integer in 0..{maximum}, got {value!r}")
    return value


def build_raw_transaction(
    sender: Address,
    sequence_number: int,
    payload: EntryFunction | TransactionPayload,
    max_gas_amount: int,
    gas_unit_price: int,
    expiration_timestamp_secs: int,
    chain_id: int,
) -> RawTransaction:
    """Assemble a `RawTransaction` calling an entry function.

    Raises:
        TransactionError: when a number is not an integer in its u64 (chain id: u8) range.
    """
    if not isinstance(sender, Address):
        raise TransactionError(f"sender must be an Address, got {type(sender).__name__}")
    if isinstance(payload, EntryFunction):
        payload = TransactionPayload(payload)
    if not isinstance(payload, TransactionPayload):
        raise TransactionError(f"payload must be an EntryFunction, got {type(payload).__name__}")
    return RawTransaction(
        AccountAddress(sender.to_bytes()),
        _check_uint("sequence_number", sequence_number, _U64_MAX),
        payload,
        _check_uint("max_gas_amount", max_gas_amount, _U64_MAX),
        _check_uint("gas_unit_price", gas_unit_price, _U64_MAX),
        _check_uint("expiration_timestamp_secs", expiration_timestamp_secs, _U64_MAX),
        _check_uint("chain_id", chain_id, 255),
    )


def signing_message(raw: RawTransaction) -> bytes:
    """The bytes an Ed25519 key signs: the `APTOS::RawTransaction` prefix hash, then BCS(raw)."""
    return RAW_TRANSACTION_PREFIX + raw.to_bytes()


def sign_transaction(raw: RawTransaction, private_key: ed25519.PrivateKey) -> SignedTransaction:
    """Sign with Ed25519 (single sender, `TransactionAuthenticator::Ed25519`)."""
    signature = private_key.sign(signing_message(raw))
    return _signed(raw, Ed25519Authenticator(private_key.public_key(), signature))


def simulation_transaction(raw: RawTransaction, public_key: ed25519.PublicKey) -> SignedTransaction:
    """The form `/transactions/simulate` expects: the real public key, a zeroed signature."""
    return _signed(raw, Ed25519Authenticator(public_key, ed25519.Signature(_ZERO_SIGNATURE)))


def _signed(raw: RawTransaction, auth: Ed25519Authenticator) -> SignedTransaction:
    return SignedTransaction(raw, Authenticator(auth))


def signed_bytes(signed: SignedTransaction) -> bytes:
    """BCS of the `SignedTransaction`: the body of `POST /v1/transactions` (BCS content type)."""
    data: bytes = signed.bytes()
    return data


def transaction_hash(signed: SignedTransaction | bytes) -> str:
    """The hash the node reports for this user transaction, as `0x` + 64 hex digits.

    Args:
        signed: the transaction, or its exact BCS bytes (what the node received).
    """
    data = signed if isinstance(signed, bytes) else signed_bytes(signed)
    return "0x" + hashlib.sha3_256(TRANSACTION_PREFIX + USER_TRANSACTION_VARIANT + data).hexdigest()


def read_identifier(des: Deserializer) -> str:
    """Read a length-prefixed Move identifier (module, function or struct name)."""
    raw = read_bytes(des)
    text = raw.decode("ascii", errors="replace")
    if not _IDENT_RE.fullmatch(text):
        raise DecodeError(f"not a Move identifier: {raw!r:.60}")
    return text


def read_type_tag(des: Deserializer, depth: int = 0) -> TypeTag:
    """Read a BCS Move `TypeTag` (the SDK's own reader cannot read primitives or vectors).

    Raises:
        DecodeError: for unknown variants, `signer`, or nesting deeper than 64.
    """
    if depth > _MAX_TAG_DEPTH:
        raise DecodeError("type tag nested too deeply")
    variant = read_uleb128(des)
    if variant == VECTOR_VARIANT:
        return TypeTag(VectorTag(read_type_tag(des, depth + 1)))
    if variant == STRUCT_VARIANT:
        address = read_exact(des, 32)
        module = read_identifier(des)
        name = read_identifier(des)
        args = [read_type_tag(des, depth + 1) for _ in range(read_length(des))]
        return struct_type_tag(address, module, name, args)
    if variant in (0, 1, 2, 3, 4, 8, 9, 10):
        return TypeTag(PrimitiveTag(variant))
    raise DecodeError(f"type tag variant {variant} is not allowed here")


def _read_raw_transaction(des: Deserializer) -> RawTransaction:
    sender = AccountAddress(read_exact(des, 32))
    sequence_number = des.u64()
    variant = read_uleb128(des)
    if variant != ENTRY_FUNCTION_PAYLOAD:
        raise TransactionError(f"payload variant {variant} is not an entry function")
    module_address = AccountAddress(read_exact(des, 32))
    module = ModuleId(module_address, read_identifier(des))
    function = read_identifier(des)
    type_args = [read_type_tag(des) for _ in range(read_length(des))]
    args = [read_bytes(des) for _ in range(read_length(des))]
    payload = TransactionPayload(EntryFunction(module, function, type_args, args))
    return RawTransaction(
        sender, sequence_number, payload, des.u64(), des.u64(), des.u64(), des.u8()
    )


def decode_signed_transaction(data: bytes) -> SignedTransaction:
    """Parse submitted BCS bytes of an entry-function `SignedTransaction`; no trailing bytes.

    Raises:
        TransactionError: for truncated or malformed bytes, a payload other than an entry
            function, an unknown authenticator, or bytes left over.
    """
    des = Deserializer(bytes(data))
    try:
        raw = _read_raw_transaction(des)
        authenticator = Authenticator.deserialize(des)
    except TransactionError:
        raise
    except Exception as exc:  # ours (CodecError), or the SDK's bare `Exception` (0.11) / own errors
        raise TransactionError(f"malformed signed transaction: {exc}") from exc
    if des.remaining():
        raise TransactionError(f"{des.remaining()} trailing bytes after the signed transaction")
    return SignedTransaction(raw, authenticator)


def verify_signature(signed: SignedTransaction) -> bool:
    """True when the authenticator's signature(s) verify over the transaction's signing message.

    A zeroed simulation signature never verifies. This checks the signature only, not that the
    key is the sender account's current authentication key.
    """
    try:
        return bool(signed.verify())
    except Exception:  # malformed keys inside SDK verifiers raise instead of returning False
        return False


def sender_address(signed: SignedTransaction | RawTransaction) -> Address:
    """The sender of a (signed) transaction."""
    raw = signed.transaction if isinstance(signed, SignedTransaction) else signed
    return Address.from_bytes(bytes(raw.sender.address))


def entry_function(signed: SignedTransaction | RawTransaction) -> EntryFunction:
    """The entry function a transaction calls.

    Raises:
        TransactionError: when the payload is not an entry function.
    """
    raw = signed.transaction if isinstance(signed, SignedTransaction) else signed
    value = raw.payload.value
    if not isinstance(value, EntryFunction):
        raise TransactionError(f"payload is not an entry function: {type(value).__name__}")
    return value


def is_zero_signature(signed: SignedTransaction) -> bool:
    """True for the simulation convention: a single-sender Ed25519 signature of 64 zero bytes."""
    auth = signed.authenticator.authenticator
    if isinstance(auth, SingleSenderAuthenticator):
        account = auth.sender
        auth = account.authenticator if isinstance(account, AccountAuthenticator) else None
    if not isinstance(auth, Ed25519Authenticator):
        return False
    return bytes(auth.signature.data()) == _ZERO_SIGNATURE
