"""(c) The client's requests have the real forms: method, path, parameter names and how
values are written, as SDK 1.3.1's code and Panora's docs send them.

Forms: `fixtures/*/*.request.json` (provenance: tests/contract/PROVENANCE.md). Each request
is captured by an `httpx.MockTransport`; nothing leaves the process.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
import pytest

from bot.api import RequestRuleError, SwapRequest
from tests.support.client_capture import KEY, capturing_client
from tests.support.evidence import fixture, request_form

APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
WALLET = "0x" + "5a" * 32
SWAP_BODY = fixture("swap/sdk_1_3_1_exact_in.form.json")
PRICES_BODY = fixture("prices/docs_example_usdc.json")


def _query(request: httpx.Request) -> dict[str, str]:
    pairs = request.url.params.multi_items()
    names = [name for name, _ in pairs]
    assert len(names) == len(set(names)), f"a parameter sent twice: {names}"
    return dict(pairs)


def assert_matches_form(request: httpx.Request, form: dict[str, Any]) -> dict[str, str]:
    """The request has the form's method, path, header, known parameters and body."""
    assert (request.method, request.url.path) == (form["method"], form["path"])
    assert request.headers.get("x-api-key") == KEY
    query = _query(request)
    known = form["query"]
    assert set(query) <= set(known), f"unknown to the real API: {sorted(set(query) - set(known))}"
    required = {name for name, spec in known.items() if spec["required"]}
    assert required <= set(query), f"missing: {sorted(required - set(query))}"
    for group in form.get("exclusive", []):
        assert len(set(group) & set(query)) <= 1, f"sent together: {group}"
    for group in form.get("one_of_required", []):
        assert set(group) & set(query), f"one of {group} is required"
    for name, value in query.items():
        _assert_written_as(name, value, known[name])
    body = request.content.decode()
    accepted = {"none": "", "{}": "{}"}
    assert body in {accepted[b] for b in form["body"]}, f"body {body!r}"
    return query


def _assert_written_as(name: str, value: str, spec: dict[str, Any]) -> None:
    form = spec["form"]
    if form == "comma-list":
        assert "[" not in value and "]" not in value and ", " not in value, f"{name}={value}"
    elif form == "boolean":
        assert value in {"true", "false"}, f"{name}={value}"
    elif form == "integer":
        assert value.isdigit(), f"{name}={value}"
    elif form in {"decimal", "decimal-or-auto"}:
        if not (form == "decimal-or-auto" and value == "auto"):
            number = Decimal(value)
            assert number.is_finite() and "e" not in value.lower(), f"{name}={value}"
    elif form == "ui-filter":
        assert value in {"true", "false", spec["all"]}, f"{name}={value}"


async def test_prices_for_some_tokens_has_the_documented_form() -> None:
    client, captured = capturing_client(PRICES_BODY)
    async with client:
        await client.get_prices([APT, USDC])
    query = assert_matches_form(captured.last, request_form("prices/get_prices.request.json"))
    assert query["tokenAddress"] == f"{APT},{USDC}"


async def test_prices_of_every_token_asks_panora_ui_true_false() -> None:
    """Issue #16 item 1: `panoraUI=false` would ask for the hidden tokens only."""
    form = request_form("prices/get_prices.request.json")
    client, captured = capturing_client(PRICES_BODY)
    async with client:
        await client.get_prices(ui_only=False)
    query = assert_matches_form(captured.last, form)
    assert query["panoraUI"] == form["query"]["panoraUI"]["all"] == "true,false"


async def test_a_swap_to_sign_has_the_sdk_form() -> None:
    client, captured = capturing_client(SWAP_BODY)
    async with client:
        await client.swap(
            SwapRequest(
                APT, USDC, from_amount=Decimal("1.5"), to_wallet=WALLET, slippage=Decimal("0.5")
            )
        )
    query = assert_matches_form(captured.last, request_form("swap/post_swap.request.json"))
    assert (query["fromTokenAmount"], query["slippagePercentage"]) == ("1.5", "0.5")


async def test_a_quote_is_post_swap_without_a_wallet() -> None:
    """Issue #16 item 5: SDK 1.3.1 `getQuote` posts to /swap; the wallet is optional."""
    client, captured = capturing_client(SWAP_BODY)
    async with client:
        await client.quote(SwapRequest(APT, USDC, from_amount=Decimal(1)))
    query = assert_matches_form(captured.last, request_form("swap/post_swap_quote.request.json"))
    assert "toWalletAddress" not in query


async def test_sources_and_pools_are_comma_joined_as_the_sdk_joins_them() -> None:
    """Issue #16 item 4: `includeSources?.join(",")`, `includePools?.join(",")`."""
    pools = ("0x" + "ab" * 32, "0x" + "cd" * 32)
    client, captured = capturing_client(SWAP_BODY)
    async with client:
        await client.swap(
            SwapRequest(
                APT,
                USDC,
                from_amount=Decimal(1),
                to_wallet=WALLET,
                include_sources=("Thala", "Hyperion"),
                include_pools=pools,
                only_direct_routes=True,
            )
        )
    query = assert_matches_form(captured.last, request_form("swap/post_swap.request.json"))
    assert query["includeSources"] == "Thala,Hyperion"
    assert query["includePools"] == ",".join(pools)
    assert query["onlyDirectRoutes"] == "true"


async def test_include_and_exclude_sources_together_are_refused_before_sending() -> None:
    """Issue #16 item 4: the SDK throws "Only one of includeSources or excludeSources"."""
    client, captured = capturing_client(SWAP_BODY)
    refused = False
    async with client:
        try:
            await client.swap(
                SwapRequest(
                    APT,
                    USDC,
                    from_amount=Decimal(1),
                    to_wallet=WALLET,
                    include_sources=("Thala",),
                    exclude_sources=("Hyperion",),
                )
            )
        except RequestRuleError:
            refused = True
    assert refused and captured.requests == []


@pytest.mark.parametrize(
    "name",
    [
        "prices/get_prices.request.json",
        "tokenlist/get_token_list.request.json",
        "swap/post_swap.request.json",
        "swap/post_swap_quote.request.json",
    ],
)
def test_every_request_form_is_complete(name: str) -> None:
    form = request_form(name)
    assert form["method"] in {"GET", "POST"} and form["path"].startswith("/")
    assert "x-api-key" in form["headers"] and form["body"]
    forms = {"text", "integer", "decimal", "decimal-or-auto", "comma-list", "boolean", "ui-filter"}
    assert all(spec["form"] in forms for spec in form["query"].values())
