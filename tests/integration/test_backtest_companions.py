"""`bot backtest` of a strategy that reads another's orders: the other runs beside it.

A `take_profit` with `entry_from = ["dca"]` in one config with that `recurring_dca`: the
backtest of the take-profit runs the DCA too (same engine, market and wallet), so the
take-profit's entry is the DCA's buys and it sells what the DCA bought, as it would live.
"""

from __future__ import annotations

import csv
import json
import os
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from tests.support.backtest_inputs import APT, USDC, window, write_series
from tests.support.cli import run_bot as bot

DCA_ENTRY = """
[[strategies]]
name = "dca"
plugin = "recurring_dca"
schedule = { interval_seconds = 14400 }
params = { from_token = "USDC", to_token = "APT", amount_per_order = "10", orders = 4, \
interval = "1 hour" }
"""
TP_ENTRY = """
[[strategies]]
name = "tp"
plugin = "take_profit"
schedule = { interval_seconds = 3600 }
params = { token = "APT", quote_token = "USDC", entry_from = [%s], \
targets = [{ percent_above = "10", fraction = "1" }] }
"""


def _config(tmp_path: Path, sources: str = '"dca"', *, with_dca: bool = True) -> Path:
    config = tmp_path / "bot.toml"
    config.write_text((DCA_ENTRY if with_dca else "") + TP_ENTRY % sources)
    return config


@pytest.fixture
def series(tmp_path: Path) -> Path:
    # Half-hourly APT: it dips, then rises past the take-profit's targets and stays high.
    prices = ["5", "4.5", "4", "4.5", "5", "8", "10", "9", "8", "8", "8", "8", "8", "8", "8"]
    return write_series(tmp_path / "prices.csv", prices)


def test_a_take_profit_on_a_dca_sells_what_the_dca_bought(series: Path, tmp_path: Path) -> None:
    pytest.importorskip("bot.backtest.runner")
    out = tmp_path / "report"
    run = bot(
        "-c", str(_config(tmp_path)), "backtest", "--strategy", "tp",
        "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T05:30:00Z",
        "--prices", str(series), "--funding", "USDC=1000", "--report", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[1].split()[:3] == ["strategy", "tp", "(take_profit)"]
    assert lines[2].startswith("with companions") and "dca (recurring_dca)" in lines[2]
    data = json.loads((out / "report.json").read_text())
    assert data["strategy"] == "tp" and data["spec"]["companions"] == ["dca"]
    [companion] = data["companions"]
    assert companion["name"] == "dca" and companion["plugin"] == "recurring_dca"
    assert companion["ticks"] == 2 and companion["errors"] == 0  # at 00:00 and 04:00
    dca_orders = set(companion["order_ids"])
    assert dca_orders and dca_orders <= {o["order_id"] for o in data["orders"]}
    fills = [f for f in data["fills"] if not f["skipped"]]
    buys = [f for f in fills if f["order_id"] in dca_orders]
    sells = [f for f in fills if f["order_id"] not in dca_orders]
    assert buys and all((f["sell_token"], f["buy_token"]) == (USDC, APT) for f in buys)
    assert sells and all((f["sell_token"], f["buy_token"]) == (APT, USDC) for f in sells)
    assert all(f["kind"] == "limit" for f in sells)
    bought = sum(Decimal(f["bought"]) for f in buys)
    sold = sum(Decimal(f["sold"]) for f in sells)
    # The wallet had no APT: every APT sold was bought by the DCA, and all of it was sold
    # but the dust of the sells' 6 decimal places.
    assert data["balances"]["start"] == {USDC: "1000"}
    assert Decimal(data["balances"]["end"][APT]) == bought - sold
    assert Decimal(0) <= bought - sold < Decimal("0.00001")
    # Each sell is at least 10 % above the DCA's average entry up to then.
    entry_at = [f for f in buys if f["time"] < sells[0]["time"]]
    entry = sum(Decimal(f["sold"]) for f in entry_at) / sum(Decimal(f["bought"]) for f in entry_at)
    first = sells[0]
    assert Decimal(first["bought"]) / Decimal(first["sold"]) >= entry * Decimal("1.1") * Decimal(
        "0.99"
    )  # the rate less the fees taken from what is sold
    # The figures are the wallet's position: the DCA's buys, the take-profit's sells back.
    m = data["metrics"]
    assert (m["quote"], m["asset"]) == (USDC, APT)
    assert Decimal(m["invested"]) == sum(Decimal(f["sold"]) for f in buys)
    assert Decimal(m["sold_back"]) == sold
    with (out / "trades.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert {r["strategy"] for r in rows if r["side"] == "buy"} == {"dca"}
    assert {r["strategy"] for r in rows if r["side"] == "sell"} == {"tp"}


def test_without_funding_a_note_says_what_the_wallet_holds(series: Path, tmp_path: Path) -> None:
    pytest.importorskip("bot.backtest.runner")
    run = bot(
        "-c", str(_config(tmp_path)), "backtest", "--strategy", "tp", *window(3),
        "--prices", str(series), "--json", cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "bot: note: with dca, the wallet starts with 1,000,000 USD" in run.stderr
    assert [c["name"] for c in json.loads(run.stdout)["companions"]] == ["dca"]


def test_a_dca_alone_has_no_companions(series: Path, tmp_path: Path) -> None:
    pytest.importorskip("bot.backtest.runner")
    run = bot(
        "-c", str(_config(tmp_path)), "backtest", "--strategy", "dca", *window(3),
        "--prices", str(series), "--json", cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["companions"] == [] and "companions" not in data["spec"]
    assert "note" not in run.stderr


@pytest.mark.parametrize(
    ("sources", "with_dca", "message"),
    [
        ('"dca"', False, "strategy 'tp' reads the orders of 'dca' (order_sources()), which is "
         "not a configured strategy (configured: tp)"),
        ('"dca", "nope"', True, "reads the orders of 'nope'"),
    ],
)  # fmt: skip
def test_a_companion_not_configured_is_one_line_and_exit_2(
    sources: str,
    with_dca: bool,
    message: str,
    series: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    for key in [k for k in os.environ if k.startswith("BOT_")]:
        monkeypatch.delenv(key)
    config = _config(tmp_path, sources, with_dca=with_dca)
    args = ["--strategy", "tp", *window(3), "--prices", str(series)]
    result = CliRunner().invoke(app, ["-c", str(config), "backtest", *args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bot: error: "), result.output
    assert message in lines[0]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("USDC", "--funding 'USDC': expected token=amount pairs"),
        ("USDC=-1", "--funding 'USDC=-1': USDC: expected an amount ≥ 0"),
        ("USDC=lots", "--funding 'USDC=lots': USDC: 'lots' is not a number"),
    ],
)
def test_bad_funding_is_one_line_and_exit_2(
    value: str, message: str, series: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for key in [k for k in os.environ if k.startswith("BOT_")]:
        monkeypatch.delenv(key)
    args = ["--strategy", "tp", *window(3), "--prices", str(series), "--funding", value]
    result = CliRunner().invoke(app, ["-c", str(_config(tmp_path)), "backtest", *args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"bot: error: {message}"), result.output
