"""The swap reference price: Pyth through a view node, refused when it cannot be trusted."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from bot.aptos.pyth import PYTH_FEEDS, PYTH_MAINNET, price_json
from bot.aptos.tokens import Token, TokenBook, TokenLookupError
from bot.chain.errors import NodeError
from bot.config import RiskSettings
from bot.engine.reference import (
    FeedReference,
    PythReference,
    ReferenceUnavailable,
    build_reference,
)

APT = Token(symbol="APT", decimals=8, coin_type="0x1::aptos_coin::AptosCoin", fa_address="0xa")
USDC = Token(symbol="USDC", decimals=6, coin_type=None, fa_address="0x" + "bb" * 32)
ODD = Token(symbol="ODD", decimals=6, coin_type=None, fa_address="0x" + "cc" * 32)
FEEDS = {**dict.fromkeys(APT.keys, PYTH_FEEDS["APT"]), USDC.address: PYTH_FEEDS["USDC"]}


class ViewNode:
    """Answers Pyth's view from a table; records the calls."""

    def __init__(self, prices: dict[str, tuple[str, str]], *, abort: bool = False) -> None:
        self.prices = prices
        self.abort = abort
        self.calls: list[tuple[str, list[Any]]] = []

    async def view(self, function: str, type_arguments: list[str], arguments: list[Any]) -> Any:
        self.calls.append((function, arguments))
        if self.abort:
            raise NodeError(400, "Move abort in pyth: 0x80004 (stale price)")
        usd, conf = self.prices[arguments[0]]
        return [price_json(Decimal(usd), Decimal(conf), 1_764_000_000)]


def reference(node: ViewNode) -> PythReference:
    return PythReference(node, contract=PYTH_MAINNET, feeds=FEEDS, max_age_seconds=60)


async def test_the_rate_is_the_ratio_of_two_on_chain_usd_prices() -> None:
    node = ViewNode({PYTH_FEEDS["APT"]: ("5.25", "0.01"), PYTH_FEEDS["USDC"]: ("1.05", "0.001")})
    assert await reference(node).rate(APT, USDC) == 5
    function, arguments = node.calls[0]
    assert function == f"{PYTH_MAINNET}::pyth::get_price_no_older_than_by_feed_id"
    assert arguments == [PYTH_FEEDS["APT"], "60"]


async def test_a_stale_price_makes_the_reference_unavailable_never_old() -> None:
    node = ViewNode({}, abort=True)
    with pytest.raises(ReferenceUnavailable, match="stale price"):
        await reference(node).rate(APT, USDC)


async def test_an_uncertain_price_is_not_used() -> None:
    node = ViewNode({PYTH_FEEDS["APT"]: ("5", "0.2"), PYTH_FEEDS["USDC"]: ("1", "0")})
    with pytest.raises(ReferenceUnavailable, match="wider than 2%"):
        await reference(node).rate(APT, USDC)


async def test_a_token_without_a_feed_has_no_reference() -> None:
    with pytest.raises(ReferenceUnavailable, match="no Pyth feed for ODD"):
        await reference(ViewNode({})).rate(ODD, USDC)


def test_the_setting_chooses_the_reference_and_pyth_needs_a_node() -> None:
    book = TokenBook([APT, USDC])
    client: Any = object()
    assert isinstance(build_reference(RiskSettings(), book, client, None), FeedReference)
    with pytest.raises(ValueError, match="needs a node"):
        build_reference(RiskSettings(reference="pyth"), book, client, None)
    built = build_reference(RiskSettings(reference="pyth"), book, client, ViewNode({}))
    assert isinstance(built, PythReference)
    # The published feeds, resolved through the book to every key of each token.
    assert built.feeds == FEEDS | {USDC.address: PYTH_FEEDS["USDC"]}


def test_a_configured_feed_for_an_unknown_token_is_an_error() -> None:
    risk = RiskSettings(reference="pyth", pyth_feeds={"NOPE": "0x" + "ab" * 32})
    with pytest.raises(TokenLookupError):
        build_reference(risk, TokenBook([APT, USDC]), object(), ViewNode({}))  # type: ignore[arg-type]
