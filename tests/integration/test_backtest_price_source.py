"""Paper mode says it is paper, in backtests too: the provider's credit only under its prices.

As a user runs them (real subprocesses, temporary folders): prices recorded by `bot record`
in paper mode (the paper world's own, simulated), a synthetic and an imported series are
backtested without "Prices by Panora" and with one line saying where they came from;
prices recorded in live mode from a provider (a scripted one on loopback) carry the
credit; an old file without the `source` column is judged as before (credited when it
has native prices).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from bot.journal import Journal
from tests.support.cli import run_bot
from tests.support.loopback import serve
from tests.support.provider_stub import ProviderStub

pytest.importorskip("bot.backtest.runner")

APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
CREDIT = "Prices by Panora"
DCA = "from_token=USDC,to_token=APT,amount_per_order=10,orders=4,interval=1 hour"
WINDOW = ("--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T03:00:00Z")


def bot(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    result: subprocess.CompletedProcess[str] = run_bot(*args, cwd=cwd, env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def config(folder: Path, extra: str = "") -> Path:
    path = folder / "bot.toml"
    path.write_text(
        f'[journal]\nurl = "sqlite:///{folder / "bot.db"}"\n'
        '[record]\ntokens = ["APT", "USDC"]\n' + extra
    )
    return path


def backtest(folder: Path, prices: str, *window: str, env: dict[str, str] | None = None) -> str:
    """`bot backtest` of a DCA on `prices`, with a report; its stdout."""
    return bot(
        "-c", str(folder / "bot.toml"), "backtest", "--strategy", "recurring_dca",
        "--params", DCA, *(window or WINDOW), "--prices", prices,
        "--report", str(folder / f"report-{Path(prices).stem}"), cwd=folder, env=env,
    )  # fmt: skip


def row_of(summary: str, label: str) -> str | None:
    """The value of the summary's row `label` (None when it has none)."""
    for line in summary.splitlines():
        if line.startswith(label + "  "):
            return line.removeprefix(label).strip()
    return None


def report_of(folder: Path, prices: str) -> tuple[dict[str, object], str]:
    out = folder / f"report-{Path(prices).stem}"
    return json.loads((out / "report.json").read_text()), (out / "report.html").read_text()


def assert_not_credited(folder: Path, prices: str, summary: str, origin: str) -> None:
    """No credit anywhere; the one line says `origin`, in the summary, JSON and page."""
    assert "Panora" not in summary
    assert row_of(summary, "prices by") is None
    assert row_of(summary, "prices are") == origin
    assert sum(line.startswith("prices are") for line in summary.splitlines()) == 1
    data, page = report_of(folder, prices)
    assert (data["credit"], data["price_origin"]) == (None, origin)
    assert "Panora" not in page
    assert f'<footer class="credit">Prices are {origin}</footer>' in page


def test_a_paper_mode_recording_is_never_credited_to_the_provider(tmp_path: Path) -> None:
    cfg = config(tmp_path, '[paper]\nclock = "stepped"\n')
    recorded = bot(
        "-c", str(cfg), "record", "--count", "4", "--every", "1h", "--out", "p.csv", cwd=tmp_path
    )
    assert recorded.splitlines()[0].endswith("(source: paper, simulated prices)")
    lines = (tmp_path / "p.csv").read_text().splitlines()
    assert lines[0] == "timestamp,token,symbol,usdPrice,nativePrice,source"
    assert all(line.endswith(",paper") for line in lines[1:]) and len(lines) == 9
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as journal:
        ticks = journal.price_ticks(APT)
    assert [t.source for t in ticks] == ["paper"] * 4
    assert all(t.native_price == 1 for t in ticks)  # the paper world sends native prices
    origin = "simulated (recorded from a paper world)"
    for prices in ("p.csv", "journal"):
        summary = backtest(tmp_path, prices)
        assert "orders / fills / skips" in summary  # it ran
        assert_not_credited(tmp_path, prices, summary, origin)


def test_synthetic_and_imported_series_are_not_credited(tmp_path: Path) -> None:
    config(tmp_path)
    bot(
        "series", "synth", "--tokens", "APT,USDC", "--from", "2026-01-01", "--to",
        "2026-01-01T06:00:00Z", "--step", "1h", "--out", "synth.parquet", cwd=tmp_path,
    )  # fmt: skip
    summary = backtest(tmp_path, "synth.parquet")
    assert_not_credited(tmp_path, "synth.parquet", summary, "synthetic (bot series synth)")
    (tmp_path / "apt.csv").write_text(
        "date,close\n2026-01-01,5\n2026-01-01T01:00:00Z,4\n2026-01-01T02:00:00Z,5\n"
    )
    bot("series", "import", "apt.csv", "--token", "APT", "--out", "imported.csv", cwd=tmp_path)
    summary = backtest(tmp_path, "imported.csv")
    assert_not_credited(tmp_path, "imported.csv", summary, "imported (bot series import)")


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    with serve(ProviderStub()) as url:
        yield url


def test_a_live_recording_from_the_provider_is_credited(provider: str, tmp_path: Path) -> None:
    config(tmp_path)
    env = {"BOT_MODE": "live", "BOT_API__BASE_URL": provider, "BOT_API__API_KEY": "k-1"}
    recorded = bot(
        "-c", "bot.toml", "record", "--count", "2", "--every", "1s", "--out", "live.csv",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert recorded.splitlines()[0].endswith("(source: provider)")
    lines = (tmp_path / "live.csv").read_text().splitlines()
    assert all(line.endswith(",provider") for line in lines[1:]) and len(lines) == 5
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as journal:
        ticks = journal.price_ticks(APT)
    assert [t.source for t in ticks] == ["provider"] * 2
    window = ("--from", _iso(ticks[0].timestamp), "--to", _iso(ticks[-1].timestamp))
    for prices in ("live.csv", "journal"):
        summary = backtest(tmp_path, prices, *window)
        assert row_of(summary, "prices by") == CREDIT
        assert row_of(summary, "prices are") is None
        data, page = report_of(tmp_path, prices)
        assert (data["credit"], data["price_origin"]) == (CREDIT, None)
        assert f'<footer class="credit">{CREDIT}</footer>' in page


def test_an_old_file_without_the_source_column_is_judged_as_before(tmp_path: Path) -> None:
    config(tmp_path)
    rows = [
        f"2026-01-01T0{hour}:00:00Z,{token},{symbol},{price},{native}"
        for hour, apt in enumerate(["5", "4", "5", "6"])
        for token, symbol, price, native in ((APT, "APT", apt, "1"), (USDC, "USDC", "1", "0.2"))
    ]
    header = "timestamp,token,symbol,usdPrice,nativePrice"
    (tmp_path / "old.csv").write_text("\n".join([header, *rows]) + "\n")
    summary = backtest(tmp_path, "old.csv")  # native prices: a recording of before
    assert row_of(summary, "prices by") == CREDIT
    bare = [row.rsplit(",", 1)[0] for row in rows]  # no native prices: not a recording
    (tmp_path / "bare.csv").write_text("\n".join(["timestamp,token,symbol,usdPrice", *bare]))
    summary = backtest(tmp_path, "bare.csv")
    origin = "of unknown origin (no source column, no native prices)"
    assert_not_credited(tmp_path, "bare.csv", summary, origin)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
