"""A bare test helper that signs txData for the paper node with the shared codec.

Not the bot's signer (that is `bot.chain`, with its policy and retries): just enough to
drive the node in tests.
"""

from __future__ import annotations

import hashlib
from typing import Any

import httpx
from aptos_sdk import ed25519
from aptos_sdk.account_address import AccountAddress
from nacl.signing import SigningKey

from bot.aptos.abi import ModuleAbi
from bot.aptos.address import Address, FunctionId
from bot.aptos.codec import encode_entry_function
from bot.aptos.transactions import (
    build_raw_transaction,
    sign_transaction,
    signed_bytes,
    simulation_transaction,
)


def fixed_key(label: str) -> ed25519.PrivateKey:
    """A deterministic test key (never a real one)."""
    return ed25519.PrivateKey(SigningKey(hashlib.sha256(label.encode()).digest()))


def address_of(key: ed25519.PrivateKey) -> str:
    """The account address of a single-Ed25519 key."""
    return str(Address.from_bytes(AccountAddress.from_key(key.public_key()).address))


async def build_signed(
    node: httpx.AsyncClient,
    key: ed25519.PrivateKey,
    tx_data: dict[str, Any],
    *,
    sequence_number: int | None = None,
    chain_id: int = 4,
    expires_in: int = 60,
    max_gas: int = 20_000,
    simulate: bool = False,
) -> bytes:
    """Encode `tx_data` by the module's ABI from the node and sign it (or zero-sign it)."""
    function = FunctionId.parse(tx_data["function"])
    module = (await node.get(f"/v1/accounts/{function.address}/module/{function.module}")).json()
    payload = encode_entry_function(
        ModuleAbi.from_json(module),
        tx_data["function"],
        tx_data["type_arguments"],
        tx_data["arguments"],
    )
    sender = address_of(key)
    if sequence_number is None:
        sequence_number = int((await node.get(f"/v1/accounts/{sender}")).json()["sequence_number"])
    ledger = (await node.get("/v1")).json()
    now = int(ledger["ledger_timestamp"]) // 1_000_000
    raw = build_raw_transaction(
        Address.parse(sender), sequence_number, payload, max_gas, 100, now + expires_in, chain_id
    )
    signed = (
        simulation_transaction(raw, key.public_key()) if simulate else sign_transaction(raw, key)
    )
    return signed_bytes(signed)


BCS = {"content-type": "application/x.aptos.signed_transaction+bcs"}
