"""The paper node: real signatures, real BCS, swaps and on-chain-style orders end to end."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest

from bot.clock import SteppedClock
from bot.config import PaperFunding, PaperNodeSettings, PaperSettings
from bot.paper.world import PaperWorld, build_world
from harness.paper_signing import BCS, address_of, build_signed, fixed_key

KEY = fixed_key("paper-node-tests")
WALLET = address_of(KEY)
OTHER = fixed_key("someone-else")
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
H = {"x-api-key": "k"}


def make_world(**overrides: Any) -> PaperWorld:
    settings = PaperSettings(
        clock="stepped",
        start="2026-03-01T00:00:00Z",
        api_keys=["k"],
        funding=[
            PaperFunding(wallet=WALLET, token="APT", amount=Decimal(10)),
            PaperFunding(wallet=WALLET, token="USDC", amount=Decimal(1000)),
            PaperFunding(wallet=address_of(OTHER), token="APT", amount=Decimal(1)),
        ],
        **overrides,
    )
    return build_world(settings)


@pytest.fixture
async def world_client() -> AsyncIterator[tuple[PaperWorld, httpx.AsyncClient]]:
    world = make_world()
    transport = httpx.ASGITransport(app=world.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://paper") as client:
        yield world, client


def total(world: PaperWorld, token: str) -> int:
    return world.market.ledger.total(token)


async def swap_tx(client: httpx.AsyncClient, amount: str = "1", **params: str) -> dict[str, Any]:
    response = await client.post(
        "/swap",
        headers=H,
        params={
            "fromTokenAddress": APT,
            "toTokenAddress": USDC,
            "fromTokenAmount": amount,
            "toWalletAddress": WALLET,
            "slippagePercentage": "1",
            **params,
        },
    )
    assert response.status_code == 200, response.text
    tx: dict[str, Any] = response.json()["quotes"][0]["txData"]
    return tx


async def test_ledger_info_and_accounts(world_client: tuple[PaperWorld, httpx.AsyncClient]) -> None:
    world, client = world_client
    info = (await client.get("/v1")).json()
    assert info["chain_id"] == 4
    assert int(info["ledger_timestamp"]) == int(world.market.now.timestamp()) * 1_000_000
    account = (await client.get(f"/v1/accounts/{WALLET}")).json()
    assert account["sequence_number"] == "0"
    missing = await client.get("/v1/accounts/0x" + "12" * 32)
    assert missing.status_code == 404 and missing.json()["error_code"] == "account_not_found"
    assert (await client.get(f"/v1/accounts/{WALLET}/balance/{APT}")).json() == 10 * 10**8
    view = await client.post(
        "/v1/view",
        json={
            "function": "0x1::primary_fungible_store::balance",
            "type_arguments": ["0x1::fungible_asset::Metadata"],
            "arguments": [WALLET, "0xa"],
        },
    )
    assert view.json() == [str(10 * 10**8)]
    assert (await client.get("/v1/estimate_gas_price")).json()["gas_estimate"] == 100


async def test_a_signed_router_swap_commits_and_moves_balances(
    world_client: tuple[PaperWorld, httpx.AsyncClient],
) -> None:
    world, client = world_client
    usdc_before = (await client.get(f"/v1/accounts/{WALLET}/balance/{USDC}")).json()
    apt_supply = total(world, APT)
    tx = await swap_tx(client, "2")
    data = await build_signed(client, KEY, tx)
    submitted = await client.post("/v1/transactions", content=data, headers=BCS)
    assert submitted.status_code == 202
    tx_hash = submitted.json()["hash"]
    committed = (await client.get(f"/v1/transactions/by_hash/{tx_hash}")).json()
    assert committed["type"] == "user_transaction" and committed["success"] is True
    assert committed["vm_status"] == "Executed successfully"
    [swap] = [e for e in committed["events"] if e["type"].endswith("::SwapEvent")]
    assert swap["data"]["amount_in"] == str(2 * 10**8)
    assert swap["data"]["recipient"] == WALLET
    usdc_after = (await client.get(f"/v1/accounts/{WALLET}/balance/{USDC}")).json()
    assert usdc_after - usdc_before == int(swap["data"]["amount_out"]) > 0
    gas = int(committed["gas_used"]) * 100
    apt_after = (await client.get(f"/v1/accounts/{WALLET}/balance/{APT}")).json()
    assert apt_after == 10 * 10**8 - 2 * 10**8 - gas
    assert total(world, APT) == apt_supply  # conserved: gas moved to the gas account
    world.market.ledger.check_conservation()
    assert (await client.get(f"/v1/accounts/{WALLET}")).json()["sequence_number"] == "1"


async def test_simulation_refuses_a_valid_signature_and_changes_nothing(
    world_client: tuple[PaperWorld, httpx.AsyncClient],
) -> None:
    world, client = world_client
    tx = await swap_tx(client)
    signed = await build_signed(client, KEY, tx)
    refused = await client.post("/v1/transactions/simulate", content=signed, headers=BCS)
    assert refused.status_code == 400
    assert "must not have a valid signature" in refused.json()["message"]
    before = world.market.ledger.dump()
    zero = await build_signed(client, KEY, tx, simulate=True)
    [result] = (await client.post("/v1/transactions/simulate", content=zero, headers=BCS)).json()
    assert result["success"] is True and int(result["gas_used"]) > 0
    changes = {(c["account"], c["asset"]): int(c["delta"]) for c in result["balance_changes"]}
    assert changes[(WALLET, APT)] == -(10**8)
    assert changes[(WALLET, USDC)] > 0
    assert world.market.ledger.dump() == before  # nothing happened
    assert (await client.get(f"/v1/accounts/{WALLET}")).json()["sequence_number"] == "0"


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("bad_signature", "vm_error"),
        ("wrong_chain", "vm_error"),
        ("expired", "vm_error"),
        ("too_old", "sequence_number_too_old"),
        ("garbage", "invalid_input"),
    ],
)
async def test_bad_transactions_are_rejected_with_the_node_error(
    world_client: tuple[PaperWorld, httpx.AsyncClient], case: str, code: str
) -> None:
    world, client = world_client
    tx = await swap_tx(client)
    if case == "too_old":
        first = await build_signed(client, KEY, tx)
        assert (
            await client.post("/v1/transactions", content=first, headers=BCS)
        ).status_code == 202
        data = await build_signed(client, KEY, tx, sequence_number=0, max_gas=20_001)
    elif case == "bad_signature":
        data = bytearray(await build_signed(client, KEY, tx))
        data[-1] ^= 0xFF
    elif case == "wrong_chain":
        data = await build_signed(client, KEY, tx, chain_id=1)
    elif case == "expired":
        data = await build_signed(client, KEY, tx, expires_in=-1)
    else:
        data = b"\x01\x02\x03"
    response = await client.post("/v1/transactions", content=bytes(data), headers=BCS)
    assert response.status_code == 400, response.text
    body = response.json()
    assert set(body) == {"message", "error_code", "vm_error_code"}
    assert body["error_code"] == code
    if case == "too_old":
        assert world.chain.sequence_number(WALLET) == 1


async def test_the_vm_error_form_of_a_too_old_sequence_number() -> None:
    world = make_world(node=PaperNodeSettings(vm_error_sequence=True))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=world.app), base_url="http://paper"
    ) as client:
        tx = await swap_tx(client)
        first = await build_signed(client, KEY, tx)
        await client.post("/v1/transactions", content=first, headers=BCS)
        again = await build_signed(client, KEY, tx, sequence_number=0, max_gas=20_001)
        body = (await client.post("/v1/transactions", content=again, headers=BCS)).json()
    assert (body["error_code"], body["vm_error_code"]) == ("vm_error", 3)


async def test_a_swap_under_its_minimum_aborts_but_pays_gas(
    world_client: tuple[PaperWorld, httpx.AsyncClient],
) -> None:
    world, client = world_client
    tx = await swap_tx(client)
    tx["arguments"][17] = str(10**18)  # demand an impossible minimum
    data = await build_signed(client, KEY, tx)
    tx_hash = (await client.post("/v1/transactions", content=data, headers=BCS)).json()["hash"]
    result = (await client.get(f"/v1/transactions/by_hash/{tx_hash}")).json()
    assert result["success"] is False
    assert "E_OUTPUT_LESS_THAN_MINIMUM" in result["vm_status"]
    usdc = (await client.get(f"/v1/accounts/{WALLET}/balance/{USDC}")).json()
    assert usdc == 1000 * 10**6  # nothing swapped
    apt = (await client.get(f"/v1/accounts/{WALLET}/balance/{APT}")).json()
    assert apt == 10 * 10**8 - int(result["gas_used"]) * 100
    world.market.ledger.check_conservation()


async def test_on_chain_dca_order_deposit_slices_and_fills(
    world_client: tuple[PaperWorld, httpx.AsyncClient],
) -> None:
    world, client = world_client
    created = (
        await client.post(
            "/dca/v1/createOrder",
            headers=H,
            json={
                "chainId": "1",
                "toWalletAddress": WALLET,
                "fromTokenAddress": USDC,
                "toTokenAddress": APT,
                "fromTokenAmount": {"value": "30", "type": "total"},
                "interval": {"value": "1", "timePeriod": "hour"},
                "numberOfOrders": 3,
            },
        )
    ).json()
    order_id, tx = created["panoraTxId"], created["txData"]
    assert tx["function"].endswith("::paper_dca::deposit")
    listing = {
        "chainId": 1,
        "toWalletAddress": WALLET,
        "status": "active",
        "limit": 10,
        "pageNumber": 1,
    }
    assert (await client.post("/dca/v1/getOrders", headers=H, json=listing)).json()["orders"] == []
    data = await build_signed(client, KEY, tx)
    tx_hash = (await client.post("/v1/transactions", content=data, headers=BCS)).json()["hash"]
    assert (await client.get(f"/v1/transactions/by_hash/{tx_hash}")).json()["success"] is True
    [order] = (await client.post("/dca/v1/getOrders", headers=H, json=listing)).json()["orders"]
    assert order["panoraTxId"] == order_id and order["status"] == "active"
    world.market.clock.advance(timedelta(hours=3))
    listing["status"] = "completed"
    [done] = (await client.post("/dca/v1/getOrders", headers=H, json=listing)).json()["orders"]
    assert done["status"] == "filled" and done["numberOfOrdersCompleted"] == 3
    assert done["fromTokenAmountSpent"] == "30"
    world.market.ledger.check_conservation()


async def test_on_chain_cancel_returns_a_withdraw_the_owner_signs(
    world_client: tuple[PaperWorld, httpx.AsyncClient],
) -> None:
    world, client = world_client
    created = (
        await client.post(
            "/limit/v1/createOrder",
            headers=H,
            json={
                "fromTokenAddress": APT,
                "fromWalletAddress": APT,
                "toTokenAddress": USDC,
                "toWalletAddress": WALLET,
                "fromTokenAmount": "1",
                "rateToTokenPerFromToken": "100",
            },
        )
    ).json()
    deposit = await build_signed(client, KEY, created["txData"])
    await client.post("/v1/transactions", content=deposit, headers=BCS)
    cancel = (
        await client.post(
            "/limit/v1/cancelOrder",
            headers=H,
            json={"panoraTxId": created["panoraTxId"], "toWalletAddress": WALLET},
        )
    ).json()
    assert cancel["txData"]["function"].endswith("::paper_limit::withdraw")
    apt_before = (await client.get(f"/v1/accounts/{WALLET}/balance/{APT}")).json()
    withdraw = await build_signed(client, KEY, cancel["txData"])
    tx_hash = (await client.post("/v1/transactions", content=withdraw, headers=BCS)).json()["hash"]
    result = (await client.get(f"/v1/transactions/by_hash/{tx_hash}")).json()
    assert result["success"] is True
    apt_after = (await client.get(f"/v1/accounts/{WALLET}/balance/{APT}")).json()
    assert apt_after == apt_before + 10**8 - int(result["gas_used"]) * 100
    order = world.market.limit.get(created["panoraTxId"])
    assert order.status == "cancelled"
    world.market.ledger.check_conservation()


async def test_an_order_whose_deposit_never_lands_is_dropped_and_never_listed(
    world_client: tuple[PaperWorld, httpx.AsyncClient],
) -> None:
    world, client = world_client
    created = (
        await client.post(
            "/limit/v1/createOrder",
            headers=H,
            json={
                "fromTokenAddress": APT,
                "fromWalletAddress": APT,
                "toTokenAddress": USDC,
                "toWalletAddress": WALLET,
                "fromTokenAmount": "1",
                "rateToTokenPerFromToken": "100",
            },
        )
    ).json()
    world.market.clock.advance(timedelta(minutes=11))
    listing = {"toWalletAddress": WALLET, "limit": 10, "pageNumber": 1}
    assert (await client.post("/limit/v1/getOrders", headers=H, json=listing)).json()[
        "orders"
    ] == []
    late = await build_signed(client, KEY, created["txData"])
    tx_hash = (await client.post("/v1/transactions", content=late, headers=BCS)).json()["hash"]
    result = (await client.get(f"/v1/transactions/by_hash/{tx_hash}")).json()
    assert result["success"] is False and "E_ORDER_NOT_FOUND" in result["vm_status"]


async def test_mempool_full_and_lost_transactions() -> None:
    full = make_world(node=PaperNodeSettings(mempool_full=1.0))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=full.app), base_url="http://paper"
    ) as client:
        data = await build_signed(client, KEY, await swap_tx(client))
        response = await client.post("/v1/transactions", content=data, headers=BCS)
        assert response.status_code == 507 and response.json()["error_code"] == "mempool_is_full"
    lost = make_world(node=PaperNodeSettings(lost=1.0))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=lost.app), base_url="http://paper"
    ) as client:
        data = await build_signed(client, KEY, await swap_tx(client))
        accepted = await client.post("/v1/transactions", content=data, headers=BCS)
        assert accepted.status_code == 202
        gone = await client.get(f"/v1/transactions/by_hash/{accepted.json()['hash']}")
        assert gone.status_code == 404 and gone.json()["error_code"] == "transaction_not_found"
        assert lost.chain.sequence_number(WALLET) == 0  # never executed


async def test_a_gap_waits_for_the_missing_sequence_number(
    world_client: tuple[PaperWorld, httpx.AsyncClient],
) -> None:
    world, client = world_client
    tx = await swap_tx(client)
    second = await build_signed(client, KEY, tx, sequence_number=1)
    tx_hash = (await client.post("/v1/transactions", content=second, headers=BCS)).json()["hash"]
    assert (await client.get(f"/v1/transactions/by_hash/{tx_hash}")).json()["type"] == (
        "pending_transaction"
    )
    first = await build_signed(client, KEY, tx, sequence_number=0)
    await client.post("/v1/transactions", content=first, headers=BCS)
    assert (await client.get(f"/v1/transactions/by_hash/{tx_hash}")).json()["success"] is True
    assert world.chain.sequence_number(WALLET) == 2


async def test_a_swap_over_loopback_through_bot_paper_serve(tmp_path: Any) -> None:
    from tests.support.paper_server import PAPER_KEY, paper_serve, write_config

    config = write_config(
        tmp_path / "bot.toml",
        extra=('funding = [{ wallet = "' + WALLET + '", token = "APT", amount = "5" }]\n'),
    )
    with paper_serve(config) as (url, _process):
        async with httpx.AsyncClient(base_url=url, timeout=10) as client:
            response = await client.post(
                "/swap",
                headers={"x-api-key": PAPER_KEY},
                params={
                    "fromTokenAddress": APT,
                    "toTokenAddress": USDC,
                    "fromTokenAmount": "1",
                    "toWalletAddress": WALLET,
                },
            )
            tx = response.json()["quotes"][0]["txData"]
            data = await build_signed(client, KEY, tx)
            submitted = await client.post("/v1/transactions", content=data, headers=BCS)
            assert submitted.status_code == 202
            result = (
                await client.get(f"/v1/transactions/by_hash/{submitted.json()['hash']}")
            ).json()
            assert result["success"] is True
            usdc = (await client.get(f"/v1/accounts/{WALLET}/balance/{USDC}")).json()
            assert usdc > 4 * 10**6  # ≈ 5 USDC for 1 APT, less fees


async def test_a_snapshot_keeps_the_chain(tmp_path: Any) -> None:
    world = make_world(snapshot_file=tmp_path / "world.pickle")
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=world.app), base_url="http://paper"
    ) as client:
        data = await build_signed(client, KEY, await swap_tx(client))
        tx_hash = (await client.post("/v1/transactions", content=data, headers=BCS)).json()["hash"]
    world.save()
    restored = build_world(world.settings)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=restored.app), base_url="http://paper"
    ) as client:
        assert (await client.get(f"/v1/accounts/{WALLET}")).json()["sequence_number"] == "1"
        found = (await client.get(f"/v1/transactions/by_hash/{tx_hash}")).json()
        assert found["success"] is True
    assert restored.market.ledger.dump() == world.market.ledger.dump()


async def test_a_different_transaction_for_a_pending_sequence_number_is_refused() -> None:
    # A restarted process that read the committed sequence number signs with the number of
    # a transaction its predecessor left pending: a real mempool refuses it, so does ours.
    world = make_world(node=PaperNodeSettings(commit_delay_seconds=30))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=world.app), base_url="http://paper"
    ) as client:
        tx = await swap_tx(client)
        first = await build_signed(client, KEY, tx)
        assert (
            await client.post("/v1/transactions", content=first, headers=BCS)
        ).status_code == 202
        other = await build_signed(client, KEY, tx, sequence_number=0, max_gas=20_001)
        refused = await client.post("/v1/transactions", content=other, headers=BCS)
        assert refused.status_code == 400
        assert refused.json()["error_code"] == "invalid_transaction_update"
        # The same bytes again are the same transaction: accepted, even once committed.
        again = await client.post("/v1/transactions", content=first, headers=BCS)
        assert again.status_code == 202
        assert isinstance(world.market.clock, SteppedClock)
        world.market.clock.advance(timedelta(seconds=31))
        world.market.sync()
        committed = await client.post("/v1/transactions", content=first, headers=BCS)
        assert committed.status_code == 202
    assert [t.sequence_number for t in world.chain.transactions()] == [0]
