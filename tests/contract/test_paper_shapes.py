"""(b) The paper world answers in the real shapes: keys, JSON types and nesting.

The paper world runs on uvicorn on 127.0.0.1; its raw answers are compared with the real
bodies (and, where only a form exists, the SDK 1.3.1 form) of `fixtures/` by
`tests.support.shape`. Paths the evidence marks optional (`?` in the SDK's types) may be
absent on either side; nothing else is excused. Where the paper world differs today the
test is a strict xfail naming the issue item: it fails loudly once the paper world is fixed.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest

from bot.config import PaperFunding, PaperSettings
from bot.money import loads_exact
from bot.paper.world import PaperWorld, build_world
from tests.support.evidence import fixture_exact
from tests.support.loopback import serve
from tests.support.shape import compare

APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
WALLET = "0x" + "5a" * 32
KEY = "contract-paper-key"

PRICE_OPTIONAL = ("[].priceChange24H",)
"""SDK 1.3.1 `TokenPrice.priceChange24H?`."""
TOKEN_OPTIONAL = (
    "data[].bridge",
    "data[].priceChange24H",
    "data[].logoUrl",
    "data[].websiteUrl",
    "data[].isInPanoraTokenList",
    "data[].isBanned",
)
"""SDK 1.3.1 `TokenInfo` `bridge?`, `priceChange24H?`, `logoUrl?`, `websiteUrl?`; the two
flags the docs call deprecated (the SDK drops them)."""
SWAP_OPTIONAL = ("quotes[].route",)
"""SDK 1.3.1 `route?: any[]` (its elements are typed `any`)."""


@pytest.fixture(scope="module")
def paper_world() -> PaperWorld:
    """A stepped paper world; the wallet holds APT and USDC."""
    return build_world(
        PaperSettings(
            clock="stepped",
            start="2026-03-01T00:00:00Z",
            api_keys=[KEY],
            rate_limit_per_second=1e6,
            rate_limit_burst=10**6,
            funding=[
                PaperFunding(wallet=WALLET, token="APT", amount=Decimal(100)),
                PaperFunding(wallet=WALLET, token="USDC", amount=Decimal(1000)),
            ],
        )
    )


@pytest.fixture(scope="module")
def paper_url(paper_world: PaperWorld) -> Iterator[str]:
    """The paper world served on loopback by uvicorn."""
    with serve(paper_world.app) as url:
        yield url


def _answer(url: str, method: str, path: str, **params: str) -> Any:
    response = httpx.request(
        method, url + path, params=params, headers={"x-api-key": KEY}, timeout=10
    )
    assert response.status_code == 200, f"{method} {path}: {response.status_code} {response.text}"
    return loads_exact(response.content)


def _shown(differences: list[Any]) -> str:
    return "\n".join(map(str, differences))


def test_paper_prices_have_the_real_record_shape(paper_url: str) -> None:
    paper = _answer(paper_url, "GET", "/prices", tokenAddress=f"{APT},{USDC}")
    real = fixture_exact("prices/docs_example_usdc.json")
    differences = compare(paper, real, optional=PRICE_OPTIONAL)
    assert differences == [], _shown(differences)


def test_paper_token_list_has_the_real_shape(paper_url: str) -> None:
    paper = _answer(paper_url, "GET", "/tokenlist", panoraUI="true,false")
    records = fixture_exact("tokenlist/aptos_tokens_records.json")
    real = {"data": [*records, fixture_exact("tokenlist/docs_example_usdc.json")]}
    differences = compare(paper, real, optional=TOKEN_OPTIONAL)
    assert differences == [], _shown(differences)


@pytest.mark.parametrize(
    ("amount", "form"),
    [
        ({"fromTokenAmount": "1"}, "swap/sdk_1_3_1_exact_in.form.json"),
        ({"toTokenAmount": "1"}, "swap/sdk_1_3_1_exact_out.form.json"),
    ],
    ids=["exact-in", "exact-out"],
)
def test_paper_swap_answer_has_the_sdk_1_3_1_shape(
    paper_url: str, amount: dict[str, str], form: str
) -> None:
    """Against the SDK 1.3.1 FORM (no recorded /swap envelope is public): issue #16 item 3,
    top-level feeToken, token name/symbol, quotes[].feeTokenAmount(USD)."""
    paper = _answer(
        paper_url,
        "POST",
        "/swap",
        fromTokenAddress=APT,
        toTokenAddress=USDC,
        toWalletAddress=WALLET,
        **amount,
    )
    differences = compare(paper, fixture_exact(form), optional=SWAP_OPTIONAL)
    assert differences == [], _shown(differences)


def test_paper_accepts_the_real_all_tokens_filter(paper_url: str) -> None:
    """Issue #16 item 1: `panoraUI=true,false` is every token, `true` the shown ones."""
    every = _answer(paper_url, "GET", "/prices", panoraUI="true,false")
    shown = _answer(paper_url, "GET", "/prices", panoraUI="true")
    assert {r["faAddress"] for r in shown} < {r["faAddress"] for r in every}


def test_paper_quotes_through_post_swap_without_a_wallet(paper_url: str) -> None:
    """Issue #16 item 5: SDK 1.3.1 `getQuote` posts to /swap, the wallet optional."""
    paper = _answer(
        paper_url, "POST", "/swap", fromTokenAddress=APT, toTokenAddress=USDC, fromTokenAmount="1"
    )
    assert paper["quotes"] and Decimal(paper["quotes"][0]["toTokenAmount"]) > 0


def test_paper_reads_comma_joined_sources_and_answers_no_route_as_the_real_api(
    paper_url: str, paper_world: PaperWorld
) -> None:
    """Issue #16 item 4: `includeSources=A,B` (comma-joined); a route the sources rule out
    is the real "no route" answer, `quotes: []` in the same envelope."""
    swap = {
        "fromTokenAddress": APT,
        "toTokenAddress": USDC,
        "fromTokenAmount": "1",
        "toWalletAddress": WALLET,
    }
    dex_name = paper_world.market.config.pools.dex_name
    kept = _answer(paper_url, "POST", "/swap", **swap, includeSources=f"Thala,{dex_name}")
    left_out = _answer(paper_url, "POST", "/swap", **swap, includeSources="Thala,Hyperion")
    assert kept["quotes"] and left_out["quotes"] == []


def test_paper_txdata_has_the_shape_of_a_real_one(paper_url: str) -> None:
    """Against the real txData a wallet received (okx fixture). Its `type` key is left out:
    `entry_function_payload` is the wallet adapter's field, the SDK's txData has none."""
    paper = _answer(
        paper_url,
        "POST",
        "/swap",
        fromTokenAddress=APT,
        toTokenAddress=USDC,
        fromTokenAmount="1",
        toWalletAddress=WALLET,
    )
    real = dict(fixture_exact("swap/okx_router_entry_txdata.json"))
    del real["type"]
    [quote] = paper["quotes"]
    differences = compare(quote["txData"], real)
    assert differences == [], _shown(differences)
    assert quote["txData"]["function"] == real["function"]
    assert len(quote["txData"]["arguments"]) == len(real["arguments"])
    assert len(quote["txData"]["type_arguments"]) == len(real["type_arguments"])
