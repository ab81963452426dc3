"""The `source` column: written by the recorder, synth and import; old files still read.

Each row of a series says where its price came from (`provider`, `paper`, `synthetic`,
`import`); files and journals written before the column keep working, and a file without
the column that gets rows with a source gains it (its old rows empty).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bot.config import Settings
from bot.history.importer import import_price_csv
from bot.history.recorder import recording_source
from bot.history.synth import SynthToken, synth_blocks, synth_spec
from bot.history.ticks import store_block
from bot.journal import Journal, JournalError, PriceTickRow
from bot.paper.core.price_sources import PRICE_SOURCES
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
BASE_US = (T0 - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


def row(minute: int, price: str, source: str | None, token: str = APT) -> SeriesRow:
    moment = T0 + timedelta(minutes=minute)
    return SeriesRow(moment, token, Decimal(price), "X", Decimal("0.5"), source)


def test_a_row_or_block_with_an_unknown_source_is_refused() -> None:
    assert PRICE_SOURCES == ("provider", "paper", "synthetic", "import")
    with pytest.raises(ValueError, match="source 'panora': must be one of provider, paper"):
        row(0, "5", "panora")
    with pytest.raises(ValueError, match="source 'live'"):
        SeriesBlock(APT, [1], [Decimal(1)], source="live")
    with pytest.raises(ValueError, match="source 'x'"):
        SeriesBlock(APT, [1, 2], [Decimal(1), Decimal(2)], row_sources=["paper", "x"])
    with pytest.raises(ValueError, match="2 times but 1 sources"):
        SeriesBlock(APT, [1, 2], [Decimal(1), Decimal(2)], row_sources=["paper"])


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_sources_round_trip_and_loading_reports_them(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"p{suffix}"
    write_series(path, [row(0, "5", "provider"), row(1, "6", None)])
    append_series(path, [row(2, "7.000000000000000001", "paper")])
    paths, report = load_series(path)
    assert report.sources == {"provider", None, "paper"}
    assert paths[APT].prices == [Decimal(5), Decimal(6), Decimal("7.000000000000000001")]


def test_an_old_csv_gains_the_column_when_rows_with_a_source_are_appended(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.csv"
    path.write_text(
        "timestamp,token,symbol,usdPrice,nativePrice\n"
        f"2026-02-01T00:00:00Z,{APT},APT,5,1\n"
        "\n"
        f"2026-02-01T00:01:00Z,{APT},APT,5.5,1,an extra cell\n"
        f"2026-02-01T00:02:00Z,{APT},APT,4.9"  # torn by a crash: removed before appending
    )
    _, before = load_series(path)
    assert before.sources == {None}
    append_series(path, [row(3, "6", "paper")])
    lines = path.read_text().splitlines()
    assert lines[0] == "timestamp,token,symbol,usdPrice,nativePrice,source"
    assert lines[1] == f"2026-02-01T00:00:00Z,{APT},APT,5,1,"  # old rows: no source
    assert lines[3] == f"2026-02-01T00:01:00Z,{APT},APT,5.5,1,,an extra cell"
    assert lines[-1] == f"2026-02-01T00:03:00Z,{APT},X,6,0.5,paper"
    paths, report = load_series(path)
    assert paths[APT].prices == [Decimal(5), Decimal("5.5"), Decimal(6)]
    assert report.skipped == 0 and report.sources == {None, "paper"}
    assert latest_times(path) == {APT: T0 + timedelta(minutes=3)}
    assert not list(tmp_path.glob(".*partial"))
    # Rows without a source leave an old file as it is.
    plain = tmp_path / "plain.csv"
    plain.write_text(f"timestamp,token,usdPrice\n2026-02-01T00:00:00Z,{APT},5\n")
    append_series(plain, [row(1, "6", None)])
    assert plain.read_text().splitlines() == [
        "timestamp,token,usdPrice",
        f"2026-02-01T00:00:00Z,{APT},5",
        f"2026-02-01T00:01:00Z,{APT},6",
    ]


def test_an_old_parquet_file_without_the_column_still_reads_and_grows(tmp_path: Path) -> None:
    path = tmp_path / "old.parquet"
    pq.write_table(
        pa.table(
            {
                "timestamp": pa.array([T0], pa.timestamp("us", tz="UTC")),
                "token": [APT],
                "usdPrice": ["5"],
                "nativePrice": ["1"],
            }
        ),
        path,
    )
    assert load_series(path)[1].sources == {None}
    append_series(path, [row(1, "6", "provider")])
    table = pq.read_table(path)
    assert table.column("source").to_pylist() == [None, "provider"]
    assert load_series(path)[1].sources == {None, "provider"}


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_blocks_write_their_source_or_one_per_row(tmp_path: Path, suffix: str) -> None:
    apt = SeriesBlock(
        APT,
        [BASE_US, BASE_US + 60_000_000],
        [Decimal(5), Decimal(6)],
        "APT",
        row_sources=["provider", "paper"],
    )
    usdc = SeriesBlock(USDC, [BASE_US + 30_000_000], [Decimal(1)], "USDC", source="import")
    path = tmp_path / f"b{suffix}"
    write_series_blocks(path, [apt, usdc])
    if suffix == ".csv":
        assert [line.rsplit(",", 1)[1] for line in path.read_text().splitlines()] == [
            "source",
            "provider",
            "import",  # in time order: USDC at 00:00:30
            "paper",
        ]
    else:
        assert pq.read_table(path).column("source").to_pylist() == ["provider", "import", "paper"]
    assert load_series(path)[1].sources == {"provider", "paper", "import"}
    assert [r.source for r in apt.rows()] == ["provider", "paper"]
    assert [r.source for r in usdc.rows()] == ["import"]


def test_synthetic_series_say_synthetic(tmp_path: Path) -> None:
    spec = synth_spec(None, 7, 3600, start_price=Decimal(5))
    [block] = synth_blocks([SynthToken(APT, "APT", spec)], T0, T0 + timedelta(hours=3), 7)
    assert block.source == "synthetic"
    write_series_blocks(tmp_path / "s.parquet", [block])
    assert load_series(tmp_path / "s.parquet")[1].sources == {"synthetic"}


def test_an_import_says_import_unless_the_file_has_its_own_source(tmp_path: Path) -> None:
    plain = tmp_path / "plain.csv"
    plain.write_text("time,close\n2026-02-01,5\n2026-02-01T01:00:00Z,6\n")
    block, _ = import_price_csv(plain, APT)
    assert (block.source, block.row_sources) == ("import", None)
    own = tmp_path / "export.csv"  # e.g. a series file of one token, re-imported
    own.write_text(
        "timestamp,value,Source\n"
        "2026-02-01T00:00:00Z,5,provider\n"
        "2026-02-01T01:00:00Z,6,\n"  # empty: an import
        "2026-02-01T02:00:00Z,7,paper\n"
        "2026-02-01T03:00:00Z,8,from a friend\n"  # not a source: a bad row
    )
    block, report = import_price_csv(own, APT)
    assert (report.imported, report.skipped) == (3, 1)
    assert report.first_problem is not None and "source 'from a friend'" in report.first_problem
    assert list(block.sources()) == ["provider", "import", "paper"]
    alone = tmp_path / "alone.csv"  # the source column is not taken for the price
    alone.write_text("ts,amount,source\n2026-02-01T00:00:00Z,5,paper\n")
    block, report = import_price_csv(alone, APT)
    assert (report.price_column, block.source) == ("amount", "paper")


def test_a_stored_block_keeps_each_rows_source(tmp_path: Path) -> None:
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as journal:
        block = SeriesBlock(
            APT, [BASE_US, BASE_US + 1], [Decimal(5), Decimal(6)], row_sources=["paper", "import"]
        )
        assert store_block(journal, block) == (2, 0)
        usdc = SeriesBlock(USDC, [BASE_US], [Decimal(1)], source="synthetic")
        assert store_block(journal, usdc) == (1, 0)
        assert [t.source for t in journal.price_ticks(APT)] == ["paper", "import"]
        assert [t.source for t in journal.price_ticks(USDC)] == ["synthetic"]


def test_the_journal_stores_a_ticks_source_and_refuses_a_malformed_one(tmp_path: Path) -> None:
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as journal:
        journal.add_price_ticks(
            [
                PriceTickRow(T0, APT, Decimal(5), "APT", Decimal(1), "provider"),
                PriceTickRow(T0 + timedelta(minutes=1), APT, Decimal(6)),
            ]
        )
        assert [t.source for t in journal.price_ticks(APT)] == ["provider", None]
        with pytest.raises(JournalError, match="source: not a source name"):
            journal.add_price_ticks([PriceTickRow(T0, USDC, Decimal(1), source="Paper world")])
        assert journal.price_ticks(USDC) == []


def test_the_recorders_source_follows_the_mode() -> None:
    assert recording_source(Settings()) == "paper"  # the default: paper mode
    assert recording_source(Settings(paper={"url": "http://127.0.0.1:8800"})) == "paper"
    assert recording_source(Settings(mode="live")) == "provider"
    served = Settings(
        mode="live",
        api={"base_url": "http://127.0.0.1:8800/"},
        paper={"url": "http://127.0.0.1:8800"},
    )
    assert recording_source(served) == "paper"  # live settings pointed at a paper world


def test_a_recorder_needs_a_series_source(tmp_path: Path) -> None:
    from bot.clock import SteppedClock
    from bot.history.recorder import PriceRecorder, SeriesFile
    from bot.paper.core.registry import PaperTokens

    apt = PaperTokens.from_token_list().find("APT")
    with pytest.raises(ValueError, match="source 'live'"):
        PriceRecorder(
            object(),  # type: ignore[arg-type]  # never asked: the origin is checked first
            SteppedClock(T0),
            [apt],
            every_seconds=60,
            origin="live",
            out=SeriesFile(tmp_path / "p.csv"),
        )
