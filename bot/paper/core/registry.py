"""The paper world's token registry: which tokens exist, by coin type and/or FA address.

It starts from the provider's packaged token list (`bot/paper/data/token-list.json`) and
can be extended with user-configured tokens. Every lookup goes through `TokenBook`, so a
token is found by its coin type or its FA address in any accepted spelling.

`select` implements the token filters of GET /prices (spec 4.1), decided as follows:

* `addresses` given (coin types and/or FA addresses): exactly those known tokens, in
  request order, each once (a coin type and the FA address of the same token count as
  one); unknown or blank entries are skipped. The UI flag is **not** applied: an explicit
  list is honoured whatever `svcUI` says. An empty list counts as "not given". Entries
  are not split on commas (generic coin types contain commas): the caller splits the
  query text at commas outside `<…>`.
* no `addresses`: every token with a price ("liquidity above a nominal threshold" is read
  as "has a price"; the caller passes `priced` to drop tokens it cannot price) whose UI
  flag is one of `ui`: `SHOWN` by default (`svcUI=true`), `ALL` for `svcUI=true,false` (the
  real "all tokens" form: SDK 1.3.1 and the docs), only hidden ones for `svcUI=false`.
* `tags` (in both cases): tokens having ANY of the given tags, compared case-insensitively;
  an entry may itself be a comma-separated list (the wire form of `svcTags`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Final

import bot.paper
from bot.aptos.tokens import Token, TokenBook, TokenLookupError, token_key
from bot.domain import APT_COIN_TYPE, APT_FA_ADDRESS
from bot.money import loads_exact

__all__ = [
    "ALL",
    "APT_COIN_TYPE",
    "APT_FA_ADDRESS",
    "SHOWN",
    "PaperTokens",
    "UnknownToken",
    "default_token_list_path",
    "is_native_apt",
]

SHOWN: Final = frozenset({True})
"""`svcUI=true` (the default): tokens shown in the provider's UI."""
ALL: Final = frozenset({True, False})
"""`svcUI=true,false`: every token, shown or hidden."""


class UnknownToken(LookupError):
    """No registered token has this coin type or FA address."""


def default_token_list_path() -> Path:
    """The packaged token list (`bot/paper/data/token-list.json`)."""
    return Path(bot.paper.__file__).parent / "data" / "token-list.json"


def is_native_apt(token: Token) -> bool:
    """True for the chain's native token (coin `0x1::aptos_coin::AptosCoin` / FA `0xa`)."""
    return APT_COIN_TYPE in token.keys or APT_FA_ADDRESS in token.keys


def _split_tags(tags: Iterable[str]) -> set[str]:
    return {part.strip().lower() for tag in tags for part in tag.split(",") if part.strip()}


class PaperTokens:
    """The registered tokens, in list order, found by any identity.

    Adding a token that shares an identity with registered ones replaces them (at the
    position of the first one), so one token never hides behind two entries.
    """

    def __init__(self, tokens: Iterable[Token] = ()) -> None:
        self._tokens: list[Token] = []
        self._book = TokenBook()
        self._listing: dict[str, tuple[Token, dict[str, Any]]] = {}
        for token in tokens:
            self.add(token)

    @classmethod
    def from_token_list(cls, path: Path | None = None) -> PaperTokens:
        """Load a token list (default: the packaged one) with `Token.from_listing`.

        Raises:
            ValueError: the file is not a JSON list, or an entry cannot be built (the
                message names its index and symbol).
        """
        source = path if path is not None else default_token_list_path()
        items: Any = loads_exact(source.read_text(encoding="utf-8"))
        if not isinstance(items, list):
            raise ValueError(f"{source}: a token list must be a JSON list")
        tokens: list[Token] = []
        for index, item in enumerate(items):
            symbol = item.get("symbol", "?") if isinstance(item, dict) else "?"
            try:
                if not isinstance(item, dict):
                    raise TypeError(f"expected an object, got {type(item).__name__}")
                tokens.append(Token.from_listing(item))
            except (KeyError, TypeError, ValueError, LookupError) as exc:
                raise ValueError(
                    f"{source}: token-list entry #{index} ({symbol}) is invalid: {exc}"
                ) from exc
        registry = cls(tokens)
        registry._listing = {t.address: (t, item) for t, item in zip(tokens, items, strict=True)}
        return registry

    def listing(self, token: Token) -> dict[str, Any]:
        """The token-list entry `token` was loaded from (logo, bridge, ids…), or `{}`."""
        entry = self._listing.get(token.address)
        return dict(entry[1]) if entry is not None and entry[0] == token else {}

    @property
    def book(self) -> TokenBook:
        """The `TokenBook` over the registered tokens."""
        return self._book

    @property
    def tokens(self) -> list[Token]:
        """The registered tokens in list order (a copy)."""
        return list(self._tokens)

    def __len__(self) -> int:
        return len(self._tokens)

    def __iter__(self) -> Iterator[Token]:
        return iter(list(self._tokens))

    def __contains__(self, identity: object) -> bool:
        return isinstance(identity, str) and self.get(identity) is not None

    def add(self, token: Token) -> None:
        """Register a token (tests, demos, user configuration).

        A registered token sharing its coin type or FA address is replaced.
        """
        replaced = [old for old in self._tokens if set(old.keys) & set(token.keys)]
        if not replaced:
            self._tokens.append(token)
            self._book.add(token)
            return
        position = self._tokens.index(replaced[0])
        kept = [old for old in self._tokens if old not in replaced]
        kept.insert(min(position, len(kept)), token)
        self._tokens = kept
        self._book = TokenBook(kept)

    def get(self, identity: str) -> Token | None:
        """The token with this coin type or FA address (any spelling), or None."""
        return self._book.get(identity)

    def key_of(self, identity: str) -> str:
        """The key a token's price path is filed under.

        Its `address` (the coin type when it has one) if registered, else the canonical
        key (`token_key`, which raises for a text that is not an identity).
        """
        token = self._book.get(identity)
        return token.address if token is not None else token_key(identity)

    def require(self, identity: str) -> Token:
        """The token with this coin type or FA address.

        Raises:
            UnknownToken: naming the text, when no registered token has it.
        """
        token = self._book.get(identity)
        if token is None:
            raise UnknownToken(f"unknown token {identity!r}")
        return token

    def find(self, name: str) -> Token:
        """The token named by an identity or a symbol (`USDC`, `lzUSDC`, `APT`).

        For config files and the faucet; the provider's endpoints take addresses only.

        Raises:
            UnknownToken: unknown or ambiguous, with the reason.
        """
        try:
            return self._book.find(name)
        except TokenLookupError as exc:
            raise UnknownToken(str(exc)) from None

    @property
    def apt(self) -> Token:
        """The native token, APT (`0x1::aptos_coin::AptosCoin` / FA `0xa`).

        Raises:
            UnknownToken: when the registry does not hold it.
        """
        return self._book.get(APT_COIN_TYPE) or self.require(APT_FA_ADDRESS)

    def select(
        self,
        addresses: list[str] | None,
        ui: frozenset[bool] = SHOWN,
        tags: list[str] | None = None,
        *,
        priced: Callable[[Token], bool] | None = None,
    ) -> list[Token]:
        """The tokens GET /prices returns for these filters (see the module docstring).

        Args:
            addresses: coin types and/or FA addresses (`tokenAddress`), or None for all.
            ui: the UI flags wanted (`svcUI`: `true` → `SHOWN`, `false` → only hidden
                tokens, `true,false` → `ALL`); applied only when no addresses are given.
            tags: `svcTags`; keep tokens having any of them (case-insensitive).
            priced: applied only when no addresses are given: keep tokens it accepts
                (the caller's "has a price" test); None keeps every token.
        """
        wanted = [text.strip() for text in addresses or () if text.strip()]
        chosen: list[Token]
        if wanted:
            chosen = []
            seen: set[str] = set()
            for text in wanted:
                token = self._book.get(text)
                if token is not None and token.address not in seen:
                    seen.add(token.address)
                    chosen.append(token)
        else:
            chosen = [t for t in self._tokens if t.ui in ui and (priced is None or priced(t))]
        wanted_tags = _split_tags(tags or ())
        if wanted_tags:
            chosen = [t for t in chosen if _split_tags(t.tags) & wanted_tags]
        return chosen
