"""Which tokens the recorder records: the configured list, else what the strategies use.

"Configured tokens only": `[record].tokens` (or `--tokens`) when given; otherwise the
tokens the enabled strategies declare (`Strategy.tokens()`, gathered by
`bot.engine.plugins.declared_tokens`) that the token book resolves — the tokens the engine
prices and gives the balances of.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.aptos.tokens import Token, TokenBook, TokenLookupError, token_key

__all__ = ["TokenChoice", "choose_tokens", "offline_token"]


@dataclass
class TokenChoice:
    """The tokens to record, and the explicitly named ones that could not be resolved."""

    tokens: list[Token] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def add(self, token: Token) -> None:
        """Add a token once (its coin type and FA address count as one)."""
        if all(token.keys != known.keys for known in self.tokens):
            self.tokens.append(token)


def choose_tokens(book: TokenBook, explicit: Sequence[str], declared: Iterable[str]) -> TokenChoice:
    """The explicit names resolved (each failure a problem), or the declared tokens.

    `declared` are the strategies' token names; those the book does not know are skipped.
    """
    choice = TokenChoice()
    if explicit:
        for name in explicit:
            try:
                choice.add(book.find(name))
            except TokenLookupError as exc:
                choice.problems.append(str(exc))
        return choice
    for token in book.tokens_named(declared).values():
        choice.add(token)
    return choice


def offline_token(name: str) -> tuple[str, str | None, Token | None]:
    """(key, symbol, token) of a name without the network: the packaged token list.

    A coin type or FA address not in the list is accepted as it is (no symbol).

    Raises:
        TokenLookupError: an unknown or ambiguous symbol (with the reason).
    """
    from bot.paper.core.registry import PaperTokens, UnknownToken

    try:
        token = PaperTokens.from_token_list().find(name)
    except UnknownToken as exc:
        try:
            return token_key(name), None, None
        except TokenLookupError:
            raise TokenLookupError(f"{exc}; give its coin type or FA address") from None
    return token.address, token.symbol, token
