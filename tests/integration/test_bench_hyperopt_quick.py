"""`bench/hyperopt.py --quick` runs end to end: the CI smoke run of the search benchmark.

The same script as the full benchmark (200 trials over a year, issue 20's target), on 20
trials over a month of 1-minute prices, two worker processes on one SQLite study. Times
are not asserted (CI machines vary); what is: the search ran every trial, ranked them and
wrote the best entry.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("optuna", reason="the `search` extra (optuna) is not installed")


def test_the_quick_benchmark_runs_the_search(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "hyperopt.py"), "--quick", "--no-compare"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.stdout.splitlines()[-1]
    figures = dict(re.findall(r"(\w+)=(\S+)", summary))
    assert int(figures["trials"]) in (20, 21), summary  # each worker may finish its trial
    assert float(figures["wall_s"]) > 0, summary
    out = tmp_path / "bot-bench-backtest" / "hyperopt-20-2"
    assert "[[strategies]]" in (out / "best.toml").read_text()
    assert (out / "study.db").is_file()
