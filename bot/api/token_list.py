"""`GET /tokenlist`: the provider's token list, the source of the token book.

Real evidence (docs/wire-decisions.md, row 38; tests/contract/PROVENANCE.md):

* the request: `@panoraexchange/swap-sdk` 1.3.1 (and 1.0.8), `dist/index.es.js`,
  `Token.getTokenList`: `GET /tokenlist` with the query parameters `chainId`,
  `tokenAddress` and `panoraTags` (each list comma-joined) and `panoraUI` passed as given
  ("Set as [true, false] to get all tokens in the list"), unset ones omitted. Nothing else
  is sent (no `isInPanoraTokenList`, no paging). `/prices` takes the same four filters
  (Panora docs, "Token Prices"), so both are written by `token_filters`.
* the answer: `{data: [...]}` (the SDK reads `const { data: tokens } = …`); records of
  SDK 1.3.1's `TokenInfo` (`dist/types/resources/type.d.ts`): the price record's fields
  (`usdPrice` too, `string | null`, but no `nativePrice`) plus `bridge?`, `logoUrl?`,
  `websiteUrl?`, `panoraIndex`, `coinGeckoId`, `coinMarketCapId`; Panora's docs example
  adds `isInPanoraTokenList` and `isBanned`, marked "will get deprecated" (the SDK drops
  them). Panora's own token-list records (GitHub `PanoraExchange/Aptos-Tokens`) have the
  same metadata without `panoraId`/`usdPrice`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated

from pydantic import BeforeValidator, Field

from bot.api.models import RejectedRecord, TokenRecord
from bot.api.params import ALL_TOKENS_UI
from bot.api.wire import MAX_COUNT, Flag, prefixed

__all__ = ["TokenList", "TokenListRecord", "token_filters"]


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _count_or_none(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT:
        return value
    return None


InfoText = Annotated[str | None, BeforeValidator(_text_or_none)]
"""Informative text (logo, website, bridge, CoinGecko id): anything but a string is None.
Nothing the bot decides depends on it, so it never sets a token aside."""
InfoCount = Annotated[int | None, BeforeValidator(_count_or_none)]
"""An informative whole number (list position, CoinMarketCap id); otherwise None."""


class TokenListRecord(TokenRecord):
    """One record of `GET /tokenlist` (SDK 1.3.1 `TokenInfo`): a token and its metadata.

    `is_banned` (the docs' deprecated flag) is read strictly: a token whose flag cannot be
    read is set aside rather than trusted; `True` counts as the `Banned` tag.
    """

    bridge: InfoText = None
    logo_url: InfoText = Field(default=None, alias="logoUrl")
    website_url: InfoText = Field(default=None, alias="websiteUrl")
    svc_index: InfoCount = Field(default=None, alias="svcIndex")
    coin_gecko_id: InfoText = Field(default=None, alias="coinGeckoId")
    coin_market_cap_id: InfoCount = Field(default=None, alias="coinMarketCapId")
    is_in_token_list: Flag | None = Field(default=None, alias="isInPanoraTokenList")
    is_banned: Flag | None = Field(default=None, alias="isBanned")

    @property
    def tags(self) -> tuple[str, ...]:
        """The provider's tags, with `Banned` added when `isBanned` says so."""
        tags = tuple(self.svc_tags or ())
        return (*tags, "Banned") if self.is_banned and "Banned" not in tags else tags


@dataclass(frozen=True)
class TokenList:
    """The token list's records, with any malformed record set aside."""

    records: list[TokenListRecord]
    rejected: list[RejectedRecord] = field(default_factory=list)


def token_filters(
    chain_id: int,
    prefix: str,
    tokens: Sequence[str] | None,
    ui_only: bool | None,
    tags: Sequence[str] | None,
) -> list[tuple[str, str]]:
    """The query of `/prices` and `/tokenlist`: `chainId`, then the filters that are set.

    `ui_only`: True → `panoraUI=true` (shown tokens), False → `panoraUI=true,false` (every
    token, `ALL_TOKENS_UI`), None → not sent (the provider's default, shown tokens).
    """
    params: list[tuple[str, str]] = [("chainId", str(chain_id))]
    if tokens:
        params.append(("tokenAddress", ",".join(tokens)))
    if ui_only is not None:
        params.append((prefixed("svcUI", prefix), "true" if ui_only else ALL_TOKENS_UI))
    if tags:
        params.append((prefixed("svcTags", prefix), ",".join(tags)))
    return params
