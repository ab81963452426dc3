"""Two `bot hyperopt` workers on one PostgreSQL study (issue 20): both contribute trials,
no trial is lost or run twice, and what each reports is the study's record.

The study lives in a fresh database of the session's throwaway cluster
(`tests/support/postgres.py`; skipped with one line where PostgreSQL cannot run).
"""

from __future__ import annotations

import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from tests.support.cli import ROOT, clean_env
from tests.support.cli import run_bot as bot

optuna = pytest.importorskip("optuna", reason="the `search` extra (optuna) is not installed")

START, END = "2026-01-01T00:00:00Z", "2026-01-07T23:59:00Z"
FIXED = "sell_token=USDC,buy_token=APT,amount_per_rung=10,redrift_percent=3"
SPACE = "spacing_percent=0.5..4,rungs=1..8,expiry=[6 hour,1 day,3 day]"
TRIALS = 16


def test_two_workers_share_one_postgresql_study(pg_database_url: str, tmp_path: Path) -> None:
    done = bot(
        "series", "synth", "--tokens", "APT", "--from", START, "--to", "2026-01-08",
        "--step", "60s", "--out", "week.parquet", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    args = [
        sys.executable, "-m", "bot", "hyperopt", "--strategy", "limit_ladder", "--params",
        FIXED, "--space", SPACE, "--schedule", "1h", "--from", START, "--to", END,
        "--prices", str(tmp_path / "week.parquet"), "--trials", str(TRIALS),
        "--storage", pg_database_url, "--study", "shared",
    ]  # fmt: skip
    workers = [
        subprocess.Popen(
            [*args, "--seed", str(seed), "--out", str(tmp_path / f"w{seed}")],
            cwd=ROOT,
            env=clean_env(),
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for seed in (1, 2)
    ]
    outputs = [w.communicate(timeout=300) for w in workers]
    assert all(w.returncode == 0 for w in workers), [e for _, e in outputs]
    study = optuna.load_study(study_name="shared", storage=pg_database_url)
    trials = study.trials
    assert sorted(t.number for t in trials) == list(range(len(trials)))  # none lost
    assert TRIALS <= len(trials) <= TRIALS + 1  # each may finish the trial it started
    assert all(t.state.name in ("COMPLETE", "FAIL") for t in trials)
    by_worker = {t.user_attrs["worker"] for t in trials}
    assert len(by_worker) == 2  # both contributed
    # Run once each: a trial's score is its own run's or, for a point drawn again, the
    # earlier trial's (named); never two runs of one trial.
    for t in trials:
        if "same_as" in t.user_attrs:
            assert trials[t.user_attrs["same_as"]].user_attrs["value"] == t.user_attrs["value"]
    complete = [t for t in trials if t.state.name == "COMPLETE"]
    best = min(
        (t for t in complete if "same_as" not in t.user_attrs),
        key=lambda t: (-Decimal(t.user_attrs["value"]), t.number),
    )
    # The worker that finished last reports the whole study: its best is the study's.
    last = max(range(2), key=lambda i: int(re.search(r": (\d+) trials", outputs[i][0])[1]))  # type: ignore[index]
    assert f"trial {best.number}, return {best.user_attrs['value']}" in outputs[last][0]
