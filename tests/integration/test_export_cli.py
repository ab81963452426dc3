"""`bot export trades` through the real CLI over a real journal file.

The journal is filled through its public API (orders, fills, price ticks), as
tests/integration/test_report_cli.py does; `bot export trades` runs as a subprocess and
its files are read back: our CSV with `read_csv`, the tax tools' with the `csv` module.
Their totals are the journal's (`bot report --json` over the same journal) to the last
digit.
"""

from __future__ import annotations

import csv
import json
import os
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.accounting.exports import COINTRACKING_COLUMNS, KOINLY_COLUMNS, read_csv
from tests.support.cli import run_bot
from tests.support.trade_journal import APT, T0, Sale, write_trades

TX = ["0x" + f"{n:02x}" * 32 for n in range(1, 5)]
# Three DCA slices of 25 USDC (0.05 of each the keeper's) at APT 5, 4 and 6.25 USDC, and a
# limit order of another strategy selling 1.23456789 APT for 7.40740734 USDC on day 2.
SLICES = [Decimal("4.99"), Decimal("6.2375"), Decimal("3.992")]


def _fill_journal(path: Path) -> None:
    prices = [Decimal("5"), Decimal("4"), Decimal("6.25")]
    sale = Sale(Decimal("1.23456789"), Decimal("7.40740734"), T0 + timedelta(hours=40), TX[3])
    write_trades(
        path, list(zip(prices, SLICES, strict=True)), sale=sale, tx_ids=TX, second_offsets=True
    )


@pytest.fixture
def config(tmp_path: Path) -> Path:
    _fill_journal(tmp_path / "bot.db")
    path = tmp_path / "bot.toml"
    path.write_text(f'mode = "paper"\n[journal]\nurl = "sqlite:///{tmp_path / "bot.db"}"\n')
    return path


def export(config: Path, *args: str) -> Any:
    return run_bot("-c", str(config), "export", "trades", *args)


def _report_totals(config: Path) -> dict[str, Any]:
    done = run_bot("-c", str(config), "report", "--json")
    assert done.returncode == 0, done.stderr
    return {s["strategy"]: s["totals"] for s in json.loads(done.stdout)["strategies"]}


def test_our_csv_read_back_gives_the_journals_totals(config: Path, tmp_path: Path) -> None:
    out = tmp_path / "trades.csv"
    done = export(config, "--format", "csv", "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote 4 trades to {out} (csv)"
    assert done.stderr == ""  # every token has a symbol in the packaged token list
    assert (out.stat().st_mode & 0o777) == 0o600
    trades = read_csv(out.read_text(encoding="utf-8"))
    assert [t.ref for t in trades] == [
        "dca:0xdca1#1",
        "dca:0xdca1#2",
        "limit:0xlim1#1",
        "dca:0xdca1#3",
    ]
    assert [t.label for t in trades] == [TX[0], TX[1], TX[3], TX[2]]
    totals = _report_totals(config)
    for strategy, figures in totals.items():
        mine = [t for t in trades if t.strategy == strategy]
        invested: dict[str, Decimal] = {}
        received: dict[str, Decimal] = {}
        for t in mine:
            invested[t.sold_token] = invested.get(t.sold_token, Decimal(0)) + t.sold
            received[t.bought_token] = received.get(t.bought_token, Decimal(0)) + t.bought
        assert {k: str(v) for k, v in invested.items()} == figures["invested"]
        assert {k: str(v) for k, v in received.items()} == figures["received"]
        fees = sum((f.amount for t in mine for f in t.fees), Decimal(0))
        assert fees == sum(
            (Decimal(a) for by in figures["fees"].values() for a in by.values()), Decimal(0)
        )
        assert sum(t.gas_octas for t in mine) == figures["gas_octas"]
    assert totals["dca-apt"]["received"] == {APT: str(sum(SLICES))}


def test_koinly_and_cointracking_files(config: Path, tmp_path: Path) -> None:
    koinly, tracking = tmp_path / "koinly.csv", tmp_path / "cointracking.csv"
    assert export(config, "--format", "koinly", "-o", str(koinly)).returncode == 0
    done = export(config, "--format", "cointracking", "-o", str(tracking))
    assert done.returncode == 0 and "USD" in done.stderr
    with koinly.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and tuple(rows[0]) == KOINLY_COLUMNS
    first = rows[0]
    assert (first["Date"], first["Sent Amount"], first["Sent Currency"]) == (
        "2026-05-01 12:00 UTC",
        "24.95",
        "USDC",
    )
    assert (first["Received Amount"], first["Received Currency"]) == ("4.99", "APT")
    assert (first["Fee Amount"], first["Fee Currency"], first["TxHash"]) == ("0.05", "USDC", TX[0])
    assert (first["Net Worth Amount"], first["Net Worth Currency"]) == ("24.95", "USD")
    with tracking.open(newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert tuple(table[0]) == COINTRACKING_COLUMNS
    limit = next(r for r in table if r["Trade-Group"] == "tp-apt")
    assert (limit["Sell Amount"], limit["Sell Currency"]) == ("1.23456789", "APT")
    assert (limit["Buy Amount"], limit["Buy Currency"]) == ("7.40740734", "USDC")
    assert limit["Date"] == "2026-05-02 16:00:00" and limit["Tx-ID"] == "limit:0xlim1#1"
    # Both layouts: what left and reached the wallet, per token, is the journal's.
    for data, into, out_of in ((rows, "Received", "Sent"), (table, "Buy", "Sell")):
        net: dict[str, Decimal] = {}
        for row in data:
            fee = row.get("Fee Amount", row.get("Fee"))
            for amount, currency, sign in (
                (row[f"{into} Amount"], row[f"{into} Currency"], 1),
                (row[f"{out_of} Amount"], row[f"{out_of} Currency"], -1),
                (fee, row["Fee Currency"], -1),
            ):
                if amount:
                    net[currency] = net.get(currency, Decimal(0)) + sign * Decimal(amount)
        assert net == {
            "USDC": Decimal("-75") + Decimal("7.40740734"),
            "APT": sum(SLICES) - Decimal("1.23456789"),
        }


def test_a_window_and_a_strategy(config: Path, tmp_path: Path) -> None:
    out = tmp_path / "w.csv"
    done = export(
        config,
        "--strategy",
        "dca-apt",
        "--from",
        "2026-05-02",
        "--to",
        "2026-05-03",
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    assert [t.ref for t in read_csv(out.read_text())] == ["dca:0xdca1#2"]


def test_an_existing_file_is_kept_unless_forced(config: Path, tmp_path: Path) -> None:
    out = tmp_path / "trades.csv"
    out.write_text("mine\n")
    done = export(config, "-o", str(out))
    assert done.returncode == 2
    assert done.stderr == f"bot: error: --output {out}: exists (--force replaces it)\n"
    assert out.read_text() == "mine\n"
    assert export(config, "-o", str(out), "--force").returncode == 0
    assert len(read_csv(out.read_text())) == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bot.db", "bot.toml", "trades.csv"]


def test_a_link_is_never_written_through(config: Path, tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text("keep\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    dangling = tmp_path / "dangling.csv"
    dangling.symlink_to(tmp_path / "nowhere")
    assert export(config, "-o", str(link)).returncode == 2
    assert export(config, "-o", str(dangling)).returncode == 2
    assert not (tmp_path / "nowhere").exists()
    assert export(config, "-o", str(link), "--force").returncode == 0
    assert target.read_text() == "keep\n" and not link.is_symlink()
    assert len(read_csv(link.read_text())) == 4


def test_a_window_without_trades_writes_nothing(config: Path, tmp_path: Path) -> None:
    out = tmp_path / "none.csv"
    done = export(config, "--from", "2027-01-01", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no trades from 2027-01-01T00:00:00+00:00: nothing written"
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "excel"], "--format must be csv, koinly or cointracking, got 'excel'"),
        (["--from", "yesterday"], "--from: not an ISO 8601 time: 'yesterday'"),
        (["--to", "2026-13-01"], "--to: not an ISO 8601 time: '2026-13-01'"),
        (
            ["--from", "2026-05-03", "--to", "2026-05-02"],
            "--from 2026-05-03 is after --to 2026-05-02",
        ),
        (["--strategy", "nope"], "unknown strategy 'nope' (known: dca-apt, tp-apt)"),
        ([], "--output FILE is required"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    config: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    output = [] if not args else ["-o", str(tmp_path / "x.csv")]
    done = export(config, *args, *output)
    assert done.returncode == 2
    assert done.stderr == f"bot: error: {message}\n"
    assert not (tmp_path / "x.csv").exists()


def test_an_output_in_no_directory_is_refused(config: Path, tmp_path: Path) -> None:
    done = export(config, "-o", str(tmp_path / "missing" / "x.csv"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "no directory" in done.stderr
    assert sorted(os.listdir(tmp_path)) == ["bot.db", "bot.toml"]  # nothing left behind
