"""Seeded synthetic series: the paper world's random walk, written out.

Each token's prices are the paper world's `RandomWalkPath` (a GBM rounded to 12
significant digits; the normal draw is the only float, made a `Decimal` at once), seeded
as the paper world seeds it (`derive_seed(seed, "walk", token)`) and with the paper
world's default walk for the token (APT from 5 at 0.8/yr, USD stables from 1 at 0.02/yr,
others seeded) unless a start price or volatility is given. So the same seed, start and
step give the same series, and with the defaults and a 60 s step the same prices a paper
world with that seed and start shows. Points are `start + k·step` for `start ≤ t < end`.
Every row says `source = synthetic`: a backtest never credits the provider under them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

import numpy as np

from bot.aptos.tokens import Token
from bot.clock import MICROS_PER_SECOND, MICROSECOND, ensure_utc, to_micros
from bot.paper.core.prices import RandomWalkPath, RandomWalkSpec, default_spec, derive_seed
from bot.paper.core.series import SeriesBlock

__all__ = ["SynthToken", "synth_blocks", "synth_spec"]


@dataclass(frozen=True)
class SynthToken:
    """One token to synthesise: its key (coin type or FA address), symbol and walk."""

    key: str
    symbol: str | None
    spec: RandomWalkSpec


def synth_spec(
    token: Token | None,
    seed: int,
    step_seconds: int,
    *,
    start_price: Decimal | None = None,
    volatility: Decimal | None = None,
) -> RandomWalkSpec:
    """The walk of a token: the paper world's default, with the given overrides.

    Raises:
        ValueError: an unknown token (None) without a start price, or a bad override.
    """
    if token is None:
        if start_price is None:
            raise ValueError("a token outside the token list needs a start price")
        spec = RandomWalkSpec(start_price, Decimal(0), Decimal("0.8"))
    else:
        spec = default_spec(token, seed)
    changes: dict[str, object] = {"step_seconds": step_seconds}
    if start_price is not None:
        changes["start_price"] = start_price
    if volatility is not None:
        changes["volatility_per_year"] = volatility
    return dataclasses.replace(spec, **changes)  # type: ignore[arg-type]


def synth_blocks(
    tokens: Sequence[SynthToken], start: datetime, end: datetime, seed: int
) -> list[SeriesBlock]:
    """One block per token on the grid `start + k·step`, `start ≤ t < end`.

    Raises:
        ValueError: `end` not after `start`.
    """
    start, end = ensure_utc(start), ensure_utc(end)
    if end <= start:
        raise ValueError(f"--to {end.isoformat()} must be after --from {start.isoformat()}")
    span_us = (end - start) // MICROSECOND
    origin_us = to_micros(start)
    blocks = []
    for item in tokens:
        step_us = item.spec.step_seconds * MICROS_PER_SECOND
        count = -(-span_us // step_us)  # ceil: the points strictly before `end`
        path = RandomWalkPath(item.spec, start, derive_seed(seed, "walk", item.key))
        path.at(start + (count - 1) * item.spec.step_seconds * timedelta(seconds=1))
        prices = path.prices[:count]  # generated up to the last point (in whole chunks)
        times = np.arange(count, dtype=np.int64) * step_us + origin_us
        blocks.append(SeriesBlock(item.key, times, prices, item.symbol, source="synthetic"))
    return blocks
