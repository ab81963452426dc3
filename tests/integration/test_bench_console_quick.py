"""`bench/console.py --quick` runs end to end: the CI smoke run of the console benchmark.

The same script as the full benchmark (10,000 orders, issue 19's targets) on 1,000
orders: a real journal written through the journal's API, the console started as the
daemon starts it, real requests over loopback. Times are not asserted (CI machines
vary); what is: every figure was measured and the journal holds the orders it should.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from bot.journal import Journal

ROOT = Path(__file__).resolve().parents[2]


def test_the_quick_benchmark_reports_every_figure(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "console.py"), "--quick"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.stdout.splitlines()[-1]
    figures = dict(re.findall(r"(\w+)=(\S+)", summary))
    assert figures["orders"] == "1000", summary
    for name in ("status_ms", "orders_page_ms", "orders_page2_ms", "tick_lag_ms"):
        assert float(figures[name]) >= 0, summary
    assert "wake-ups)" in done.stdout
    journal_file = tmp_path / "bot-bench-console" / "journal-v1-1000.db"
    with Journal.open(f"sqlite:///{journal_file}", readonly=True) as journal:
        assert len(journal.orders()) == 1000
        assert len(journal.orders(status=["active"])) == 500
