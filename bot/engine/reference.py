"""Where a swap's reference price comes from: never the quote being judged.

* `FeedReference` (the default): the provider's `/prices` USD ratio, read for just the two
  tokens at swap time. It catches a quote or route that disagrees with the provider's own
  prices (a bug, a tampered answer, a stale route), not a provider that lies consistently
  in both; `bot doctor` warns about it.
* `PythReference` (`[risk].reference = "pyth"`): Pyth's on-chain USD prices, read through
  the node's `POST /v1/view` (`bot.aptos.pyth`), independent of the provider. A token with
  no feed, a price older than `[risk].pyth_max_age_seconds` (the contract refuses it) or
  one more uncertain than `MAX_CONFIDENCE_PERCENT` makes the reference unavailable: the
  swap is not signed.

The executor asks `rate(sell, buy)` once per swap; unavailable means refused, never a
fallback to the quote.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final, Protocol

from bot.api import ApiError, PanoraClient
from bot.aptos.pyth import PYTH_FEEDS, PythPriceError, parse_pyth_price, price_view_function
from bot.aptos.tokens import Token, TokenBook, TokenLookupError, token_key
from bot.chain import ChainError
from bot.config import RiskSettings
from bot.engine.swap_bounds import usd_ratio

__all__ = [
    "MAX_CONFIDENCE_PERCENT",
    "FeedReference",
    "PriceReference",
    "PythReference",
    "ReferenceUnavailable",
    "ViewNode",
    "build_reference",
    "pyth_feeds",
]

MAX_CONFIDENCE_PERCENT: Final = Decimal(2)
"""A Pyth price whose confidence interval is wider than this (percent) is not used."""


class ReferenceUnavailable(Exception):
    """No reference price could be had: the swap is not signed."""


class PriceReference(Protocol):
    """Where the bot's reference price comes from."""

    source: str
    """What `bot doctor` and refusals name (e.g. "provider /prices feed")."""

    async def rate(self, sell: Token, buy: Token) -> Decimal:
        """Units of `buy` one unit of `sell` is worth (human units), above zero.

        Raises:
            ReferenceUnavailable: with a one-line reason.
        """
        ...


class FeedReference:
    """The provider's `/prices` USD ratio, read for just the two tokens at swap time."""

    source = "provider /prices feed"

    def __init__(self, client: PanoraClient) -> None:
        self.client = client

    async def rate(self, sell: Token, buy: Token) -> Decimal:
        """`usd(sell) / usd(buy)` from one `/prices` answer."""
        try:
            listing = await self.client.get_prices([sell.address, buy.address])
        except ApiError as exc:
            raise ReferenceUnavailable(f"{self.source}: {exc}") from None
        usd: dict[str, Decimal] = {}
        for record in listing.records:
            keys = [k for k in (record.token_address, record.fa_address) if k is not None]
            for token in (sell, buy):
                if record.usd_price is not None and any(_is(k, token) for k in keys):
                    usd.setdefault(token.address, record.usd_price)
        for token in (sell, buy):
            price = usd.get(token.address)
            if price is None or not price.is_finite() or price <= 0:
                raise ReferenceUnavailable(f"{self.source} has no usable price for {token.symbol}")
        return usd_ratio(usd[sell.address], usd[buy.address])


def _is(key: str, token: Token) -> bool:
    try:
        return token_key(key) in token.keys
    except TokenLookupError:
        return False


class ViewNode(Protocol):
    """The node call `PythReference` needs."""

    async def view(self, function: str, type_arguments: list[str], arguments: list[Any]) -> Any:
        """`POST /v1/view`: the function's return values."""
        ...


class PythReference:
    """Pyth's on-chain USD prices through the node's view function (module docstring)."""

    source = "Pyth on-chain prices"

    def __init__(
        self,
        node: ViewNode,
        *,
        contract: str,
        feeds: Mapping[str, str],
        max_age_seconds: int,
    ) -> None:
        """`feeds`: token key (coin type or FA address, canonical) → Pyth feed id."""
        self.node = node
        self.function = price_view_function(contract)
        self.feeds = dict(feeds)
        self.max_age_seconds = max_age_seconds

    async def rate(self, sell: Token, buy: Token) -> Decimal:
        """`usd(sell) / usd(buy)` from two view calls."""
        return usd_ratio(await self._usd(sell), await self._usd(buy))

    async def _usd(self, token: Token) -> Decimal:
        feed = next((self.feeds[k] for k in token.keys if k in self.feeds), None)
        if feed is None:
            raise ReferenceUnavailable(f"{self.source}: no Pyth feed for {token.symbol}")
        try:
            answer = await self.node.view(self.function, [], [feed, str(self.max_age_seconds)])
            price = parse_pyth_price(answer)
        except ChainError as exc:  # a stale price aborts the view: unavailable, not old
            raise ReferenceUnavailable(f"{self.source} for {token.symbol}: {exc}") from None
        except PythPriceError as exc:
            raise ReferenceUnavailable(f"{self.source} for {token.symbol}: {exc}") from None
        if price.confidence * 100 > price.usd * MAX_CONFIDENCE_PERCENT:
            raise ReferenceUnavailable(
                f"{self.source} for {token.symbol}: ±{price.confidence} on {price.usd} USD is "
                f"wider than {MAX_CONFIDENCE_PERCENT}%"
            )
        return price.usd


def pyth_feeds(risk: RiskSettings, tokens: TokenBook) -> dict[str, str]:
    """Token key → feed id: the published feeds and `[risk].pyth_feeds`, resolved by the book.

    Raises:
        TokenLookupError: a configured name the book does not know.
    """
    feeds: dict[str, str] = {}
    for name, feed in {**PYTH_FEEDS, **risk.pyth_feeds}.items():
        try:
            token = tokens.find(name)
        except TokenLookupError:
            if name in risk.pyth_feeds:
                raise
            continue  # a published feed for a token this book does not list
        feeds.update(dict.fromkeys(token.keys, feed))
    return feeds


def build_reference(
    risk: RiskSettings, tokens: TokenBook, client: PanoraClient, node: ViewNode | None
) -> PriceReference:
    """The reference `[risk].reference` names.

    Raises:
        ValueError: Pyth is asked for but there is no node to read it from.
        TokenLookupError: a `[risk].pyth_feeds` name the book does not know.
    """
    if risk.reference == "pyth":
        if node is None:
            raise ValueError('[risk].reference = "pyth" needs a node to read prices from')
        return PythReference(
            node,
            contract=risk.pyth_contract,
            feeds=pyth_feeds(risk, tokens),
            max_age_seconds=risk.pyth_max_age_seconds,
        )
    return FeedReference(client)
