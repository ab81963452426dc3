"""Series files → exact arrays: the column reader, its fallback, and the journal source."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bot.backtest.feed import load_feed, load_journal_feed
from bot.journal import Journal, PriceTickRow
from bot.paper.core.registry import PaperTokens
from bot.paper.core.series import SeriesRow, load_series, write_series

APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)


def write_csv(path: Path, lines: list[str]) -> Path:
    path.write_text("timestamp,token,usdPrice\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def assert_same_as_core(path: Path) -> None:
    """The feed holds exactly the points the paper world's own reader replays."""
    feed = load_feed(path)
    paths, report = load_series(path)
    assert set(feed.series) == set(paths)
    for key, core in paths.items():
        series = feed.series[key]
        assert [series.time(i) for i in range(len(series))] == core.times
        assert [series.price(i) for i in range(len(series))] == core.prices
    assert (feed.rows, feed.skipped, feed.duplicates) == (
        report.rows,
        report.skipped,
        report.duplicates,
    )


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_written_series_reads_back_exactly(tmp_path: Path, suffix: str) -> None:
    rows = [
        SeriesRow(T0 + i * HOUR, APT, Decimal(price), "APT")
        for i, price in enumerate(["5.123456789012", "0.000000000123456789", "123456789.5", "7"])
    ] + [SeriesRow(T0, USDC, Decimal("0.99990001"), "USDC")]
    path = tmp_path / f"prices{suffix}"
    write_series(path, rows)
    feed = load_feed(path)
    assert not feed.notes  # the column reader took it whole
    apt = feed.series[APT]
    assert [apt.price(i) for i in range(4)] == [r.usd_price for r in rows[:4]]
    assert apt.at(T0 + HOUR + timedelta(minutes=59)) == Decimal("0.000000000123456789")
    assert feed.series[USDC].price(0) == Decimal("0.99990001")
    assert_same_as_core(path)


def test_rows_in_any_order_and_repeated_times(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "p.csv",
        [
            f"2026-01-01T02:00:00Z,{APT},6",
            f"2026-01-01T00:00:00Z,{APT},5",
            f"2026-01-01T01:00:00+01:00,{APT},4",  # = 00:00Z: a duplicate, the later row wins
            f"2026-01-01T01:00:00Z,{USDC},1",
            "1767229200," + APT + ",5.5",  # epoch seconds: 2026-01-01T01:00:00Z
        ],
    )
    feed = load_feed(path)
    apt = feed.series[APT]
    assert [(apt.time(i), apt.price(i)) for i in range(len(apt))] == [
        (T0, Decimal(4)),
        (T0 + HOUR, Decimal("5.5")),
        (T0 + 2 * HOUR, Decimal(6)),
    ]
    assert feed.duplicates == 1 and feed.skipped == 0 and feed.rows == 5
    assert_same_as_core(path)


def test_bad_rows_are_skipped_and_counted_not_fatal(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "p.csv",
        [
            f"2026-01-01T00:00:00Z,{APT},5",
            f"2026-01-01T01:00:00Z,{APT},",  # empty price
            f"2026-01-01T02:00:00,{APT},5",  # no zone
            f"2026-01-01T03:00:00Z,{APT},-1",  # not positive
            "2026-01-01T04:00:00Z,not-a-token,1",
            f"2026-01-01T05:00:00Z,{APT},1e-3",  # exponent notation: fine, exactly
        ],
    )
    feed = load_feed(path)
    assert feed.skipped == 4 and feed.notes  # read row by row
    apt = feed.series[APT]
    assert [apt.price(i) for i in range(len(apt))] == [Decimal(5), Decimal("0.001")]
    assert_same_as_core(path)


def test_spellings_of_one_token_are_merged_with_the_registry(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "p.csv",
        [f"2026-01-01T00:00:00Z,{APT},5", "2026-01-01T01:00:00Z,0xa,6"],
    )
    registry = PaperTokens.from_token_list()
    merged = load_feed(path, key_of=registry.key_of)
    assert list(merged.series) == [APT] and len(merged.series[APT]) == 2
    apart = load_feed(path)
    assert len(apart.series) == 2


def test_parquet_float_prices_and_missing_columns_are_refused(tmp_path: Path) -> None:
    floats = tmp_path / "f.parquet"
    pq.write_table(
        pa.table({"timestamp": [T0], "token": [APT], "usdPrice": pa.array([5.1])}), floats
    )
    with pytest.raises(ValueError, match="float"):
        load_feed(floats)
    missing = tmp_path / "m.csv"
    missing.write_text("timestamp,token\n2026-01-01T00:00:00Z,0xa\n")
    with pytest.raises(ValueError, match="usdPrice"):
        load_feed(missing)


def test_a_parquet_decimal_column_is_exact(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    prices = pa.array([Decimal("5.10"), Decimal("4.000000001")], type=pa.decimal128(20, 9))
    pq.write_table(
        pa.table(
            {
                "timestamp": pa.array([T0, T0 + HOUR], type=pa.timestamp("us", tz="UTC")),
                "token": [APT, APT],
                "usdPrice": prices,
            }
        ),
        path,
    )
    apt = load_feed(path).series[APT]
    assert [apt.price(0), apt.price(1)] == [Decimal("5.1"), Decimal("4.000000001")]


def test_the_series_answers_windows_means_and_gaps(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "p.csv",
        [f"2026-01-01T0{h}:00:00Z,{APT},{p}" for h, p in [(0, "5"), (1, "4"), (5, "6")]],
    )
    feed = load_feed(path)
    apt = feed.series[APT]
    assert apt.mean(T0, T0 + 5 * HOUR) == Decimal(5)
    assert apt.mean(T0 + HOUR, T0 + 2 * HOUR) == Decimal(4)
    assert apt.at(T0 + 3 * HOUR) == Decimal(4)  # the last price holds through a gap
    [gap] = feed.gaps(timedelta(hours=2))
    assert (gap.start, gap.end) == (T0 + HOUR, T0 + 5 * HOUR)
    assert [p for _, p in apt.sample(T0, T0 + 5 * HOUR, 2)] == [Decimal(5), Decimal(6)]


def test_the_journal_source_merges_a_tokens_identities(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    with Journal.open(url) as journal:
        journal.add_price_ticks(
            [
                PriceTickRow(T0, APT, Decimal(5), "APT", None),
                PriceTickRow(T0 + HOUR, "0xa", Decimal(4), "APT", None),
                PriceTickRow(T0 + 2 * HOUR, APT, Decimal(6), "APT", None),
            ]
        )
    feed = load_journal_feed(url, {APT: (APT, "0xa")}, until=T0 + 2 * HOUR)
    apt = feed.series[APT]
    assert [apt.price(i) for i in range(len(apt))] == [Decimal(5), Decimal(4)]
    assert feed.recorded and feed.source == "journal"
