"""The provider's credit only under its own prices: sources read from files and the journal.

A backtest credits the provider only when every price it used says `provider`; a price
without a source (written before the column existed) follows the rule of before (the
journal's ticks, a file with native prices); any other source is never credited, and
the report says in one line where the prices came from instead.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bot.backtest.feed import load_feed, load_journal_feed, price_origin
from bot.backtest.metrics import compute_metrics
from bot.backtest.page import write_report_files
from bot.backtest.report import build_report, summary_rows
from bot.backtest.runner import PROVIDER_CREDIT, run_backtest
from bot.backtest.spec import BacktestSpec
from bot.journal import Journal, PriceTickRow
from bot.paper.core.series import SeriesRow, write_series
from tests.support.backtest_inputs import DEEP, FREE, dca
from tests.support.backtest_results import four_slice_dca

APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
T0 = datetime(2026, 3, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)
PAPER = "simulated (recorded from a paper world)"
UNSAID = "of unknown origin (no source column, no native prices)"


@pytest.mark.parametrize(
    ("sources", "recorded", "origin"),
    [
        ({"provider"}, False, None),
        ({"provider", None}, True, None),  # old rows of a recording, then new ones
        ({None}, True, None),  # the rule of before: a recording
        (set(), True, None),
        ({None}, False, UNSAID),
        (set(), False, UNSAID),
        ({"provider", None}, False, UNSAID),
        ({"paper"}, True, PAPER),
        ({"provider", "paper"}, True, PAPER),  # one simulated price is enough
        ({"synthetic"}, True, "synthetic (bot series synth)"),
        ({"import"}, False, "imported (bot series import)"),
        ({"Provider "}, True, "of unknown origin (an unrecognised source value)"),
        (
            {"synthetic", "paper", None},
            False,
            f"{PAPER} and synthetic (bot series synth) and {UNSAID}",
        ),
    ],
)
def test_the_provider_is_credited_only_when_every_price_says_so(
    sources: set[str | None], recorded: bool, origin: str | None
) -> None:
    assert price_origin(sources, recorded) == origin


def rows(source: str | None, native: Decimal | None = Decimal(1)) -> list[SeriesRow]:
    return [
        SeriesRow(T0 + h * HOUR, token, Decimal(price), None, native, source)
        for h in range(4)
        for token, price in ((APT, 5 + h), (USDC, 1))
    ]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_files_sources_are_read_by_both_readers(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"p{suffix}"
    write_series(path, [*rows("provider"), SeriesRow(T0 + 9 * HOUR, APT, Decimal(9), None)])
    feed = load_feed(path)
    assert not feed.notes and feed.sources == {"provider", None}
    assert feed.recorded and feed.origin() is None  # the row without one: native prices here
    write_series(path, rows("paper"))
    assert load_feed(path).origin() == PAPER


def test_the_row_reader_reads_the_sources_too(tmp_path: Path) -> None:
    path = tmp_path / "untidy.csv"
    path.write_text(
        "timestamp,token,usdPrice,source\n"
        f"2026-03-01T00:00:00Z,{APT},5,provider\n"
        f"garbage,{APT},5,provider\n"  # a bad row: the column reader gives way
        f"2026-03-01T01:00:00Z,{APT},6, paper \n"
    )
    feed = load_feed(path)
    assert feed.notes and feed.skipped == 1
    assert feed.sources == {"provider", "paper"} and feed.origin() == PAPER


def test_a_csv_with_empty_source_cells_and_a_parquet_of_nulls(tmp_path: Path) -> None:
    csv_path = tmp_path / "p.csv"
    write_series(csv_path, rows(None, native=None))  # the column, every cell empty
    assert load_feed(csv_path).sources == {None}
    assert load_feed(csv_path).origin() == UNSAID
    parquet = tmp_path / "p.parquet"
    table = pa.table(
        {
            "timestamp": pa.array([T0, T0 + HOUR], pa.timestamp("us", tz="UTC")),
            "token": [APT, APT],
            "usdPrice": ["5", "6"],
            "source": pa.array([None, "provider"], pa.string()),
        }
    )
    pq.write_table(table, parquet)
    feed = load_feed(parquet)
    assert feed.sources == {None, "provider"} and feed.origin() == UNSAID  # no native prices


def test_the_journal_counts_the_ticks_a_run_uses(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    with Journal.open(url) as journal:
        journal.add_price_ticks(  # recorded before the column (NULL), then in paper mode
            [
                PriceTickRow(T0 + h * HOUR, token, Decimal(price))
                for h in range(3)
                for token, price in ((APT, 5), (USDC, 1))
            ]
            + [
                PriceTickRow(T0 + h * HOUR, token, Decimal(price), source="paper")
                for h in range(3, 6)
                for token, price in ((APT, 6), (USDC, 1))
            ]
        )
    wanted = {APT: (APT,), USDC: (USDC,)}
    assert load_journal_feed(url, wanted).sources == {None, "paper"}
    early = load_journal_feed(url, wanted, until=T0 + 3 * HOUR, start=T0 + HOUR)
    assert early.sources == {None} and early.origin() is None  # the rule of before
    late = load_journal_feed(url, wanted, until=T0 + 5 * HOUR, start=T0 + 2 * HOUR)
    assert late.sources == {None, "paper"} and late.origin() == PAPER
    spec = BacktestSpec(
        strategy=dca(), start=T0, end=T0 + 2 * HOUR, prices="journal", journal_url=url,
        depth_usd=DEEP, funding={"USDC": Decimal(100)}, **FREE,
    )  # fmt: skip
    credited = run_backtest(spec)
    assert (credited.credit, credited.price_origin) == (PROVIDER_CREDIT, None)
    simulated = run_backtest(replace(spec, end=T0 + 4 * HOUR))
    assert (simulated.credit, simulated.price_origin) == (None, PAPER)


def test_the_report_says_where_uncredited_prices_came_from(tmp_path: Path) -> None:
    result = four_slice_dca()
    result.price_origin = "simulated <paper>"
    metrics = compute_metrics(result)
    labels = dict(summary_rows(result, metrics))
    assert labels["prices are"] == "simulated <paper>" and "prices by" not in labels
    report = build_report(result, metrics)
    assert (report["credit"], report["price_origin"]) == (None, "simulated <paper>")
    page = write_report_files(tmp_path, result, metrics, report)[-1].read_text()
    assert '<footer class="credit">Prices are simulated &lt;paper&gt;</footer>' in page
    credited = replace(result, credit=PROVIDER_CREDIT, price_origin=None)
    labels = dict(summary_rows(credited, metrics))
    assert labels["prices by"] == PROVIDER_CREDIT and "prices are" not in labels
