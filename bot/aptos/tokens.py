"""Token identities: a token is known by its legacy coin type, its FA address, or both.

`TokenBook` finds a token by either identity (in any accepted spelling) or by symbol.
It is filled from the provider's price records or token list, so the client, the policy,
the journal and the paper world agree on which token a text names.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bot.aptos.address import Address, AddressError, canonical_type_text, is_coin_type

__all__ = ["Token", "TokenBook", "TokenLookupError", "token_key"]


class TokenLookupError(LookupError):
    """No token, or more than one, matches a name."""


def token_key(text: str) -> str:
    """The canonical key of a coin type or FA address text (AIP-40 addresses, no spaces).

    Raises:
        TokenLookupError: when the text is neither a coin type nor an address.
    """
    if is_coin_type(text):
        return canonical_type_text(text)
    try:
        return str(Address.parse(text))
    except AddressError:
        raise TokenLookupError(f"not a coin type or FA address: {text!r}") from None


@dataclass(frozen=True)
class Token:
    """One token: identities, decimals and the provider's metadata."""

    decimals: int
    symbol: str
    coin_type: str | None = None
    fa_address: str | None = None
    name: str | None = None
    provider_symbol: str | None = None
    ui: bool = False
    tags: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.coin_type is None and self.fa_address is None:
            raise ValueError(f"token {self.symbol} has neither a coin type nor an FA address")
        if self.coin_type is not None:
            object.__setattr__(self, "coin_type", token_key(self.coin_type))
        if self.fa_address is not None:
            object.__setattr__(self, "fa_address", token_key(self.fa_address))

    @property
    def address(self) -> str:
        """The identity to send to the provider: the coin type if any, else the FA address."""
        return self.coin_type or self.fa_address or ""

    @property
    def keys(self) -> tuple[str, ...]:
        """Every canonical identity of this token."""
        return tuple(k for k in (self.coin_type, self.fa_address) if k)

    @property
    def banned(self) -> bool:
        """True when the provider tags the token `Banned`."""
        return "Banned" in self.tags

    @classmethod
    def from_listing(cls, item: dict[str, Any], prefix: str = "panora") -> Token:
        """Build from a token-list entry or price record (`svc…` or `<prefix>…` names)."""

        def pick(name: str) -> Any:
            return item.get(f"svc{name}", item.get(f"{prefix}{name}"))

        tags = pick("Tags") or ()
        if isinstance(tags, str):  # a comma-separated text (wire-decisions #1)
            tags = [t.strip() for t in tags.split(",") if t.strip()]
        ui = pick("UI")
        return cls(
            decimals=int(item["decimals"]),
            symbol=str(item.get("symbol") or "?"),
            coin_type=item.get("tokenAddress") or None,
            fa_address=item.get("faAddress") or None,
            name=item.get("name"),
            provider_symbol=pick("Symbol"),
            ui=ui.strip().lower() == "true" if isinstance(ui, str) else bool(ui),
            tags=tuple(str(t) for t in tags),
        )


class TokenBook:
    """Tokens indexed by every identity and by symbol."""

    def __init__(self, tokens: Iterable[Token] = ()) -> None:
        self._by_key: dict[str, Token] = {}
        self._by_symbol: dict[str, list[Token]] = {}
        self._by_provider_symbol: dict[str, list[Token]] = {}
        for token in tokens:
            self.add(token)

    def add(self, token: Token) -> None:
        """Index a token (a later entry with the same identity replaces the earlier one)."""
        for key in token.keys:
            self._by_key[key] = token
        for index, symbol in (
            (self._by_symbol, token.symbol),
            (self._by_provider_symbol, token.provider_symbol),
        ):
            if symbol:
                bucket = index.setdefault(symbol.lower(), [])
                if token not in bucket:
                    bucket.append(token)

    def __iter__(self) -> Iterator[Token]:
        seen: set[int] = set()
        for token in self._by_key.values():
            if id(token) not in seen:
                seen.add(id(token))
                yield token

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def get(self, identity: str) -> Token | None:
        """The token with this coin type or FA address (any spelling), or None."""
        try:
            return self._by_key.get(token_key(identity))
        except TokenLookupError:
            return None

    def tokens_named(self, names: Iterable[str]) -> dict[str, Token]:
        """The tokens among `names`, by address, first seen first.

        Strings that name no token ("1 hour", a label) are skipped: what strategies'
        parameters name is found this way.
        """
        found: dict[str, Token] = {}
        for name in names:
            try:
                token = self.find(name)
            except TokenLookupError:
                continue
            found.setdefault(token.address, token)
        return found

    def find(self, name: str) -> Token:
        """The token named by a coin type, an FA address or a symbol.

        A symbol is looked up first among the provider's symbols (`USDC` is native USDC,
        bridged copies are `lzUSDC`, `whUSDC`…), then among on-chain symbols. Tokens tagged
        Banned never make a real token's symbol ambiguous.

        Raises:
            TokenLookupError: unknown, or a symbol shared by several tokens (the message
                lists their addresses so the user can pick one).
        """
        token = self.get(name)
        if token is not None:
            return token
        wanted = name.strip().lower()
        matches: list[Token] = []
        for index in (self._by_provider_symbol, self._by_symbol):
            matches = index.get(wanted, [])
            if len(matches) > 1:
                matches = [t for t in matches if not t.banned] or matches
            if len(matches) == 1:
                return matches[0]
            if matches:
                break
        if not matches:
            raise TokenLookupError(f"unknown token {name!r}")
        listed = ", ".join(t.address for t in matches[:5])
        raise TokenLookupError(f"symbol {name!r} is ambiguous; use an address: {listed}")
