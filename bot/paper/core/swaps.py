"""Swap quotes and swap execution: the one code path for every trade in the paper world.

`quote_swap` prices an ExactIn or ExactOut trade against the pool (platform and
integrator fees, slippage, `auto` slippage ≤ 5%); `execute_swap` moves the funds in the
ledger at the pool state of its time and refuses a result under the minimum. Quotes
(`/swap`), router transactions (the node) and DCA/limit fills all go through here, so a
backtest and the paper world give the same fills to the base unit.

`adverse_pct` (0 unless a backtest asks for slippage) models the price moving against
the trader between the decision and the execution: the trader receives that percent less
than the pool gives (ExactIn, rounded down), or pays for that percent more (ExactOut).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import (
    MAX_EMAX,
    MAX_PREC,
    MIN_EMIN,
    ROUND_CEILING,
    ROUND_FLOOR,
    ROUND_UP,
    Context,
    Decimal,
    localcontext,
)
from functools import cached_property
from typing import Final, Literal

from bot.aptos.tokens import Token
from bot.paper.core.ledger import MARKET, Ledger
from bot.paper.core.pools import PoolBook, same_token
from bot.paper.core.records import frozen_record

__all__ = [
    "MAX_AUTO_SLIPPAGE",
    "FeeSettings",
    "SlippageExceeded",
    "SwapError",
    "SwapExecution",
    "SwapTerms",
    "execute_swap",
    "min_out_of",
    "quote_swap",
]

_CTX40: Final = Context(prec=40)
_PREC_80: Final = 80
_CTX80: Final = Context(prec=_PREC_80)
_WIDE: Final = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)  # exact −
_IMPACT_PLACES: Final = Decimal("0.0001")
MAX_AUTO_SLIPPAGE: Final = Decimal("5")
MIN_AUTO_SLIPPAGE: Final = Decimal("0.5")
_HUNDRED: Final = Decimal(100)
_BPS: Final = 10_000


class SwapError(ValueError):
    """A swap that cannot be quoted or executed (too small, too large, same token)."""


class SlippageExceeded(SwapError):
    """Execution would give less than the minimum (or cost more than the maximum)."""


@dataclass(frozen=True)
class FeeSettings:
    """Platform fee (basis points of the amount sold) and the accounts fees go to."""

    platform_fee_bps: int = 10
    platform_account: str = "fees:platform"

    def __post_init__(self) -> None:
        if not 0 <= self.platform_fee_bps < _BPS:
            raise ValueError("platform_fee_bps must be in [0, 10000)")


@dataclass(frozen=True)
class SwapTerms:
    """A priced swap in base units (what `/swap` shows and what a router call carries)."""

    sell: Token
    buy: Token
    exact_in: bool
    amount_in: int
    """Total sold, fees included (ExactIn: as asked; ExactOut: as needed now)."""
    amount_out: int
    """Expected amount bought (ExactIn: now; ExactOut: as asked)."""
    platform_fee: int
    integrator_fee: int
    slippage: Decimal
    """Percent applied to derive the bound below."""
    min_out: int
    """ExactIn: least accepted after slippage. ExactOut: equals `amount_out`."""
    max_in: int
    """ExactOut: most payable after slippage. ExactIn: equals `amount_in`."""
    reserves: tuple[int, int] = field(compare=False, repr=False)
    """The pool's reserves of the sold and the bought token the swap was priced at."""

    @property
    def fee_total(self) -> int:
        """Platform plus integrator fee, in the sold token."""
        return self.platform_fee + self.integrator_fee

    @cached_property
    def price_impact(self) -> Decimal:
        """Percent lost against the oracle mid price, fees included.

        Worked out when first asked (a `/swap` answer, `auto` slippage), not for every
        order execution, which never asks.
        """
        return _impact(self.reserves, self.amount_in, self.amount_out)


@dataclass(frozen=True)
class SwapExecution:
    """What an executed swap moved."""

    sell: Token
    buy: Token
    amount_in: int
    amount_out: int
    platform_fee: int
    integrator_fee: int


def _fees(amount_in: int, platform_bps: int, integrator_pct: Decimal) -> tuple[int, int]:
    platform = amount_in * platform_bps // _BPS
    if not integrator_pct:
        return platform, 0
    with localcontext() as ctx:
        ctx.prec = 80
        integrator = int(
            (Decimal(amount_in) * integrator_pct / _HUNDRED).to_integral_value(
                rounding="ROUND_FLOOR"
            )
        )
    return platform, integrator


def _impact(reserves: tuple[int, int], amount_in: int, amount_out: int) -> Decimal:
    """Percent of value lost against the fee-free oracle mid rate of a pool's reserves."""
    x, y = reserves
    ctx = _CTX40
    fair_out = ctx.divide(ctx.multiply(Decimal(amount_in), Decimal(y)), Decimal(x))
    if fair_out <= 0:
        return Decimal(0)
    impact = ctx.multiply(
        ctx.divide(ctx.subtract(fair_out, Decimal(amount_out)), fair_out), _HUNDRED
    )
    return impact.quantize(_IMPACT_PLACES)


def _keep_ratio(slippage: Decimal) -> tuple[int, int, int] | None:
    """(n, d, bound): `out × n // d` is floor(out × (100 − slippage) / 100) for 0 ≤ out < bound.

    Exactly what the 80-digit Decimal computation gives while it is exact: the
    difference, the product and the division by 100 all fit in 80 digits below `bound`.
    None for a slippage whose difference itself does not fit.
    """
    if not slippage.is_finite():
        return None
    keep = _WIDE.subtract(_HUNDRED, slippage)
    digits = len(keep.as_tuple().digits)
    if digits >= _PREC_80:
        return None
    numerator, denominator = keep.as_integer_ratio()
    return numerator, denominator * 100, 10 ** (_PREC_80 - digits)


_KEEP_RATIOS: dict[Decimal, tuple[int, int, int] | None] = {}


def min_out_of(out: int, slippage: Decimal) -> int:
    """The least accepted output of an ExactIn quote: out less `slippage` percent, floored.

    Also an adverse move's effect on an output (`adverse_pct`, see the module docstring).
    """
    try:
        ratio = _KEEP_RATIOS[slippage]
    except KeyError:
        if len(_KEEP_RATIOS) >= 1024:
            _KEEP_RATIOS.clear()
        ratio = _KEEP_RATIOS[slippage] = _keep_ratio(slippage)
    if ratio is not None and 0 <= out < ratio[2]:
        return out * ratio[0] // ratio[1]
    ctx = _CTX80
    keep = ctx.divide(ctx.multiply(Decimal(out), ctx.subtract(_HUNDRED, slippage)), _HUNDRED)
    return int(keep.to_integral_value(ROUND_FLOOR, ctx))


_min_out: Final = min_out_of  # the name tests/unit/paper/test_exact_shortcuts.py knows


def _auto_slippage(impact: Decimal) -> Decimal:
    """`auto`: twice the price impact, at least 0.5%, at most 5%, one decimal."""
    chosen = (max(impact, Decimal(0)) * 2).quantize(Decimal("0.1"), rounding=ROUND_UP)
    return min(MAX_AUTO_SLIPPAGE, max(MIN_AUTO_SLIPPAGE, chosen))


def quote_swap(
    pools: PoolBook,
    fees: FeeSettings,
    sell: Token,
    buy: Token,
    *,
    at: datetime,
    amount_in: int | None = None,
    amount_out: int | None = None,
    slippage: Decimal | Literal["auto"] = "auto",
    integrator_fee_pct: Decimal = Decimal(0),
    adverse_pct: Decimal = Decimal(0),
) -> SwapTerms:
    """Price a swap now. Exactly one of `amount_in` (ExactIn) and `amount_out` (ExactOut).

    `adverse_pct`: an extra price move against the trader, in percent (see above).

    Raises:
        SwapError: same token, an amount too small to give anything, or beyond the pool.
    """
    if (amount_in is None) == (amount_out is None):
        raise SwapError("exactly one of amount_in and amount_out")
    if same_token(sell, buy):
        raise SwapError(f"cannot swap {sell.symbol} for itself")
    pool = pools.pool(sell, buy, at)
    if amount_in is not None:
        if amount_in <= 0:
            raise SwapError("amount must be positive")
        platform, integrator = _fees(amount_in, fees.platform_fee_bps, integrator_fee_pct)
        out = pool.out_for_in(sell, amount_in - platform - integrator)
        if adverse_pct:
            # The adverse move: out less adverse_pct percent, floored (a minimum out's sum).
            out = min_out_of(out, adverse_pct)
        if out <= 0:
            raise SwapError("amount too small: the swap would give nothing")
        total_in = amount_in
    else:
        if amount_out is None:
            raise SwapError("give amount_in or amount_out")
        if amount_out <= 0:
            raise SwapError("amount must be positive")
        try:
            pool_out = _before_adverse(amount_out, adverse_pct) if adverse_pct else amount_out
            net = pool.in_for_out(sell, pool_out)
        except ValueError as exc:
            raise SwapError(str(exc)) from None
        total_in = _gross_up(net, fees.platform_fee_bps, integrator_fee_pct)
        platform, integrator = _fees(total_in, fees.platform_fee_bps, integrator_fee_pct)
        out = amount_out
    reserves = pool.reserves(sell)
    known: dict[str, Decimal] = {}
    if isinstance(slippage, str) and slippage == "auto":  # no Decimal-to-str comparison
        known["price_impact"] = impact = _impact(reserves, total_in, out)
        chosen = _auto_slippage(impact)
    else:
        chosen = slippage
    if amount_in is not None:
        min_out, max_in = min_out_of(out, chosen), total_in
    else:
        ctx = _CTX80
        pay = ctx.divide(ctx.multiply(Decimal(total_in), ctx.add(_HUNDRED, chosen)), _HUNDRED)
        min_out, max_in = out, int(pay.to_integral_value(rounding=ROUND_CEILING, context=ctx))
    return frozen_record(
        SwapTerms,
        sell=sell,
        buy=buy,
        exact_in=amount_in is not None,
        amount_in=total_in,
        amount_out=out,
        platform_fee=platform,
        integrator_fee=integrator,
        slippage=chosen,
        min_out=min_out,
        max_in=max_in,
        reserves=reserves,
        **known,  # the price impact when `auto` needed it: kept as its worked-out value
    )


def _before_adverse(out: int, adverse_pct: Decimal) -> int:
    """The least the pool must give for the trader to receive `out` after the move."""
    if not adverse_pct < _HUNDRED:
        raise SwapError("an adverse move of 100% leaves nothing")
    with localcontext() as ctx:
        ctx.prec = 80
        needed = Decimal(out) * _HUNDRED / (_HUNDRED - adverse_pct)
        pool_out = int(needed.to_integral_value(rounding=ROUND_CEILING))
    while min_out_of(pool_out, adverse_pct) < out:
        pool_out += 1
    return pool_out


def _gross_up(net: int, platform_bps: int, integrator_pct: Decimal) -> int:
    """The smallest total whose amount after fees is at least `net`."""
    with localcontext() as ctx:
        ctx.prec = 80
        keep = Decimal(1) - Decimal(platform_bps) / _BPS - integrator_pct / _HUNDRED
        if keep <= 0:
            raise SwapError("fees take the whole amount")
        total = int((Decimal(net) / keep).to_integral_value(rounding=ROUND_CEILING))
    while total - sum(_fees(total, platform_bps, integrator_pct)) < net:
        total += 1
    return total


def _same_trade(
    quoted: SwapTerms | None,
    sell: Token,
    buy: Token,
    exact_in: bool,
    amount_in: int,
    amount_out: int,
) -> bool:
    """Whether `quoted` prices exactly this trade (fee-free of integrators)."""
    if quoted is None or quoted.sell is not sell or quoted.buy is not buy:
        return False
    if quoted.exact_in is not exact_in or quoted.integrator_fee:
        return False
    return quoted.amount_in == amount_in if exact_in else quoted.amount_out == amount_out


def execute_swap(
    ledger: Ledger,
    pools: PoolBook,
    fees: FeeSettings,
    *,
    payer: str,
    recipient: str,
    sell: Token,
    buy: Token,
    at: datetime,
    exact_in: bool,
    amount_in: int,
    amount_out: int,
    integrator_fee_pct: Decimal = Decimal(0),
    integrator_account: str | None = None,
    adverse_pct: Decimal = Decimal(0),
    quoted: SwapTerms | None = None,
) -> SwapExecution:
    """Execute at the pool state of `at`, moving funds in the ledger.

    ExactIn: sell `amount_in`, receive at least `amount_out`. ExactOut: receive exactly
    `amount_out`, paying at most `amount_in`. Nothing moves when it fails. With an
    `adverse_pct`, the execution is priced that much worse than a quote without it.

    `quoted`: the caller's own quote of this very trade at this very pool state (same
    tokens, mode, amount and fees, nothing traded since); it is used instead of quoting
    again. Ignored with an `adverse_pct` (the execution must be priced anew).

    Raises:
        SlippageExceeded: the pool gives less (or costs more) than the bound.
        SwapError: the pool cannot serve it.
        InsufficientFunds: the payer lacks the amount (from the ledger).
    """
    same = not adverse_pct and not integrator_fee_pct
    if (
        same
        and quoted is not None
        and _same_trade(quoted, sell, buy, exact_in, amount_in, amount_out)
    ):
        terms = quoted
    else:
        terms = quote_swap(
            pools,
            fees,
            sell,
            buy,
            at=at,
            amount_in=amount_in if exact_in else None,
            amount_out=None if exact_in else amount_out,
            slippage=Decimal(0),
            integrator_fee_pct=integrator_fee_pct,
            adverse_pct=adverse_pct,
        )
    if exact_in and terms.amount_out < amount_out:
        raise SlippageExceeded(
            f"output {terms.amount_out} is under the minimum {amount_out} (base units)"
        )
    if not exact_in and terms.amount_in > amount_in:
        raise SlippageExceeded(
            f"input {terms.amount_in} is over the maximum {amount_in} (base units)"
        )
    integrator_to = integrator_account or fees.platform_account
    token_in = sell.address
    # Take everything from the payer first: if it is short, nothing has moved.
    ledger.transfers(
        (
            (token_in, payer, MARKET, terms.amount_in),
            (token_in, MARKET, fees.platform_account, terms.platform_fee),
            (token_in, MARKET, integrator_to, terms.integrator_fee),
            (buy.address, MARKET, recipient, terms.amount_out),
        )
    )
    pools.pool(sell, buy, at).apply(sell, terms.amount_in - terms.fee_total, terms.amount_out)
    return frozen_record(
        SwapExecution,
        sell=sell,
        buy=buy,
        amount_in=terms.amount_in,
        amount_out=terms.amount_out,
        platform_fee=terms.platform_fee,
        integrator_fee=terms.integrator_fee,
    )
