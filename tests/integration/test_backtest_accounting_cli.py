"""`bot backtest --accounting`: the run in `bot report`'s terms, through the real CLI.

The accounting block and its JSON carry the backtest's own invested and received to the
base unit; it is shown only when asked, and a sweep refuses it.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from tests.support.backtest_inputs import APT, DCA, USDC, window, write_series
from tests.support.cli import run_bot


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "bot.toml"
    path.write_text(
        'mode = "paper"\n'
        f'[journal]\nurl = "sqlite:///{tmp_path / "bot.db"}"\n'
        '[accounting]\ntime_zone = "Europe/Berlin"\ncost_basis = "average"\n'
    )
    return path


@pytest.fixture
def series(tmp_path: Path) -> Path:
    prices = ["5", "4.5", "4", "4.5", "5", "8", "10", "9", "8", "8", "8", "8", "8"]
    return write_series(tmp_path / "prices.csv", prices)


def backtest(config: Path, series: Path, *extra: str) -> list[str]:
    return [
        "-c",
        str(config),
        "backtest",
        "--strategy",
        "recurring_dca",
        "--params",
        DCA,
        "--schedule",
        "4h",
        *window(6),
        "--prices",
        str(series),
        *extra,
    ]


def test_the_accounting_block_reads_as_bot_report(config: Path, series: Path) -> None:
    done = run_bot(*backtest(config, series, "--accounting"))
    assert done.returncode == 0, done.stderr
    own, block = done.stdout.split("accounting, as bot report shows it")
    assert "(cost basis AVERAGE, time zone Europe/Berlin):" in block
    assert "strategy recurring_dca (cost basis AVERAGE" in block
    rows = {
        line.strip().split("  ")[0]: line.split("  ")[-1].strip() for line in block.splitlines()
    }
    theirs = {line.split("  ")[0]: line.split("  ")[-1].strip() for line in own.splitlines()}
    # The backtest's own table: "70 USDC ($70.00)", "12.37884826 APT": the same amounts.
    assert theirs["invested"].split(" (")[0] == rows["invested"]
    assert theirs["received"] == rows["received"]
    assert "USDC per APT" in rows["average entry"]
    assert "keeper" in rows["fees"] and "USDC" in rows["fees"]
    plain = run_bot(*backtest(config, series))
    assert plain.returncode == 0 and "accounting, as bot report" not in plain.stdout


def test_the_json_carries_the_backtests_totals_exactly(config: Path, series: Path) -> None:
    done = run_bot(*backtest(config, series, "--accounting", "--json"))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    accounting = data["accounting"]
    assert accounting["cost_basis"] == "average" and accounting["time_zone"] == "Europe/Berlin"
    (strategy,) = accounting["strategies"]
    fills = [f for f in data["fills"] if not f["skipped"]]
    invested = sum((Decimal(f["sold"]) for f in fills), Decimal(0))
    received = sum((Decimal(f["bought"]) for f in fills), Decimal(0))
    assert strategy["totals"]["invested"] == {USDC: str(invested)}
    assert Decimal(strategy["totals"]["received"][APT]) == received
    assert strategy["totals"]["trades"] == len(fills)


def test_a_sweep_refuses_it(config: Path, series: Path) -> None:
    done = run_bot(*backtest(config, series, "--accounting", "--sweep", "orders=2,4"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--accounting" in done.stderr
