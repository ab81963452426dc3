"""`bot backtest` as a user runs it: options checked, a real run, the report files, a sweep."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.backtest.metrics import bound_params
from bot.backtest.sweep import parse_params
from bot.cli import app
from bot.cli.backtest_cmd import parse_schedule
from bot.config import Schedule
from strategies.recurring_dca import RecurringDcaParams
from tests.support.backtest_inputs import APT, DCA, T0, USDC, window, write_series
from tests.support.cli import run_bot as bot

ROOT = Path(__file__).resolve().parents[2]
CREDIT_HINT = "Panora"


@pytest.fixture
def series(tmp_path: Path) -> Path:
    # Eight hours of half-hourly prices: 5, 4, 5, 10, … (a DCA slice every hour).
    prices = ["5", "4.5", "4", "4.5", "5", "8", "10", "9", "8", "8", "8", "8", "8", "8", "8", "8"]
    return write_series(tmp_path / "prices.csv", prices)


# ── the options, checked before anything runs ─────────────────────────────────────────


def test_schedules_in_words_seconds_or_cron() -> None:
    assert parse_schedule("1h") == Schedule(interval_seconds=3600)
    assert parse_schedule("15m") == Schedule(interval_seconds=900)
    assert parse_schedule("2 days") == Schedule(interval_seconds=172_800)
    assert parse_schedule("90") == Schedule(interval_seconds=90)
    assert parse_schedule("0 9 * * 1") == Schedule(cron="0 9 * * 1")
    for bad in ("soon", "0 99 * * *", "1 fortnight", "0h"):
        with pytest.raises(ValueError):
            parse_schedule(bad)


def test_params_as_json_or_key_values() -> None:
    assert parse_params('{"amount_per_order": 10.5, "orders": 4}') == {
        "amount_per_order": Decimal("10.5"),  # exact, never a float
        "orders": 4,
    }
    assert parse_params("amount_per_order=10, interval=1 hour,min_rate=null") == {
        "amount_per_order": "10",
        "interval": "1 hour",
        "min_rate": None,
    }
    for bad in ("[1]", "{nope", "amount", "=3"):
        with pytest.raises(ValueError):
            parse_params(bad)


def test_bounds_are_the_rate_limits_that_are_set() -> None:
    from strategies.recurring_dca import RecurringDca

    base = {"from_token": "USDC", "to_token": "APT", "amount_per_order": "10", "orders": 4}
    plain = RecurringDcaParams.model_validate({**base, "interval": "1 hour"})
    bounded = RecurringDcaParams.model_validate({**base, "interval": "1 hour", "max_rate": "0.22"})
    assert bound_params(RecurringDca, plain) == []
    assert bound_params(RecurringDca, bounded) == ["max_rate"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "--strategy is required"),
        (["--strategy", "no_such_plugin"], "unknown strategy plugin 'no_such_plugin'"),
        (
            ["--strategy", "recurring_dca", "--params", DCA.replace("=10,", "=-1,")],
            "params.amount_per_order",
        ),
        (["--strategy", "recurring_dca", "--params", "orders"], "--params 'orders'"),
        (["--strategy", "recurring_dca", "--params", DCA, "--schedule", "soon"], "--schedule"),
        (["--strategy", "recurring_dca", "--params", DCA, "--to", "2026-01-02"], "--from"),
        (
            ["--strategy", "recurring_dca", "--params", DCA, "--from", "yesterday"],
            "--from 'yesterday': not an ISO-8601 time",
        ),
        (
            ["--strategy", "recurring_dca", "--params", DCA, "--from", "2026-01-02",
             "--to", "2026-01-01"],
            "--to '2026-01-01': must be after --from",
        ),
        (["--strategy", "recurring_dca", "--params", DCA, *window()], "--prices is required"),
        (
            ["--strategy", "recurring_dca", "--params", DCA, *window(), "--prices", "nope.csv"],
            "--prices 'nope.csv': no such file",
        ),
        (
            ["--strategy", "recurring_dca", "--params", DCA, *window(), "--prices", "journal"],
            "--prices journal: no journal at data/bot.db",
        ),
    ],
)  # fmt: skip
def test_bad_options_are_one_line_naming_the_option_and_exit_2(
    args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for key in [k for k in os.environ if k.startswith("BOT_")]:
        monkeypatch.delenv(key)
    result = CliRunner().invoke(app, ["backtest", *args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bot: error: "), result.output
    assert message in lines[0]


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--fee-bps", "2.5", "--fee-bps '2.5': expected a whole number"),
        ("--fee-bps", "10000", "--fee-bps '10000'"),
        ("--slippage", "abc", "--slippage 'abc': not a number"),
        ("--slippage", "100", "--slippage '100': expected a percent from 0 to below 100"),
        ("--slippage", "NaN", "--slippage 'NaN': not a finite number"),
        ("--depth", "0", "--depth '0': expected a positive USD amount"),
        ("--sweep", "orders", "--sweep 'orders': expected param=v1,v2"),
        ("--sweep", "ordres=1,2", "--sweep ordres: not a parameter of recurring_dca"),
    ],
)
def test_bad_numbers_and_sweeps_exit_2(
    option: str, value: str, message: str, series: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(series.parent)
    args = ["--strategy", "recurring_dca", "--params", DCA, *window(), "--prices", str(series)]
    result = CliRunner().invoke(app, ["backtest", *args, option, value])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"bot: error: {message}"), result.output


def test_a_configured_strategy_is_used_with_overrides(tmp_path: Path) -> None:
    config = tmp_path / "bot.toml"
    config.write_text(
        '[[strategies]]\nname = "weekly"\nplugin = "recurring_dca"\n'
        "schedule = { interval_seconds = 3600 }\n"
        'params = { from_token = "USDC", to_token = "APT", amount_per_order = "25", '
        'orders = 7, interval = "1 day" }\n'
    )
    result = CliRunner().invoke(
        app, ["-c", str(config), "backtest", "--strategy", "weekly", "--params", "orders=0"]
    )
    assert result.exit_code == 2
    assert "strategy 'weekly' (recurring_dca): params.orders" in result.output


# ── real runs (subprocesses) ──────────────────────────────────────────────────────────


def test_backtest_prints_the_summary_and_writes_the_report(series: Path, tmp_path: Path) -> None:
    pytest.importorskip("bot.backtest.runner")
    out = tmp_path / "report"
    # Slices at 00:00, 01:00 and 02:00 (APT 5, 4, 5); the fourth is still due at 02:30.
    run = bot(
        "backtest", "--strategy", "recurring_dca", "--params", DCA,
        "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T02:30:00Z",
        "--prices", str(series), "--report", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "recurring_dca (recurring_dca)" not in run.stdout  # the name once, not repeated
    assert run.stdout.splitlines()[1].split() == ["strategy", "recurring_dca"]
    assert "1 / 3 / 0 (active 1)" in run.stdout  # orders / fills / skips
    assert "locked at end" in run.stdout and "10 USDC" in run.stdout
    assert "vs lump sum at start" in run.stdout
    assert "\r[" not in run.stderr  # no progress bar when not on a terminal
    assert sorted(p.name for p in out.iterdir()) == [
        "price.png",
        "report.html",
        "report.json",
        "trades.csv",
        "value.png",
    ]
    data = json.loads((out / "report.json").read_text())
    fills = [f for f in data["fills"] if not f["skipped"]]
    assert [f["time"][11:16] for f in fills] == ["00:00", "01:00", "02:00"]
    m = data["metrics"]
    assert Decimal(m["invested"]) == sum(Decimal(f["sold"]) for f in fills) == Decimal(30)
    assert Decimal(m["received"]) == sum(Decimal(f["bought"]) for f in fills)
    # Fees and price impact make every slice a little dearer than the oracle price.
    for f in fills:
        assert Decimal(f["bought"]) < Decimal(f["sold"]) / Decimal(f["buy_usd"])
    assert Decimal(4) < Decimal(m["avg_entry_usd"]) < Decimal(5)
    assert m["locked_at_end"] == {USDC: "10"}
    assert Decimal(m["pnl_usd"]) == Decimal(m["value_at_end_usd"]) - Decimal(m["invested_usd"])
    assert data["spec"]["prices"] == str(series)
    assert "data:image/png;base64," in (out / "report.html").read_text()


def test_bounds_bring_the_no_bounds_comparison(series: Path, tmp_path: Path) -> None:
    pytest.importorskip("bot.backtest.runner")
    # max_rate 0.22 APT per USDC: slices at APT above ~4.55 USD are skipped.
    run = bot(
        "backtest", "--strategy", "recurring_dca", "--params", DCA + ",max_rate=0.22",
        *window(), "--prices", str(series), "--json", cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    m = data["metrics"]
    assert m["skips"] > 0
    assert m["no_bounds"] is not None and "without max_rate" in m["no_bounds"]["note"]
    assert Decimal(m["no_bounds"]["invested_usd"]) > Decimal(m["invested_usd"])


def test_sweep_ranks_a_two_by_two_grid(series: Path, tmp_path: Path) -> None:
    pytest.importorskip("bot.backtest.runner")
    run = bot(
        "backtest", "--strategy", "recurring_dca", "--params", DCA, *window(),
        "--prices", str(series), "--sweep", "amount_per_order=10,20",
        "--sweep", "orders=2,4", "--report", str(tmp_path / "sweep"), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.strip().splitlines()
    assert lines[0].split()[:3] == ["#", "amount_per_order", "orders"]
    assert len(lines) == 5
    data = json.loads((tmp_path / "sweep" / "sweep.json").read_text())
    returns = [Decimal(r["return_percent"]) for r in data["rows"]]
    assert returns == sorted(returns, reverse=True)


def test_recorded_journal_prices_carry_the_provider_credit(tmp_path: Path) -> None:
    pytest.importorskip("bot.backtest.runner")
    from bot.journal import Journal
    from bot.journal.views import PriceTickRow

    url = f"sqlite:///{tmp_path / 'bot.db'}"
    hourly = ["5", "4", "5", "10"]
    with Journal.open(url) as journal:
        journal.add_price_ticks(
            PriceTickRow(T0 + timedelta(hours=i), token, Decimal(price), symbol)
            for i, p in enumerate(hourly)
            for token, price, symbol in ((APT, p, "APT"), (USDC, "1", "USDC"))
        )
    config = tmp_path / "bot.toml"
    config.write_text(f'[journal]\nurl = "{url}"\n')
    out = tmp_path / "report"
    run = bot(
        "-c", str(config), "backtest", "--strategy", "recurring_dca", "--params", DCA,
        "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T02:30:00Z",
        "--prices", "journal", "--report", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "1 / 3 / 0 (active 1)" in run.stdout  # slices at APT 5, 4, 5
    credit = next(line for line in run.stdout.splitlines() if line.startswith("prices by"))
    credit_text = credit.removeprefix("prices by").strip()
    assert CREDIT_HINT in credit_text
    assert credit_text in (out / "report.html").read_text()
    assert json.loads((out / "report.json").read_text())["credit"] == credit_text
