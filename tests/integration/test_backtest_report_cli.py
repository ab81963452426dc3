"""`bot backtest` as a user runs it, piped: warnings, the report page, the sweep's report.

Real subprocesses (stdout and stderr are pipes, not terminals), real series files.
"""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path

import pytest

from bot.backtest.report import format_price
from tests.support.backtest_inputs import APT, DCA, window, write_series
from tests.support.cli import run_bot as bot
from tests.support.html_tables import read_page

LADDER = (
    "sell_token=USDC,buy_token=APT,rungs=3,spacing_percent=5,amount_per_rung=50,"
    "redrift_percent=15,expiry=2 hours"
)

pytest.importorskip("matplotlib")


@pytest.fixture
def series(tmp_path: Path) -> Path:
    """Eight hours of half-hourly APT prices (to 07:30), USDC at 1."""
    prices = ["5", "4.5", "4", "4.5", "5", "8", "10", "9", "8", "8", "8", "8", "8", "8", "8", "8"]
    return write_series(tmp_path / "prices.csv", prices)


def warnings_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("bot: warning: ")]


def test_a_window_past_the_data_end_warns_in_one_line(series: Path, tmp_path: Path) -> None:
    # The series ends at 07:30; the window runs to 12:00.
    out = tmp_path / "report"
    run = bot(
        "backtest", "--strategy", "recurring_dca", "--params", DCA, *window(12),
        "--prices", str(series), "--report", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    (line,) = warnings_of(run.stderr)
    assert line == (
        "bot: warning: the prices of APT, USDC end at 2026-01-01T07:30:00Z, 4 h 30 min before "
        "the window's end 2026-01-01T12:00:00Z: the last price is held to the end"
    )
    text = line.removeprefix("bot: warning: ")
    assert json.loads((out / "report.json").read_text())["warnings"] == [text]
    assert read_page((out / "report.html").read_text()).warnings == [text]
    inside = bot(
        "backtest", "--strategy", "recurring_dca", "--params", DCA, *window(6),
        "--prices", str(series), cwd=tmp_path,
    )  # fmt: skip
    assert inside.returncode == 0 and warnings_of(inside.stderr) == []


def test_skipped_rows_warn_in_one_line(tmp_path: Path) -> None:
    path = write_series(tmp_path / "untidy.csv", ["5", "4", "5", "6", "5", "5", "5", "5"])
    with path.open("a") as handle:
        handle.write("2026-01-01T01:10:00Z,0x1::aptos_coin::AptosCoin,APT,\n")  # no price
    run = bot(
        "backtest", "--strategy", "recurring_dca", "--params", DCA, *window(3),
        "--prices", str(path), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert warnings_of(run.stderr) == [
        f"bot: warning: {path}: skipped 1 of 17 rows (line 18: price '' is not a number) "
        "(docs/price-series.md)"
    ]


def test_a_ladder_report_has_its_trades_in_a_table(tmp_path: Path) -> None:
    # APT falls 10 → 7 and climbs back: the rungs fill, expire and are re-placed.
    prices = ["10", "9.6", "9.2", "8.8", "8.4", "8", "7.5", "7", "7.5", "8", "9", "10"] * 2
    path = write_series(tmp_path / "prices.csv", prices)
    out = tmp_path / "ladder"
    run = bot(
        "backtest", "--strategy", "limit_ladder", "--params", LADDER, "--schedule", "30m",
        *window(11), "--prices", str(path), "--report", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    data = json.loads((out / "report.json").read_text())
    fills = data["fills"]
    assert fills and any(o["status"] == "expired" for o in data["orders"])
    assert all(o["rate"] is not None for o in data["orders"])  # the levels drawn
    page = read_page((out / "report.html").read_text())
    assert page.h1 == ["limit_ladder · USDC → APT · 2026-01-01 00:00 → 2026-01-01 11:00 UTC"]
    trades = next(t for t in page.tables if t.css == "data")
    assert len(trades.rows) == len(fills)
    for row, fill in zip(trades.rows, fills, strict=True):
        assert row[0] == fill["time"].replace("T", " ").removesuffix("Z")
        assert row[3] == "buy"
        assert row[4] == f"{fill['sold']} USDC" and row[5] == f"{fill['bought']} APT"
        assert row[6].endswith(" USDC per APT")
        price = Decimal(row[6].split()[0])
        exact = Decimal(fill["sold"]) / Decimal(fill["bought"])
        assert abs(price - exact) <= Decimal("0.00001")  # rounded to 6 significant digits
    with (out / "trades.csv").open(newline="") as handle:
        assert [r["time"] for r in csv.DictReader(handle)] == [f["time"] for f in fills]


def test_sweep_report_ranks_writes_charts_and_shows_progress_when_piped(
    series: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sweep"
    run = bot(
        "backtest", "--strategy", "recurring_dca", "--params", DCA, *window(),
        "--prices", str(series), "--sweep", "amount_per_order=10,20",
        "--sweep", "orders=2,4", "--rank-by", "pnl", "--report", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    progress = [line for line in run.stderr.splitlines() if line.startswith("sweep: ")]
    assert progress[0].startswith("sweep: 4 runs on ")
    assert [line.split(" runs done")[0] for line in progress[1:]] == [
        "sweep: 1/4",
        "sweep: 2/4",
        "sweep: 3/4",
        "sweep: 4/4",
    ]
    assert "\r" not in run.stderr
    with (out / "sweep.csv").open(newline="") as handle:
        table = list(csv.DictReader(handle))
    pnl = [Decimal(r["PnL USD"]) for r in table]
    assert pnl == sorted(pnl, reverse=True) and len(pnl) == 4
    assert [r["rank"] for r in table] == ["1", "2", "3", "4"]
    page = read_page((out / "sweep.html").read_text())
    assert [row[0] for row in page.tables[-1].rows] == ["1", "2", "3", "4"]
    assert page.tables[-1].rows[0][1:3] == [table[0]["amount_per_order"], table[0]["orders"]]
    assert (out / "sweep.html").read_text().count("data:image/png;base64,") == 1
    for place in (1, 2, 3):
        best = json.loads((out / f"best-{place}" / "report.json").read_text())
        assert Decimal(best["metrics"]["pnl_usd"]) == pnl[place - 1]  # the same run again
    assert not (out / "best-4").exists()


def test_an_unknown_ranking_is_one_line_and_exit_2(series: Path, tmp_path: Path) -> None:
    run = bot(
        "backtest", "--strategy", "recurring_dca", "--params", DCA, *window(),
        "--prices", str(series), "--sweep", "orders=2,4", "--rank-by", "luck", cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "bot: error: --rank-by 'luck': expected one of return, pnl, vs-lump-sum, drawdown, "
        "entry, fees"
    ]


# ── one way to show a price: [display].price_quote ────────────────────────────────────

TAKE_PROFIT = json.dumps(
    {
        "token": "APT",
        "quote_token": "USDC",
        "entry_price": "5",
        "targets": [
            {"percent_above": "20", "fraction": "0.5"},
            {"percent_above": "50", "fraction": "0.5"},
        ],
    }
)


def trades_of(folder: Path) -> list[dict[str, str]]:
    with (folder / "trades.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_a_take_profit_report_reads_usdc_per_apt_as_bot_orders_does(
    series: Path, tmp_path: Path
) -> None:
    # It sells APT for USDC (its position counts in APT); the default convention, as in
    # `bot orders`, writes its prices in USDC per APT: bought / sold, exactly.
    out = tmp_path / "tp"
    run = bot(
        "backtest", "--strategy", "take_profit", "--params", TAKE_PROFIT, *window(7),
        "--prices", str(series), "--report", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "APT per USDC" not in run.stdout
    (entry,) = [line for line in run.stdout.splitlines() if line.startswith("average entry")]
    assert entry.endswith(" USDC per APT)")
    data = json.loads((out / "report.json").read_text())
    fills = data["fills"]
    assert fills and all(f["sell_token"] == APT for f in fills)
    rows = trades_of(out)
    assert len(rows) == len(fills)
    for row, fill in zip(rows, fills, strict=True):
        assert row["price_unit"] == "USDC per APT"
        assert Decimal(row["price"]) == Decimal(fill["bought"]) / Decimal(fill["sold"])
        assert Decimal(5) < Decimal(row["price"]) < Decimal(10)  # targets 6 and 7.5
    m = data["metrics"]  # the accounting is unchanged: invested APT, received USDC
    assert Decimal(m["avg_entry_quote"]) == Decimal(m["invested"]) / Decimal(m["received"])
    page = read_page((out / "report.html").read_text())
    trades = next(t for t in page.tables if t.css == "data")
    assert all(row[6].endswith(" USDC per APT") for row in trades.rows)


def test_price_quote_apt_shows_a_usdc_to_apt_dca_in_apt_per_usdc(
    series: Path, tmp_path: Path
) -> None:
    config = tmp_path / "bot.toml"
    config.write_text('[display]\nprice_quote = ["APT"]\n')
    out = tmp_path / "dca"
    run = bot(
        "-c", str(config), "backtest", "--strategy", "recurring_dca", "--params", DCA,
        *window(), "--prices", str(series), "--report", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    (entry,) = [line for line in run.stdout.splitlines() if line.startswith("average entry")]
    m = json.loads((out / "report.json").read_text())["metrics"]
    shown = Decimal(m["received"]) / Decimal(m["invested"])  # APT per USDC
    assert entry.endswith(f"({format_price(shown)} APT per USDC)")
    rows = trades_of(out)
    assert rows and all(r["price_unit"] == "APT per USDC" for r in rows)
    for row in rows:
        assert Decimal(row["price"]) == Decimal(row["bought"]) / Decimal(row["sold"])
    # A sweep's best runs follow it too.
    swept = tmp_path / "sweep"
    run = bot(
        "-c", str(config), "backtest", "--strategy", "recurring_dca", "--params", DCA,
        *window(), "--prices", str(series), "--sweep", "orders=2,4", "--report", str(swept),
        cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert {r["price_unit"] for r in trades_of(swept / "best-1")} == {"APT per USDC"}
