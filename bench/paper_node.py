"""Benchmark of the paper node (issue #5): signed transactions verified and committed per second.

Router swaps are signed beforehand (signing is the bot's cost, not the node's); the
timed part is admission (BCS decode, Ed25519 verify, checks) plus commit (argument
decoding by ABI, the swap, gas), in-process: once through `PaperChain` directly and once
through the node face over `httpx.ASGITransport`. Target: ≥ 300 transactions/s.

Run: `.venv/bin/python bench/paper_node.py` — the summary line is printed last.
"""

from __future__ import annotations

import asyncio
import sys
import time
from decimal import Decimal
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.config import PaperFunding, PaperSettings
from bot.paper.world import PaperWorld, build_world
from harness.paper_signing import BCS, address_of, build_signed, fixed_key

APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
KEYS = [fixed_key(f"bench-{i}") for i in range(10)]


def _world() -> PaperWorld:
    funding = [PaperFunding(wallet=address_of(k), token="APT", amount=Decimal(1000)) for k in KEYS]
    settings = PaperSettings(
        clock="stepped",
        api_keys=["k"],
        funding=funding,
        rate_limit_per_second=1e9,
        rate_limit_burst=10**9,
    )
    return build_world(settings)


async def _signed_swaps(world: PaperWorld, per_key: int) -> list[bytes]:
    transport = httpx.ASGITransport(app=world.app)
    out: list[bytes] = []
    async with httpx.AsyncClient(transport=transport, base_url="http://paper") as client:
        for key in KEYS:
            wallet = address_of(key)
            tx = (
                await client.post(
                    "/swap",
                    headers={"x-api-key": "k"},
                    params={
                        "fromTokenAddress": APT,
                        "toTokenAddress": USDC,
                        "fromTokenAmount": "0.01",
                        "toWalletAddress": wallet,
                        "slippagePercentage": "5",
                    },
                )
            ).json()["quotes"][0]["txData"]
            for seq in range(per_key):
                out.append(await build_signed(client, key, tx, sequence_number=seq))
    return out


def bench_core(per_key: int = 60) -> float:
    world = _world()
    signed = asyncio.run(_signed_swaps(world, per_key))
    start = time.perf_counter()
    for data in signed:
        world.chain.submit(data)
        world.chain.process()
    elapsed = time.perf_counter() - start
    assert world.chain.committed == len(signed), world.chain.committed
    world.market.ledger.check_conservation()
    return len(signed) / elapsed


async def bench_face(per_key: int = 60) -> float:
    world = _world()
    signed = await _signed_swaps(world, per_key)
    transport = httpx.ASGITransport(app=world.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://paper") as client:
        start = time.perf_counter()
        for data in signed:
            response = await client.post("/v1/transactions", content=data, headers=BCS)
            assert response.status_code == 202
        elapsed = time.perf_counter() - start
    assert world.chain.committed == len(signed)
    return len(signed) / elapsed


def main() -> None:
    core = bench_core()
    face = asyncio.run(bench_face())
    print(f"transactions/s verified+committed, core (PaperChain):        {core:,.0f}")
    print(f"transactions/s verified+committed, face (ASGITransport, BCS): {face:,.0f}")
    ok = min(core, face) >= 300
    print(
        f"paper_node: tx_per_s_core={core:.0f} tx_per_s_face={face:.0f} target=300 "
        f"ok={'yes' if ok else 'no'}"
    )


if __name__ == "__main__":
    main()
