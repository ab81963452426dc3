"""Malicious txData: every hostile payload is refused before signing, and the refusal journaled.

A paper world served on loopback (real HTTP) answers `POST /swap` through a tampering proxy
that rewrites the quote's `txData` the way a compromised or buggy provider could: another
function (a look-alike router at another address), a route paying someone else, a plain APT
transfer (refused by the allowlist, and by its effects when an operator allowlisted it), an
amount far above the intent, a route that burns gas beyond the budget. The bot's real parts
run it: client, executor, signer with the policy built from `[chain]` and `[risk]`, journal.

Each time: the intent ends `failed` with `refused before signing: <reason>` (the journal's
`intents` row and its history planned → sent → failed), no row in `transactions` (nothing
was signed), and the paper node received no transaction (`chain.submitted == 0`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bot.api import PanoraClient
from bot.chain import InMemoryRecorder, NodeClient, Signer, SignerPolicy
from bot.chain.policy import ROUTER_FUNCTION
from bot.chain.settings import SignerSettings
from bot.config import ChainSettings, PaperFunding, PaperSettings, RiskSettings
from bot.engine.actions import Swap
from bot.engine.executor import Executor
from bot.journal import Journal
from bot.paper.core.modules import order_function
from bot.paper.world import PaperWorld, build_world
from tests.support.json_strategies import RawJson, dumps
from tests.support.loopback import serve
from tests.support.paper_signing import address_of, fixed_key

KEY = fixed_key("malicious-txdata")
WALLET = address_of(KEY)
THIEF = "0x" + "7e" * 32
GAS_BUDGET = 5_000  # [risk].max_gas_amount; an honest paper swap uses ~1,300
APT_CAP = Decimal(5)  # [risk].per_transaction_caps.APT
TxEdit = Callable[[dict[str, Any]], dict[str, Any]]


class TamperingProxy:
    """ASGI middleware: passes everything through, but rewrites `POST /swap`'s txData."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.edit: TxEdit | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/swap" or self.edit is None:
            await self.app(scope, receive, send)
            return
        edit = self.edit
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def rewrite(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = json.loads(b"".join(chunks), parse_float=RawJson)  # numbers kept as sent
            if start["status"] == 200:
                quote = body["quotes"][0]
                quote["txData"] = edit(quote["txData"])
            data = dumps(body).encode()
            headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(data)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": data})

        await self.app(scope, receive, rewrite)


@dataclass
class Rig:
    world: PaperWorld
    proxy: TamperingProxy
    journal: Journal
    executor: Executor


@asynccontextmanager
async def rig(tmp_path: Path, *, also_allowed: tuple[str, ...] = ()) -> AsyncIterator[Rig]:
    """The bot's parts against the served world; the policy comes from [chain] and [risk]."""
    world = build_world(
        PaperSettings(
            clock="stepped",
            api_keys=["paper-key-malicious-0001"],
            rate_limit_per_second=1e6,
            rate_limit_burst=10**6,
            funding=[
                PaperFunding(wallet=WALLET, token="APT", amount=Decimal(100)),
                PaperFunding(wallet=WALLET, token="USDC", amount=Decimal(1000)),
            ],
        )
    )
    proxy = TamperingProxy(world.app)
    orders = [order_function(k, f) for k in ("dca", "limit") for f in ("deposit", "withdraw")]
    allowed = [str(ROUTER_FUNCTION), *orders, *also_allowed]
    chain = ChainSettings(chain_id=4, allowed_functions=allowed)
    risk = RiskSettings(
        max_slippage_percent=Decimal(5),
        max_gas_amount=GAS_BUDGET,
        per_transaction_caps={"APT": APT_CAP},
    )
    policy = SignerPolicy.from_settings(chain, risk, world.market.tokens.book)
    with serve(proxy) as url:
        client = PanoraClient(
            base_url=url,
            api_key=SecretStr("paper-key-malicious-0001"),
            rate_limit_per_second=1e6,
            rate_limit_burst=10**6,
            max_attempts=1,
        )
        node = NodeClient(url + "/v1", expected_chain_id=4)
        signer = Signer(
            node,
            KEY,
            policy,
            InMemoryRecorder(),
            settings=SignerSettings(poll_interval_seconds=0.01, first_poll_delay_seconds=0),
        )
        journal = Journal.open(f"sqlite:///{tmp_path / 'bot.db'}")
        executor = Executor(
            journal=journal,
            client=client,
            clock=world.market.clock,
            wallet=WALLET,
            tokens=world.market.tokens.book,
            signer=signer,
        )
        try:
            yield Rig(world, proxy, journal, executor)
        finally:
            await client.aclose()
            await node.aclose()
            journal.close()


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


def assert_refused_and_journaled(r: Rig, result: Any, reason: str) -> None:
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
        r.proxy.edit = edit
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
        r.proxy.edit = lambda tx: {**tx, "max_gas_amount": "2000000000", "gas_unit_price": "1"}
        result = await r.executor.execute(
            "s1", Swap(key="sw-gas", sell="APT", buy="USDC", sell_amount=Decimal(1))
        )
        assert result.state == "confirmed", result.detail
        [tx] = r.journal.transactions(intent_id=result.intent_id)
        signed = json.loads(tx.payload_summary)
        assert signed["max_gas_amount"] <= GAS_BUDGET
        assert signed["gas_unit_price"] == 100  # the node's estimate, not the provider's
