"""A sweep's ranking by the chosen figure, its report files, and its progress lines."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from pathlib import Path

import pytest

from bot.backtest.metrics import compute_metrics
from bot.backtest.progress import PER_RUN_LINES, SweepProgress
from bot.backtest.sweep import RANKINGS, SweepRow, rank, run_one
from bot.backtest.sweep_report import BestRun, sweep_warnings, write_sweep_report
from tests.support.backtest_results import buy, make_result
from tests.support.html_tables import read_page

D = Decimal


def rows() -> list[SweepRow]:
    """Five runs whose figures rank differently by each measure."""
    return [
        SweepRow(0, {"n": "a"}, D(10), D(100), max_drawdown_percent=D(30), fees_usd=D(3),
                 avg_entry_usd=D(5), lump_sum_return_percent=D(20)),
        SweepRow(1, {"n": "b"}, D(20), D(50), max_drawdown_percent=D(5), fees_usd=D(1),
                 avg_entry_usd=D(6), lump_sum_return_percent=D(20)),
        SweepRow(2, {"n": "c"}, error="ValueError: bad"),
        SweepRow(3, {"n": "d"}, D(15), D(400), max_drawdown_percent=None, fees_usd=D(9),
                 avg_entry_usd=D(4), lump_sum_return_percent=D(-5)),
        SweepRow(4, {"n": "e"}, None, D(0)),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("by", "order"),
    [
        ("return", ["b", "d", "a", "e", "c"]),
        ("pnl", ["d", "a", "b", "e", "c"]),
        ("vs-lump-sum", ["d", "b", "a", "e", "c"]),  # +20 pp, 0 pp, -10 pp
        ("drawdown", ["d", "b", "a", "e", "c"]),  # none (never fell) first, lowest first
        ("entry", ["d", "a", "b", "e", "c"]),
        ("fees", ["b", "a", "d", "e", "c"]),
    ],
)
def test_the_ranking_is_sorted_by_the_chosen_figure(by: str, order: list[str]) -> None:
    ranked = rank(rows(), by)
    assert [r.params["n"] for r in ranked] == order
    field, higher = RANKINGS[by]
    values = [getattr(r, field) for r in ranked if getattr(r, field) is not None]
    assert values == sorted(values, reverse=higher)


def test_an_unknown_ranking_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown ranking 'luck'"):
        rank(rows(), "luck")


def test_a_row_carries_the_drawdown_the_lump_sum_and_the_warnings() -> None:
    result = make_result(
        [buy(0, "100", "20", "5"), buy(1, "100", "25", "4")], ["5", "4", "6"],
        warnings=["the prices of APT end early"],
    )  # fmt: skip
    row = run_one(lambda _p: result, 0, {})
    metrics = compute_metrics(result)
    assert row.max_drawdown_percent == metrics.max_drawdown_percent
    assert metrics.lump_sum is not None
    assert row.lump_sum_return_percent == metrics.lump_sum.return_percent
    assert row.vs_lump_sum_pp == row.return_percent - metrics.lump_sum.return_percent  # type: ignore[operator]
    assert row.warnings == ("the prices of APT end early",)
    again = SweepRow(1, {}, warnings=("the prices of APT end early", "x.csv: 1 bad row(s)"))
    assert sweep_warnings([row, again]) == ["the prices of APT end early", "x.csv: 1 bad row(s)"]


def test_the_sweep_report_is_a_ranked_csv_a_page_and_the_best_runs(tmp_path: Path) -> None:
    ranked = rank(rows(), "pnl")
    result = make_result([buy(0, "100", "20", "5")], ["5", "6"])
    best = [BestRun(1, ranked[0], result, compute_metrics(result))]
    written = write_sweep_report(
        tmp_path, ranked, ["n"], spec={"strategy": "x"}, by="pnl", best=best
    )
    names = {p.relative_to(tmp_path).as_posix() for p in written}
    assert {"sweep.json", "sweep.csv", "sweep.html", "best-1/report.html"} <= names
    with (tmp_path / "sweep.csv").open(newline="") as handle:
        table = list(csv.DictReader(handle))
    assert [r["n"] for r in table] == ["d", "a", "b", "e", "c"]
    assert [r["rank"] for r in table] == ["1", "2", "3", "4", "5"]
    assert table[0]["PnL USD"] == "400" and table[0]["vs lump sum pp"] == "20"
    assert table[-1]["error"] == "ValueError: bad" and table[-1]["return %"] == ""
    page = read_page((tmp_path / "sweep.html").read_text())
    ranking = page.tables[-1]
    assert [r[1] for r in ranking.rows] == ["d", "a", "b", "e", "c"]
    assert ranking.rows[0][3:5] == ["+20.00 pp", "+$400.00"]
    assert ranking.rows[-1][2] == "failed: ValueError: bad"
    assert ranking.row_classes[0] == "best"
    assert "best-1/report.html" in page.links and "sweep.csv" in page.links
    assert "ranked by pnl (highest first)" in (tmp_path / "sweep.html").read_text()


# ── progress ──────────────────────────────────────────────────────────────────────────


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_piped_progress_is_a_plain_line_per_run() -> None:
    out = io.StringIO()
    clock = iter([0.0, 1.0, 2.5, 4.0])
    progress = SweepProgress(3, out, monotonic=lambda: next(clock))
    progress.start(2)
    progress(SweepRow(0, {}))
    progress(SweepRow(1, {}, error="boom"))
    progress(SweepRow(2, {}))
    assert out.getvalue().splitlines() == [
        "sweep: 3 runs on 2 worker process(es)",
        "sweep: 1/3 runs done (33%), 1.0 s",
        "sweep: 2/3 runs done (66%), 1 failed, 2.5 s",
        "sweep: 3/3 runs done (100%), 1 failed, 4.0 s",
    ]
    assert "\r" not in out.getvalue()


def test_a_large_piped_sweep_reports_every_tenth() -> None:
    out = io.StringIO()
    total = PER_RUN_LINES * 5  # 100 runs
    progress = SweepProgress(total, out, monotonic=lambda: 0.0)
    for index in range(total):
        progress(SweepRow(index, {}))
    lines = out.getvalue().splitlines()
    assert len(lines) == 10
    assert lines[0].startswith("sweep: 10/100 runs done (10%)")
    assert lines[-1].startswith("sweep: 100/100 runs done (100%)")


def test_on_a_terminal_the_counter_refreshes_one_line() -> None:
    out = FakeTerminal()
    progress = SweepProgress(2, out, monotonic=lambda: 0.0)
    progress.start(2)
    progress(SweepRow(0, {}))
    progress(SweepRow(1, {}))
    assert out.getvalue() == "\rsweep: 1/2 done\rsweep: 2/2 done\n"
