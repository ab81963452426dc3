"""`bot record` and `bot series import | synth` as a user runs them (real subprocesses)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from itertools import pairwise
from pathlib import Path

from bot.clock import SteppedClock
from bot.journal import Journal
from bot.paper.core.market import MarketConfig, PaperMarket
from bot.paper.core.series import load_series
from tests.support.cli import clean_env
from tests.support.cli import run_bot as bot

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 1, 1, tzinfo=UTC)
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"


def config(tmp_path: Path, extra: str = "", clock: str = "stepped") -> Path:
    path = tmp_path / "bot.toml"
    path.write_text(
        f'[journal]\nurl = "sqlite:///{tmp_path / "bot.db"}"\n'
        f'[paper]\nclock = "{clock}"\n'
        '[record]\ntokens = ["APT", "USDC"]\n' + extra
    )
    return path


def ticks(tmp_path: Path, token: str) -> list[datetime]:
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as journal:
        return [t.timestamp for t in journal.price_ticks(token)]


def test_n_polls_give_n_ticks_per_token_and_the_file_replays(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    result = bot(
        "-c", str(cfg), "record", "--count", "3", "--every", "5m", "--out", "p.csv", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "recording APT, USDC every 300s to journal and p.csv (source: paper, simulated prices)"
    )
    assert lines[-1] == "recorder stopped: 3 poll(s), 6 price(s), 0 failed poll(s)"
    assert sum("recorded 2 price(s) (journal +2; file +2)" in line for line in lines) == 3
    expected = [T0 + timedelta(minutes=5 * k) for k in range(3)]
    assert ticks(tmp_path, APT) == expected and ticks(tmp_path, USDC) == expected
    paths, report = load_series(tmp_path / "p.csv")
    assert (report.rows, report.skipped, report.duplicates) == (6, 0, 0)
    assert paths[APT].times == expected
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as journal:
        assert paths[APT].prices == [t.usd_price for t in journal.price_ticks(APT)]
    # The paper world replays the recording: the price between ticks is the last one.
    replay = PaperMarket(MarketConfig(prices_file=str(tmp_path / "p.csv")), SteppedClock(T0))
    assert replay.prices.usd(APT, T0 + timedelta(minutes=7)) == paths[APT].prices[1]
    # A second run of the stepped world starts at T0 again: its ticks are duplicates.
    again = bot("-c", str(cfg), "record", "--count", "1", "--out", "p.csv", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "journal +0; file +0; 4 duplicate(s) skipped" in again.stdout
    assert "record.duplicate" in again.stderr
    assert load_series(tmp_path / "p.csv")[1].rows == 6


def test_failing_polls_do_not_stop_the_recorder(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        "[api]\nmax_attempts = 1\n"
        '[paper.faults]\nseed = 5\nserver_error = "0.5"\nendpoints = ["/prices"]\n',
    )
    result = bot(
        "-c",
        str(cfg),
        "record",
        "--count",
        "10",
        "--no-journal",
        "--out",
        "p.parquet",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    failed = result.stdout.count("poll failed")
    assert 0 < failed < 10
    assert f"10 poll(s), {2 * (10 - failed)} price(s), {failed} failed poll(s)" in result.stdout
    assert result.stderr.count("record.poll_failed") == failed
    paths, _ = load_series(tmp_path / "p.parquet")
    assert len(paths[APT].times) == len(paths[USDC].times) == 10 - failed


def test_real_time_recording_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    cfg = config(tmp_path, clock="real")
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "-c", str(cfg), "record", "--every", "1s", "--tokens", "APT"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
        cwd=tmp_path,
    )
    time.sleep(4)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert out.splitlines()[-1].startswith("recorder stopped:")
    recorded = ticks(tmp_path, APT)
    assert len(recorded) >= 2
    assert all(b - a >= timedelta(seconds=1) for a, b in pairwise(recorded))
    assert ticks(tmp_path, USDC) == []  # --tokens replaced [record].tokens


def test_usage_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    cfg = str(config(tmp_path))
    cases = [
        (["record", "--every", "0"], "--every: '0' is not a duration: use a whole number"),
        (["record", "--tokens", "APT,NOPE"], "--tokens: unknown token 'NOPE'"),
        (["record", "--no-journal"], "nothing to record to"),
        (["record", "--out", "p.txt"], "the file must end in .csv or .parquet"),
        (
            ["series", "synth", "--out", "s.csv", "--step", "fast"],
            "--step: 'fast' is not a duration",
        ),
        (["series", "synth", "--out", "s.csv", "--tokens", "NOPE"], "give its coin type"),
        (
            ["series", "synth", "--out", "s.csv", "--from", "2026-01-02", "--to", "2026-01-01"],
            "must be after",
        ),
        (["series", "synth", "--out", "s.csv", "--start-price", "APT=-1"], "must be > 0"),
        (["series", "import", "x.csv", "--token", "APT"], "give --out FILE and/or --journal"),
    ]
    for args, message in cases:
        result = bot("-c", cfg, *args, cwd=tmp_path)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (args, result.stderr)


def test_synth_then_import_round_trip_through_the_cli(tmp_path: Path) -> None:
    made = bot(
        "series",
        "synth",
        "--tokens",
        "APT,USDC",
        "--from",
        "2025-01-01",
        "--to",
        "2025-01-02",
        "--step",
        "1h",
        "--seed",
        "7",
        "--start-price",
        "APT=8",
        "--out",
        "synth.csv",
        cwd=tmp_path,
    )
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith("wrote 48 row(s) (2 token(s), every 3600s, seed 7) to synth.csv")
    again = bot("series", "synth", "--out", "synth.csv", cwd=tmp_path)
    assert again.returncode == 2 and "--force" in again.stderr
    paths, _ = load_series(tmp_path / "synth.csv")
    assert paths[APT].prices[0] == Decimal(8) and len(paths[APT].times) == 24

    # An exchange's OHLCV export of APT, imported into a file and into the journal.
    (tmp_path / "ohlcv.csv").write_text(
        "open_time,open,high,low,close,volume\n"
        "1735689600000,8,9,7,8.25,10\n"
        "1735693200000,8.25,9,8,8.5,10\n"
        "bad,1,1,1,1,1\n"
    )
    cfg = str(config(tmp_path))
    imported = bot(
        "-c",
        cfg,
        "series",
        "import",
        "ohlcv.csv",
        "--token",
        "APT",
        "--out",
        "apt.parquet",
        "--journal",
        cwd=tmp_path,
    )
    assert imported.returncode == 0, imported.stderr
    assert "imported 2 of 3 row(s)" in imported.stdout
    assert imported.stderr.splitlines()[-1] == (
        "bot: warning: ohlcv.csv: skipped 1 of 3 rows (line 4: time 'bad' is not ISO 8601 or "
        "epoch seconds)"
    )
    assert "wrote 2 row(s) to apt.parquet" in imported.stdout
    assert "journal: 2 tick(s) stored, 0 already there" in imported.stdout
    paths, _ = load_series(tmp_path / "apt.parquet")
    assert paths[APT].prices == [Decimal("8.25"), Decimal("8.5")]
    assert ticks(tmp_path, APT) == [datetime(2025, 1, 1, h, tzinfo=UTC) for h in (0, 1)]
    # Another token into the same file: appended.
    (tmp_path / "usdc.csv").write_text("timestamp,price\n2025-01-01T00:00:00Z,0.9999\n")
    more = bot(
        "series", "import", "usdc.csv", "--token", "USDC", "--out", "apt.parquet", cwd=tmp_path
    )
    assert more.returncode == 0, more.stderr
    assert "appended 1 row(s) to apt.parquet" in more.stdout
    assert load_series(tmp_path / "apt.parquet")[0][USDC].prices == [Decimal("0.9999")]
    # A header without a usable column is a usage error naming it.
    wrong = bot(
        "series",
        "import",
        "usdc.csv",
        "--token",
        "USDC",
        "--column",
        "close",
        "--out",
        "x.csv",
        cwd=tmp_path,
    )
    assert wrong.returncode == 2
    assert "--column 'close': no such column (have: timestamp, price)" in wrong.stderr


def test_series_import_reports_its_skipped_rows_in_one_line(tmp_path: Path) -> None:
    """Issue 21, item 5: how many rows, where and why, on one stderr line; none fit: error."""
    (tmp_path / "prices.csv").write_text(
        "timestamp,price\n"
        "2025-01-01T00:00:00Z,8\n"
        "2025-01-01T01:00:00Z,abc\n"
        "noon,8.1\n"
        "2025-01-01T00:00:00Z,8.2\n"
        "2025-01-01T02:00:00Z,-1\n"
        "2025-01-01T03:00:00Z,8.3\n"
    )
    run = bot("series", "import", "prices.csv", "--token", "APT", "--out", "apt.csv", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines() == [
        "bot: warning: prices.csv: skipped 4 of 6 rows (line 3: price 'abc' is not a number; "
        "line 4: time 'noon' is not ISO 8601 or epoch seconds; line 5: duplicate time (the "
        "first row is kept); 1 more)"
    ]
    assert "imported 2 of 6 row(s)" in run.stdout
    (tmp_path / "bad.csv").write_text("timestamp,price\nnoon,1\n")
    none = bot("series", "import", "bad.csv", "--token", "APT", "--out", "b.csv", cwd=tmp_path)
    assert none.returncode == 2
    assert none.stderr.splitlines() == [
        "bot: error: no usable row in bad.csv: skipped 1 of 1 row (line 2: time 'noon' is not "
        "ISO 8601 or epoch seconds)"
    ]
