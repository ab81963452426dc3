"""Synthetic series: the paper world's walk, reproducible by seed, exact on the grid."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.clock import SteppedClock
from bot.history.synth import SynthToken, synth_blocks, synth_spec
from bot.paper.core.market import MarketConfig, PaperMarket
from bot.paper.core.registry import PaperTokens
from bot.paper.core.series import load_series, write_series_blocks

T0 = datetime(2025, 1, 1, tzinfo=UTC)
TOKENS = PaperTokens.from_token_list()
APT = TOKENS.find("APT")
USDC = TOKENS.find("USDC")


def items(seed: int, step: int = 60, **overrides: Decimal) -> list[SynthToken]:
    return [
        SynthToken(t.address, t.symbol, synth_spec(t, seed, step, **overrides)) for t in (APT, USDC)
    ]


def test_the_same_seed_writes_the_same_file_and_another_seed_another(tmp_path: Path) -> None:
    end = T0 + timedelta(days=1)
    one, two, other = (tmp_path / n for n in ("one.csv", "two.csv", "other.csv"))
    write_series_blocks(one, synth_blocks(items(7), T0, end, 7))
    write_series_blocks(two, synth_blocks(items(7), T0, end, 7))
    write_series_blocks(other, synth_blocks(items(8), T0, end, 8))
    assert one.read_bytes() == two.read_bytes()
    assert one.read_bytes() != other.read_bytes()


def test_the_grid_is_half_open_and_rows_are_in_time_order(tmp_path: Path) -> None:
    blocks = synth_blocks(items(7, step=300), T0, T0 + timedelta(hours=1, seconds=1), 7)
    assert [len(b.times_us) for b in blocks] == [13, 13]  # 00:00 … 01:00 (01:00:01 excluded)
    out = tmp_path / "grid.csv"
    assert write_series_blocks(out, blocks) == 26
    lines = out.read_text().splitlines()
    assert lines[0] == "timestamp,token,symbol,usdPrice,nativePrice,source"
    assert all(line.endswith(",,synthetic") for line in lines[1:])  # no native price
    assert lines[1].startswith(f"2025-01-01T00:00:00Z,{APT.address},APT,5,")
    assert lines[2].startswith(f"2025-01-01T00:00:00Z,{USDC.address},USDC,1,")
    assert lines[3].startswith("2025-01-01T00:05:00Z,")
    exact = synth_blocks(items(7, step=300), T0, T0 + timedelta(hours=1), 7)
    assert len(exact[0].times_us) == 12  # the end itself is excluded


def test_the_series_is_the_paper_worlds_walk(tmp_path: Path) -> None:
    blocks = synth_blocks(items(7), T0, T0 + timedelta(hours=3), 7)
    out = tmp_path / "walk.parquet"
    write_series_blocks(out, blocks)
    paths, _ = load_series(out)
    market = PaperMarket(MarketConfig(seed=7), SteppedClock(T0))
    for minute in (0, 1, 59, 179):
        moment = T0 + timedelta(minutes=minute)
        assert paths[APT.address].at(moment) == market.prices.usd(APT.address, moment)
        assert paths[USDC.address].at(moment) == market.prices.usd(USDC.address, moment)


def test_start_price_and_volatility_overrides() -> None:
    flat = synth_blocks(
        [SynthToken(APT.address, "APT", synth_spec(APT, 7, 60, volatility=Decimal(0)))],
        T0,
        T0 + timedelta(hours=1),
        7,
    )
    assert set(flat[0].usd_prices) == {Decimal(5)}  # no volatility, no drift: constant
    started = synth_blocks(
        [SynthToken(APT.address, "APT", synth_spec(APT, 7, 60, start_price=Decimal("12.5")))],
        T0,
        T0 + timedelta(minutes=2),
        7,
    )
    assert started[0].usd_prices[0] == Decimal("12.5")


def test_a_token_outside_the_list_needs_a_start_price() -> None:
    with pytest.raises(ValueError, match="start price"):
        synth_spec(None, 7, 60)
    spec = synth_spec(None, 7, 60, start_price=Decimal(2))
    assert (spec.start_price, spec.step_seconds) == (Decimal(2), 60)


def test_the_end_must_be_after_the_start() -> None:
    with pytest.raises(ValueError, match="must be after"):
        synth_blocks(items(7), T0, T0, 7)
