"""What the paper node does when a transaction runs: one handler per known entry function.

Every run is atomic: it happens inside a ledger savepoint and a pool snapshot, and an
abort (or a simulation) undoes all of it. The result carries the events a node would
emit and, as a convenience of the paper node, `balance_changes`: the net change of every
(account, asset) the call touched, which the signer's policy judges.

Handlers:
* the router (`panora_swap::router_entry`): the paper layout of `core/router.py`; swaps
  at the pool state of the commit time, aborts under the minimum out;
* `paper_dca|paper_limit::deposit(order_id, amount)`: funds a pending on-chain-style order
  and activates it; `withdraw(order_id)`: cancels it and refunds the owner;
* `0x1::aptos_account::transfer(to, amount)`: moves APT.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Final

from aptos_sdk.transactions import EntryFunction

from bot.aptos.address import Address
from bot.aptos.codec import CodecError, decode_entry_function
from bot.domain import APT_COIN_TYPE as APT
from bot.domain import PROVIDER_LIVE_STATUSES, ROUTER_FUNCTION, OrderKind
from bot.paper.core.ledger import MARKET, InsufficientFunds, escrow_account
from bot.paper.core.market import PaperMarket
from bot.paper.core.modules import PAPER_ORDERS_ADDRESS, ModuleRegistry
from bot.paper.core.orders import KEEPER_WALLET, OrderStateError, UnknownOrder
from bot.paper.core.registry import UnknownToken
from bot.paper.core.router import PLATFORM_FEE_RECEIVER, RouterCall, RouterFormatError
from bot.paper.core.swaps import SlippageExceeded, SwapError, execute_swap

__all__ = ["MARKET_ADDRESS", "Executor", "TxEffects"]

MARKET_ADDRESS: Final = "0x" + "b0" * 32
SUCCESS: Final = "Executed successfully"
_GAS: Final = {"router_entry": 1200, "deposit": 300, "withdraw": 300, "transfer": 20}


class _Abort(Exception):
    def __init__(self, module: str, name: str, code: int, reason: str) -> None:
        super().__init__(f"Move abort in {module}: {name}(0x{code:x}): {reason}")


@dataclass
class TxEffects:
    """The outcome of running a call."""

    success: bool
    vm_status: str
    gas_used: int
    events: list[dict[str, Any]] = field(default_factory=list)
    balance_changes: list[dict[str, str]] = field(default_factory=list)


def _account_address(account: str) -> str:
    """Ledger account names → the addresses a node would show."""
    if account.startswith("escrow:"):
        return PAPER_ORDERS_ADDRESS
    return {
        MARKET: MARKET_ADDRESS,
        "fees:platform": PLATFORM_FEE_RECEIVER,
        "fees:keeper": KEEPER_WALLET,
    }.get(account, account)


class Executor:
    """Runs entry functions against the paper market."""

    def __init__(self, market: PaperMarket, modules: ModuleRegistry) -> None:
        self.market = market
        self.modules = modules

    def payload_json(self, entry: EntryFunction) -> dict[str, Any]:
        """The payload as the node's JSON shows it (arguments decoded when the ABI is known)."""
        module_address = str(Address.from_bytes(entry.module.address.address))
        function = f"{module_address}::{entry.module.name}::{entry.function}"
        abi = self.modules.abi(module_address, entry.module.name)
        if abi is not None:
            try:
                decoded = decode_entry_function(entry, abi)
                return {"type": "entry_function_payload", **decoded}
            except (CodecError, ValueError):
                pass
        return {
            "type": "entry_function_payload",
            "function": function,
            "type_arguments": [str(t) for t in entry.ty_args],
            "arguments": ["0x" + bytes(a).hex() for a in entry.args],
        }

    def run(
        self,
        sender: str,
        entry: EntryFunction,
        now: datetime,
        *,
        dry: bool,
        pay_to: str | None = None,
    ) -> TxEffects:
        """Execute (or simulate, with `dry`) one call atomically.

        `pay_to` (a fault): the router pays the bought token there, whatever the call says.
        """
        module_address = str(Address.from_bytes(entry.module.address.address))
        name = entry.function
        gas = _GAS.get(name, 5) + sum(len(a) for a in entry.args) // 10
        abi = self.modules.abi(module_address, entry.module.name)
        if abi is None:
            return TxEffects(False, "LINKER_ERROR", 5)
        try:
            decoded = decode_entry_function(entry, abi)
        except (CodecError, ValueError):
            return TxEffects(False, "FAILED_TO_DESERIALIZE_ARGUMENT", 5)
        function = decoded["function"]
        args = decoded["arguments"]
        ledger, pools = self.market.ledger, self.market.pools
        saved = pools.snapshot()
        ledger.begin()
        try:
            events = self._dispatch(function, sender, args, now, dry, pay_to)
        except _Abort as abort:
            ledger.rollback()
            pools.restore(saved)
            return TxEffects(False, str(abort), gas)
        changes = ledger.changes()
        if dry:
            ledger.rollback()
            pools.restore(saved)
        else:
            ledger.release()
        return TxEffects(True, SUCCESS, gas, events + _fa_events(changes), _render(changes))

    def _dispatch(
        self,
        function: str,
        sender: str,
        args: list[Any],
        now: datetime,
        dry: bool,
        pay_to: str | None = None,
    ) -> list[dict[str, Any]]:
        if function == ROUTER_FUNCTION:
            return self._swap(sender, args, now, pay_to)
        if function == "0x1::aptos_account::transfer":
            to = str(Address.parse(str(args[0])))
            try:
                self.market.ledger.transfer(APT, sender, to, int(args[1]))
            except InsufficientFunds as exc:
                raise _Abort("0x1::coin", "EINSUFFICIENT_BALANCE", 0x10006, str(exc)) from None
            return []
        module, _, name = function.rpartition("::")
        for kind in OrderKind:
            if module == f"{PAPER_ORDERS_ADDRESS}::paper_{kind}":
                if name == "deposit":
                    return self._deposit(kind, sender, str(args[0]), int(args[1]), now, dry)
                if name == "withdraw":
                    return self._withdraw(kind, sender, str(args[0]), now, dry)
        raise _Abort(module, "EFUNCTION_NOT_SUPPORTED", 1, f"the paper node cannot run {function}")

    def _swap(
        self, sender: str, args: list[Any], now: datetime, pay_to: str | None = None
    ) -> list[dict[str, Any]]:
        module = ROUTER_FUNCTION.rsplit("::", 1)[0]
        try:
            call = RouterCall.parse(args)
            tokens = self.market.tokens
            sell, buy = tokens.require(call.sell_fa), tokens.require(call.buy_fa)
            done = execute_swap(
                self.market.ledger,
                self.market.pools,
                self.market.config.fees,
                payer=sender,
                recipient=str(Address.parse(pay_to)) if pay_to else call.recipient,
                sell=sell,
                buy=buy,
                at=now,
                exact_in=call.exact_in,
                amount_in=call.amount_in,
                amount_out=call.amount_out,
                integrator_fee_pct=Decimal(call.integrator_fee_e4) / 10**4,
                integrator_account=call.integrator,
            )
        except SlippageExceeded as exc:
            raise _Abort(module, "E_OUTPUT_LESS_THAN_MINIMUM", 0x65, str(exc)) from None
        except InsufficientFunds as exc:
            raise _Abort(
                "0x1::fungible_asset", "EINSUFFICIENT_BALANCE", 0x10004, str(exc)
            ) from None
        except (RouterFormatError, UnknownToken, SwapError) as exc:
            raise _Abort(module, "E_INVALID_ROUTE", 0x66, str(exc)) from None
        return [
            {
                "type": f"{module}::SwapEvent",
                "data": {
                    "sender": sender,
                    "recipient": call.recipient,
                    "from_token": sell.address,
                    "to_token": buy.address,
                    "amount_in": str(done.amount_in),
                    "amount_out": str(done.amount_out),
                },
            }
        ]

    def _order(self, kind: str, order_id: str) -> Any:
        engine = self.market.dca if kind == "dca" else self.market.limit
        try:
            return engine, engine.get(order_id)
        except UnknownOrder:
            raise _Abort(
                f"{PAPER_ORDERS_ADDRESS}::paper_{kind}",
                "E_ORDER_NOT_FOUND",
                1,
                f"no order {order_id}",
            ) from None

    def _deposit(
        self, kind: str, sender: str, order_id: str, amount: int, now: datetime, dry: bool
    ) -> list[dict[str, Any]]:
        module = f"{PAPER_ORDERS_ADDRESS}::paper_{kind}"
        engine, order = self._order(kind, order_id)
        if order.status != "pending" or order.owner != sender or amount != order.funded:
            raise _Abort(
                module,
                "E_BAD_DEPOSIT",
                2,
                f"order {order_id} is {order.status}; owner or amount differ",
            )
        try:
            self.market.ledger.transfer(
                order.sell.address, sender, escrow_account(order_id), amount
            )
        except InsufficientFunds as exc:
            raise _Abort(
                "0x1::fungible_asset", "EINSUFFICIENT_BALANCE", 0x10004, str(exc)
            ) from None
        if not dry:
            engine.activate(order_id, now)
        return [
            {
                "type": f"{module}::DepositEvent",
                "data": {"order_id": order_id, "owner": sender, "amount": str(amount)},
            }
        ]

    def _withdraw(
        self, kind: str, sender: str, order_id: str, now: datetime, dry: bool
    ) -> list[dict[str, Any]]:
        module = f"{PAPER_ORDERS_ADDRESS}::paper_{kind}"
        engine, order = self._order(kind, order_id)
        if order.owner != sender or order.status not in PROVIDER_LIVE_STATUSES:
            raise _Abort(module, "E_BAD_WITHDRAW", 3, f"order {order_id} is {order.status}")
        refund = order.balance
        if dry:
            self.market.ledger.transfer(order.sell.address, order.escrow, order.owner, refund)
        else:
            try:
                engine.cancel(order_id, now, owner=sender)
            except OrderStateError as exc:
                raise _Abort(module, "E_BAD_WITHDRAW", 3, str(exc)) from None
        return [
            {
                "type": f"{module}::WithdrawEvent",
                "data": {"order_id": order_id, "owner": sender, "amount": str(refund)},
            }
        ]


def _merged(changes: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    merged: dict[tuple[str, str], int] = defaultdict(int)
    for (account, token), delta in changes.items():
        merged[(_account_address(account), token)] += delta
    return {k: v for k, v in merged.items() if v}


def _render(changes: dict[tuple[str, str], int]) -> list[dict[str, str]]:
    return [
        {"account": account, "asset": token, "delta": str(delta)}
        for (account, token), delta in sorted(_merged(changes).items())
    ]


def _fa_events(changes: dict[tuple[str, str], int]) -> list[dict[str, Any]]:
    return [
        {
            "type": "0x1::fungible_asset::" + ("Deposit" if delta > 0 else "Withdraw"),
            "data": {"store": account, "metadata": token, "amount": str(abs(delta))},
        }
        for (account, token), delta in sorted(_merged(changes).items())
    ]
