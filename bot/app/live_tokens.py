"""The provider's token list for the checks, cached beside the journal.

`bot config check` and `bot strategies check` in live mode resolve token names against
the provider's own list (`GET /tokenlist`, `bot.api.tokens.fetch_token_book`). It is
fetched at most once per `MAX_AGE` and kept in `provider-tokens.json` in the data folder
(the journal's folder): checking a config twice in a row asks the provider once. A cache
that cannot be read (edited, cut short) counts as absent. When the provider cannot be
reached and no fresh cache exists, `ProviderTokens.book` raises `TokenSourceError`, so
the caller says so instead of claiming the tokens are fine.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final

from bot.app.strategy_checks import TokenSourceError
from bot.aptos.tokens import Token, TokenBook

__all__ = ["CACHE_NAME", "MAX_AGE", "ProviderTokens", "read_cache", "write_cache"]

CACHE_NAME: Final = "provider-tokens.json"
MAX_AGE: Final = timedelta(hours=6)
"""How long a fetched token list stands for the provider's (new listings are rare)."""

Fetch = Callable[[], Awaitable[TokenBook]]


def _listing(token: Token) -> dict[str, Any]:
    return {
        "decimals": token.decimals,
        "symbol": token.symbol,
        "tokenAddress": token.coin_type,
        "faAddress": token.fa_address,
        "name": token.name,
        "svcSymbol": token.provider_symbol,
        "svcUI": token.ui,
        "svcTags": list(token.tags),
    }


def write_cache(path: Path, book: TokenBook, fetched_at: datetime) -> None:
    """Keep `book` in `path` (written whole, then renamed: never half a file)."""
    data = {"fetched_at": fetched_at.isoformat(), "tokens": [_listing(t) for t in book]}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(json.dumps(data), encoding="utf-8")
    os.replace(partial, path)


def read_cache(path: Path) -> tuple[datetime, TokenBook] | None:
    """(when fetched, the tokens) of a cache file, or None when absent or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        fetched = datetime.fromisoformat(data["fetched_at"])
        tokens = [Token.from_listing(item) for item in data["tokens"]]
    except (OSError, ValueError, KeyError, TypeError, LookupError):
        return None
    if fetched.tzinfo is None or not tokens:
        return None
    return fetched, TokenBook(tokens)


class ProviderTokens:
    """The provider's token list (a `TokenSource`), from a fresh cache or fetched anew.

    Args:
        fetch: asks the provider (`fetch_token_book` on a client); any exception it
            raises means "unreachable".
        cache: the cache file, or None for none (a journal that is no file).
        now: the moment of this check (injected).
        run: runs the coroutine (`asyncio.run` in the CLI).
    """

    label = "provider's token list"

    def __init__(
        self,
        fetch: Fetch,
        cache: Path | None,
        now: datetime,
        run: Callable[[Awaitable[TokenBook]], TokenBook],
        max_age: timedelta = MAX_AGE,
    ) -> None:
        self._fetch = fetch
        self._cache = cache
        self._now = now
        self._run = run
        self._max_age = max_age

    def book(self) -> TokenBook:
        """The cached list while fresh (younger than `max_age`), else fetched and cached.

        Raises:
            TokenSourceError: not cached and the provider cannot be reached.
        """
        cached = read_cache(self._cache) if self._cache is not None else None
        if cached is not None and timedelta(0) <= self._now - cached[0] < self._max_age:
            return cached[1]
        try:
            book = self._run(self._fetch())
        except Exception as exc:  # network, provider, malformed: all "cannot be had"
            detail = (str(exc) or type(exc).__name__).splitlines()[0]
            raise TokenSourceError(f"the provider's token list cannot be had: {detail}") from None
        if not len(book):
            raise TokenSourceError("the provider's token list has no usable token")
        if self._cache is not None:
            with contextlib.suppress(OSError):  # a cache is a convenience, not a need
                write_cache(self._cache, book, self._now)
        return book
