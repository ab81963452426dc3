"""The paper world's face for an Aptos node's REST API (`/v1/…`), as an ASGI app.

Routes, JSON shapes and error bodies (`{message, error_code, vm_error_code}`) follow the
real node; docs/paper-world.md ("The node") lists them. Before each request the market is
synced to the clock and due transactions are committed. Seeded read faults
(`bot.paper.faults.NodeReadFaults`, off by default) make `by_hash` 404 for transactions
the node holds and account reads answer from an older ledger state, headers included, or
the account listing show nothing or fail. `NodeSettings` can strip the `X-Aptos-*`
headers and count gas in `balance_changes`, as some nodes do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final

from bot.aptos.address import Address, AddressError
from bot.aptos.pyth import PYTH_FEEDS, PYTH_MAINNET, price_json, price_view_function
from bot.clock import MICROS_PER_SECOND, to_micros
from bot.domain import APT_COIN_TYPE as APT
from bot.paper.core.chain import NodeError, PaperChain, TxRecord
from bot.paper.core.chain_history import (
    FOREIGN_FUNCTION,
    ForeignTx,
    LedgerView,
    committed_of,
    sequence_as_of,
    view_as_of,
)
from bot.paper.core.registry import UnknownToken
from bot.paper.faces.asgi import Receive, Request, Scope, Send, read_request, send_json
from bot.paper.faults import NodeReadFault, NodeReadFaults
from bot.paper.render import iso

__all__ = ["NodeApi"]

_ACCOUNT: Final = re.compile(r"^/v1/accounts/([^/]+)$")
_ACCOUNT_TXS: Final = re.compile(r"^/v1/accounts/([^/]+)/transactions$")
_UINT: Final = re.compile(r"[0-9]{1,20}")
_MAX_PAGE: Final = 100
_MODULE: Final = re.compile(r"^/v1/accounts/([^/]+)/module/([A-Za-z_][A-Za-z0-9_]*)$")
_BALANCE: Final = re.compile(r"^/v1/accounts/([^/]+)/balance/(.+)$")
_BY_HASH: Final = re.compile(r"^/v1/transactions/by_hash/(0x[0-9a-fA-F]{64})$")
_BALANCE_VIEW: Final = "0x1::primary_fungible_store::balance"
_PYTH_MODULE: Final = f"{PYTH_MAINNET}::pyth"
_PYTH_VIEW: Final = price_view_function(PYTH_MAINNET)
_PYTH_SYMBOLS: Final = {feed: symbol for symbol, feed in PYTH_FEEDS.items()}
_PYTH_CONFIDENCE: Final = Decimal("0.0005")
"""The paper world's Pyth prices are its own, ±0.05%."""


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
        settings = chain.settings
        self.read_faults = NodeReadFaults(
            by_hash_404=settings.by_hash_404,
            stale_account=settings.stale_account,
            seed=settings.seed + 1,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI entry point."""
        if scope["type"] != "http":
            return
        request = await read_request(scope, receive)
        try:
            self._sync()
            self.chain.process()
            status, body, view = self._answer(request)
            self.chain.process()
        except NodeError as error:
            await send_json(send, error.status, error.body(), headers=self._ledger_headers())
            return
        drop = status == 202 and self.chain.take_dropped_answer()
        await send_json(send, status, body, headers=self._ledger_headers(view), drop=drop)

    def _ledger_headers(self, view: LedgerView | None = None) -> dict[str, str]:
        """The ledger headers a real node sends on every answer (of `view`, when stale)."""
        if not self.chain.settings.ledger_headers:
            return {}
        version = view.version if view is not None else self.chain.version
        timestamp = view.timestamp_us if view is not None else self.chain.ledger_timestamp_us
        return {
            "x-aptos-chain-id": str(self.chain.settings.chain_id),
            "x-aptos-ledger-version": str(version),
            "x-aptos-ledger-timestampusec": str(timestamp),
            "x-aptos-epoch": "1",
        }

    def _answer(self, request: Request) -> tuple[int, Any, LedgerView | None]:
        """Account reads (perhaps from an older state, `view`), else `_route`."""
        path = request.path.rstrip("/")
        if request.method == "GET" and (m := _ACCOUNT.match(path) or _ACCOUNT_TXS.match(path)):
            address = _address(m.group(1))
            view = None
            if self.read_faults.draw(NodeReadFault.STALE_ACCOUNT):
                lag_us = int(self.chain.settings.stale_seconds * MICROS_PER_SECOND)
                view = view_as_of(self.chain, lag_us)
            if m.re is _ACCOUNT:
                return 200, self._account(address, view), view
            if self.read_faults.listing_error:
                raise NodeError(500, "the account transaction index is disabled", "internal_error")
            if self.read_faults.listing_empty:
                return 200, [], view
            return 200, self._account_transactions(address, request, view), view
        status, body = self._route(request)
        return status, body, None

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
            return 200, self._by_hash(m.group(1))
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
        raise NodeError(404, f"no route {method} {path}", "web_framework_error")

    def _by_hash(self, tx_hash: str) -> dict[str, Any]:
        """A held transaction; a 404 when unknown — or, as a read fault, even when held."""
        record = self.chain.transaction(tx_hash)
        foreign = self.chain.foreign_transaction(tx_hash)
        held = record is not None or foreign is not None
        if held and not self.read_faults.draw(NodeReadFault.BY_HASH_404):
            if foreign is not None:
                return self._foreign_json(foreign)
            if record is not None:
                if record.effects is None:
                    return self._pending_json(record)
                return self._committed_json(record)
        raise NodeError(
            404, f"Transaction not found by Transaction hash({tx_hash})", "transaction_not_found"
        )

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

    def _account(self, address: str, view: LedgerView | None) -> dict[str, str]:
        if not self.chain.account_exists(address):
            raise NodeError(404, f"Account not found by Address({address})", "account_not_found")
        sequence = (
            self.chain.sequence_number(address)
            if view is None
            else sequence_as_of(self.chain, address, view)
        )
        return {
            "sequence_number": str(sequence),
            "authentication_key": Address.parse(self.chain.auth_key(address)).long,
        }

    def _account_transactions(
        self, address: str, request: Request, view: LedgerView | None
    ) -> list[dict[str, Any]]:
        """The account's committed transactions from sequence number `start`, oldest first.

        Without `start`: the latest `limit` ones, as a real node does.
        """
        start, limit = request.param("start"), request.param("limit") or "25"
        for name, value in (("start", start), ("limit", limit)):
            if value is not None and not _UINT.fullmatch(value):
                raise NodeError(400, f"{name} is not an unsigned integer: {value}", "invalid_input")
        count = min(int(limit), _MAX_PAGE)
        if not self.chain.account_exists(address):
            raise NodeError(404, f"Account not found by Address({address})", "account_not_found")
        records = committed_of(self.chain, address, as_of=view)
        if start is None:
            chosen = records[-count:] if count else []
        else:
            chosen = [r for r in records if r.sequence_number >= int(start)][:count]
        return [
            self._foreign_json(r) if isinstance(r, ForeignTx) else self._committed_json(r)
            for r in chosen
        ]

    def _balance(self, address: str, asset: str) -> int:
        try:
            token = self.chain.market.tokens.require(asset)
        except (UnknownToken, AddressError, ValueError):
            raise NodeError(404, f"unknown asset {asset}", "resource_not_found") from None
        return self.chain.market.balance(address, token)

    def _view(self, body: Any) -> list[Any]:
        function = body.get("function") if isinstance(body, dict) else None
        if function == _PYTH_VIEW:
            return [self._pyth_price(body.get("arguments"))]
        if function != _BALANCE_VIEW:
            raise NodeError(
                400,
                f"the paper node only serves the views {_BALANCE_VIEW} and {_PYTH_VIEW}",
                "invalid_input",
            )
        args = body.get("arguments")
        if not isinstance(args, list) or len(args) != 2:
            raise NodeError(400, "expected arguments [owner, metadata]", "invalid_input")
        return [str(self._balance(_address(str(args[0])), str(args[1])))]

    def _pyth_price(self, args: Any) -> dict[str, Any]:
        """Pyth's `Price` of a feed from the paper world's own USD prices, always fresh."""
        if not isinstance(args, list) or len(args) != 2:
            raise NodeError(400, "expected arguments [feed_id, max_age_secs]", "invalid_input")
        symbol = _PYTH_SYMBOLS.get(str(args[0]).lower())
        if symbol is None:  # the contract's own abort for a feed it never cached
            raise NodeError(400, f"Move abort in {_PYTH_MODULE}: 0x60008", "invalid_input")
        market = self.chain.market
        token = market.tokens.find(symbol)
        usd = market.prices.usd(token.address, market.now)
        return price_json(usd, usd * _PYTH_CONFIDENCE, to_micros(market.now) // MICROS_PER_SECOND)

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

    def _foreign_json(self, record: ForeignTx) -> dict[str, Any]:
        """Another signer's transaction, as a committed user transaction."""
        return {
            "type": "user_transaction",
            "hash": record.hash,
            "sender": record.sender,
            "sequence_number": str(record.sequence_number),
            "max_gas_amount": "0",
            "gas_unit_price": str(self.chain.settings.gas_unit_price),
            "expiration_timestamp_secs": str(record.expiration),
            "payload": {
                "type": "entry_function_payload",
                "function": FOREIGN_FUNCTION,
                "type_arguments": [],
                "arguments": [],
            },
            "version": str(record.version),
            "success": True,
            "vm_status": "Executed successfully",
            "gas_used": "0",
            "events": [],
            "balance_changes": [],
            "changes": [],
            "timestamp": str(to_micros(record.committed_at)),
            "committed_at": iso(record.committed_at),
        }

    def _pending_json(self, record: TxRecord) -> dict[str, Any]:
        return {"type": "pending_transaction", **self._base_json(record)}

    def _balance_changes(self, record: TxRecord) -> list[dict[str, str]]:
        """The paper node's net balance changes, with the gas fee when the settings say so."""
        effects = record.effects
        changes = list(effects.balance_changes) if effects is not None else []
        if effects is None or not self.chain.settings.gas_in_balance_changes:
            return changes
        raw = record.signed.transaction
        fee = min(effects.gas_used, raw.max_gas_amount) * raw.gas_unit_price
        folded = [dict(c) for c in changes]
        for change in folded:
            if (change["account"], change["asset"]) == (record.sender, APT):
                change["delta"] = str(int(change["delta"]) - fee)
                return folded
        return [*folded, {"account": record.sender, "asset": APT, "delta": str(-fee)}]

    def _committed_json(self, record: TxRecord) -> dict[str, Any]:
        effects, moment = record.effects, record.committed_at
        if effects is None or moment is None:  # only committed records are shown so
            raise ValueError(f"transaction {record.hash} is not committed")
        return {
            "type": "user_transaction",
            **self._base_json(record),
            "version": str(record.version or 0),
            "success": effects.success,
            "vm_status": effects.vm_status,
            "gas_used": str(effects.gas_used),
            "events": effects.events,
            "balance_changes": self._balance_changes(record),
            "changes": [],
            "timestamp": str(to_micros(moment)),
            "committed_at": iso(moment),
        }
