"""A small fake Aptos node (raw ASGI) following the contract of docs/paper-world.md ("The node").

In process through `httpx.ASGITransport`, wrapped by `FaultTransport` for transport faults
(connection refused, answer lost after the request was applied). Real BCS, real signatures
and the codec's own hash; a scripted ledger clock (`advance`).

Execution: the router call follows the paper layout (#10/#11 sold/bought FA, #15 recipient,
#16 `[amount in]`, #17 minimum out) and fills at `min_out × fill_ratio`; `0x1::aptos_account::
transfer` moves APT; `paper_orders::deposit(token, amount)` moves into `ESCROW`. Every
simulated and committed transaction reports `balance_changes`: without the gas fee, as the
paper node does (`gas_in_balance_changes=True`: folded into the sender's APT delta).
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import httpx

from bot.aptos.address import Address
from bot.aptos.codec import decode_entry_function
from bot.aptos.transactions import (
    decode_signed_transaction,
    entry_function,
    is_zero_signature,
    sender_address,
    transaction_hash,
    verify_signature,
)
from bot.paper.faces.asgi import read_request, send_json
from tests.support.fixtures import FIXTURES as SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES / "aptos"
ROUTER_ADDRESS = Address.parse("0x1c3206329806286fd2223647c9f9b130e66baeb6d7224a18c1f642ffe48f3b4c")
APT = "0x1::aptos_coin::AptosCoin"
ORDERS_ADDRESS = Address.parse("0x" + "c0" * 32)
ESCROW = Address.parse("0x" + "e5" * 32)
POOL = Address.parse("0x" + "99" * 32)
START_US = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z

APTOS_ACCOUNT_ABI = {
    "address": "0x1",
    "name": "aptos_account",
    "friends": [],
    "exposed_functions": [
        {
            "name": "transfer",
            "visibility": "public",
            "is_entry": True,
            "is_view": False,
            "generic_type_params": [],
            "params": ["&signer", "address", "u64"],
            "return": [],
        }
    ],
    "structs": [],
}
ORDERS_ABI = {
    "address": str(ORDERS_ADDRESS),
    "name": "paper_orders",
    "friends": [],
    "exposed_functions": [
        {
            "name": "deposit",
            "visibility": "public",
            "is_entry": True,
            "is_view": False,
            "generic_type_params": [],
            "params": ["&signer", "address", "u64"],
            "return": [],
        }
    ],
    "structs": [],
}


def load_fixture(name: str) -> Any:
    path = FIXTURES / name
    if not path.is_file():
        raise FileNotFoundError(f"fixture missing (tests must not skip): {path}")
    return json.loads(path.read_text())


@dataclass
class Account:
    sequence_number: int = 0
    authentication_key: bytes = b""
    balances: dict[str, int] = field(default_factory=dict)


@dataclass
class Pending:
    tx_hash: str
    sender: Address
    sequence_number: int
    expiration: int
    call: dict[str, Any]
    max_gas: int
    gas_unit_price: int


class FakeNode:
    """State and behaviour of the fake node; `app` is the ASGI face."""

    def __init__(
        self,
        *,
        chain_id: int = 4,
        gas_used: int = 1_000,
        gas_unit_price: int = 100,
        ledger_headers: bool = True,
        strict_simulation_sequence: bool = True,
        vm_error_sequence: bool = False,
        gas_in_balance_changes: bool = False,
    ) -> None:
        self.chain_id = chain_id
        self.ledger_us = START_US
        self.version = 1000
        self.gas_used = gas_used
        self.gas_unit_price = gas_unit_price
        self.ledger_headers = ledger_headers
        self.strict_simulation_sequence = strict_simulation_sequence
        self.vm_error_sequence = vm_error_sequence
        self.gas_in_balance_changes = gas_in_balance_changes
        self.accounts: dict[Address, Account] = {}
        self.modules: dict[tuple[Address, str], Any] = {
            (ROUTER_ADDRESS, "panora_swap"): load_fixture("panora_swap_module_abi.json"),
            (Address.parse("0x1"), "aptos_account"): APTOS_ACCOUNT_ABI,
            (ORDERS_ADDRESS, "paper_orders"): ORDERS_ABI,
        }
        self.mempool: dict[str, Pending] = {}
        self.committed: dict[str, dict[str, Any]] = {}
        self.requests: list[str] = []
        self.submissions: list[bytes] = []
        self.simulations: list[bytes] = []
        # Scripted behaviour.
        self.submit_statuses: deque[int] = deque()  # next submits answered 507/429… unapplied
        self.lose_next = 0  # next accepted submissions vanish (202, never committed)
        self.pay_to: Address | None = None  # the router pays the bought token here instead
        self.simulation_failure: str | None = None
        self.fill_ratio = Decimal("1.01")
        self.auto_commit = True
        self.on_submit: Callable[[str], None] | None = None
        self.after_admit: Callable[[str], None] | None = None  # once in the mempool
        # Read faults (a lagging, pruned or load-balanced node).
        self.hide_by_hash: set[str] = set()  # by_hash answers 404 for these, even committed
        self.hide_all_by_hash = False  # …or for every hash
        self.stale_accounts: deque[tuple[int, int]] = deque()  # next account reads: (seq, µs)
        self.hide_account_transactions = False  # the account listing shows nothing
        self.foreign: list[str] = []  # hashes of transactions another signer committed

    # --- set-up -------------------------------------------------------------------------

    def fund(self, owner: Address, asset: str, amount: int, auth_key: bytes | None = None) -> None:
        account = self.accounts.setdefault(owner, Account(authentication_key=owner.to_bytes()))
        if auth_key is not None:
            account.authentication_key = auth_key
        account.balances[asset] = account.balances.get(asset, 0) + amount

    def balance(self, owner: Address, asset: str) -> int:
        account = self.accounts.get(owner)
        return account.balances.get(asset, 0) if account else 0

    def consume_sequence(self, owner: Address, *, shown: bool = True) -> str:
        """Another signer commits a transaction with the account's next sequence number.

        Returns its hash. `shown=False`: the node does not list it (pruned).
        """
        account = self.accounts[owner]
        tx_hash = "0x" + hashlib.sha256(f"foreign{len(self.foreign)}".encode()).hexdigest()
        self.version += 1
        entry = {
            "type": "user_transaction",
            "version": str(self.version),
            "hash": tx_hash,
            "sender": str(owner),
            "sequence_number": str(account.sequence_number),
            "timestamp": str(self.ledger_us),
            "success": True,
            "vm_status": "Executed successfully",
            "gas_used": "10",
            "gas_unit_price": str(self.gas_unit_price),
            "events": [],
            "changes": [],
        }
        account.sequence_number += 1
        self.foreign.append(tx_hash)
        if shown:
            self.committed[tx_hash] = entry
        return tx_hash

    def advance(self, seconds: float) -> None:
        self.ledger_us += int(Decimal(str(seconds)) * 1_000_000)
        self.process()

    @property
    def ledger_secs(self) -> int:
        return self.ledger_us // 1_000_000

    def transport(self) -> FaultTransport:
        return FaultTransport(self)

    # --- execution ----------------------------------------------------------------------

    def _effects(
        self, sender: Address, call: dict[str, Any]
    ) -> tuple[list[tuple[Address, str, int]], str]:
        """Balance moves of a call (without gas), or a failure vm_status."""
        function, args = call["function"], call["arguments"]
        if function.endswith("::panora_swap::router_entry"):
            sell = str(Address.parse(args[10][0][0]))
            buy = str(Address.parse(args[11][0][0]))
            recipient = self.pay_to or Address.parse(args[1])
            amount_in, min_out = int(args[16][0]), int(args[17])
            out = int(min_out * self.fill_ratio)
            if out < min_out:
                return [], "Move abort in panora_swap: E_OUTPUT_LESS_THAN_MINIMUM(0x3)"
            if self.balance(sender, sell) < amount_in:
                return [], "Move abort in 0x1::fungible_asset: EINSUFFICIENT_BALANCE(0x10004)"
            return [
                (sender, sell, -amount_in),
                (POOL, sell, amount_in),
                (POOL, buy, -out),
                (recipient, buy, out),
            ], ""
        if function == "0x1::aptos_account::transfer":
            to, amount = Address.parse(args[0]), int(args[1])
            return [(sender, APT, -amount), (to, APT, amount)], ""
        if function.endswith("::paper_orders::deposit"):
            token, amount = str(Address.parse(args[0])), int(args[1])
            return [(sender, token, -amount), (ESCROW, token, amount)], ""
        return [], f"fake node cannot execute {function}"

    def _run(self, sender: Address, call: dict[str, Any], *, apply: bool) -> dict[str, Any]:
        moves, failure = self._effects(sender, call)
        if not failure and not apply and self.simulation_failure:
            failure = self.simulation_failure
        gas_fee = self.gas_used * self.gas_unit_price
        success = not failure
        moves = moves if success else []
        charged = [*moves, (sender, APT, -gas_fee)]
        if self.gas_in_balance_changes:
            moves = charged
        if apply:
            for owner, asset, delta in charged:
                account = self.accounts.setdefault(
                    owner, Account(authentication_key=owner.to_bytes())
                )
                account.balances[asset] = account.balances.get(asset, 0) + delta
        totals: dict[tuple[Address, str], int] = {}
        for owner, asset, delta in moves:
            totals[(owner, asset)] = totals.get((owner, asset), 0) + delta
        return {
            "success": success,
            "vm_status": failure or "Executed successfully",
            "gas_used": str(self.gas_used),
            "gas_unit_price": str(self.gas_unit_price),
            "events": [
                {
                    "type": "0x1::fungible_asset::Deposit"
                    if d > 0
                    else "0x1::fungible_asset::Withdraw",
                    "data": {"owner": str(o), "asset": a, "amount": str(abs(d))},
                }
                for (o, a), d in totals.items()
                if d
            ],
            "changes": [],
            "balance_changes": [
                {"account": str(o), "asset": a, "delta": str(d)}
                for (o, a), d in totals.items()
                if d
            ],
        }

    def process(self) -> None:
        """Drop expired or outnumbered mempool entries; commit every one whose turn it is."""
        for tx_hash, pending in list(self.mempool.items()):
            used = pending.sequence_number < self.accounts[pending.sender].sequence_number
            if pending.expiration <= self.ledger_secs or used:
                del self.mempool[tx_hash]
        if not self.auto_commit:
            return
        self.commit_ready()

    def commit_ready(self) -> None:
        progress = True
        while progress:
            progress = False
            for tx_hash, pending in list(self.mempool.items()):
                account = self.accounts[pending.sender]
                if pending.sequence_number == account.sequence_number:
                    del self.mempool[tx_hash]
                    result = self._run(pending.sender, pending.call, apply=True)
                    account.sequence_number += 1
                    self.version += 1
                    self.committed[tx_hash] = {
                        "type": "user_transaction",
                        "version": str(self.version),
                        "hash": tx_hash,
                        "sender": str(pending.sender),
                        "sequence_number": str(pending.sequence_number),
                        "timestamp": str(self.ledger_us),
                        **result,
                    }
                    progress = True

    # --- the face -----------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        if not self.ledger_headers:
            return {}
        return {
            "x-aptos-chain-id": str(self.chain_id),
            "x-aptos-ledger-version": str(self.version),
            "x-aptos-ledger-timestampusec": str(self.ledger_us),
        }

    def _error(
        self, status: int, code: str, message: str, vm_code: int | None = None
    ) -> tuple[int, Any]:
        return status, {"message": message, "error_code": code, "vm_error_code": vm_code}

    async def app(self, scope: Any, receive: Any, send: Any) -> None:
        request = await read_request(scope, receive)
        self.requests.append(f"{request.method} {request.path}")
        self.process()
        headers = self._headers()
        if request.method == "GET" and request.path.startswith("/v1/accounts/"):
            parts = [p for p in request.path.split("/") if p]
            if len(parts) == 3 and self.stale_accounts:  # a lagging node answers this one
                sequence, ledger_us = self.stale_accounts.popleft()
                if self.ledger_headers:
                    headers["x-aptos-ledger-timestampusec"] = str(ledger_us)
                    headers["x-aptos-ledger-version"] = "1"
                account = self.accounts[Address.parse(parts[2])]
                body = {
                    "sequence_number": str(sequence),
                    "authentication_key": "0x" + account.authentication_key.hex(),
                }
                await send_json(send, 200, body, headers=headers)
                return
            if len(parts) == 4 and parts[3] == "transactions":
                start, limit = int(request.param("start") or 0), int(request.param("limit") or 25)
                listing = self._account_transactions(Address.parse(parts[2]), start, limit)
                await send_json(send, 200, listing, headers=headers)
                return
        status, body = self._route(request.method, request.path, request.body)
        await send_json(send, status, body, headers=headers)

    def _account_transactions(self, owner: Address, start: int, limit: int) -> list[Any]:
        if self.hide_account_transactions:
            return []
        mine = [
            tx
            for tx in self.committed.values()
            if tx["sender"] == str(owner) and int(tx["sequence_number"]) >= start
        ]
        return sorted(mine, key=lambda tx: int(tx["sequence_number"]))[:limit]

    def _route(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        parts = [p for p in path.split("/") if p]
        if parts[:1] != ["v1"]:
            return self._error(404, "web_framework_error", "not found")
        rest = parts[1:]
        if method == "GET" and not rest:
            return 200, {
                "chain_id": self.chain_id,
                "epoch": "1",
                "ledger_version": str(self.version),
                "oldest_ledger_version": "0",
                "block_height": str(self.version // 2),
                "oldest_block_height": "0",
                "ledger_timestamp": str(self.ledger_us),
                "node_role": "full_node",
                "git_hash": "fake",
            }
        if method == "GET" and rest[:1] == ["accounts"] and len(rest) >= 2:
            owner = Address.parse(rest[1])
            account = self.accounts.get(owner)
            if len(rest) == 2:
                if account is None:
                    return self._error(404, "account_not_found", f"Account not found: {owner}")
                return 200, {
                    "sequence_number": str(account.sequence_number),
                    "authentication_key": "0x" + account.authentication_key.hex(),
                }
            if len(rest) == 4 and rest[2] == "module":
                module = self.modules.get((owner, rest[3]))
                if module is None:
                    return self._error(404, "module_not_found", "Module not found")
                return 200, {"bytecode": "0x00", "abi": module}
            if len(rest) == 4 and rest[2] == "balance":
                return 200, self.balance(owner, rest[3])
        if method == "GET" and rest == ["estimate_gas_price"]:
            price = self.gas_unit_price
            return 200, {
                "gas_estimate": price,
                "deprioritized_gas_estimate": price,
                "prioritized_gas_estimate": price * 2,
            }
        if method == "POST" and rest == ["transactions", "simulate"]:
            return self._simulate(body)
        if method == "POST" and rest == ["transactions"]:
            return self._submit(body)
        if method == "GET" and rest[:2] == ["transactions", "by_hash"] and len(rest) == 3:
            tx_hash = rest[2].lower()
            if self.hide_all_by_hash or tx_hash in self.hide_by_hash:
                return self._error(
                    404, "transaction_not_found", f"Transaction not found: {tx_hash}"
                )
            if tx_hash in self.committed:
                return 200, self.committed[tx_hash]
            if tx_hash in self.mempool:
                pending = self.mempool[tx_hash]
                return 200, {
                    "type": "pending_transaction",
                    "hash": tx_hash,
                    "sender": str(pending.sender),
                    "sequence_number": str(pending.sequence_number),
                }
            return self._error(404, "transaction_not_found", f"Transaction not found: {tx_hash}")
        return self._error(404, "web_framework_error", f"no route {method} {path}")

    def _decode(self, body: bytes) -> tuple[Any, Address, dict[str, Any]]:
        signed = decode_signed_transaction(body)
        sender = sender_address(signed)
        entry = entry_function(signed)
        module = entry.module
        key = (Address.from_bytes(bytes(module.address.address)), module.name)
        call = decode_entry_function(entry, self.modules[key])
        return signed, sender, dict(call)

    def _simulate(self, body: bytes) -> tuple[int, Any]:
        self.simulations.append(body)
        signed, sender, call = self._decode(body)
        if not is_zero_signature(signed):
            return self._error(
                400, "invalid_input", "Simulated transactions must not have a valid signature"
            )
        raw = signed.transaction
        account = self.accounts.get(sender)
        if account is None:
            return self._error(404, "account_not_found", "Account not found")
        result = self._run(sender, call, apply=False)
        if raw.expiration_timestamps_secs <= self.ledger_secs:
            result.update(success=False, vm_status="TRANSACTION_EXPIRED", balance_changes=[])
        elif self.strict_simulation_sequence and raw.sequence_number != account.sequence_number:
            old = raw.sequence_number < account.sequence_number
            status = "SEQUENCE_NUMBER_TOO_OLD" if old else "SEQUENCE_NUMBER_TOO_NEW"
            result.update(success=False, vm_status=status, balance_changes=[])
        return 200, [{**result, "hash": transaction_hash(body)}]

    def _submit(self, body: bytes) -> tuple[int, Any]:
        self.submissions.append(body)
        tx_hash = transaction_hash(body)
        if self.on_submit is not None:
            self.on_submit(tx_hash)
        if self.submit_statuses:
            status = self.submit_statuses.popleft()
            code = "mempool_is_full" if status == 507 else "rate_limited"
            return self._error(status, code, "try again later")
        signed, sender, call = self._decode(body)
        raw = signed.transaction
        if not verify_signature(signed):
            return self._error(400, "invalid_input", "signature does not verify")
        if raw.chain_id != self.chain_id:
            return self._error(400, "invalid_input", "BAD_CHAIN_ID")
        if raw.expiration_timestamps_secs <= self.ledger_secs:
            return self._error(400, "invalid_input", "TRANSACTION_EXPIRED")
        account = self.accounts.get(sender)
        if account is None:
            return self._error(404, "account_not_found", "Account not found")
        if raw.sequence_number < account.sequence_number:
            if self.vm_error_sequence:
                return self._error(
                    400, "vm_error", "Invalid transaction: SEQUENCE_NUMBER_TOO_OLD", 3
                )
            return self._error(400, "sequence_number_too_old", "sequence number too old")
        pending_view = {
            "type": "pending_transaction",
            "hash": tx_hash,
            "sender": str(sender),
            "sequence_number": str(raw.sequence_number),
        }
        if tx_hash in self.mempool or tx_hash in self.committed:
            return 202, pending_view
        for other in self.mempool.values():
            if other.sender == sender and other.sequence_number == raw.sequence_number:
                return self._error(400, "invalid_transaction_update", "already in mempool")
        if self.lose_next:
            self.lose_next -= 1
            return 202, pending_view
        self.mempool[tx_hash] = Pending(
            tx_hash,
            sender,
            raw.sequence_number,
            raw.expiration_timestamps_secs,
            call,
            raw.max_gas_amount,
            raw.gas_unit_price,
        )
        if self.after_admit is not None:
            self.after_admit(tx_hash)
        self.process()
        return 202, pending_view


class FaultTransport(httpx.AsyncBaseTransport):
    """`ASGITransport` to the fake, with scripted transport faults per route prefix.

    `faults` holds `(prefix, kind)`: `connect` raises `ConnectError` before the app sees the
    request; `drop` lets the app apply it, then raises `ReadError` (the answer is lost).
    """

    def __init__(self, node: FakeNode) -> None:
        self.node = node
        self.inner = httpx.ASGITransport(app=node.app)
        self.faults: list[tuple[str, str]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        label = f"{request.method} {request.url.path}"
        for i, (prefix, kind) in enumerate(self.faults):
            if label == prefix:
                del self.faults[i]
                if kind == "connect":
                    raise httpx.ConnectError("connection refused", request=request)
                response = await self.inner.handle_async_request(request)
                await response.aread()
                raise httpx.ReadError("connection dropped", request=request)
        return await self.inner.handle_async_request(request)
