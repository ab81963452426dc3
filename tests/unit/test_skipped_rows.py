"""`bot.skipped_rows`: the one line that says which rows of a user's file were not used."""

from __future__ import annotations

from pathlib import Path

from bot.paper.core.series import load_series
from bot.skipped_rows import SkippedRows

APT = "0x1::aptos_coin::AptosCoin"


def test_nothing_skipped_is_no_line() -> None:
    assert SkippedRows("a.csv", rows=10).line() is None


def test_the_first_rows_by_position_are_named_and_the_rest_counted() -> None:
    skipped = SkippedRows("prices.csv", rows=1204)
    for position, why in ((12, "duplicate time"), (9, "b"), (7, "a"), (30, "c"), (40, "d")):
        skipped.skip(position, why)
    assert skipped.line() == (
        "prices.csv: skipped 5 of 1,204 rows (line 7: a; line 9: b; line 12: duplicate time; "
        "2 more)"
    )


def test_a_series_file_names_each_bad_cell(tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_text(
        "timestamp,token,usdPrice\n"
        f"2026-01-01T00:00:00Z,{APT},5\n"
        f"2026-01-01T01:00:00,{APT},5\n"  # no zone
        "2026-01-01T02:00:00Z,APTT,5\n"
        f"2026-01-01T03:00:00Z,{APT},abc\n",
        encoding="utf-8",
    )
    paths, report = load_series(path)
    assert len(paths[APT].prices) == 1
    assert report.skipped_rows is not None
    assert report.skipped_rows.line() == (
        f"{path}: skipped 3 of 4 rows (line 3: time '2026-01-01T01:00:00' is not ISO 8601 "
        "(with a zone) or epoch seconds; line 4: token 'APTT' is not a known token, coin type "
        "or FA address; line 5: price 'abc' is not a number)"
    )
