"""The series-file helpers the recorder and importer add: append, columnar write, latest."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bot.paper.core.series import (
    SeriesBlock,
    SeriesRow,
    append_series,
    latest_times,
    load_series,
    write_series,
    write_series_blocks,
)

T0 = datetime(2026, 2, 1, tzinfo=UTC)
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"


def row(minute: int, price: str, token: str = APT) -> SeriesRow:
    return SeriesRow(T0 + timedelta(minutes=minute), token, Decimal(price), "X", Decimal("0.5"))


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_appending_creates_then_grows_the_file(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"p{suffix}"
    assert append_series(path, [row(0, "5.000000000000000001")]) == 1
    assert append_series(path, [row(1, "6"), row(1, "1", USDC)]) == 2
    paths, report = load_series(path)
    assert (report.rows, report.skipped, report.duplicates) == (3, 0, 0)
    assert paths[APT].prices == [Decimal("5.000000000000000001"), Decimal(6)]
    assert paths[USDC].times == [T0 + timedelta(minutes=1)]
    assert latest_times(path) == {APT: T0 + timedelta(minutes=1), USDC: T0 + timedelta(minutes=1)}


def test_a_csv_keeps_its_own_columns_and_a_missing_last_newline_is_mended(tmp_path: Path) -> None:
    path = tmp_path / "theirs.csv"
    path.write_text("usdPrice,token,timestamp,note\n4," + APT + ",2026-02-01T00:00:00Z,hi")
    append_series(path, [row(1, "4.5")])
    lines = path.read_text().splitlines()
    assert lines[1].endswith(",hi")
    assert lines[2] == f"4.5,{APT},2026-02-01T00:01:00Z,"
    assert load_series(path)[0][APT].prices == [Decimal(4), Decimal("4.5")]


def test_appending_to_a_csv_without_the_required_columns_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.csv"
    path.write_text("time,price\n1,2\n")
    with pytest.raises(ValueError, match="missing column"):
        append_series(path, [row(0, "1")])


def test_a_parquet_file_from_write_series_is_normalised_when_appended(tmp_path: Path) -> None:
    path = tmp_path / "old.parquet"
    write_series(path, [SeriesRow(T0, APT, Decimal(5))])  # symbol/nativePrice all null
    append_series(path, [row(1, "5.5")])
    table = pq.read_table(path)
    assert table.schema.field("nativePrice").type == pa.string()
    assert table.column("nativePrice").to_pylist() == [None, "0.5"]
    assert load_series(path)[0][APT].prices == [Decimal(5), Decimal("5.5")]
    assert not (tmp_path / ".old.parquet.partial").exists()


def test_a_parquet_file_with_float_prices_cannot_be_appended_to_silently(tmp_path: Path) -> None:
    path = tmp_path / "floats.parquet"
    pq.write_table(pa.table({"timestamp": [T0], "token": [APT], "usdPrice": [5.1]}), path)
    append_series(path, [row(1, "5.5")])  # the float is cast to its shortest text, not kept
    paths, report = load_series(path)
    assert paths[APT].prices == [Decimal("5.1"), Decimal("5.5")]
    assert report.skipped == 0


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_blocks_are_written_in_time_order_and_read_back_exactly(
    tmp_path: Path, suffix: str
) -> None:
    base = (T0 - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    apt = SeriesBlock(APT, [base, base + 60_000_000], [Decimal("1E+2"), Decimal("0.10")], "APT")
    usdc = SeriesBlock(USDC, [base + 30_000_000], [Decimal("1.000000000000000001")])
    path = tmp_path / f"b{suffix}"
    assert write_series_blocks(path, [apt, usdc]) == 3
    paths, report = load_series(path)
    assert (report.rows, report.skipped) == (3, 0)
    assert paths[APT].prices == [Decimal(100), Decimal("0.1")]
    assert paths[USDC].at(T0 + timedelta(seconds=30)) == Decimal("1.000000000000000001")
    if suffix == ".csv":
        stamps = [line.split(",")[0] for line in path.read_text().splitlines()[1:]]
        assert stamps == ["2026-02-01T00:00:00Z", "2026-02-01T00:00:30Z", "2026-02-01T00:01:00Z"]
        assert path.read_text().splitlines()[1].split(",")[3] == "100"  # no exponent


def test_sub_second_times_keep_their_microseconds(tmp_path: Path) -> None:
    base = (T0 - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    path = tmp_path / "us.csv"
    write_series_blocks(path, [SeriesBlock(APT, [base + 250_000], [Decimal(1)])])
    assert path.read_text().splitlines()[1].startswith("2026-02-01T00:00:00.250000Z,")
    assert load_series(path)[0][APT].times == [T0 + timedelta(milliseconds=250)]


def test_a_block_refuses_a_bad_price_or_mismatched_columns(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="2 times but 1 prices"):
        SeriesBlock(APT, [1, 2], [Decimal(1)])
    with pytest.raises(ValueError, match="> 0"):
        write_series_blocks(tmp_path / "x.csv", [SeriesBlock(APT, [1], [Decimal(0)])])


def test_latest_times_ignores_bad_rows_and_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "torn.csv"
    path.write_text(
        "timestamp,token,usdPrice\n"
        f"2026-02-01T00:02:00Z,{APT},5\n"
        f"2026-02-01T00:01:00Z,{APT},5\n"
        f"garbage,{APT},5\n"
        f"2026-02-01T00:05:00Z,not-a-token,5\n"
        "2026-02-01T00:0"  # a line cut by a crash mid-append
    )
    assert latest_times(path) == {APT: T0 + timedelta(minutes=2)}
    assert latest_times(tmp_path / "absent.csv") == {}


def test_a_torn_last_row_is_removed_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "torn.csv"
    append_series(path, [row(0, "5")])
    with path.open("a") as handle:
        handle.write(f"2026-02-01T00:01:00Z,{APT},X,5.12")  # cut inside the row: 4 of 6 cells
    append_series(path, [row(2, "7")])
    paths, report = load_series(path)
    assert (report.rows, report.skipped) == (2, 0)
    assert paths[APT].prices == [Decimal(5), Decimal(7)]  # no half-written 5.12 row
    assert path.read_text().endswith(f"2026-02-01T00:02:00Z,{APT},X,7,0.5,\n")  # no source
