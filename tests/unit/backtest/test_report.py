"""The backtest report: JSON round trip, the console table, PNG/HTML files, the progress bar."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.backtest.metrics import compute_metrics, with_no_bounds
from bot.backtest.page import write_report_files
from bot.backtest.progress import ProgressBar, progress_for
from bot.backtest.report import build_report, load_report, summary_table, to_jsonable, write_json
from tests.support.backtest_results import APT, T0, USDC, buy, four_slice_dca, make_result

CREDIT = "Price data by Panora (panora.exchange)"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_report_json_round_trip_keeps_every_amount_exact(tmp_path: Path) -> None:
    result = four_slice_dca()
    metrics = compute_metrics(result)
    spec = {"fee_bps": 25, "slippage": Decimal("0.5"), "prices": tmp_path / "p.csv"}
    path = write_json(tmp_path / "out" / "report.json", build_report(result, metrics, spec))
    data = load_report(path)
    m = data["metrics"]
    assert isinstance(m["pnl_usd"], str)  # text, never a JSON number
    assert Decimal(m["pnl_usd"]) == metrics.pnl_usd == Decimal(350)
    assert Decimal(m["avg_entry_usd"]) == metrics.avg_entry_usd
    assert Decimal(m["lump_sum"]["value_at_end_usd"]) == Decimal(800)
    assert data["spec"] == {"fee_bps": 25, "slippage": "0.5", "prices": str(tmp_path / "p.csv")}
    assert data["start"] == "2026-01-01T00:00:00Z"
    assert len(data["fills"]) == 4
    assert data["fills"][1] == {
        "time": "2026-01-01T01:00:00Z",
        "kind": "dca",
        "order_id": "dca-1",
        "sell_token": USDC,
        "buy_token": APT,
        "sold": "100",
        "bought": "25",
        "fee": "0",
        "sell_usd": "1",
        "buy_usd": "4",
        "skipped": False,
    }
    assert data["orders"][0]["status"] == "filled"
    assert "path" not in m  # the value path is drawn, not listed
    text = path.read_text()
    assert "e+" not in text.lower()  # no exponent notation anywhere


def test_a_float_never_reaches_the_report() -> None:
    with pytest.raises(TypeError, match="float"):
        to_jsonable({"amount": 0.1})


def test_summary_table_shows_the_headline_figures() -> None:
    result = four_slice_dca()
    result.credit = CREDIT
    metrics = compute_metrics(result)
    metrics = with_no_bounds(metrics, metrics, ["min_rate", "max_rate"])
    table = summary_table(result, metrics)
    assert "400 USDC ($400.00)" in table
    assert "75 APT" in table
    assert "+$350.00 (+87.50%)" in table
    assert "$20.00 (10.00%" in table  # max drawdown
    assert "1 / 4 / 0 (filled 1)" in table
    assert "vs lump sum at start" in table and "strategy -12.50 pp" in table
    assert "without min_rate, max_rate" in table
    assert CREDIT in table


def test_summary_table_of_a_strategy_that_never_traded() -> None:
    result = make_result([], ["5", "6"])
    result.errors.append("tick 2026-01-01T01:00:00Z: ValueError: boom")
    table = summary_table(result, compute_metrics(result))
    assert "none: the strategy never traded" in table
    assert "1 strategy errors" in table
    assert "error: tick 2026-01-01T01:00:00Z: ValueError: boom" in table


def test_pictures_and_html_are_written_with_the_credit_line(tmp_path: Path) -> None:
    result = four_slice_dca()
    result.credit = CREDIT
    result.strategy = "dca<script>"
    metrics = compute_metrics(result)
    files = write_report_files(tmp_path, result, metrics, build_report(result, metrics))
    assert [f.name for f in files] == ["price.png", "value.png", "trades.csv", "report.html"]
    for png in files[:2]:
        data = png.read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 10_000
    page = files[3].read_text()
    assert page.count("data:image/png;base64,") == 2
    assert CREDIT in page
    assert "dca&lt;script&gt;" in page and "dca<script>" not in page
    assert '<a href="report.json">' in page  # the data is a file of its own, linked
    assert "&quot;pnl_usd&quot;" not in page  # no raw JSON dump on the page


def test_html_without_recorded_prices_has_no_credit(tmp_path: Path) -> None:
    result = four_slice_dca()
    metrics = compute_metrics(result)
    page = write_report_files(tmp_path, result, metrics, build_report(result, metrics))[-1]
    assert 'class="credit"' not in page.read_text()


def test_pictures_of_a_strategy_that_never_traded(tmp_path: Path) -> None:
    result = make_result([], ["5", "6"])
    metrics = compute_metrics(result)
    files = write_report_files(tmp_path, result, metrics, build_report(result, metrics))
    assert all(f.stat().st_size > 1000 for f in files if f.suffix != ".csv")
    assert (tmp_path / "trades.csv").read_text().count("\n") == 1  # the header alone
    assert "No trades." in (tmp_path / "report.html").read_text()


def test_credit_changes_the_picture(tmp_path: Path) -> None:
    result = make_result([buy(0, "100", "20", "5")], ["5", "6"])
    metrics = compute_metrics(result)
    plain = write_report_files(tmp_path / "a", result, metrics, {})[0].read_bytes()
    credited = replace(result, credit=CREDIT)
    with_credit = write_report_files(tmp_path / "b", credited, metrics, {})[0].read_bytes()
    assert plain != with_credit


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_progress_bar_when_not_a_terminal() -> None:
    assert progress_for(T0, T0 + timedelta(days=1), io.StringIO()) is None
    assert isinstance(progress_for(T0, T0 + timedelta(days=1), FakeTerminal()), ProgressBar)


def test_progress_bar_waits_then_redraws_at_most_every_interval() -> None:
    now = [0.0]
    out = FakeTerminal()
    bar = ProgressBar(
        T0,
        T0 + timedelta(days=10),
        out,
        width=10,
        delay=0.5,
        interval=0.1,
        monotonic=lambda: now[0],
    )
    bar(T0 + timedelta(days=1))
    assert out.getvalue() == ""  # short runs stay quiet
    now[0] = 0.6
    bar(T0 + timedelta(days=5))
    assert out.getvalue() == "\r[#####-----]  50%  2026-01-06 00:00"
    now[0] = 0.65
    bar(T0 + timedelta(days=6))  # within the interval: not redrawn
    assert out.getvalue().count("\r[") == 1
    now[0] = 0.8
    bar(T0 + timedelta(days=10))
    assert out.getvalue().endswith("[##########] 100%  2026-01-11 00:00")
    bar.close()
    assert out.getvalue().endswith("\r")


def test_report_counts_and_balances_are_exact_text() -> None:
    result = four_slice_dca()
    data = json.loads(json.dumps(build_report(result, compute_metrics(result))))
    assert data["counts"] == {"ticks": 4, "events": 4, "actions": 1, "refused": 0}
    assert data["balances"]["start"] == {USDC: "1000"}
    assert data["tokens"][APT] == {"symbol": "APT", "decimals": 8}
