"""One way to show a price: "<quote> per <other>", the quote chosen once by the user.

A price between two tokens can be written two ways (0.2028 APT per USDC is 4.931 USDC per
APT). Every output of the bot writes it one way, the `[display].price_quote` convention:
the quote is whichever token of the pair comes first in the preference list (a symbol,
matched case-insensitively, or a coin type / FA address); a pair of which neither token is
listed is quoted in the token whose name sorts first (case-insensitively, then by its
identity), so a pair is shown the same way whichever way it trades.

Numbers are exact `Decimal`s until they are shown. A shown price is rounded to as many
significant digits as the more precise number it is computed from (a rate of 0.2028 has 4),
at least `MIN_DIGITS` and at most `MAX_DIGITS` (`MEASURED_DIGITS` for a price computed from
two amounts: an average, a fill); values that need fewer are shown exactly.
A bound (a limit order's rate, a DCA's price range) is rounded outward, so what is shown is
true of the order: "≤ 4.931" for a true bound of 4.93096… (ROUND_CEILING), "≥ 0.2027" for
0.20279… (ROUND_FLOOR); but the shortest number that names the same rate at the rate's own
precision is preferred (a ladder's rate 1/4.9 = 0.204081632653, 12 digits, is "≤ 4.9", not
"≤ 4.900000001"; 4.9 rounded back to 12 digits is that rate). Any other price (an average,
a fill) is rounded half to even.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal, localcontext
from typing import Final, Literal

from bot.aptos.tokens import Token, TokenBook, TokenLookupError, token_key
from bot.money import format_decimal

__all__ = [
    "DEFAULT_PRICE_QUOTE",
    "MAX_DIGITS",
    "MEASURED_DIGITS",
    "MIN_DIGITS",
    "USD_PLACES",
    "Bound",
    "Price",
    "PriceConvention",
    "amounts_text",
    "common_unit",
    "measured_price_text",
    "percent_text",
    "round_significant",
    "usd_text",
]

DEFAULT_PRICE_QUOTE: Final[tuple[str, ...]] = ("USDC", "USDt", "USDT", "APT")
"""The default preference: stablecoins first, then APT."""
MIN_DIGITS: Final = 4
"""A shown price has at least this many significant digits (unless it is exact with fewer)."""
MAX_DIGITS: Final = 10
"""… and at most this many."""
MEASURED_DIGITS: Final = 6
"""A price computed from two amounts (an average, a fill) has at most this many."""
USD_PLACES: Final = 2
"""A shown USD figure (a value, a P&L) has this many decimal places, half to even."""
_CENT: Final = Decimal(1).scaleb(-USD_PLACES)
_WORK_PRECISION: Final = 60

Bound = Literal["min", "max"]
"""How a rate limits an order: "min", it takes at least the rate; "max", at most."""


@dataclass(frozen=True)
class Price:
    """A price as shown: `value` of `quote` per one `base` (labels), maybe a bound."""

    value: Decimal
    quote: str
    base: str
    relation: Literal["", "≤", "≥"] = ""

    @property
    def unit(self) -> str:
        """`USDC per APT`."""
        return f"{self.quote} per {self.base}"

    @property
    def number(self) -> str:
        """The value with its relation, without the unit: `≤ 4.931`."""
        text = format_decimal(self.value)
        return f"{self.relation} {text}" if self.relation else text

    def __str__(self) -> str:
        return f"{self.number} {self.unit}"


def round_significant(value: Decimal, digits: int, rounding: str = ROUND_HALF_EVEN) -> Decimal:
    """`value` rounded to `digits` significant digits with `rounding` (a `decimal` mode).

    Zero and non-finite values are returned as they are; a value with fewer significant
    digits is returned unchanged (`5` stays `5`).
    """
    if digits < 1:
        raise ValueError("digits must be at least 1")
    if not value.is_finite() or value.is_zero():
        return value
    quantum = Decimal(1).scaleb(value.adjusted() - digits + 1)
    with localcontext() as ctx:
        ctx.prec = max(ctx.prec, digits + 2, len(value.as_tuple().digits) + 2)
        return value.quantize(quantum, rounding=rounding)


def usd_text(value: Decimal | None, *, signed: bool = False) -> str:
    """A USD figure as every output shows it: `1,234.50 USD` (`USD_PLACES`, half to even).

    `n/a` when unknown; `signed`: with its sign, `+1.20 USD`. A figure that rounds to zero
    has no sign of its own: a loss of 0.004 USD is `0.00 USD` (`+0.00 USD`), never `-0.00`.
    """
    if value is None:
        return "n/a"
    shown = _rounded(value, _CENT)
    return f"{shown:+,.{USD_PLACES}f} USD" if signed else f"{shown:,.{USD_PLACES}f} USD"


def percent_text(value: Decimal) -> str:
    """A percentage with its sign and two places (half to even): `+0.36 %`, never `-0.00 %`."""
    return f"{_rounded(value, _CENT):+} %"


def amounts_text(sums: Mapping[str, Decimal], prices: PriceConvention, *, none: str = "-") -> str:
    """Amounts of tokens as every output shows them: exact, named by `prices`' labels.

    `10 USDC, 1.5 APT`; `none` when there are none.
    """
    if not sums:
        return none
    return ", ".join(f"{format_decimal(a)} {prices.label(t)}" for t, a in sums.items())


def measured_price_text(value: Decimal | None) -> str:
    """A price computed from amounts (an average entry, a market mean), without its unit.

    `MEASURED_DIGITS` significant digits, half to even; `n/a` when unknown.
    """
    return "n/a" if value is None else format_decimal(round_significant(value, MEASURED_DIGITS))


def _rounded(value: Decimal, quantum: Decimal) -> Decimal:
    """`value` rounded to `quantum` (half to even), a zero without a minus sign."""
    shown = value.quantize(quantum, rounding=ROUND_HALF_EVEN)
    return abs(shown) if shown.is_zero() else shown


def _significant(value: Decimal) -> int:
    """How many significant digits `value` is written with (`0.2028` → 4, `1000` → 1)."""
    if not value.is_finite() or value.is_zero():
        return 1
    return len(value.normalize().as_tuple().digits)


class PriceConvention:
    """Which token of a pair prices are counted in, and how a price is written.

    `quotes`: the preference list, most preferred first (`[display].price_quote`).
    `book`: tokens, to match addresses with symbols and to name tokens by symbol; without
    one, a token is matched and named by the text it is given as.
    `short_names`: an unknown address is named by its first characters (tables).
    """

    def __init__(
        self,
        quotes: Iterable[str] = DEFAULT_PRICE_QUOTE,
        book: TokenBook | None = None,
        *,
        short_names: bool = False,
    ) -> None:
        self.quotes: tuple[str, ...] = tuple(q.strip() for q in quotes if q.strip())
        self.book = book
        self.short_names = short_names
        self._preferred = [(q, self._resolve(q)) for q in self.quotes]
        self._quote_cache: dict[tuple[str, str], str] = {}

    def __repr__(self) -> str:
        return f"PriceConvention({list(self.quotes)!r})"

    # -- names and identities ------------------------------------------------------------

    def _resolve(self, text: str) -> Token | None:
        """The book's token for a coin type, an FA address or a symbol (None: unknown)."""
        if self.book is None:
            return None
        token = self.book.get(text)
        if token is None:
            try:
                token = self.book.find(text)
            except TokenLookupError:  # unknown, or a symbol several tokens share
                return None
        return token

    def label(self, token: str) -> str:
        """How `token` (a symbol, coin type or FA address) is named: its symbol if known.

        The provider's symbol first (`lzUSDC`, where the chain says `USDC` for several
        tokens), else the on-chain one; an unknown identity in its canonical form (with
        `short_names`, its first 10 characters and `…`), any other text as given.
        """
        known = self._resolve(token)
        if known is not None:
            return known.provider_symbol or known.symbol
        try:
            key = token_key(token)
        except TokenLookupError:
            return token.strip()  # a symbol, as given
        return key if not self.short_names or len(key) <= 14 else key[:10] + "…"

    def rank(self, token: str) -> int | None:
        """`token`'s place in the preference list (0: most preferred), or None if absent.

        Where the book knows both the entry and the token, they match when they are the
        same token (so `USDC` is native USDC, not a bridged token whose on-chain symbol is
        also USDC); otherwise by name (case-insensitive) or by canonical identity.
        """
        known = self._resolve(token)
        names = {token.strip().lower()}
        keys: set[str] = set(known.keys) if known is not None else set()
        if known is not None:
            names |= {known.symbol.lower(), (known.provider_symbol or known.symbol).lower()}
        with suppress(TokenLookupError):
            keys.add(token_key(token))
        for place, (entry, entry_token) in enumerate(self._preferred):
            if entry_token is not None and known is not None:
                if set(entry_token.keys) & keys:
                    return place
                continue
            if entry.lower() in names:
                return place
            with suppress(TokenLookupError):
                if token_key(entry) in keys:
                    return place
        return None

    def quote_of(self, first: str, second: str) -> str:
        """Which of two tokens a price between them is counted in (one of the two texts).

        The better-ranked one; when both or neither are listed (a tie), the one whose name
        sorts first (case-insensitively), then by identity: the same answer for (a, b) and
        (b, a).
        """
        cached = self._quote_cache.get((first, second))
        if cached is not None:
            return cached
        ranks = [self.rank(first), self.rank(second)]
        if ranks[0] is not None and (ranks[1] is None or ranks[0] < ranks[1]):
            chosen = first
        elif ranks[1] is not None and (ranks[0] is None or ranks[1] < ranks[0]):
            chosen = second
        else:
            chosen = min((first, second), key=self._order_key)
        self._quote_cache[(first, second)] = chosen
        return chosen

    def _order_key(self, token: str) -> tuple[str, str, str]:
        try:
            key = token_key(token)
        except TokenLookupError:
            key = token.strip()
        return self.label(token).lower(), key, token

    def unit(self, first: str, second: str) -> str:
        """The unit prices between two tokens are shown in: `USDC per APT`."""
        quote = self.quote_of(first, second)
        base = second if quote == first else first
        return f"{self.label(quote)} per {self.label(base)}"

    # -- prices ------------------------------------------------------------------------

    def of_rate(
        self, rate: Decimal, *, got: str, paid: str, bound: Bound | None = None
    ) -> Price | None:
        """`rate` units of `got` per one unit of `paid`, as this convention shows it.

        `bound`: the rate limits an order ("min": it takes at least `rate` of `got` per
        `paid`; "max": at most); the shown relation is flipped when the price is inverted
        (at least 0.2028 APT per USDC is at most 4.931 USDC per APT) and the value is
        rounded outward (see the module's docstring). None when the rate is no positive
        finite number (a bound of 0 or Infinity limits nothing).
        """
        if not rate.is_finite() or rate <= 0:
            return None
        quote = self.quote_of(got, paid)
        inverted = quote != got
        base = got if inverted else paid
        exact = _inverse(rate) if inverted else rate
        digits = min(max(_significant(rate), MIN_DIGITS), MAX_DIGITS)
        if bound is None:
            return Price(round_significant(exact, digits), self.label(quote), self.label(base))
        at_least = (bound == "min") != inverted
        outward = ROUND_FLOOR if at_least else ROUND_CEILING
        shown = _bound_value(exact, rate, inverted, digits, outward)
        return Price(shown, self.label(quote), self.label(base), "≥" if at_least else "≤")

    def of_amounts(
        self, amount_a: Decimal, token_a: str, amount_b: Decimal, token_b: str
    ) -> Price | None:
        """The price at which `amount_a` of `token_a` went for `amount_b` of `token_b`.

        An average over fills, one fill's price. None unless both amounts are positive.
        """
        if not (amount_a.is_finite() and amount_b.is_finite()) or amount_a <= 0 or amount_b <= 0:
            return None
        digits = min(max(_significant(amount_a), _significant(amount_b)), MEASURED_DIGITS)
        return self._price(amount_a, token_a, amount_b, token_b, digits)

    def _price(
        self, amount_a: Decimal, token_a: str, amount_b: Decimal, token_b: str, digits: int
    ) -> Price:
        """`amount_a` of `token_a` per `amount_b` of `token_b`, quoted, rounded half-even."""
        quote = self.quote_of(token_a, token_b)
        inverted = quote != token_a
        numerator, denominator = (amount_b, amount_a) if inverted else (amount_a, amount_b)
        with localcontext() as ctx:
            ctx.prec = _WORK_PRECISION
            exact = numerator / denominator
        shown = round_significant(exact, min(max(digits, MIN_DIGITS), MAX_DIGITS))
        return Price(shown, self.label(quote), self.label(token_a if inverted else token_b))


def _inverse(value: Decimal) -> Decimal:
    """1 / `value`, to `_WORK_PRECISION` digits (exact whenever it fits)."""
    with localcontext() as ctx:
        ctx.prec = _WORK_PRECISION
        return 1 / value


def _bound_value(
    exact: Decimal, rate: Decimal, inverted: bool, digits: int, outward: str
) -> Decimal:
    """The number a bound is shown as (see the module's docstring).

    The shortest (from `MIN_DIGITS` to `digits` significant digits) that names the same
    rate: rounded half-even to the rate's own significant digits, it (or its inverse)
    gives the rate back. At each length the outward-rounded number is tried first; when
    none names the rate, the outward-rounded number of `digits` digits.
    """
    precision = _significant(rate)
    for length in range(MIN_DIGITS, digits + 1):
        for mode in (outward, ROUND_HALF_EVEN):
            candidate = round_significant(exact, length, mode)
            back = _inverse(candidate) if inverted else candidate
            if round_significant(back, precision) == rate:
                return candidate
    return round_significant(exact, digits, outward)


def common_unit(units: Sequence[str]) -> str | None:
    """The one unit all of `units` share (empty ones ignored), or None."""
    distinct = {u for u in units if u}
    return distinct.pop() if len(distinct) == 1 else None
