"""The signer against the paper world's own node, in process (`httpx.ASGITransport`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import httpx
import pytest

from bot.aptos.address import Address, FunctionId
from bot.aptos.tokens import Token
from bot.chain import (
    InMemoryRecorder,
    Intent,
    IntentKind,
    NodeClient,
    PolicyRefused,
    Signer,
    SignerPolicy,
)
from bot.chain.policy import ROUTER_FUNCTION
from bot.config import PaperFunding, PaperSettings
from bot.paper.world import PaperWorld, build_world
from harness.paper_signing import address_of, fixed_key

KEY = fixed_key("chain-signer-tests")
WALLET = address_of(KEY)
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
APT_TOKEN = Token(decimals=8, symbol="APT", coin_type=APT, fa_address="0xa")
USDC_TOKEN = Token(decimals=6, symbol="USDC", fa_address=USDC)
H = {"x-api-key": "k"}


async def no_wait(seconds: float) -> None:
    await asyncio.sleep(0)


@pytest.fixture
async def paper() -> AsyncIterator[tuple[PaperWorld, httpx.AsyncClient, Signer]]:
    world = build_world(
        PaperSettings(
            clock="stepped",
            api_keys=["k"],
            funding=[
                PaperFunding(wallet=WALLET, token="APT", amount=Decimal(10)),
                PaperFunding(wallet=WALLET, token="USDC", amount=Decimal(100)),
            ],
        )
    )
    transport = httpx.ASGITransport(app=world.app)
    policy = SignerPolicy(
        chain_id=4,
        allowed_functions=frozenset(
            {ROUTER_FUNCTION, FunctionId.parse("0x1::aptos_account::transfer")}
        ),
        max_slippage_percent=Decimal(2),
    )
    node = NodeClient("http://paper/v1", expected_chain_id=4, transport=transport, sleep=no_wait)
    signer = Signer(node, KEY, policy, InMemoryRecorder(), sleep=no_wait)
    async with httpx.AsyncClient(transport=transport, base_url="http://paper") as client:
        yield world, client, signer
    await node.aclose()


async def quote(client: httpx.AsyncClient, amount: str = "1") -> dict[str, Any]:
    response = await client.post(
        "/swap",
        headers=H,
        params={
            "fromTokenAddress": APT,
            "toTokenAddress": USDC,
            "fromTokenAmount": amount,
            "toWalletAddress": WALLET,
            "slippagePercentage": "1",
        },
    )
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["quotes"][0]
    return result


def intent_for(q: dict[str, Any], amount: Decimal = Decimal(1)) -> Intent:
    return Intent(
        kind=IntentKind.SWAP,
        sender=Address.parse(WALLET),
        sell=APT_TOKEN,
        sell_amount=int(amount * 10**8),
        buy=USDC_TOKEN,
        min_out=int(Decimal(q["minToTokenAmount"]) * 10**6),
        expected_out=int(Decimal(q["toTokenAmount"]) * 10**6),
        slippage_percent=Decimal(q["slippagePercentage"]),
    )


async def test_swap_from_quote_to_committed_transaction(
    paper: tuple[PaperWorld, httpx.AsyncClient, Signer],
) -> None:
    world, client, signer = paper
    q = await quote(client)
    before = world.market.balance(WALLET, world.market.tokens.require(USDC))
    outcome = await signer.execute(q["txData"], intent_for(q))
    assert outcome.success
    after = world.market.balance(WALLET, world.market.tokens.require(USDC))
    gained = {(str(c.account), c.asset): c.delta for c in outcome.balance_changes or ()}
    assert after - before == gained[(WALLET, USDC)] >= intent_for(q).min_out
    assert world.chain.sequence_number(WALLET) == 1
    world.market.ledger.check_conservation()


async def test_dry_run_against_the_paper_node_signs_nothing(
    paper: tuple[PaperWorld, httpx.AsyncClient, Signer],
) -> None:
    world, client, signer = paper
    q = await quote(client)
    report = await signer.dry_run(q["txData"], intent_for(q))
    assert not report.refused, report.notes
    assert report.arguments[1].value == WALLET
    assert world.chain.submitted == 0


async def test_plain_transfer_refused_by_its_effects(
    paper: tuple[PaperWorld, httpx.AsyncClient, Signer],
) -> None:
    world, _, signer = paper
    transfer = {
        "function": "0x1::aptos_account::transfer",
        "type_arguments": [],
        "arguments": ["0x" + "0b" * 32, "1000"],
    }
    q_intent = Intent(
        kind=IntentKind.SWAP,
        sender=Address.parse(WALLET),
        sell=USDC_TOKEN,
        sell_amount=1,
        buy=APT_TOKEN,
        min_out=1,
    )
    with pytest.raises(PolicyRefused):
        await signer.execute(transfer, q_intent)
    assert world.chain.submitted == 0
