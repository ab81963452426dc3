"""Seeded faults, the per-key rate limit and world snapshots of the paper world.

Timeouts and dropped connections need a real server and are tested over loopback
elsewhere; here the faults that an in-process transport can show.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.config import PaperFaultSettings
from bot.paper.faces.provider_api import ProviderApi
from bot.paper.faults import Fault, FaultPlan
from bot.paper.world import PaperWorld, SnapshotError, build_world
from tests.support.paper_service import CREATE, client_for, dca_body, paper_settings

KEY = "k"
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
WALLET = "0x" + "ab" * 32


async def listed(client: httpx.AsyncClient, kind: str = "dca") -> list[dict[str, Any]]:
    orders: list[dict[str, Any]] = []
    for status in ("active", "completed"):
        body = {
            "chainId": 1,
            "toWalletAddress": WALLET,
            "status": status,
            "limit": 1000,
            "pageNumber": 1,
            "txDetails": True,
        }
        response = await client.post(f"/{kind}/v1/getOrders", json=body)
        assert response.status_code == 200, response.text
        orders += response.json()["orders"]
    return orders


# --- FaultPlan ---------------------------------------------------------------------------

PROBABILITIES = {
    Fault.RATE_LIMITED: Decimal("0.10"),
    Fault.SERVER_ERROR: Decimal("0.05"),
    Fault.TIMEOUT: Decimal("0.03"),
    Fault.DROP_AFTER_APPLY: Decimal("0.02"),
    Fault.MALFORMED_BODY: Decimal("0.08"),
}


def fault_settings(seed: int = 7, **overrides: Any) -> PaperFaultSettings:
    values: dict[str, Any] = {fault.value: p for fault, p in PROBABILITIES.items()}
    values.update(overrides)
    return PaperFaultSettings(seed=seed, **values)


@pytest.mark.parametrize("seed", [1, 7, 12345])
def test_fault_frequencies_follow_the_probabilities(seed: int) -> None:
    plan = FaultPlan(fault_settings(seed))
    draws = 2_000
    counts = Counter(plan.draw("/swap") for _ in range(draws))
    expected: dict[Fault, Decimal] = dict(PROBABILITIES)
    expected[Fault.NONE] = 1 - sum(PROBABILITIES.values(), Decimal(0))
    for fault, probability in expected.items():
        mean = probability * draws
        # A loose band: ±5 standard deviations of a binomial count, and at least ±10.
        band = max(Decimal(10), 5 * (mean * (1 - probability)).sqrt())
        assert abs(counts[fault] - mean) <= band, (fault, counts[fault], mean)
    assert plan.counts == {fault: counts[fault] for fault in Fault}


def test_faults_are_deterministic_per_seed() -> None:
    def sequence(seed: int) -> list[Fault]:
        plan = FaultPlan(fault_settings(seed))
        return [plan.draw("/prices") for _ in range(500)]

    assert sequence(3) == sequence(3)
    assert sequence(3) != sequence(4)


def test_faults_only_on_the_listed_endpoints() -> None:
    only_500: dict[str, Any] = {"server_error": Decimal(1), "rate_limited": 0, "timeout": 0}
    only_500 |= {"drop_after_apply": 0, "malformed_body": 0}
    plan = FaultPlan(fault_settings(endpoints=["/swap"], **only_500))
    assert {plan.draw("/prices") for _ in range(200)} == {Fault.NONE}
    assert {plan.draw("/swap/quote") for _ in range(200)} == {Fault.NONE}
    assert {plan.draw("/swap") for _ in range(200)} == {Fault.SERVER_ERROR}


def test_no_faults_by_default() -> None:
    plan = FaultPlan(PaperFaultSettings())
    assert {plan.draw(CREATE) for _ in range(1_000)} == {Fault.NONE}
    assert plan.latency_seconds == 0


def test_only_refusals_count_as_not_applied() -> None:
    assert {f for f in Fault if f.before_apply} == {Fault.RATE_LIMITED, Fault.SERVER_ERROR}


# --- faults over the in-process face -----------------------------------------------------


def world_with_fault(**faults: Any) -> PaperWorld:
    settings = paper_settings(faults=PaperFaultSettings(endpoints=[CREATE], **faults))
    world = build_world(settings, escrow_style="escrow")
    world.market.fund(WALLET, world.market.tokens.require(APT), 100 * 10**8)
    return world


async def test_server_error_fault_is_500_and_the_order_is_not_created() -> None:
    world = world_with_fault(server_error=Decimal(1))
    before = world.market.ledger.dump()
    async with client_for(world.provider_api) as client:
        response = await client.post(CREATE, json=dca_body())
        assert response.status_code == 500
        assert response.json() == {
            "statusCode": 500,
            "message": "internal server error",
            "status": "fail",
        }
        assert await listed(client) == []  # getOrders is not in `endpoints`: no fault
    assert world.market.ledger.dump() == before
    [logged] = world.provider_api.calls("POST", CREATE)
    assert (logged.status, logged.fault, logged.applied) == (500, "server_error", False)


async def test_rate_limited_fault_is_429_with_retry_after_and_not_applied() -> None:
    world = world_with_fault(rate_limited=Decimal(1))
    before = world.market.ledger.dump()
    async with client_for(world.provider_api) as client:
        response = await client.post(CREATE, json=dca_body())
        assert response.status_code == 429
        assert int(response.headers["retry-after"]) >= 1
        assert response.json()["statusCode"] == 429
        assert response.json()["status"] == "fail"
        assert await listed(client) == []
    assert world.market.ledger.dump() == before
    [logged] = world.provider_api.calls("POST", CREATE)
    assert (logged.fault, logged.applied) == ("rate_limited", False)


async def test_malformed_body_fault_answers_200_garbage_but_the_order_exists() -> None:
    world = world_with_fault(malformed_body=Decimal(1))
    apt = world.market.tokens.require(APT)
    async with client_for(world.provider_api) as client:
        response = await client.post(CREATE, json=dca_body("10"))
        assert response.status_code == 200
        with pytest.raises(json.JSONDecodeError):
            json.loads(response.content)
        [order] = await listed(client)
    assert Decimal(order["fromTokenAmountTotal"]) == 10
    assert world.market.balance(WALLET, apt) == 90 * 10**8  # escrowed: it was applied
    [logged] = world.provider_api.calls("POST", CREATE)
    assert (logged.status, logged.fault, logged.applied) == (200, "malformed_body", True)


async def test_admin_endpoints_never_get_faults() -> None:
    settings = paper_settings(faults=PaperFaultSettings(server_error=Decimal(1)))
    world = build_world(settings, escrow_style="escrow")
    async with client_for(world.provider_api) as client:
        fund = await client.post(
            "/paper/v1/fund", json={"wallet": WALLET, "token": "APT", "amount": "1"}
        )
        assert fund.status_code == 200
        quote = await client.get(
            "/swap/quote",
            params={"fromTokenAddress": APT, "toTokenAddress": USDC, "fromTokenAmount": "1"},
        )
        assert quote.status_code == 500


# --- the per-key rate limit --------------------------------------------------------------


class FakeMonotonic:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def limited_api(rate: float, burst: int) -> tuple[ProviderApi, FakeMonotonic]:
    settings = paper_settings(
        api_keys=[KEY, "other"], rate_limit_per_second=rate, rate_limit_burst=burst
    )
    world = build_world(settings, escrow_style="escrow")
    clock = FakeMonotonic()
    return ProviderApi(world.service, settings, sync=world.market.sync, monotonic=clock), clock


@pytest.fixture
def limited() -> tuple[ProviderApi, FakeMonotonic]:
    return limited_api(rate=1, burst=2)


async def test_burst_then_429_with_whole_second_retry_after(
    limited: tuple[ProviderApi, FakeMonotonic],
) -> None:
    api, clock = limited
    async with client_for(api) as client, client_for(api, key="other") as other:
        statuses = [(await client.get("/paper/v1/status")).status_code for _ in range(2)]
        assert statuses == [200, 200]
        refused = await client.get("/paper/v1/status")
        assert refused.status_code == 429
        retry_after = refused.headers["retry-after"]
        assert retry_after.isdigit() and int(retry_after) >= 1
        assert refused.json() == {
            "statusCode": 429,
            "message": "rate limit exceeded",
            "status": "fail",
        }
        # Each key has its own bucket.
        assert (await other.get("/paper/v1/status")).status_code == 200
        # Waiting as told refills the bucket.
        clock.now += int(retry_after)
        assert (await client.get("/paper/v1/status")).status_code == 200
        assert (await client.get("/paper/v1/status")).status_code == 429


async def test_retry_after_reflects_the_rate() -> None:
    api, clock = limited_api(rate=0.25, burst=1)
    async with client_for(api) as client:
        assert (await client.get("/paper/v1/status")).status_code == 200
        refused = await client.get("/paper/v1/status")
        assert refused.status_code == 429
        assert refused.headers["retry-after"] == "4"
        clock.now += 3
        assert (await client.get("/paper/v1/status")).headers["retry-after"] == "1"


async def test_unauthorised_requests_do_not_use_up_the_bucket(
    limited: tuple[ProviderApi, FakeMonotonic],
) -> None:
    api, _ = limited
    async with client_for(api, key="intruder") as intruder, client_for(api) as client:
        for _ in range(5):
            assert (await intruder.get("/paper/v1/status")).status_code == 401
        assert (await client.get("/paper/v1/status")).status_code == 200


# --- snapshots ---------------------------------------------------------------------------


async def build_history(world: PaperWorld) -> None:
    """Funds, a DCA half-way through, a live limit order and a cancelled one."""
    async with client_for(world.provider_api) as client:
        for token, amount in (("APT", "100"), ("USDC", "500")):
            body = {"wallet": WALLET, "token": token, "amount": amount}
            assert (await client.post("/paper/v1/fund", json=body)).status_code == 200
        assert (await client.post(CREATE, json=dca_body())).status_code == 200
        ids = []
        for rate in ("1000", "2000"):
            limit = {
                "fromTokenAddress": APT,
                "fromWalletAddress": APT,
                "toTokenAddress": USDC,
                "toWalletAddress": WALLET,
                "fromTokenAmount": "3",
                "rateToTokenPerFromToken": rate,
                "expiry": {"value": "1", "timePeriod": "week"},
            }
            response = await client.post("/limit/v1/createOrder", json=limit)
            assert response.status_code == 200
            ids.append(response.json()["panoraTxId"])
        cancel = {"panoraTxId": ids[1], "toWalletAddress": WALLET}
        assert (await client.post("/limit/v1/cancelOrder", json=cancel)).status_code == 200
        advance = await client.post("/paper/v1/advance", json={"seconds": 90 * 60})
        assert advance.status_code == 200


async def state_of(world: PaperWorld) -> dict[str, Any]:
    async with client_for(world.provider_api) as client:
        status = await client.get("/paper/v1/status", params={"wallet": WALLET})
        assert status.status_code == 200
        return {
            "status": status.json(),
            "dca": await listed(client, "dca"),
            "limit": await listed(client, "limit"),
            "ledger": world.market.ledger.dump(),
            "now": world.market.now,
        }


async def advance(world: PaperWorld, seconds: int) -> None:
    async with client_for(world.provider_api) as client:
        response = await client.post("/paper/v1/advance", json={"seconds": seconds})
        assert response.status_code == 200, response.text


async def test_snapshot_restores_balances_orders_and_time_and_continues(tmp_path: Path) -> None:
    settings = paper_settings(snapshot_file=tmp_path / "world.snapshot")
    world = build_world(settings, escrow_style="escrow")
    await build_history(world)
    saved = await state_of(world)
    assert saved["now"] == world.market.clock.now() == world.market.now
    assert world.save() == tmp_path / "world.snapshot"
    assert [p.name for p in tmp_path.iterdir()] == ["world.snapshot"]  # no temporary left

    restored = build_world(settings, escrow_style="escrow")
    assert restored.market is not world.market
    assert await state_of(restored) == saved
    # The stepped clock resumes at the saved market time, not at `start` (it used to
    # restart at `start`, which stalled the restored market until the clock caught up).
    assert restored.market.clock.now() == saved["now"]

    # Both worlds go on identically: slices, fills and ids continue where they were.
    for each in (world, restored):
        await advance(each, 3 * 3600)
    after, restored_after = await state_of(world), await state_of(restored)
    assert restored_after == after
    assert restored_after["now"] == saved["now"] + timedelta(hours=3)
    [dca] = restored_after["dca"]
    assert dca["status"] == "filled"
    assert dca["numberOfOrdersCompleted"] == 4
    async with client_for(restored.provider_api) as client:
        response = await client.post(CREATE, json=dca_body("1"))
        assert response.status_code == 200
    known = {o["panoraTxId"] for o in saved["dca"] + saved["limit"]}
    assert response.json()["panoraTxId"] not in known


async def test_restored_accelerated_clock_starts_from_the_saved_time(tmp_path: Path) -> None:
    snapshot = tmp_path / "world.snapshot"
    world = build_world(paper_settings(snapshot_file=snapshot), escrow_style="escrow")
    await advance(world, 5 * 86_400)
    saved_now = world.market.now
    world.save()
    accelerated = paper_settings(snapshot_file=snapshot, clock="accelerated", speed=60.0)
    restored = build_world(accelerated, escrow_style="escrow")
    assert restored.market.now == saved_now
    assert saved_now <= restored.market.clock.now() < saved_now + timedelta(hours=1)
    restored.market.sync()
    assert restored.market.now >= saved_now


def test_save_without_a_snapshot_file_is_refused() -> None:
    world = build_world(paper_settings(), escrow_style="escrow")
    with pytest.raises(SnapshotError):
        world.save()


@pytest.mark.parametrize("content", [b"", b"hello, world\n", b"\x80\x05K\x01."])
def test_a_file_that_is_not_a_snapshot_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "world.snapshot"
    path.write_bytes(content)
    with pytest.raises(SnapshotError, match="not a paper-world snapshot"):
        build_world(paper_settings(snapshot_file=path))


def test_a_damaged_snapshot_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "world.snapshot"
    build_world(paper_settings(snapshot_file=path), escrow_style="escrow").save()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(SnapshotError, match="cannot read snapshot"):
        build_world(paper_settings(snapshot_file=path))
