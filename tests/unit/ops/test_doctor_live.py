"""`bot doctor`'s live proofs (`bot.ops.doctor_live`) against an in-process paper world.

The paper world answers as the real service does; a thin transport in front of it changes
one answer at a time (a router ABI with another parameter type, a 401 or 403, `quotes: []`,
a txData calling a function off the allowlist), and the line that must catch it is checked.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from copy import deepcopy
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from bot.api import PanoraClient
from bot.aptos.abi import FunctionAbi
from bot.aptos.address import Address, FunctionId
from bot.aptos.movetypes import parse_move_type
from bot.chain import ROUTER_FUNCTION, NodeClient, new_key_file
from bot.clock import RealClock
from bot.config import PaperFunding, PaperSettings, Settings
from bot.ops.doctor import FAIL, PASS, SKIP, WARN, CheckResult, check_strategies, exit_code
from bot.ops.doctor_live import (
    PROBE_APT,
    LiveDoctor,
    abi_difference,
    check_router_abi,
    reference_abi,
)
from bot.paper.world import build_world
from tests.support.paper_rig import no_wait

ROUTER_PATH = f"/v1/accounts/{ROUTER_FUNCTION.address}/module/{ROUTER_FUNCTION.module}"
DCA = {
    "name": "weekly-apt",
    "plugin": "recurring_dca",
    "schedule": {"interval_seconds": 3600},
    "params": {
        "from_token": "USDC",
        "to_token": "APT",
        "amount_per_order": "25",
        "interval": "1 day",
        "orders": 7,
    },
}
LIVE_NAMES = ["APT and USDC prices", "swap quote", "swap function allowed", "router ABI on chain"]

Rewrite = Callable[[httpx.Request, httpx.Response], httpx.Response | None]
"""Given a request and the paper world's answer, another answer (or None: keep it)."""


class Rewriting(httpx.AsyncBaseTransport):
    """The paper world's ASGI app, with some answers replaced; every request is recorded."""

    def __init__(self, inner: httpx.AsyncBaseTransport, rewrite: Rewrite | None) -> None:
        self.inner = inner
        self.rewrite = rewrite
        self.seen: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        response = await self.inner.handle_async_request(request)
        if self.rewrite is None:
            return response
        await response.aread()
        return self.rewrite(request, response) or response


def json_answer(status: int, body: Any) -> httpx.Response:
    return httpx.Response(status, json=body, headers={"content-type": "application/json"})


def is_swap(request: httpx.Request) -> bool:
    return request.method == "POST" and request.url.path == "/swap"


def swap_with_wallet(request: httpx.Request) -> bool:
    return is_swap(request) and "toWalletAddress" in request.url.params


def node_answer(response: httpx.Response, body: Any) -> httpx.Response:
    """`body` with the paper node's headers (chain id, ledger) kept."""
    headers = {k: v for k, v in response.headers.items() if k.lower().startswith("x-aptos")}
    return httpx.Response(200, json=body, headers=headers)


@asynccontextmanager
async def live_doctor(
    tmp_path: Path, rewrite: Rewrite | None = None, *, wallet: bool = True
) -> AsyncIterator[tuple[LiveDoctor, Rewriting]]:
    """A `LiveDoctor` on a funded paper world, answers rewritten by `rewrite`."""
    key = tmp_path / "wallet.key"
    address = str(new_key_file(key))
    world = build_world(
        PaperSettings(
            clock="stepped",
            api_keys=["k"],
            rate_limit_per_second=1e6,
            rate_limit_burst=10**6,
            funding=[
                PaperFunding(wallet=address, token=t, amount=Decimal(a))
                for t, a in (("APT", "10"), ("USDC", "500"))
            ],
        )
    )
    config = Settings(
        wallet={"key_file": key} if wallet else {},
        journal={"url": f"sqlite:///{tmp_path / 'bot.db'}"},
        paper={"clock": "stepped"},
        strategies=[DCA],
    )
    transport = Rewriting(httpx.ASGITransport(app=world.app), rewrite)
    client = PanoraClient(
        base_url="http://paper",
        api_key=SecretStr("k"),
        transport=transport,
        rate_limit_per_second=1e6,
        rate_limit_burst=10**6,
        sleep=no_wait,
        max_attempts=1,
    )
    node = NodeClient("http://paper/v1", expected_chain_id=4, transport=transport, sleep=no_wait)
    doctor = LiveDoctor(
        settings=config,
        client=client,
        api_problem=None,
        node=node,
        api_url="http://paper",
        node_url="http://paper/v1",
        chain_id=4,
        paper_clock="stepped",
        clock=RealClock(),
        allowed_functions=config.chain.allowed_functions,
    )
    try:
        yield doctor, transport
    finally:
        await client.aclose()
        await node.aclose()


async def run(doctor: LiveDoctor) -> dict[str, CheckResult]:
    _, strategies = check_strategies(doctor.settings)
    return {r.name: r for r in await doctor.run(strategies)}


# --- against the paper world as it answers ------------------------------------------------


async def test_every_proof_passes_on_the_paper_world_and_nothing_is_sent(tmp_path: Path) -> None:
    async with live_doctor(tmp_path) as (doctor, transport):
        results = await run(doctor)
    names = list(results)
    # The proofs come after the base checks, before the unknown-fields line.
    assert names[-5:] == [*LIVE_NAMES, "unknown response fields"]
    assert {n: results[n].outcome for n in LIVE_NAMES} == dict.fromkeys(LIVE_NAMES, PASS)
    assert results["APT and USDC prices"].detail.startswith("GET /prices for the two: APT ")
    assert " USDC " in results["APT and USDC prices"].detail
    assert results["swap quote"].detail.startswith(f"{PROBE_APT} APT → ")
    assert results["swap function allowed"].detail == (
        f"POST /swap calls {ROUTER_FUNCTION}, on [chain].allowed_functions"
    )
    assert results["router ABI on chain"].detail == (
        "router_entry: 21 parameters, 32 type parameters, as in the codec's ABI"
    )
    assert exit_code(results.values()) == 0
    # Read-only: prices for just the two tokens, one quote without a wallet, one swap
    # answer with it; nothing submitted, nothing simulated.
    prices = [
        r for r in transport.seen if r.url.path == "/prices" and "tokenAddress" in r.url.params
    ]
    assert len(prices) == 1 and len(prices[0].url.params["tokenAddress"].split(",")) == 2
    swaps = [r for r in transport.seen if is_swap(r)]
    assert [swap_with_wallet(r) for r in swaps] == [False, True]
    assert {r.url.params["fromTokenAmount"] for r in swaps} == {"0.1"}
    assert not [r for r in transport.seen if r.url.path.startswith("/v1/transactions")]
    assert any(r.url.path == ROUTER_PATH for r in transport.seen)


async def test_without_a_wallet_the_swap_is_skipped_and_the_router_still_compared(
    tmp_path: Path,
) -> None:
    async with live_doctor(tmp_path, wallet=False) as (doctor, transport):
        results = await run(doctor)
    assert results["swap function allowed"].outcome == SKIP
    assert results["swap quote"].outcome == PASS
    assert results["router ABI on chain"].outcome == PASS  # the configured router's ABI
    assert not [r for r in transport.seen if swap_with_wallet(r)]


# --- each failure alone ------------------------------------------------------------------


def other_abi(request: httpx.Request, response: httpx.Response) -> httpx.Response | None:
    """The router's module with `router_entry`'s params[3] (u64) turned into u128."""
    if request.url.path != ROUTER_PATH:
        return None
    module = deepcopy(response.json())
    for function in module["abi"]["exposed_functions"]:
        if function["name"] == "router_entry":
            assert function["params"][3] == "u64"
            function["params"][3] = "u128"
    return node_answer(response, module)


async def test_a_router_abi_with_another_parameter_type_fails_naming_it(tmp_path: Path) -> None:
    async with live_doctor(tmp_path, other_abi) as (doctor, _):
        results = await run(doctor)
    line = results["router ABI on chain"]
    assert line.outcome == FAIL
    assert line.detail.startswith(
        "router_entry: params[3] is u128 on chain, u64 in the codec's ABI: the router changed"
    )
    assert exit_code(results.values()) == 1
    assert [n for n, r in results.items() if r.failed] == ["router ABI on chain"]


def fewer_type_params(request: httpx.Request, response: httpx.Response) -> httpx.Response | None:
    if request.url.path != ROUTER_PATH:
        return None
    module = deepcopy(response.json())
    for function in module["abi"]["exposed_functions"]:
        if function["name"] == "router_entry":
            function["generic_type_params"] = function["generic_type_params"][:30]
    return node_answer(response, module)


async def test_another_type_parameter_count_fails(tmp_path: Path) -> None:
    async with live_doctor(tmp_path, fewer_type_params) as (doctor, _):
        line = (await run(doctor))["router ABI on chain"]
    assert line.outcome == FAIL
    assert "30 type parameters on chain, 32 in the codec's ABI" in line.detail


def refuse(status: int, when: Callable[[httpx.Request], bool]) -> Rewrite:
    def rewrite(request: httpx.Request, response: httpx.Response) -> httpx.Response | None:
        if not when(request):
            return None
        return json_answer(status, {"statusCode": status, "message": "nope", "status": "fail"})

    return rewrite


@pytest.mark.parametrize("status", [401, 403])
async def test_a_refused_key_on_the_swap_fails_saying_so(tmp_path: Path, status: int) -> None:
    async with live_doctor(tmp_path, refuse(status, is_swap)) as (doctor, _):
        results = await run(doctor)
    for name in ("swap quote", "swap function allowed"):
        assert results[name].outcome == FAIL
        assert results[name].detail == (
            f"the provider refused the API key ({status}): check [paper].api_keys"
        )
    assert results["APT and USDC prices"].outcome == PASS
    assert results["router ABI on chain"].outcome == PASS  # the node needs no provider key


@pytest.mark.parametrize("status", [401, 403])
async def test_a_refused_key_on_the_token_list_fails_and_skips_the_proofs(
    tmp_path: Path, status: int
) -> None:
    everything = refuse(status, lambda r: not r.url.path.startswith("/v1"))
    async with live_doctor(tmp_path, everything) as (doctor, _):
        results = await run(doctor)
    line = results["API key accepted"]
    assert line.outcome == FAIL
    assert line.detail == f"http://paper refused the API key ({status}): check [paper].api_keys"
    assert [results[n].outcome for n in LIVE_NAMES] == [SKIP, SKIP, SKIP, PASS]


def no_quotes(request: httpx.Request, response: httpx.Response) -> httpx.Response | None:
    if not is_swap(request):
        return None
    body = response.json()
    body["quotes"] = []
    return json_answer(200, body)


async def test_no_route_fails_naming_the_pair_and_amount(tmp_path: Path) -> None:
    async with live_doctor(tmp_path, no_quotes) as (doctor, _):
        results = await run(doctor)
    for name in ("swap quote", "swap function allowed"):
        assert results[name].outcome == FAIL
        assert results[name].detail.startswith(
            "no route for 0.1 APT → USDC (the provider answered quotes: [])"
        )
    assert results["router ABI on chain"].outcome == PASS


def calls(function: str) -> Rewrite:
    def rewrite(request: httpx.Request, response: httpx.Response) -> httpx.Response | None:
        if not swap_with_wallet(request):
            return None
        body = response.json()
        body["quotes"][0]["txData"]["function"] = function
        return json_answer(200, body)

    return rewrite


async def test_a_function_off_the_allowlist_fails_with_the_fix(tmp_path: Path) -> None:
    transfer = "0x1::aptos_account::transfer"
    async with live_doctor(tmp_path, calls(transfer)) as (doctor, _):
        results = await run(doctor)
    line = results["swap function allowed"]
    assert line.outcome == FAIL
    assert line.detail.startswith(
        f"POST /swap: function {transfer} is not on the allowlist: "
        "the signer would refuse every swap; if it is the provider's router"
    )
    assert line.detail.endswith(f'add "{transfer}" to [chain].allowed_functions')
    # The ABI compared is the txData's function's: only the router's is packaged.
    abi = results["router ABI on chain"]
    assert abi.outcome == WARN and abi.detail.startswith("no packaged ABI for 0x1::aptos_account")


async def test_a_missing_router_module_fails(tmp_path: Path) -> None:
    def gone(request: httpx.Request, response: httpx.Response) -> httpx.Response | None:
        if request.url.path != ROUTER_PATH:
            return None
        body = {"message": "Module not found", "error_code": "module_not_found"}
        headers = {k: v for k, v in response.headers.items() if k.startswith("x-aptos")}
        return httpx.Response(404, json=body, headers=headers)

    async with live_doctor(tmp_path, gone) as (doctor, _):
        line = (await run(doctor))["router ABI on chain"]
    assert line.outcome == FAIL
    assert line.detail.startswith(f"the node has no {ROUTER_FUNCTION}: check [chain].node_url")


async def test_the_router_abi_is_skipped_when_the_node_is_unusable(tmp_path: Path) -> None:
    async with live_doctor(tmp_path) as (doctor, _):
        doctor.chain_id = 5  # the node says 4
        results = await run(doctor)
    assert results["node chain id"].outcome == FAIL
    assert (results["router ABI on chain"].outcome, results["router ABI on chain"].detail) == (
        SKIP,
        "node not usable",
    )


# --- the comparison itself ---------------------------------------------------------------


def function_abi(params: list[str], type_params: int = 0, *, entry: bool = True) -> FunctionAbi:
    function = FunctionId(Address.parse("0x1"), "m", "f")
    return FunctionAbi(function, [parse_move_type(p) for p in params], type_params, entry)


def test_abi_difference_names_the_first_difference() -> None:
    ours = function_abi(["&signer", "address", "u64", "vector<u8>"], 2)
    assert abi_difference(ours, ours) is None
    # Addresses are compared canonically: 0x1 and its long form are one type.
    long_form = "0x" + "0" * 63 + "1" + "::option::Option<u8>"
    assert (
        abi_difference(function_abi([long_form]), function_abi(["0x1::option::Option<u8>"])) is None
    )
    assert abi_difference(function_abi(["&signer", "address", "u128", "u8"], 2), ours) == (
        "params[2] is u128 on chain, u64 in the codec's ABI"
    )
    assert abi_difference(function_abi(["&signer", "address", "u64"], 2), ours) == (
        "3 parameters on chain, 4 in the codec's ABI"
    )
    assert abi_difference(function_abi(["&signer", "address", "u64", "vector<u8>"], 1), ours) == (
        "1 type parameters on chain, 2 in the codec's ABI"
    )
    off = function_abi(["&signer", "address", "u64", "vector<u8>"], 2, entry=False)
    assert abi_difference(off, ours) == "is_entry is False on chain, True in the codec's ABI"


def test_the_reference_is_the_packaged_mainnet_router_only() -> None:
    router = reference_abi(ROUTER_FUNCTION)
    assert router is not None and router.function_id == ROUTER_FUNCTION
    packaged = Path(__file__).resolve().parents[3] / "bot/paper/data/panora_swap_module_abi.json"
    raw = next(
        f
        for f in json.loads(packaged.read_text())["exposed_functions"]
        if f["name"] == "router_entry"
    )
    assert [str(p) for p in router.params] == raw["params"]
    assert reference_abi(FunctionId.parse("0x1::aptos_account::transfer")) is None


async def test_an_unreachable_node_fails_the_comparison_with_the_cause() -> None:
    async def refuse_all(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    node = NodeClient(
        "http://127.0.0.1:9/v1",
        expected_chain_id=1,
        transport=httpx.MockTransport(refuse_all),
        sleep=no_wait,
        max_attempts=1,
    )
    try:
        line = await check_router_abi(node, ROUTER_FUNCTION)
    finally:
        await node.aclose()
    assert line.outcome == FAIL
    assert line.detail.startswith(f"cannot read {ROUTER_FUNCTION.module_id}: ")
