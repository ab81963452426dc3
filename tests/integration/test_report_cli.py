"""`bot report` through the real CLI over a real journal file: a 4-slice DCA, by hand.

The journal is filled through its public API (orders, fills, price ticks), then `bot
report` runs as a subprocess and its table and JSON are checked against figures computed
here by hand.
"""

from __future__ import annotations

import json
from decimal import Decimal, localcontext
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_bot
from tests.support.trade_journal import APT, USDC, write_trades

# The DCA's slices: each sells 25 USDC (0.05 of it the keeper's) at noon of four days,
# at an APT price of 5, 4, 5 and 6.25 USDC: 24.95 / price APT each.
SLICES = [(Decimal("5"), Decimal("4.99")), (Decimal("4"), Decimal("6.2375"))]
SLICES += [(Decimal("5"), Decimal("4.99")), (Decimal("6.25"), Decimal("3.992"))]
RECEIVED = Decimal("20.2095")  # 4.99 + 6.2375 + 4.99 + 3.992 APT
LAST_PRICE = Decimal("6")  # APT's last recorded price, at T0 + 96 h


def _fill_journal(path: Path) -> None:
    write_trades(path, SLICES, last_price=LAST_PRICE)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    _fill_journal(tmp_path / "bot.db")
    path = tmp_path / "bot.toml"
    path.write_text(
        'mode = "paper"\n'
        f'[journal]\nurl = "sqlite:///{tmp_path / "bot.db"}"\n'
        '[accounting]\ntime_zone = "UTC"\ncost_basis = "fifo"\n'
    )
    return path


def report(config: Path, *args: str) -> Any:
    done = run_bot("-c", str(config), "report", *args)
    assert done.returncode == 0, done.stderr
    return done


def test_the_console_table_of_a_4_slice_dca(config: Path) -> None:
    out = report(config, "--strategy", "dca-apt").stdout
    lines = {line.strip().split("  ")[0]: line for line in out.splitlines()}
    assert "strategy dca-apt (cost basis FIFO" in out and "tp-apt" not in out
    assert "100 USDC" in lines["invested"]
    assert "20.2095 APT" in lines["received"]
    # 100 / 20.2095 = 4.948167…: 6 significant digits. The time-weighted mean from the
    # first slice to the last: 5, 4 and 5 for 24 h each = 14/3; entry 6.03 % above it.
    assert "4.94817 USDC per APT" in lines["average entry"]
    assert "4.66667 USDC per APT (entry +6.03 %)" in lines["market mean (time-weighted)"]
    # 20.2095 APT at 6 = 121.257 USD; cost 100 (USDC at 1): unrealised 21.257; nothing sold
    # back, so nothing realised (the USDC spent is uncovered: no gain, no loss).
    assert "121.26 USD (20.2095 APT)" in lines["position value"]
    assert "0.00 USD" in lines["realised P&L (FIFO)"]
    assert "21.26 USD" in lines["unrealised P&L"]
    assert "21.26 USD" in lines["total P&L"]
    assert "keeper 0.2 USDC (0.20 USD)" in lines["fees"]
    assert "0 APT (0.00 USD)" in lines["gas"]
    assert "USD rounded to 2 places" in out


def test_json_has_the_exact_figures(config: Path) -> None:
    data = json.loads(report(config, "--json").stdout)
    assert data["cost_basis"] == "fifo" and data["time_zone"] == "UTC"
    by_name = {s["strategy"]: s for s in data["strategies"]}
    assert sorted(by_name) == ["dca-apt", "tp-apt"]
    dca = by_name["dca-apt"]
    assert dca["totals"]["invested"] == {USDC: "100"}
    assert dca["totals"]["received"] == {APT: "20.2095"}
    assert dca["totals"]["fees"] == {"keeper": {USDC: "0.2"}}
    assert dca["totals"]["fees_usd"] == "0.2"
    assert dca["value_usd"] == "121.257"
    assert dca["unrealised_usd"] == "21.257"
    assert dca["realised_usd"] == "0"
    assert dca["pnl_usd"] == "21.257"
    with localcontext() as ctx:
        ctx.prec = 40  # the accounting's quotients: 40 significant digits, half to even
        entry = Decimal(100) / RECEIVED
        mean = Decimal(14) / Decimal(3)
        expected_versus = (entry / mean - 1) * 100
    assert dca["position"]["average_entry"] == str(entry)
    assert abs(Decimal(dca["position"]["market_mean"]) - mean) < Decimal("1e-35")
    versus = Decimal(dca["position"]["entry_vs_market_percent"])
    assert abs(versus - expected_versus) < Decimal("1e-35")
    # The other strategy sold 1 APT it never bought here: uncovered, valued at the market.
    assert by_name["tp-apt"]["uncovered"] == {APT: "1"}
    # Its position in the [display].price_quote convention: USDC per APT, sold at 5.5.
    position = by_name["tp-apt"]["position"]
    assert (position["base"], position["quote"]) == (APT, USDC)
    assert (position["sold"], position["proceeds"], position["average_entry"]) == ("1", "5.5", None)
    assert by_name["tp-apt"]["totals"]["received"] == {USDC: "5.5"}


def test_day_buckets_add_up_to_the_totals(config: Path) -> None:
    data = json.loads(report(config, "--strategy", "dca-apt", "--by", "day", "--json").stdout)
    (dca,) = data["strategies"]
    buckets = dca["buckets"]
    assert [b["bucket"] for b in buckets] == [
        "2026-05-01",
        "2026-05-02",
        "2026-05-03",
        "2026-05-04",
    ]
    for key in ("traded_usd", "fees_usd", "realised_usd"):
        assert sum(Decimal(b[key]) for b in buckets) == Decimal(dca["totals"][key])
    assert sum(Decimal(b["received"][APT]) for b in buckets) == RECEIVED
    assert sum(b["trades"] for b in buckets) == dca["totals"]["trades"] == 4
    table = report(config, "--strategy", "dca-apt", "--by", "day").stdout
    rows = [line for line in table.splitlines() if line.strip().startswith("2026-05-0")]
    assert len(rows) == 4 and "6.2375 APT" in rows[1]


def test_a_window_counts_only_its_trades(config: Path) -> None:
    data = json.loads(
        report(
            config,
            "--strategy",
            "dca-apt",
            "--from",
            "2026-05-02",
            "--to",
            "2026-05-03T23:59:59Z",
            "--json",
        ).stdout
    )
    (dca,) = data["strategies"]
    assert dca["totals"]["trades"] == 2
    assert dca["totals"]["received"] == {APT: "11.2275"}  # 6.2375 + 4.99


def test_a_window_without_trades_says_so(config: Path) -> None:
    done = report(config, "--from", "2027-01-01")
    assert done.stdout.strip() == "no trades from 2027-01-01T00:00:00+00:00"


def test_an_unknown_strategy_is_named_with_the_known_ones(config: Path) -> None:
    done = run_bot("-c", str(config), "report", "--strategy", "nope")
    assert done.returncode == 2
    assert done.stderr.strip() == "bot: error: unknown strategy 'nope' (known: dca-apt, tp-apt)"


def test_from_after_to_is_refused(config: Path) -> None:
    done = run_bot("-c", str(config), "report", "--from", "2026-05-03", "--to", "2026-05-02")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "is after --to" in done.stderr


def test_a_bad_time_zone_is_named_at_config_load(config: Path) -> None:
    config.write_text(config.read_text().replace('"UTC"', '"Mars/Olympus"'))
    done = run_bot("-c", str(config), "report")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Mars/Olympus" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_report_shows_the_configured_wallets_rows_only(config: Path, tmp_path: Path) -> None:
    from tests.support.trade_journal import WALLET

    base = config.read_text()
    mine = tmp_path / "mine.toml"
    mine.write_text(base + f'[wallet]\naddress = "{WALLET}"\n')
    assert "strategy dca-apt" in report(mine, "--strategy", "dca-apt").stdout
    other = tmp_path / "other.toml"
    other.write_text(base + f'[wallet]\naddress = "0x{"cd" * 32}"\n')
    done = run_bot("-c", str(other), "report", "--strategy", "dca-apt")
    assert done.returncode == 2
    assert done.stderr.strip() == "bot: error: unknown strategy 'dca-apt' (known: none)"
