"""The provider's price list as a `TokenBook`: every priced token, findable by any name."""

from __future__ import annotations

from bot.api.client import PanoraClient
from bot.api.models import PriceRecord
from bot.aptos.tokens import Token, TokenBook

__all__ = ["fetch_token_book", "token_of"]


def token_of(record: PriceRecord) -> Token:
    """The token a price record describes."""
    return Token(
        decimals=record.decimals,
        symbol=record.symbol or "?",
        coin_type=record.token_address,
        fa_address=record.fa_address,
        name=record.name,
        provider_symbol=record.svc_symbol,
        ui=bool(record.svc_ui),
        tags=tuple(record.svc_tags or ()),
    )


async def fetch_token_book(client: PanoraClient) -> TokenBook:
    """Every token of the provider's full price list, shown or hidden (`panoraUI=true,false`).

    `false` alone would ask for the hidden tokens only: APT and USDC would be missing.
    """
    prices = await client.get_prices(ui_only=False)
    return TokenBook(token_of(r) for r in prices.records if r.token_address or r.fa_address)
