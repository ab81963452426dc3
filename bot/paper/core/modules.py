"""The Move modules the paper node knows: their ABIs, as `GET /v1/accounts/{a}/module/{m}` serves.

* the real `panora_swap` router ABI (copied from mainnet, see `data/PROVENANCE.md`);
* the paper world's own order modules `paper_dca` and `paper_limit`, with
  `deposit(&signer, order_id: vector<u8>, amount: u64)` (funds an on-chain-style order)
  and `withdraw(&signer, order_id: vector<u8>)` (cancels it, refunding the owner);
* `0x1::aptos_account` with `transfer(&signer, to: address, amount: u64)`, so a plain APT
  transfer is a real, executable call (the signer's policy must refuse to sign one).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, Final

from bot.aptos.abi import ModuleAbi
from bot.aptos.address import Address
from bot.domain import ROUTER_MODULE_ADDRESS

__all__ = [
    "APTOS_ACCOUNT_TRANSFER",
    "PAPER_ORDERS_ADDRESS",
    "ModuleRegistry",
    "order_function",
]

PAPER_ORDERS_ADDRESS: Final = "0x" + "0d" * 32
APTOS_ACCOUNT_TRANSFER: Final = "0x1::aptos_account::transfer"
_DATA: Final = Path(__file__).resolve().parents[1] / "data"


def order_function(kind: str, name: str) -> str:
    """`<paper orders address>::paper_dca::deposit` and friends."""
    return f"{PAPER_ORDERS_ADDRESS}::paper_{kind}::{name}"


def _function(name: str, params: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "visibility": "public",
        "is_entry": True,
        "is_view": False,
        "generic_type_params": [],
        "params": params,
        "return": [],
    }


def _module(address: str, name: str, functions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "bytecode": "0x",
        "abi": {
            "address": address,
            "name": name,
            "friends": [],
            "exposed_functions": functions,
            "structs": [],
        },
    }


@cache
def _router_json() -> dict[str, Any]:
    abi = json.loads((_DATA / "panora_swap_module_abi.json").read_text())
    return {"bytecode": "0x", "abi": abi}


class ModuleRegistry:
    """Modules by (address, name); each served as `{bytecode, abi}` and parsed once."""

    def __init__(self) -> None:
        orders = [
            _function("deposit", ["&signer", "vector<u8>", "u64"]),
            _function("withdraw", ["&signer", "vector<u8>"]),
        ]
        modules = [
            (ROUTER_MODULE_ADDRESS, "panora_swap", _router_json()),
            (PAPER_ORDERS_ADDRESS, "paper_dca", _module(PAPER_ORDERS_ADDRESS, "paper_dca", orders)),
            (
                PAPER_ORDERS_ADDRESS,
                "paper_limit",
                _module(PAPER_ORDERS_ADDRESS, "paper_limit", orders),
            ),
            (
                "0x1",
                "aptos_account",
                _module(
                    "0x1", "aptos_account", [_function("transfer", ["&signer", "address", "u64"])]
                ),
            ),
        ]
        self._json = {(str(Address.parse(a)), n): j for a, n, j in modules}
        self._parsed: dict[tuple[str, str], ModuleAbi] = {}

    def json(self, address: str, name: str) -> dict[str, Any] | None:
        """The module as the node serves it, or None."""
        return self._json.get((str(Address.parse(address)), name))

    def abi(self, address: str, name: str) -> ModuleAbi | None:
        """The parsed ABI, or None for an unknown module."""
        key = (str(Address.parse(address)), name)
        if key not in self._parsed:
            raw = self._json.get(key)
            if raw is None:
                return None
            self._parsed[key] = ModuleAbi.from_json(raw)
        return self._parsed[key]
