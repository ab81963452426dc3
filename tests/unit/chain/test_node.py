from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from bot.aptos.address import Address
from bot.chain.errors import (
    AccountNotFound,
    ChainIdMismatch,
    MalformedNodeResponse,
    MempoolFull,
    NodeError,
    NodeRateLimited,
    NodeUnavailable,
    NotSent,
    SequenceTooOld,
    SubmitOutcomeUnknown,
    TransactionRejected,
)
from bot.chain.node import NodeClient
from bot.domain import ROUTER_MODULE_ADDRESS
from bot.paper.faces.asgi import read_request, send_bytes
from harness.paper_chain import APT, SENDER, ChainRig
from tests.support.loopback import closed_port, serve
from tests.support.virtual_time import VirtualTime

HASH = "0x" + "ab" * 32
ROUTER_ADDRESS = Address.parse(ROUTER_MODULE_ADDRESS)


def scripted(
    *answers: httpx.Response | type[Exception], expected_chain_id: int | None = 4
) -> tuple[NodeClient, list[httpx.Request], VirtualTime]:
    queue = list(answers)
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = queue.pop(0)
        if isinstance(answer, type):
            raise answer("scripted", request=request)  # type: ignore[call-arg]
        return answer

    clock = VirtualTime(0.0)
    client = NodeClient(
        "http://node.test/v1/",
        expected_chain_id=expected_chain_id,
        transport=httpx.MockTransport(handler),
        sleep=clock.sleep,
        monotonic=clock.monotonic,
    )
    return client, seen, clock


def error(
    status: int, code: str, message: str = "m", vm: int | None = None, **headers: str
) -> httpx.Response:
    body = {"message": message, "error_code": code, "vm_error_code": vm}
    return httpx.Response(status, json=body, headers=headers)


# --- through the fake node ---------------------------------------------------------------


async def test_reads_through_the_paper_node(harness: ChainRig) -> None:
    node = harness.node
    info = await node.ledger_info()
    assert info.chain_id == 4 and info.timestamp.tzinfo is not None
    account = await node.account(SENDER)
    assert account.sequence_number == 0 and len(account.authentication_key) == 32
    assert await node.balance(SENDER, APT) == 100 * 10**8
    assert await node.balance(Address.parse("0x5"), APT) == 0
    with pytest.raises(AccountNotFound):
        await node.account(Address.parse("0x" + "42" * 32))


async def test_unknown_hash_is_not_found_not_pending(harness: ChainRig) -> None:
    assert await harness.node.transaction_by_hash(HASH) is None
    lookup = await harness.node.lookup_transaction(HASH)
    now_us = harness.world.chain.ledger_timestamp_us
    assert lookup.status is None and lookup.ledger_timestamp_us == now_us


async def test_abi_cached_per_module(harness: ChainRig) -> None:
    node = harness.node
    first = await node.module_abi(ROUTER_ADDRESS, "panora_swap")
    second = await node.module_abi(ROUTER_ADDRESS, "panora_swap")
    assert first is second and "router_entry" in first.function_names
    assert sum("/module/" in r for r in harness.wire.requests) == 1
    with pytest.raises(NodeError) as info:
        await node.module_abi(ROUTER_ADDRESS, "nope")
    assert info.value.status == 404


async def test_gas_price_cached_briefly(harness: ChainRig) -> None:
    node, time = harness.node, harness.time
    assert await node.estimate_gas_price() == 100
    harness.set_node(gas_unit_price=150)
    await time.sleep(29)
    assert await node.estimate_gas_price() == 100
    await time.sleep(2)
    assert await node.estimate_gas_price() == 150
    assert harness.wire.requests.count("GET /v1/estimate_gas_price") == 2


# --- error mapping -----------------------------------------------------------------------


async def test_submit_errors_map_to_the_tree() -> None:
    client, _, _ = scripted(
        error(507, "mempool_is_full"),
        error(429, "rate", **{"retry-after": "3"}),
        error(400, "sequence_number_too_old"),
        error(400, "vm_error", "Invalid transaction: Type: Validation Code: X", vm=3),
        error(400, "invalid_input", "bad signature"),
        httpx.Response(500, text="boom"),
        httpx.ReadTimeout,
        httpx.RemoteProtocolError,
        httpx.ConnectError,
        httpx.Response(202, json={"hash": HASH}),
    )
    with pytest.raises(MempoolFull):
        await client.submit(b"x", HASH)
    with pytest.raises(NodeRateLimited) as limited:
        await client.submit(b"x", HASH)
    assert limited.value.retry_after == 3
    for _ in range(2):
        with pytest.raises(SequenceTooOld):
            await client.submit(b"x", HASH)
    with pytest.raises(TransactionRejected, match="bad signature"):
        await client.submit(b"x", HASH)
    for _ in range(3):
        with pytest.raises(SubmitOutcomeUnknown) as unknown:
            await client.submit(b"x", HASH)
        assert unknown.value.tx_hash == HASH
    with pytest.raises(NotSent):
        await client.submit(b"x", HASH)
    assert await client.submit(b"x", HASH) == HASH
    await client.aclose()


async def test_submit_sends_bcs_once() -> None:
    client, seen, _ = scripted(httpx.Response(202, json={"hash": HASH}))
    await client.submit(b"\x01\x02", HASH)
    (request,) = seen
    assert request.url == "http://node.test/v1/transactions"
    assert request.headers["content-type"] == "application/x.aptos.signed_transaction+bcs"
    assert request.content == b"\x01\x02"
    await client.aclose()


async def test_reads_retry_then_succeed() -> None:
    client, seen, clock = scripted(
        httpx.ConnectError,
        httpx.Response(503, text="unavailable"),
        httpx.Response(200, json={"gas_estimate": 7}),
    )
    assert await client.estimate_gas_price() == 7
    assert len(seen) == 3 and len(clock.sleeps) == 2
    await client.aclose()


async def test_reads_honour_retry_after_then_give_up() -> None:
    client, _, clock = scripted(
        error(429, "rate", **{"retry-after": "2"}),
        error(429, "rate", **{"retry-after": "2"}),
        error(429, "rate", **{"retry-after": "2"}),
    )
    with pytest.raises(NodeRateLimited):
        await client.estimate_gas_price()
    assert all(s >= 2 for s in clock.sleeps) and len(clock.sleeps) == 2
    await client.aclose()


@pytest.mark.parametrize(
    ("answers", "exc"),
    [
        ([httpx.ConnectError] * 3, NotSent),
        ([httpx.ReadTimeout] * 3, NodeUnavailable),
        ([httpx.Response(500, text="x")] * 3, NodeUnavailable),
        ([httpx.Response(200, text="not json")], MalformedNodeResponse),
        ([httpx.Response(200, json={"chain_id": 4})], MalformedNodeResponse),
        (
            [
                httpx.Response(
                    200, json={"chain_id": 4, "ledger_version": "1.5", "ledger_timestamp": "1"}
                )
            ],
            MalformedNodeResponse,
        ),
    ],
)
async def test_read_failures(answers: list[Any], exc: type[Exception]) -> None:
    client, _, _ = scripted(*answers)
    with pytest.raises(exc):
        await client.ledger_info()
    await client.aclose()


async def test_chain_id_header_checked_on_every_answer() -> None:
    client, _, _ = scripted(
        httpx.Response(200, json={"gas_estimate": 1}, headers={"x-aptos-chain-id": "1"})
    )
    with pytest.raises(ChainIdMismatch, match="chain id 1"):
        await client.estimate_gas_price()
    await client.aclose()


async def test_ledger_time_from_headers_and_body() -> None:
    client, seen, clock = scripted(
        httpx.Response(
            200, json={"gas_estimate": 1}, headers={"x-aptos-ledger-timestampusec": "5000000"}
        ),
        httpx.Response(
            200, json={"chain_id": 4, "ledger_version": "9", "ledger_timestamp": "9000000"}
        ),
    )
    await client.estimate_gas_price()
    assert client.headers_seen
    assert await client.ledger_timestamp_us() == 5_000_000  # fresh: no request
    assert len(seen) == 1
    clock.now += 10
    assert await client.ledger_timestamp_us() == 9_000_000  # stale: GET /v1
    assert seen[-1].url == "http://node.test/v1"
    await client.aclose()


async def test_simulation_parsing() -> None:
    body = [
        {
            "success": True,
            "vm_status": "Executed successfully",
            "gas_used": "12",
            "gas_unit_price": "100",
            "events": [],
            "changes": [],
            "hash": HASH,
            "balance_changes": [
                {"account": "0x1", "asset": "0x000a", "delta": "-5"},
                {"account": "0x2", "asset": APT, "delta": 5},
            ],
        }
    ]
    client, seen, _ = scripted(
        httpx.Response(200, json=body),
        httpx.Response(200, json=[{**body[0], "balance_changes": None}]),
    )
    result = await client.simulate(b"bcs")
    assert seen[0].url.params["estimate_gas_unit_price"] == "true"
    assert seen[0].url.params["estimate_max_gas_amount"] == "true"
    assert result.gas_fee == 1_200
    assert [(str(c.account), c.asset, c.delta) for c in result.balance_changes or ()] == [
        ("0x1", "0xa", -5),
        ("0x2", APT, 5),
    ]
    assert (await client.simulate(b"bcs")).balance_changes is None
    await client.aclose()


# --- over loopback: a real dropped connection --------------------------------------------


def dropping_app() -> Callable[..., Any]:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        request = await read_request(scope, receive)
        if request.method == "POST":
            await send_bytes(send, 202, json.dumps({"hash": HASH}).encode(), drop=True)
        else:
            await send_bytes(send, 200, b'{"gas_estimate": 5}')

    return app


async def test_dropped_connection_on_submit_is_outcome_unknown_over_loopback() -> None:
    with serve(dropping_app()) as url:
        client = NodeClient(url + "/v1", timeout_seconds=5)
        with pytest.raises(SubmitOutcomeUnknown) as info:
            await client.submit(b"bytes", HASH)
        assert info.value.tx_hash == HASH
        assert await client.estimate_gas_price() == 5
        await client.aclose()


async def test_connection_refused_over_loopback_is_not_sent() -> None:
    client = NodeClient(f"http://127.0.0.1:{closed_port()}/v1", max_attempts=1)
    with pytest.raises(NotSent):
        await client.submit(b"bytes", HASH)
    with pytest.raises(NotSent):
        await client.ledger_info()
    await client.aclose()
