"""The paper world's face for an Aptos node's REST API (`/v1/…`), as an ASGI app.

Routes, JSON shapes and error bodies (`{message, error_code, vm_error_code}`) follow the
real node; docs/paper-world.md ("The node") lists them. Before each request the market is
synced to the clock and due transactions are committed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from bot.aptos.address import Address, AddressError
from bot.paper.core.chain import NodeError, PaperChain, TxRecord
from bot.paper.core.registry import UnknownToken
from bot.paper.faces.asgi import Receive, Request, Scope, Send, read_request, send_json
from bot.paper.render import iso

__all__ = ["NodeApi"]

_ACCOUNT: Final = re.compile(r"^/v1/accounts/([^/]+)$")
_MODULE: Final = re.compile(r"^/v1/accounts/([^/]+)/module/([A-Za-z_][A-Za-z0-9_]*)$")
_BALANCE: Final = re.compile(r"^/v1/accounts/([^/]+)/balance/(.+)$")
_BY_HASH: Final = re.compile(r"^/v1/transactions/by_hash/(0x[0-9a-fA-F]{64})$")
_BALANCE_VIEW: Final = "0x1::primary_fungible_store::balance"


def _address(text: str) -> str:
    try:
        return str(Address.parse(text))
    except AddressError:
        raise NodeError(400, f"invalid account address: {text}", "invalid_input") from None


class NodeApi:
    """ASGI app serving `/v1/…` over a `PaperChain`."""

    def __init__(self, chain: PaperChain, *, sync: Callable[[], object] | None = None) -> None:
        self.chain = chain
        self._sync = sync or (lambda: None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI entry point."""
        if scope["type"] != "http":
            return
        request = await read_request(scope, receive)
        try:
            self._sync()
            self.chain.process()
            status, body = self._route(request)
            self.chain.process()
        except NodeError as error:
            await send_json(send, error.status, error.body(), headers=self._ledger_headers())
            return
        drop = status == 202 and self.chain.take_dropped_answer()
        await send_json(send, status, body, headers=self._ledger_headers(), drop=drop)

    def _ledger_headers(self) -> dict[str, str]:
        """The ledger headers a real node sends on every answer."""
        return {
            "x-aptos-chain-id": str(self.chain.settings.chain_id),
            "x-aptos-ledger-version": str(self.chain.version),
            "x-aptos-ledger-timestampusec": str(self.chain.ledger_timestamp_us),
            "x-aptos-epoch": "1",
        }

    def _route(self, request: Request) -> tuple[int, Any]:
        method, path = request.method, request.path.rstrip("/") or "/"
        if method == "GET" and path == "/v1":
            return 200, self._ledger_info()
        if method == "GET" and path == "/v1/estimate_gas_price":
            price = self.chain.settings.gas_unit_price
            return 200, {
                "gas_estimate": price,
                "deprioritized_gas_estimate": price,
                "prioritized_gas_estimate": price * 3 // 2,
            }
        if method == "POST" and path == "/v1/transactions":
            return 202, self._pending_json(self.chain.submit(request.body))
        if method == "POST" and path == "/v1/transactions/simulate":
            estimating = request.param("estimate_max_gas_amount") == "true"
            simulated = self.chain.simulate(request.body, estimate_max_gas=estimating)
            return 200, [self._committed_json(simulated)]
        if method == "POST" and path == "/v1/view":
            return 200, self._view(request.json())
        if method == "GET" and (m := _BY_HASH.match(path)):
            record = self.chain.transaction(m.group(1))
            if record is None:
                raise NodeError(
                    404,
                    f"Transaction not found by Transaction hash({m.group(1)})",
                    "transaction_not_found",
                )
            if record.effects is None:
                return 200, self._pending_json(record)
            return 200, self._committed_json(record)
        if method == "GET" and (m := _MODULE.match(path)):
            module = self.chain.modules.json(_address(m.group(1)), m.group(2))
            if module is None:
                raise NodeError(
                    404,
                    f"Module not found by Address({m.group(1)}), Module name({m.group(2)})",
                    "module_not_found",
                )
            return 200, module
        if method == "GET" and (m := _BALANCE.match(path)):
            return 200, self._balance(_address(m.group(1)), m.group(2))
        if method == "GET" and (m := _ACCOUNT.match(path)):
            return 200, self._account(_address(m.group(1)))
        raise NodeError(404, f"no route {method} {path}", "web_framework_error")

    def _ledger_info(self) -> dict[str, Any]:
        version = str(self.chain.version)
        return {
            "chain_id": self.chain.settings.chain_id,
            "epoch": "1",
            "ledger_version": version,
            "oldest_ledger_version": "0",
            "ledger_timestamp": str(self.chain.ledger_timestamp_us),
            "node_role": "full_node",
            "oldest_block_height": "0",
            "block_height": version,
            "git_hash": "paper",
        }

    def _account(self, address: str) -> dict[str, str]:
        if not self.chain.account_exists(address):
            raise NodeError(404, f"Account not found by Address({address})", "account_not_found")
        return {
            "sequence_number": str(self.chain.sequence_number(address)),
            "authentication_key": Address.parse(address).long,
        }

    def _balance(self, address: str, asset: str) -> int:
        try:
            token = self.chain.market.tokens.require(asset)
        except (UnknownToken, AddressError, ValueError):
            raise NodeError(404, f"unknown asset {asset}", "resource_not_found") from None
        return self.chain.market.balance(address, token)

    def _view(self, body: Any) -> list[str]:
        if not isinstance(body, dict) or body.get("function") != _BALANCE_VIEW:
            raise NodeError(
                400, f"the paper node only serves the view {_BALANCE_VIEW}", "invalid_input"
            )
        args = body.get("arguments")
        if not isinstance(args, list) or len(args) != 2:
            raise NodeError(400, "expected arguments [owner, metadata]", "invalid_input")
        return [str(self._balance(_address(str(args[0])), str(args[1])))]

    def _base_json(self, record: TxRecord) -> dict[str, Any]:
        raw = record.signed.transaction
        return {
            "hash": record.hash,
            "sender": record.sender,
            "sequence_number": str(record.sequence_number),
            "max_gas_amount": str(raw.max_gas_amount),
            "gas_unit_price": str(raw.gas_unit_price),
            "expiration_timestamp_secs": str(raw.expiration_timestamps_secs),
            "payload": record.payload,
        }

    def _pending_json(self, record: TxRecord) -> dict[str, Any]:
        return {"type": "pending_transaction", **self._base_json(record)}

    def _committed_json(self, record: TxRecord) -> dict[str, Any]:
        effects = record.effects
        assert effects is not None and record.committed_at is not None
        moment = record.committed_at
        return {
            "type": "user_transaction",
            **self._base_json(record),
            "version": str(record.version or 0),
            "success": effects.success,
            "vm_status": effects.vm_status,
            "gas_used": str(effects.gas_used),
            "events": effects.events,
            "balance_changes": effects.balance_changes,
            "changes": [],
            "timestamp": str(int(moment.timestamp()) * 1_000_000 + moment.microsecond),
            "committed_at": iso(moment),
        }
