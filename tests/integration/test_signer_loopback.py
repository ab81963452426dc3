"""The signer against `bot paper serve` over loopback: real HTTP, real signatures, real BCS.

The paper world runs on an accelerated clock (×200), so a 30-second expiry passes in
0.15 s of real time; the node's deterministic faults (`lose_first`, `drop_first_answers`,
`test_pay_to`) give each scenario exactly the trouble it needs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
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
    SimulationFailed,
)
from bot.chain.errors import ForeignSigner, WalletPaused
from bot.chain.policy import ROUTER_FUNCTION
from bot.chain.settings import SignerSettings
from harness.paper_signing import BCS, address_of, build_signed, fixed_key
from tests.support.paper_server import PAPER_KEY, paper_serve

KEY = fixed_key("signer-loopback")
WALLET = address_of(KEY)
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
APT_TOKEN = Token(decimals=8, symbol="APT", coin_type=APT, fa_address="0xa")
USDC_TOKEN = Token(decimals=6, symbol="USDC", fa_address=USDC)
FAST = SignerSettings(
    expiration_seconds=30,
    poll_interval_seconds=0.02,
    first_poll_delay_seconds=0.01,
    wait_timeout_seconds=20,
)


@contextmanager
def served(tmp_path: Path, *, node: str = "", paper: str = "") -> Iterator[str]:
    config = tmp_path / "bot.toml"
    config.write_text(
        "[paper]\n"
        'clock = "accelerated"\nspeed = 200.0\n'
        f'api_keys = ["{PAPER_KEY}"]\n'
        "rate_limit_per_second = 1000.0\nrate_limit_burst = 1000\n"
        f'funding = [{{ wallet = "{WALLET}", token = "APT", amount = "20" }}]\n'
        + paper
        + "[paper.node]\n"
        + node
    )
    with paper_serve(config) as (url, _process):
        yield url


def policy(*extra: str) -> SignerPolicy:
    allowed = {ROUTER_FUNCTION, *(FunctionId.parse(f) for f in extra)}
    return SignerPolicy(
        chain_id=4, allowed_functions=frozenset(allowed), max_slippage_percent=Decimal(2)
    )


async def quote(url: str, amount: str = "1") -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        response = await client.post(
            "/swap",
            headers={"x-api-key": PAPER_KEY},
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


async def chain_state(url: str) -> tuple[int, int]:
    """(sequence number, USDC balance) of the wallet, read from the node."""
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        seq = int((await client.get(f"/v1/accounts/{WALLET}")).json()["sequence_number"])
        usdc = int((await client.get(f"/v1/accounts/{WALLET}/balance/{USDC}")).json())
    return seq, usdc


def make_signer(url: str, recorder: InMemoryRecorder, *functions: str) -> Signer:
    node = NodeClient(url + "/v1", expected_chain_id=4)
    return Signer(node, KEY, policy(*functions), recorder, settings=FAST)


async def test_swap_from_quote_to_committed_transaction(tmp_path: Path) -> None:
    with served(tmp_path) as url:
        q = await quote(url)
        recorder = InMemoryRecorder()
        outcome = await make_signer(url, recorder).execute(q["txData"], intent_for(q))
        seq, usdc = await chain_state(url)
    assert outcome.success and seq == 1
    assert usdc >= intent_for(q).min_out
    # The hash was handed to the recorder before the bytes were sent.
    assert recorder.events[0] == ("before_submit", outcome.tx_hash)


async def test_refusals_happen_before_anything_is_signed(tmp_path: Path) -> None:
    transfer = {
        "function": "0x1::aptos_account::transfer",
        "type_arguments": [],
        "arguments": ["0x" + "0b" * 32, "1000"],
    }
    with served(tmp_path) as url:
        q = await quote(url)
        other = dict(
            q["txData"], function=q["txData"]["function"].replace("router_entry", "router_entry_v2")
        )
        signer = make_signer(url, InMemoryRecorder())
        with pytest.raises(PolicyRefused, match="router_entry_v2") as changed:
            await signer.execute(other, intent_for(q))
        assert "allowed_functions" in str(changed.value)
        with pytest.raises(PolicyRefused, match="0x1::aptos_account::transfer"):
            await signer.execute(transfer, intent_for(q))
        # Even allowlisted, a transfer is judged by its effects and refused.
        permissive = make_signer(url, InMemoryRecorder(), "0x1::aptos_account::transfer")
        with pytest.raises(PolicyRefused):
            await permissive.execute(transfer, intent_for(q))
        seq, _ = await chain_state(url)
    assert seq == 0  # nothing was ever submitted


async def test_a_router_call_that_pays_someone_else_is_refused(tmp_path: Path) -> None:
    thief = "0x" + "7e" * 32
    with served(tmp_path, paper=f'test_pay_to = "{thief}"\n') as url:
        q = await quote(url)
        assert q["txData"]["arguments"][1] == thief  # the hostile route, behind the setting
        with pytest.raises(PolicyRefused):
            await make_signer(url, InMemoryRecorder()).execute(q["txData"], intent_for(q))
        seq, _ = await chain_state(url)
    assert seq == 0


async def test_a_failing_simulation_stops_with_the_vm_status(tmp_path: Path) -> None:
    with served(tmp_path) as url:
        q = await quote(url)
        tx = q["txData"]
        tx["arguments"][17] = str(10**18)  # an impossible minimum out
        with pytest.raises(SimulationFailed, match="E_OUTPUT_LESS_THAN_MINIMUM"):
            await make_signer(url, InMemoryRecorder()).execute(tx, intent_for(q))
        seq, _ = await chain_state(url)
    assert seq == 0


async def test_a_sequence_number_used_by_another_signer_stops_the_bot(tmp_path: Path) -> None:
    # Another signer (a second bot, a wallet app) takes sequence number 1 with the same
    # key: a transaction the journal does not know. The bot says so and signs nothing more.
    with served(tmp_path) as url:
        signer = make_signer(url, InMemoryRecorder())
        q = await quote(url)
        assert (await signer.execute(q["txData"], intent_for(q))).success
        async with httpx.AsyncClient(base_url=url, timeout=10) as client:
            data = await build_signed(client, KEY, q["txData"], sequence_number=1)
            answer = await client.post("/v1/transactions", content=data, headers=BCS)
            assert answer.status_code == 202
        q2 = await quote(url)
        with pytest.raises(ForeignSigner) as info:
            await signer.execute(q2["txData"], intent_for(q2))
        assert (info.value.sequence_number, info.value.foreign_hash) == (1, answer.json()["hash"])
        with pytest.raises(WalletPaused):
            await signer.execute(q2["txData"], intent_for(q2))
        seq, _ = await chain_state(url)
    assert seq == 2  # nothing of ours after the foreign transaction


async def test_a_lost_answer_is_resolved_by_hash_without_a_second_transaction(
    tmp_path: Path,
) -> None:
    with served(tmp_path, node="drop_first_answers = 1\n") as url:
        recorder = InMemoryRecorder()
        q = await quote(url)
        outcome = await make_signer(url, recorder).execute(q["txData"], intent_for(q))
        seq, _ = await chain_state(url)
    assert outcome.success and not outcome.resigned
    assert seq == 1  # exactly one transaction ran
    assert len(recorder.submitted) == 1


async def test_a_lost_transaction_is_waited_out_and_resigned_once(tmp_path: Path) -> None:
    with served(tmp_path, node="lose_first = 1\n") as url:
        recorder = InMemoryRecorder()
        q = await quote(url)
        outcome = await make_signer(url, recorder).execute(q["txData"], intent_for(q))
        seq, _ = await chain_state(url)
    assert outcome.success and outcome.resigned
    assert [p.status for p in outcome.previous] == ["expired"]
    assert seq == 1 and len(recorder.submitted) == 2


async def test_two_in_flight_with_the_first_lost(tmp_path: Path) -> None:
    with served(tmp_path, node="lose_first = 1\n") as url:
        signer = make_signer(url, InMemoryRecorder())
        q1, q2 = await quote(url), await quote(url, "2")
        first, second = await asyncio.gather(
            signer.execute(q1["txData"], intent_for(q1)),
            signer.execute(q2["txData"], intent_for(q2, Decimal(2))),
        )
        seq, _ = await chain_state(url)
    assert first.success and second.success
    assert seq == 2  # both ran exactly once in the end
