"""After the demo, with no config file: `--paper` reads the demo's journal (report, orders, export).

A folder as `python3 dev.py demo` leaves it (`data/paper-demo.key` and a journal of the
demo wallet's orders at `data/paper-demo.db`); each verb is a real `python -m bot` run in
it. Without `--paper` the reading verbs say where the demo's journal is instead of
"run `bot journal migrate`", which would make an empty one.
"""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from bot.app.paper_key import demo_key_file
from bot.chain import account_address, load_private_key
from tests.support.cli import ROOT, run_bot
from tests.support.trade_journal import write_trades

SLICES = [(Decimal("5"), Decimal("4.99")), (Decimal("4"), Decimal("6.2375"))]


@pytest.fixture
def demo_folder(tmp_path: Path) -> Path:
    key = demo_key_file(tmp_path / "data")
    assert key is not None
    wallet = str(account_address(load_private_key(key, None)))
    write_trades(tmp_path / "data" / "paper-demo.db", SLICES, wallet=wallet)
    return tmp_path


def test_without_a_config_the_reading_verbs_point_to_the_demos_journal(demo_folder: Path) -> None:
    for verb in (["report"], ["orders"], ["export", "trades", "-o", "t.csv"]):
        done = run_bot(*verb, cwd=demo_folder)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip() == (
            "bot: error: no config file, and no journal at data/bot.db; the paper demo's "
            "journal is data/paper-demo.db: add --paper to read it"
        )
    assert not (demo_folder / "data" / "bot.db").exists()  # nothing made on the way


def test_paper_reports_lists_and_exports_the_demos_trades(demo_folder: Path) -> None:
    report = run_bot("report", "--paper", cwd=demo_folder)
    assert report.returncode == 0, report.stderr
    assert "strategy dca-apt (cost basis FIFO" in report.stdout
    assert "11.2275 APT" in report.stdout  # 4.99 + 6.2375: the demo wallet's fills
    orders = run_bot("orders", "--paper", cwd=demo_folder)
    assert orders.returncode == 0, orders.stderr
    assert "0xdca1" in orders.stdout and "0xlim1" in orders.stdout
    shown = run_bot("orders", "show", "0xdca1", "--paper", cwd=demo_folder)
    assert shown.returncode == 0, shown.stderr
    group = run_bot("orders", "--paper", "show", "0xdca1", cwd=demo_folder)  # either place
    assert group.returncode == 0, group.stderr
    assert group.stdout.splitlines()[:5] == shown.stdout.splitlines()[:5]  # id … status
    assert shown.returncode == 0 and "6.2375 APT at 4.008 USDC per APT" in shown.stdout
    export = run_bot(
        "export", "trades", "--paper", "--format", "koinly", "-o", "t.csv", cwd=demo_folder
    )
    assert export.returncode == 0, export.stderr
    assert export.stdout.startswith("wrote 3 trades to t.csv (koinly)")
    assert (demo_folder / "t.csv").read_text().count("\n") == 4  # a header and 3 trades


def test_paper_without_a_demo_says_so_and_makes_nothing(tmp_path: Path) -> None:
    done = run_bot("report", "--paper", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "bot: error: --paper: no paper demo in data/ (run `bot run --paper` with no config "
        "file first)"
    )
    assert not (tmp_path / "data").exists()  # no key made for a reader


def test_paper_with_a_live_config_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('mode = "live"\n[wallet]\naddress = "0x1"\n', encoding="utf-8")
    done = run_bot("report", "--paper", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "bot: error: --paper reads a paper journal, and the config is live: drop --paper"
    )


def test_paper_with_live_set_in_the_environment_alone_is_refused(demo_folder: Path) -> None:
    done = run_bot("report", "--paper", cwd=demo_folder, env={"BOT_MODE": "live"})
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "bot: error: --paper reads a paper journal, and the config is live: drop --paper"
    )


def test_a_demo_key_open_to_others_is_one_line_not_a_traceback(demo_folder: Path) -> None:
    (demo_folder / "data" / "paper-demo.key").chmod(0o644)
    for verb in (["report", "--paper"], ["once", "--dry-run", "--paper"]):
        done = run_bot(*verb, cwd=demo_folder)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("bot: error: ") and "paper-demo.key" in line


def test_with_a_config_the_reading_verbs_load_nothing_of_the_demo(tmp_path: Path) -> None:
    """The demo's module loads the signer's (7 MB of a report's peak): only without a config."""
    write_trades(tmp_path / "bot.db", SLICES)
    config = tmp_path / "config.toml"
    config.write_text(f'mode = "paper"\n[journal]\nurl = "sqlite:///{tmp_path / "bot.db"}"\n')
    probe = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from bot.cli import app\n"
        f"done = CliRunner().invoke(app, ['-c', {str(config)!r}, 'report'])\n"
        "assert done.exit_code == 0, done.output\n"
        "print(sorted(m for m in ('bot.cli.demo', 'bot.chain') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
