"""The provider's token list as a `TokenBook`: every listed token, findable by any name.

Source (docs/wire-decisions.md, row 38): `GET /tokenlist` with `panoraUI=true,false` (the
SDK's "all tokens"), the provider's token metadata endpoint; `GET /prices` with the same
filter only when `/tokenlist` is not served (404) or lists no usable token.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.api.client import PanoraClient
from bot.api.errors import NotFound
from bot.api.models import TokenRecord
from bot.api.token_list import TokenListRecord
from bot.aptos.tokens import Token, TokenBook, TokenLookupError
from bot.logging import get_logger

__all__ = ["fetch_token_book", "token_of"]


def token_of(record: TokenRecord) -> Token:
    """The token a price or token-list record describes.

    A token-list record's `isBanned: true` counts as the `Banned` tag.

    Raises:
        ValueError: the record has neither identity, or one that is not an address
            (`TokenLookupError` is a `LookupError`, also raised for a bad identity).
    """
    tags = record.tags if isinstance(record, TokenListRecord) else tuple(record.svc_tags or ())
    return Token(
        decimals=record.decimals,
        symbol=record.symbol or "?",
        coin_type=record.token_address,
        fa_address=record.fa_address,
        name=record.name,
        provider_symbol=record.svc_symbol,
        ui=bool(record.svc_ui),
        tags=tags,
    )


def _book(records: Iterable[TokenRecord], endpoint: str) -> TokenBook:
    """A book of the records' tokens; a record whose identity is unusable is left out."""
    log = get_logger("api")
    tokens: list[Token] = []
    for record in records:
        try:
            tokens.append(token_of(record))
        except (ValueError, TokenLookupError) as exc:
            log.warning(
                "api.token_skipped", endpoint=endpoint, symbol=record.symbol, error=str(exc)
            )
    return TokenBook(tokens)


async def fetch_token_book(client: PanoraClient) -> TokenBook:
    """Every token of the provider's token list, shown or hidden (`panoraUI=true,false`).

    `false` alone would ask for the hidden tokens only: APT and USDC would be missing.
    Falls back to the full price list when `/tokenlist` answers 404 (a server that does
    not serve it) or lists no usable token; any other error is raised as it is.
    """
    reason = "no usable token"
    try:
        listing = await client.get_token_list(ui_only=False)
    except NotFound:
        reason = "not served (404)"
    else:
        book = _book(listing.records, "GET /tokenlist")
        if len(book):
            return book
    get_logger("api").warning("api.token_list_fallback", reason=reason, fallback="GET /prices")
    prices = await client.get_prices(ui_only=False)
    return _book(prices.records, "GET /prices")
