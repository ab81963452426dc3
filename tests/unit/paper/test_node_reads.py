"""The paper node's reads behave like a real node's: account listings, lies it can be told to tell.

`GET /v1/accounts/{a}/transactions?start=&limit=` in the real JSON shape; another signer's
transaction (`commit_foreign`); the seeded read faults of `[paper.node]` — `by_hash_404`
(a held transaction answered 404) and `stale_account` (an account read from an older
ledger state, its headers saying so) — off by default.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest

from bot.config import PaperFunding, PaperNodeSettings, PaperSettings
from bot.paper.faults import NodeReadFault
from bot.paper.world import PaperWorld, build_world
from harness.paper_signing import BCS, address_of, build_signed, fixed_key

KEY = fixed_key("paper-node-reads")
WALLET = address_of(KEY)
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"


def make_world(**node: Any) -> PaperWorld:
    return build_world(
        PaperSettings(
            clock="stepped",
            start="2026-03-01T00:00:00Z",
            api_keys=["k"],
            funding=[
                PaperFunding(wallet=WALLET, token="APT", amount=Decimal(10)),
                PaperFunding(wallet=WALLET, token="USDC", amount=Decimal(1000)),
            ],
            node=PaperNodeSettings(**node),
        )
    )


@pytest.fixture
async def client() -> AsyncIterator[tuple[PaperWorld, httpx.AsyncClient]]:
    world = make_world()
    transport = httpx.ASGITransport(app=world.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://paper") as http:
        yield world, http


async def swap(http: httpx.AsyncClient) -> str:
    quote = await http.post(
        "/swap",
        headers={"x-api-key": "k"},
        params={
            "fromTokenAddress": APT,
            "toTokenAddress": USDC,
            "fromTokenAmount": "1",
            "toWalletAddress": WALLET,
        },
    )
    data = await build_signed(http, KEY, quote.json()["quotes"][0]["txData"])
    answer = await http.post("/v1/transactions", content=data, headers=BCS)
    assert answer.status_code == 202
    return str(answer.json()["hash"])


async def test_account_transactions_by_sequence_number(
    client: tuple[PaperWorld, httpx.AsyncClient],
) -> None:
    world, http = client
    first = await swap(http)
    world.market.clock.advance(timedelta(seconds=5))
    foreign = world.chain.commit_foreign(WALLET)
    listing = (await http.get(f"/v1/accounts/{WALLET}/transactions", params={"start": "0"})).json()
    assert [(t["hash"], t["sequence_number"]) for t in listing] == [
        (first, "0"),
        (foreign.hash, "1"),
    ]
    ours = listing[0]
    assert ours["type"] == "user_transaction" and ours["success"] is True
    assert ours["sender"] == WALLET and ours["vm_status"] == "Executed successfully"
    assert ours["version"].isdigit() and ours["timestamp"].isdigit()
    one = await http.get(f"/v1/accounts/{WALLET}/transactions?start=1&limit=1")
    assert [t["hash"] for t in one.json()] == [foreign.hash]
    assert (await http.get(f"/v1/accounts/{WALLET}/transactions?start=2")).json() == []
    latest = (await http.get(f"/v1/accounts/{WALLET}/transactions?limit=1")).json()
    assert [t["hash"] for t in latest] == [foreign.hash]
    by_hash = (await http.get(f"/v1/transactions/by_hash/{foreign.hash}")).json()
    assert by_hash["sequence_number"] == "1" and by_hash["gas_used"] == "0"
    account = (await http.get(f"/v1/accounts/{WALLET}")).json()
    assert account["sequence_number"] == "2"
    bad = await http.get(f"/v1/accounts/{WALLET}/transactions?start=-1")
    assert bad.status_code == 400 and bad.json()["error_code"] == "invalid_input"


async def test_a_foreign_transaction_takes_a_pending_number() -> None:
    world = make_world(foreign_first=1)
    transport = httpx.ASGITransport(app=world.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://paper") as http:
        before = world.market.ledger.balances(WALLET)
        ours = await swap(http)
        gone = await http.get(f"/v1/transactions/by_hash/{ours}")
        assert gone.status_code == 404  # dropped: its number was used
        [foreign] = world.chain.foreign.values()
        assert foreign.sequence_number == 0
        assert world.market.ledger.balances(WALLET) == before  # nothing ran, no gas


async def test_read_faults_are_off_by_default_and_seeded() -> None:
    assert make_world().node_api.read_faults.by_hash_404 == 0
    world = make_world(by_hash_404=1.0, stale_account=1.0, stale_seconds=60)
    transport = httpx.ASGITransport(app=world.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://paper") as http:
        start_us = world.chain.ledger_timestamp_us
        tx = await swap(http)
        world.market.clock.advance(timedelta(seconds=30))
        hidden = await http.get(f"/v1/transactions/by_hash/{tx}")
        assert hidden.status_code == 404 and world.chain.transaction(tx) is not None
        stale = await http.get(f"/v1/accounts/{WALLET}")
        assert stale.json()["sequence_number"] == "0"  # as of 60 s ago: before the swap
        assert int(stale.headers["x-aptos-ledger-timestampusec"]) == start_us - 30_000_000
        assert stale.headers["x-aptos-ledger-version"] == "0"
        listing = await http.get(f"/v1/accounts/{WALLET}/transactions?start=0")
        assert listing.json() == []
        world.market.clock.advance(timedelta(seconds=31))
        fresh_enough = await http.get(f"/v1/accounts/{WALLET}")
        assert fresh_enough.json()["sequence_number"] == "1"
        counts = world.node_api.read_faults.counts
        # The signing helper's own account read was stale too (seq 0 then, as now).
        assert counts[NodeReadFault.BY_HASH_404] == 1 and counts[NodeReadFault.STALE_ACCOUNT] == 4
