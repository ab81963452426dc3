"""How the backtest report writes a price: the `[display].price_quote` convention, per pair.

Every price the report shows (the trade table and `trades.csv`, the price chart's line,
mean, order levels, trade marks and average cost, the summary's average entry) is
"<quote> per <base>" with the quote `bot.price_view.PriceConvention` picks: the unit
`bot orders` uses, whichever way the strategy trades. A DCA buying APT with USDC and a
take_profit selling APT for USDC are both shown in `USDC per APT`.

A `PairView` turns the run's exact figures into that unit: an exchange's price is the
amount of the quote token over the amount of the base (sold / bought, or bought / sold),
an order's rate (bought per sold) is the rate or its inverse, a market price is the
base's USD price over the quote's. Each is one `Decimal` division of the figures
themselves, so an inverted price is never the inverse of a rounded one. The metrics'
accounting (invested, received, PnL) is untouched: only how a price is shown.

The convention knows tokens from the run's token book (the packaged token list the
runner trades with); a token the book does not know (a hand-made result) is matched and
named by the symbol the result gives it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from functools import cache

from bot.aptos.tokens import TokenBook
from bot.backtest.metrics import Metrics
from bot.backtest.result import BacktestResult
from bot.price_view import DEFAULT_PRICE_QUOTE, PriceConvention

__all__ = ["PairView", "pair_view", "position_view", "report_convention"]


@cache
def _run_book() -> TokenBook:
    """The packaged token list, the book the runner trades with (read once)."""
    from bot.paper.core.registry import PaperTokens

    return PaperTokens.from_token_list().book


def report_convention(price_quote: Iterable[str] = DEFAULT_PRICE_QUOTE) -> PriceConvention:
    """The convention of `[display].price_quote` over the run's token book."""
    return PriceConvention(price_quote, _run_book())


@dataclass(frozen=True)
class PairView:
    """A pair's prices as shown: `quote` (token key) per one `base`, in `unit`."""

    quote: str
    base: str
    quote_label: str
    base_label: str
    unit: str  # "USDC per APT"

    def exchange(self, sold_token: str, sold: Decimal, bought: Decimal) -> Decimal | None:
        """The price at which `sold` of `sold_token` went for `bought` of the other token.

        None when the amount of the base token is zero.
        """
        quote, base = (sold, bought) if sold_token == self.quote else (bought, sold)
        return quote / base if base else None

    def rate(self, sell_token: str, rate: Decimal | None) -> Decimal | None:
        """An order's limit price: `rate` is the other token per one `sell_token`."""
        if not rate:
            return None
        return 1 / rate if sell_token == self.quote else rate

    def market(self, token: str, token_usd: Decimal, other_usd: Decimal) -> Decimal | None:
        """The market price from USD prices: `token`'s (one of the pair) and the other's.

        None when the quote token's USD price is zero.
        """
        base_usd, quote_usd = token_usd, other_usd
        if token != self.base:
            base_usd, quote_usd = other_usd, token_usd
        return base_usd / quote_usd if quote_usd else None


def pair_view(
    result: BacktestResult, first: str, second: str, convention: PriceConvention | None = None
) -> PairView:
    """How prices between two of the run's tokens (keys) are shown.

    `convention`: the user's (`report_convention(settings.display.price_quote)`); None,
    the default preference (stablecoins, then APT).
    """
    convention = convention if convention is not None else report_convention()
    names = {key: _name(result, convention, key) for key in (first, second)}
    chosen = convention.quote_of(names[first], names[second])
    quote, base = (first, second) if chosen == names[first] else (second, first)
    return PairView(
        quote=quote,
        base=base,
        quote_label=convention.label(names[quote]),
        base_label=convention.label(names[base]),
        unit=convention.unit(names[first], names[second]),
    )


def position_view(
    result: BacktestResult, metrics: Metrics, convention: PriceConvention | None = None
) -> PairView | None:
    """The view of the position's pair (`metrics.quote`, `metrics.asset`); None without one."""
    if metrics.quote is None or metrics.asset is None:
        return None
    return pair_view(result, metrics.asset, metrics.quote, convention)


def _name(result: BacktestResult, convention: PriceConvention, key: str) -> str:
    """The text the convention knows `key` by: the key itself, or the result's symbol."""
    book = convention.book
    if book is not None and book.get(key) is not None:
        return key
    info = result.tokens.get(key)
    return info.symbol if info is not None else key
