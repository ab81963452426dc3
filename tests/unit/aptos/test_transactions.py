from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from aptos_sdk import ed25519
from aptos_sdk.account_address import AccountAddress
from aptos_sdk.authenticator import (
    AccountAuthenticator,
    Authenticator,
    Ed25519Authenticator,
    SingleSenderAuthenticator,
)
from aptos_sdk.transactions import SignedTransaction
from nacl.signing import SigningKey

from bot.aptos.address import Address
from bot.aptos.codec import ModuleAbi, decode_entry_function, encode_entry_function
from bot.aptos.transactions import (
    RAW_TRANSACTION_PREFIX,
    TRANSACTION_PREFIX,
    TransactionError,
    build_raw_transaction,
    decode_signed_transaction,
    entry_function,
    is_zero_signature,
    sender_address,
    sign_transaction,
    signed_bytes,
    signing_message,
    simulation_transaction,
    transaction_hash,
    verify_signature,
)
from tests.support.fixtures import FIXTURES as SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES / "aptos"


def load(name: str) -> Any:
    path = FIXTURES / name
    if not path.is_file():
        raise FileNotFoundError(f"fixture missing (tests must not skip): {path}")
    return json.loads(path.read_text())


def key_from_seed(seed: bytes) -> ed25519.PrivateKey:
    return ed25519.PrivateKey(SigningKey(seed))


@pytest.fixture(scope="module")
def okx() -> Any:
    return load("okx_signed_entry_function_vector.json")


def okx_signed(okx: Any) -> tuple[ed25519.PrivateKey, Any]:
    key = key_from_seed(bytes.fromhex(okx["privateKey"][2:66]))
    sender = Address.from_bytes(AccountAddress.from_key(key.public_key()).address)
    data, base = okx["data"], okx["base"]
    payload = encode_entry_function(
        okx["abi"], data["function"], data["typeArguments"], data["functionArguments"]
    )
    raw = build_raw_transaction(
        sender,
        int(base["sequenceNumber"]),
        payload,
        int(base["maxGasAmount"]),
        int(base["gasUnitPrice"]),
        int(base["expirationTimestampSecs"]),
        base["chainId"],
    )
    return key, raw


def test_okx_vector_is_reproduced_byte_for_byte(okx: Any) -> None:
    key, raw = okx_signed(okx)
    signed = sign_transaction(raw, key)
    assert signed_bytes(signed).hex() == okx["expected"]
    assert verify_signature(signed)


def test_okx_vector_decodes_verifies_and_reads_back(okx: Any) -> None:
    submitted = bytes.fromhex(okx["expected"])
    signed = decode_signed_transaction(submitted)
    assert verify_signature(signed)
    assert signed_bytes(signed) == submitted
    assert not is_zero_signature(signed)
    key = key_from_seed(bytes.fromhex(okx["privateKey"][2:66]))
    assert sender_address(signed) == Address.from_bytes(
        AccountAddress.from_key(key.public_key()).address
    )
    raw = signed.transaction
    assert (raw.sequence_number, raw.max_gas_amount, raw.gas_unit_price, raw.chain_id) == (
        35,
        200000,
        100,
        27,
    )
    call = decode_entry_function(entry_function(signed), okx["abi"])
    assert call["function"] == okx["data"]["function"]
    assert call["type_arguments"] == okx["data"]["typeArguments"]
    assert call["arguments"] == ["3200000000", "48605237"]


def test_transaction_hash_matches_a_known_vector() -> None:
    # The node hashes a committed transaction as `Transaction::hash()`. `Transaction` derives
    # `CryptoHasher` + `BCSCryptoHash`, so hash = sha3_256(salt || BCS(Transaction)) with
    # salt = sha3_256(b"APTOS::Transaction"). BCS of the enum value is its variant index (ULEB128)
    # then the variant's body; `UserTransaction(SignedTransaction)` is variant 0. Therefore:
    #   hash = sha3_256(sha3_256(b"APTOS::Transaction") || 0x00 || BCS(SignedTransaction)).
    # Vector: aptos-sdk 0.12.3 `transactions.py` test_signed_transaction_hash (a 0x1::coin::
    # transfer<AptosCoin> signed with Ed25519, chain id 4).
    submitted = bytes.fromhex(
        "7deeccb1080854f499ec8b4c1b213b82c5e34b925cf6875fec02d4b77adbd2d60b00000000000000020000"
        "00000000000000000000000000000000000000000000000000000000000104636f696e087472616e73666572"
        "010700000000000000000000000000000000000000000000000000000000000000010a6170746f735f636f69"
        "6e094170746f73436f696e0002202d133ddd281bb6205558357cc6ac75661817e9aaeac3afebc32842759cbf"
        "7fa9088813000000000000d0070000000000000100000000000000d202964900000000040020b9c6ee1630ef"
        "3e711144a648db06bbb2284f7274cfbee53ffcee503cc1a4920040f25b74ec60a38a1ed780fd2bef6ddb6eb4"
        "356e3ab39276c9176cdf0fcae2ab37d79b626abb43d926e91595b66503a4a3c90acbae36a28d405e308f3537"
        "af720b"
    )
    expected = "0xdb7e0f0b00b817ad8a9d2eae33cf4eec9e25110bac48fa6807000f43128f17ac"
    signed = decode_signed_transaction(submitted)
    assert verify_signature(signed)
    assert transaction_hash(signed) == expected
    assert transaction_hash(submitted) == expected
    # The construction spelled out, independently of the module's constants.
    manual = hashlib.sha3_256(
        hashlib.sha3_256(b"APTOS::Transaction").digest() + b"\x00" + submitted
    ).hexdigest()
    assert "0x" + manual == expected
    # Prefix hash as published by other SDKs' tests.
    assert TRANSACTION_PREFIX.hex() == (
        "fa210a9417ef3e7fa45bfa1d17a8dbd4d883711910a550d265fee189e9266dd4"
    )


def test_okx_transaction_hash_is_stable(okx: Any) -> None:
    key, raw = okx_signed(okx)
    signed = sign_transaction(raw, key)
    digest = transaction_hash(signed)
    assert digest == transaction_hash(bytes.fromhex(okx["expected"]))
    assert len(digest) == 66 and digest.startswith("0x")


def test_signing_message_uses_the_raw_transaction_prefix(okx: Any) -> None:
    key, raw = okx_signed(okx)
    message = signing_message(raw)
    assert message[:32] == hashlib.sha3_256(b"APTOS::RawTransaction").digest()
    assert message[:32] == RAW_TRANSACTION_PREFIX
    signature = sign_transaction(raw, key).authenticator.authenticator.signature
    assert key.public_key().verify(message, signature)


def test_simulation_uses_a_zeroed_signature(okx: Any) -> None:
    key, raw = okx_signed(okx)
    sim = simulation_transaction(raw, key.public_key())
    assert is_zero_signature(sim)
    assert not verify_signature(sim)
    data = signed_bytes(sim)
    assert data.endswith(b"\x40" + bytes(64))
    # Same transaction body as the real one; only the signature differs.
    real = signed_bytes(sign_transaction(raw, key))
    assert data[:-64] == real[:-64]
    assert is_zero_signature(decode_signed_transaction(data))


def test_zero_signature_inside_a_single_sender_authenticator(okx: Any) -> None:
    key, raw = okx_signed(okx)
    zero = Ed25519Authenticator(key.public_key(), ed25519.Signature(bytes(64)))
    wrapped = SignedTransaction(
        raw, Authenticator(SingleSenderAuthenticator(AccountAuthenticator(zero)))
    )
    assert is_zero_signature(wrapped)
    assert not verify_signature(wrapped)
    assert is_zero_signature(decode_signed_transaction(signed_bytes(wrapped)))


def test_tampering_breaks_the_signature(okx: Any) -> None:
    submitted = bytearray.fromhex(okx["expected"])
    submitted[32] ^= 1  # lowest byte of the sequence number
    assert not verify_signature(decode_signed_transaction(bytes(submitted)))
    submitted = bytearray.fromhex(okx["expected"])
    submitted[-1] ^= 1  # inside the signature
    assert not verify_signature(decode_signed_transaction(bytes(submitted)))


def test_decode_rejects_malformed_bytes(okx: Any) -> None:
    submitted = bytes.fromhex(okx["expected"])
    with pytest.raises(TransactionError, match="1 trailing bytes"):
        decode_signed_transaction(submitted + b"\x00")
    with pytest.raises(TransactionError, match="malformed"):
        decode_signed_transaction(submitted[:-1])
    with pytest.raises(TransactionError, match="malformed"):
        decode_signed_transaction(submitted[:20])
    script_payload = submitted[:40] + b"\x00" + submitted[41:]
    with pytest.raises(TransactionError, match="payload variant 0"):
        decode_signed_transaction(script_payload)
    bad_authenticator = bytearray(submitted)
    bad_authenticator[-(1 + 64 + 1 + 32 + 1)] = 9  # authenticator variant
    with pytest.raises(TransactionError, match="malformed"):
        decode_signed_transaction(bytes(bad_authenticator))


def test_router_txdata_full_signer_and_node_round_trip() -> None:
    abi = ModuleAbi.from_json(load("panora_swap_module_abi.json"))
    txdata = load("panora_router_entry_txdata.json")
    key = key_from_seed(bytes(range(32)))
    sender = Address.parse("0x53aed9413aa7a4aa64305191875df907b9fcf323cba8621a4fe48573dbd18a3e")
    payload = encode_entry_function(
        abi, txdata["function"], txdata["type_arguments"], txdata["arguments"]
    )
    raw = build_raw_transaction(sender, 7, payload, 200_000, 100, 1_800_000_000, 1)
    signed = sign_transaction(raw, key)
    data = signed_bytes(signed)
    # The node's side.
    received = decode_signed_transaction(data)
    assert verify_signature(received)
    assert sender_address(received) == sender
    assert transaction_hash(received) == transaction_hash(data) == transaction_hash(signed)
    call = decode_entry_function(entry_function(received), abi)
    assert call["arguments"][14] == [["0xa086010000000000"]]
    assert call["type_arguments"][1] == txdata["type_arguments"][1]


def test_primitive_and_vector_type_arguments_survive_decoding() -> None:
    # aptos-sdk's own TypeTag reader cannot read these; ours must.
    module = {
        "address": "0x1",
        "name": "m",
        "exposed_functions": [
            {
                "name": "f",
                "is_entry": True,
                "generic_type_params": [{"constraints": []}] * 2,
                "params": ["&signer", "vector<T0>"],
            }
        ],
    }
    payload = encode_entry_function(module, "0x1::m::f", ["u64", "vector<u8>"], [["5"]])
    key = key_from_seed(bytes(32))
    raw = build_raw_transaction(Address(1), 0, payload, 1, 1, 1, 2)
    data = signed_bytes(sign_transaction(raw, key))
    received = decode_signed_transaction(data)
    assert signed_bytes(received) == data
    call = decode_entry_function(entry_function(received), module)
    assert call == {
        "function": "0x1::m::f",
        "type_arguments": ["u64", "vector<u8>"],
        "arguments": [["5"]],
    }


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("sequence_number", -1),
        ("sequence_number", 2**64),
        ("max_gas_amount", True),
        ("gas_unit_price", 1.0),
        ("expiration_timestamp_secs", "1"),
        ("chain_id", 256),
    ],
)
def test_build_rejects_out_of_range_numbers(okx: Any, field: str, value: object) -> None:
    _, raw = okx_signed(okx)
    fields: dict[str, Any] = {
        "sender": Address(1),
        "sequence_number": 1,
        "payload": raw.payload,
        "max_gas_amount": 1,
        "gas_unit_price": 1,
        "expiration_timestamp_secs": 1,
        "chain_id": 1,
    }
    fields[field] = value
    with pytest.raises(TransactionError, match=field):
        build_raw_transaction(**fields)


def test_build_rejects_non_address_sender(okx: Any) -> None:
    _, raw = okx_signed(okx)
    with pytest.raises(TransactionError, match="sender"):
        build_raw_transaction("0x1", 0, raw.payload, 1, 1, 1, 1)  # type: ignore[arg-type]
