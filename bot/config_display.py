"""`[display]`: how the bot shows what it does (one price convention for every output)."""

from __future__ import annotations

from pydantic import Field, field_validator

from bot.config_base import Section
from bot.price_view import DEFAULT_PRICE_QUOTE

__all__ = ["DisplaySettings"]


class DisplaySettings(Section):
    """`[display]`: presentation only; nothing here changes what is traded."""

    price_quote: list[str] = Field(default_factory=lambda: list(DEFAULT_PRICE_QUOTE), max_length=32)
    """Which token a price between two tokens is counted in, most preferred first: a price
    is shown as "<quote> per <other>" (USDC per APT), the quote being the pair's token that
    comes first here (by symbol, case-insensitively, or by coin type or address). A pair of
    which neither token is listed is quoted in the token whose symbol sorts first
    (`bot.price_view`)."""
    summary_every_seconds: int = Field(default=3600, ge=0, le=366 * 86_400)
    """`bot run` prints a one-line summary per strategy (invested, received, average entry
    vs market, value, P&L) this often, in seconds of the market clock; 0: never."""

    @field_validator("price_quote")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        names = [name.strip() for name in value]
        for name in names:
            if not name or len(name) > 200:
                raise ValueError(f"{name!r} is not a token symbol, coin type or address")
        return names
