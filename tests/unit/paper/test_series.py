"""The price-series format in CSV and Parquet, and the paper world replaying it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bot.clock import SteppedClock
from bot.paper.core.market import MarketConfig, PaperMarket
from bot.paper.core.series import SeriesRow, load_series, write_series

T0 = datetime(2026, 5, 1, tzinfo=UTC)
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"


def rows() -> list[SeriesRow]:
    return [
        SeriesRow(T0 + timedelta(minutes=i), APT, Decimal("5.000000000000000001") + i, "APT")
        for i in range(5)
    ] + [SeriesRow(T0, USDC, Decimal("1"), "USDC", Decimal("0.2"))]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_round_trip_is_exact(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"prices{suffix}"
    assert write_series(path, rows()) == 6
    paths, report = load_series(path)
    assert (report.rows, report.skipped, report.duplicates) == (6, 0, 0)
    assert paths[APT].prices[0] == Decimal("5.000000000000000001")  # every digit kept
    assert paths[APT].at(T0 + timedelta(minutes=4, seconds=30)) == Decimal("9.000000000000000001")
    assert paths[USDC].times == [T0]


def test_csv_and_parquet_read_the_same(tmp_path: Path) -> None:
    write_series(tmp_path / "a.csv", rows())
    write_series(tmp_path / "a.parquet", rows())
    csv_paths, _ = load_series(tmp_path / "a.csv")
    pq_paths, _ = load_series(tmp_path / "a.parquet")
    assert {k: (p.times, p.prices) for k, p in csv_paths.items()} == {
        k: (p.times, p.prices) for k, p in pq_paths.items()
    }


def test_a_float_price_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "floats.parquet"
    pq.write_table(
        pa.table({"timestamp": ["2026-05-01T00:00:00Z"], "token": [APT], "usdPrice": [5.1]}), path
    )
    with pytest.raises(ValueError, match="float column"):
        load_series(path)


def test_bad_parquet_rows_are_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "mixed.parquet"
    pq.write_table(
        pa.table(
            {
                "timestamp": [
                    "2026-05-01T00:00:00Z",
                    "not a time",
                    "2026-05-01T00:01:00",
                    "1777593720",
                ],
                "token": [APT, APT, APT, APT],
                "usdPrice": ["5", "6", "7", "-1"],
            }
        ),
        path,
    )
    paths, report = load_series(path)
    assert (report.rows, report.skipped) == (4, 3)  # bad time, naive time, negative price
    assert paths[APT].prices == [Decimal(5)]


def test_the_paper_market_replays_a_parquet_recording(tmp_path: Path) -> None:
    path = tmp_path / "recorded.parquet"
    write_series(path, rows())
    market = PaperMarket(MarketConfig(prices_file=str(path)), SteppedClock(T0))
    apt = market.tokens.require(APT)
    assert market.prices.usd(apt.address, T0) == Decimal("5.000000000000000001")
    market.clock.advance_to(T0 + timedelta(minutes=3))  # type: ignore[attr-defined]
    market.sync()
    assert market.prices.usd(apt.address, market.now) == Decimal("8.000000000000000001")


@pytest.mark.parametrize("price", ["Infinity", "NaN", "0", "-1"])
def test_a_series_row_refuses_a_price_that_is_not_finite_and_positive(price: str) -> None:
    with pytest.raises(ValueError, match="finite and > 0"):
        SeriesRow(datetime(2026, 1, 1, tzinfo=UTC), "0x1::aptos_coin::AptosCoin", Decimal(price))
