"""Importing series from elsewhere: price CSVs and OHLCV, exact values, bad rows counted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.history.importer import SeriesImportError, import_price_csv, parse_timestamp
from bot.paper.core.series import load_series, write_series_blocks

APT = "0x1::aptos_coin::AptosCoin"
T0 = datetime(2025, 3, 1, tzinfo=UTC)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_price_csv_round_trips_to_load_series_exactly(tmp_path: Path, suffix: str) -> None:
    source = write(
        tmp_path / "apt.csv",
        "timestamp,price\n"
        "2025-03-01T00:00:00Z,5.123456789012345678901\n"
        "2025-03-01T00:01:00+00:00,5.1\n"
        "2025-03-01T02:02:00+02:00,0.000000000000000001\n",  # 00:02 UTC
    )
    block, report = import_price_csv(source, APT, symbol="APT")
    assert (report.rows, report.imported, report.skipped, report.duplicates) == (3, 3, 0, 0)
    assert (report.timestamp_column, report.price_column) == ("timestamp", "price")
    out = tmp_path / f"series{suffix}"
    write_series_blocks(out, [block])
    paths, loaded = load_series(out)
    assert (loaded.rows, loaded.skipped) == (3, 0)
    assert paths[APT].times == [T0 + timedelta(minutes=m) for m in range(3)]
    assert paths[APT].prices == [
        Decimal("5.123456789012345678901"),  # every digit: never through a float
        Decimal("5.1"),
        Decimal("0.000000000000000001"),
    ]


def test_ohlcv_takes_close_by_default_and_any_chosen_column(tmp_path: Path) -> None:
    source = write(
        tmp_path / "ohlcv.csv",
        "Open Time,Open,High,Low,Close,Volume\n"
        "1740787200000,5.0,5.5,4.9,5.25,1000\n"  # epoch milliseconds: 2025-03-01T00:00Z
        "1740787260000,5.25,5.3,5.2,5.28,900\n",
    )
    block, report = import_price_csv(source, APT, timestamp_column="open time")
    assert report.price_column == "Close"
    assert list(block.usd_prices) == [Decimal("5.25"), Decimal("5.28")]
    assert [int(t) for t in block.times_us] == [1740787200 * 10**6, 1740787260 * 10**6]
    high, _ = import_price_csv(
        source, APT, fmt="ohlcv", column="high", timestamp_column="Open Time"
    )
    assert list(high.usd_prices) == [Decimal("5.5"), Decimal("5.3")]


def test_timestamps_in_every_accepted_form() -> None:
    assert parse_timestamp("1740787200") == T0  # seconds
    assert parse_timestamp("1740787200000") == T0  # milliseconds
    assert parse_timestamp("1740787200000000") == T0  # microseconds
    assert parse_timestamp("1740787200.25") == T0 + timedelta(milliseconds=250)
    assert parse_timestamp("2025-03-01") == T0  # a date: midnight UTC
    assert parse_timestamp("2025-03-01 00:00:00") == T0  # no offset: UTC
    assert parse_timestamp("2025-03-01T01:00:00+01:00") == T0
    for bad in ("", "yesterday", "-5", "2025-13-01"):
        with pytest.raises(ValueError):
            parse_timestamp(bad)


def test_bad_rows_are_skipped_and_counted_and_the_first_is_named(tmp_path: Path) -> None:
    source = write(
        tmp_path / "messy.csv",
        "time,price\n"
        "2025-03-01T00:00:00Z,5\n"
        "not a time,5\n"  # line 3
        "2025-03-01T00:02:00Z,abc\n"
        "2025-03-01T00:03:00Z,-1\n"
        "2025-03-01T00:04:00Z,0\n"
        "2025-03-01T00:05:00Z\n"  # no price cell
        "\n"  # blank: not a row
        "2025-03-01T00:06:00Z,6\n",
    )
    block, report = import_price_csv(source, APT)
    assert (report.rows, report.imported, report.skipped) == (7, 2, 5)
    assert report.first_problem is not None and report.first_problem.startswith("line 3:")
    assert list(block.usd_prices) == [Decimal(5), Decimal(6)]


def test_a_repeated_timestamp_keeps_the_first_row_and_rows_are_sorted(tmp_path: Path) -> None:
    source = write(
        tmp_path / "dups.csv",
        "ts,value\n1740787260,6\n1740787200,5\n1740787260,7\n",
    )
    block, report = import_price_csv(source, APT)
    assert (report.imported, report.duplicates) == (2, 1)
    assert list(block.usd_prices) == [Decimal(5), Decimal(6)]  # sorted; the first 60 s row
    assert report.first == T0 and report.last == T0 + timedelta(minutes=1)


def test_the_only_other_column_is_the_price(tmp_path: Path) -> None:
    source = write(tmp_path / "one.csv", "date,APT/USD\n2025-03-01,5.5\n")
    block, report = import_price_csv(source, APT)
    assert report.price_column == "APT/USD" and list(block.usd_prices) == [Decimal("5.5")]


@pytest.mark.parametrize(
    ("text", "options", "message"),
    [
        ("a,b\n1,2\n", {}, "no time column \\(have: a, b\\)"),
        ("timestamp,x,y\n1,2,3\n", {}, "no price column"),
        ("timestamp,price\n", {"column": "close"}, "--column 'close': no such column"),
        ("timestamp,price\n", {"timestamp_column": "t"}, "--timestamp-column 't'"),
        ("timestamp,open,high,low\n", {"fmt": "ohlcv"}, "--column 'close'"),
        ("", {}, "empty file"),
    ],
)
def test_header_problems_name_the_column(
    tmp_path: Path, text: str, options: dict[str, str], message: str
) -> None:
    source = write(tmp_path / "bad.csv", text)
    with pytest.raises(SeriesImportError, match=message):
        import_price_csv(source, APT, **options)  # type: ignore[arg-type]


def test_a_missing_file_is_an_import_error(tmp_path: Path) -> None:
    with pytest.raises(SeriesImportError, match="cannot read"):
        import_price_csv(tmp_path / "nope.csv", APT)
