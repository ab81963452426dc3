"""Malicious txData: every hostile payload is refused before signing, and the refusal journaled.

A paper world served on loopback (real HTTP) answers `POST /swap` through a tampering proxy
(tests/support/tampering.py) that rewrites the quote's `txData` the way a compromised or
buggy provider could: another function (a look-alike router at another address), a route
paying someone else, a plain APT transfer (refused by the allowlist, and by its effects
when an operator allowlisted it), an amount far above the intent, a route that burns gas
beyond the budget. The bot's real parts run it: client, executor, signer with the policy
built from `[chain]` and `[risk]`, journal.

Each time: the intent ends `failed` with `refused before signing: <reason>` (the journal's
`intents` row and its history planned → sent → failed), no row in `transactions` (nothing
was signed), and the paper node received no transaction (`chain.submitted == 0`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.config import RiskSettings
from bot.engine.actions import Swap
from tests.support.tampering import THIEF, WALLET, HostileRig, hostile_rig

GAS_BUDGET = 5_000  # [risk].max_gas_amount; an honest paper swap uses ~1,300
APT_CAP = Decimal(5)  # [risk].per_transaction_caps.APT
RISK = RiskSettings(
    max_slippage_percent=Decimal(5),
    max_gas_amount=GAS_BUDGET,
    per_transaction_caps={"APT": APT_CAP},
)
TxEdit = Callable[[dict[str, Any]], dict[str, Any]]


@asynccontextmanager
async def rig(tmp_path: Path, *, also_allowed: tuple[str, ...] = ()) -> AsyncIterator[HostileRig]:
    """The bot's parts against the served world behind the tampering proxy."""
    async with hostile_rig(tmp_path, risk=RISK, also_allowed=also_allowed) as r:
        yield r


def tx_edit(edit: TxEdit) -> Callable[[Any], Any]:
    """An edit of `POST /swap`'s answer that rewrites its best quote's txData."""

    def rewrite(body: Any) -> Any:
        quote = body["quotes"][0]
        quote["txData"] = edit(quote["txData"])
        return body

    return rewrite


# --- the hostile payloads ---------------------------------------------------------------------


def lookalike_router(tx: dict[str, Any]) -> dict[str, Any]:
    """The router's module and name, deployed at another address."""
    return {**tx, "function": "0x" + "ba" * 32 + "::panora_swap::router_entry"}


def other_router_function(tx: dict[str, Any]) -> dict[str, Any]:
    return {**tx, "function": tx["function"].replace("router_entry", "withdraw_all")}


def pays_someone_else(tx: dict[str, Any]) -> dict[str, Any]:
    arguments = list(tx["arguments"])
    arguments[1] = THIEF  # the router's recipient (docs/signer.md)
    return {**tx, "arguments": arguments}


def apt_transfer(tx: dict[str, Any]) -> dict[str, Any]:
    return {
        "function": "0x1::aptos_account::transfer",
        "type_arguments": [],
        "arguments": [THIEF, "90000000"],
    }


def sells_more_than_asked(tx: dict[str, Any]) -> dict[str, Any]:
    arguments = list(tx["arguments"])
    arguments[16] = [str(int(arguments[16][0]) * 4)]  # the amount in: 4 APT, not 1 (cap is 5)
    return {**tx, "arguments": arguments}


def burns_gas(tx: dict[str, Any]) -> dict[str, Any]:
    arguments = list(tx["arguments"])
    filler = ["0x" + f"{i:064x}" for i in range(1, 2001)]  # 64 kB: the paper node bills bytes
    arguments[10] = [[*arguments[10][0], *filler]]
    return {**tx, "arguments": arguments}


CASES = [
    ("lookalike_router", lookalike_router, (), "is not on the allowlist"),
    ("other_router_function", other_router_function, (), "is not on the allowlist"),
    (
        "pays_someone_else",
        pays_someone_else,
        (),
        f"the router call pays {THIEF}, not the recipient",
    ),
    ("apt_transfer", apt_transfer, (), "0x1::aptos_account::transfer is not on the allowlist"),
    (
        "apt_transfer_even_if_allowlisted",
        apt_transfer,
        ("0x1::aptos_account::transfer",),
        "would gain 0 base units of USDC",  # judged by its effects: no USDC comes back
    ),
    (
        "sells_more_than_asked",
        sells_more_than_asked,
        (),
        "sells 400000000 base units, not the intended",
    ),
    ("burns_gas", burns_gas, (), f"over the budget of {GAS_BUDGET}"),
]


def assert_refused_and_journaled(r: HostileRig, result: Any, reason: str) -> None:
    assert result.state == "failed"
    intent = r.journal.intent(result.intent_id)
    assert intent is not None and intent.state == "failed"
    assert intent.error is not None and intent.error.startswith("refused before signing: ")
    assert reason in intent.error, intent.error
    history = [step.state for step in r.journal.intent_history(result.intent_id)]
    assert history == ["planned", "sent", "failed"]
    assert r.journal.transactions() == []  # nothing was signed
    assert r.world.chain.submitted == 0  # the node never saw a transaction


@pytest.mark.parametrize(
    ("edit", "also_allowed", "reason"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
async def test_a_hostile_txdata_is_refused_before_signing_and_journaled(
    tmp_path: Path, edit: TxEdit, also_allowed: tuple[str, ...], reason: str
) -> None:
    async with rig(tmp_path, also_allowed=also_allowed) as r:
        r.proxy.edits["/swap"] = tx_edit(edit)
        result = await r.executor.execute(
            "s1", Swap(key="sw-1", sell="APT", buy="USDC", sell_amount=Decimal(1))
        )
        assert_refused_and_journaled(r, result, reason)
        before = r.world.market.balance(WALLET, r.world.market.tokens.find("APT"))
    assert before == 100 * 10**8  # not an octa moved


async def test_an_amount_over_the_per_transaction_cap_is_refused_before_signing(
    tmp_path: Path,
) -> None:
    async with rig(tmp_path) as r:
        result = await r.executor.execute(
            "s1", Swap(key="sw-big", sell="APT", buy="USDC", sell_amount=APT_CAP + 1)
        )
        assert_refused_and_journaled(r, result, "over the per-transaction cap")


async def test_a_max_gas_in_the_txdata_is_never_what_gets_signed(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.proxy.edits["/swap"] = tx_edit(
            lambda tx: {**tx, "max_gas_amount": "2000000000", "gas_unit_price": "1"}
        )
        result = await r.executor.execute(
            "s1", Swap(key="sw-gas", sell="APT", buy="USDC", sell_amount=Decimal(1))
        )
        assert result.state == "confirmed", result.detail
        [tx] = r.journal.transactions(intent_id=result.intent_id)
        signed = json.loads(tx.payload_summary)
        assert signed["max_gas_amount"] <= GAS_BUDGET
        assert signed["gas_unit_price"] == 100  # the node's estimate, not the provider's
