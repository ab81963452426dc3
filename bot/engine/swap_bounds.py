"""A swap's bounds from the bot's own numbers and a reference price (`engine.reference`).

The provider's answer to `POST /swap` is untrusted (docs/signer.md, "Trust model"): what is
sold, the most that may be sold, and the least that must come back are computed here from
the strategy's action, a reference price and `[risk]`, and the signer holds the signed
transaction to them. The quote is only checked against the reference: a quote whose rate
deviates from it by more than `[risk].max_reference_deviation_percent` is refused.

* ExactIn: sell exactly the action's amount; the minimum out is the reference output less
  the tolerance, where tolerance = `max_reference_deviation_percent` (fees, price impact,
  the reference's own lag) + the action's slippage (`[risk].max_slippage_percent` when the
  action leaves it to the provider).
* ExactOut: buy exactly the action's amount; the most that may be sold is the reference
  input plus the tolerance.

All arithmetic is exact: integer base units and `Decimal` rates, rounded so that rounding
never loosens a bound (the minimum out up, the maximum in down).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext

from bot.aptos.tokens import Token

__all__ = [
    "SwapBounds",
    "SwapLimits",
    "bounds_exact_in",
    "bounds_exact_out",
    "quote_deviation",
    "usd_ratio",
]

_PRECISION = 100


def usd_ratio(sell_usd: Decimal, buy_usd: Decimal) -> Decimal:
    """Units of the bought token one unit of the sold token is worth, from USD prices."""
    with localcontext() as ctx:
        ctx.prec = _PRECISION
        return sell_usd / buy_usd


@dataclass(frozen=True)
class SwapLimits:
    """`[risk]`'s numbers for swaps."""

    max_reference_deviation_percent: Decimal
    max_slippage_percent: Decimal

    def tolerance(self, slippage: Decimal | None) -> Decimal:
        """Percent a fill may fall short of the reference: deviation + slippage."""
        chosen = self.max_slippage_percent if slippage is None else slippage
        return self.max_reference_deviation_percent + min(chosen, self.max_slippage_percent)


@dataclass(frozen=True)
class SwapBounds:
    """The bot's own numbers for one swap, in base units."""

    sell_amount: int
    """ExactIn: the amount sold. ExactOut: the most that may be sold."""
    min_out: int
    """ExactIn: the least that must come back. ExactOut: the exact amount bought."""
    reference: int
    """ExactIn: the reference output. ExactOut: the reference input."""


def _scaled(units: int, rate: Decimal, shift: int) -> Decimal:
    return Decimal(units) * rate * Decimal(10) ** shift


def bounds_exact_in(
    sell_units: int, rate: Decimal, sell: Token, buy: Token, tolerance: Decimal
) -> SwapBounds:
    """Sell exactly `sell_units`; at least the reference output less `tolerance` percent."""
    with localcontext() as ctx:
        ctx.prec = _PRECISION
        reference = _scaled(sell_units, rate, buy.decimals - sell.decimals)
        least = reference * (100 - tolerance) / 100
        return SwapBounds(
            sell_amount=sell_units,
            min_out=max(1, int(least.to_integral_value(ROUND_CEILING))),
            reference=int(reference.to_integral_value(ROUND_FLOOR)),
        )


def bounds_exact_out(
    buy_units: int, rate: Decimal, sell: Token, buy: Token, tolerance: Decimal
) -> SwapBounds:
    """Buy exactly `buy_units`; sell at most the reference input plus `tolerance` percent."""
    with localcontext() as ctx:
        ctx.prec = _PRECISION
        reference = _scaled(buy_units, 1 / rate, sell.decimals - buy.decimals)
        most = reference * (100 + tolerance) / 100
        return SwapBounds(
            sell_amount=int(most.to_integral_value(ROUND_FLOOR)),
            min_out=buy_units,
            reference=int(reference.to_integral_value(ROUND_CEILING)),
        )


def quote_deviation(quoted: int, reference: int) -> Decimal:
    """Percent by which a quoted amount differs from the reference (signed, exact)."""
    if reference <= 0:
        return Decimal(0) if quoted == reference else Decimal(100)
    with localcontext() as ctx:
        ctx.prec = _PRECISION
        return (Decimal(quoted) - reference) * 100 / reference
