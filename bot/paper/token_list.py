"""Which tokens the paper world's `GET /tokenlist` lists, read from the real query.

The query is SDK 1.3.1's (`Token.getTokenList`): `chainId`, `tokenAddress` (comma-joined
coin types and/or FA addresses), `panoraUI` (`true` by default, `true,false` for every
token: `ui_filter`) and `panoraTags` (comma-joined). The SDK documents the default: with
no `tokenAddress`, "all tokens labeled as Verified or Recognized". So, with neither
`tokenAddress` nor `panoraTags`, the paper world lists the tokens tagged `Verified` or
`Recognized` (never the `Banned`, `LP` or `RWA`-only ones); with tags, those having any of
them; with addresses, exactly those (the UI flag not applied), as `/prices` does.
Unlike `/prices`, a token without a price is listed (its `usdPrice` is null).
"""

from __future__ import annotations

from typing import Final

from bot.aptos.address import split_names
from bot.aptos.tokens import Token
from bot.paper.core.registry import PaperTokens
from bot.paper.faces.asgi import Request
from bot.paper.swap_query import ui_filter

__all__ = ["DEFAULT_TAGS", "listed_tokens"]

DEFAULT_TAGS: Final = ("Verified", "Recognized")
"""What the token list holds when no address or tag is asked for (SDK 1.3.1 doc comment)."""


def listed_tokens(tokens: PaperTokens, request: Request, prefix: str) -> list[Token]:
    """The tokens a `/tokenlist` request asks for (see the module docstring).

    Raises:
        HttpError: 400 for a `panoraUI` other than `true`, `false` or `true,false`.
    """
    raw = request.param("tokenAddress")
    addresses = split_names(raw) if raw else None
    ui = ui_filter(request.param(f"{prefix}UI") or request.param("svcUI"), prefix)
    tags_text = request.param(f"{prefix}Tags") or request.param("svcTags")
    tags = [t.strip() for t in tags_text.split(",") if t.strip()] if tags_text else None
    if not addresses and not tags:
        tags = list(DEFAULT_TAGS)
    return tokens.select(addresses, ui=ui, tags=tags)
