"""`bot hyperopt` as a user runs it: real processes, a synthesized week of 1-minute prices,
real SQLite study files; the best trial re-run through the engine gives its score exactly."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.backtest.metrics import compute_metrics
from bot.backtest.runner import run_backtest
from bot.backtest.spec import BacktestSpec
from bot.clock import parse_utc
from bot.config import StrategyEntry
from tests.support.cli import ROOT, clean_env
from tests.support.cli import run_bot as bot

optuna = pytest.importorskip("optuna", reason="the `search` extra (optuna) is not installed")

START, END = "2026-01-01T00:00:00Z", "2026-01-07T23:59:00Z"
FIXED = "sell_token=USDC,buy_token=APT,amount_per_rung=10,redrift_percent=3"
SPACE = "spacing_percent=0.5..4,rungs=1..8,expiry=[6 hour,1 day,3 day]"


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("prices")
    done = bot(
        "series", "synth", "--tokens", "APT", "--from", START, "--to", "2026-01-08",
        "--step", "60s", "--out", "week.parquet", cwd=folder,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return folder / "week.parquet"


def search(week: Path, out: Path, *extra: str, trials: int = 8) -> subprocess.CompletedProcess[str]:
    return bot(
        "hyperopt", "--strategy", "limit_ladder", "--params", FIXED, "--space", SPACE,
        "--schedule", "1h", "--from", START, "--to", END, "--prices", str(week),
        "--trials", str(trials), "--sampler", "random", "--seed", "7", "--out", str(out),
        *extra, timeout=300,
    )  # fmt: skip


def study_of(out: Path) -> Any:
    url = f"sqlite:///{out / 'study.db'}"
    (summary,) = optuna.get_all_study_summaries(url)
    return optuna.load_study(study_name=summary.study_name, storage=url)


def rerun(week: Path, params: dict[str, Any], start: str = START, end: str = END) -> Decimal | None:
    """The ladder with these parameters, straight through the engine."""
    fixed = dict(item.split("=") for item in FIXED.split(","))
    entry = StrategyEntry(
        name="limit_ladder",
        plugin="limit_ladder",
        schedule={"interval_seconds": 3600},
        params={**fixed, **params},
    )
    spec = BacktestSpec(strategy=entry, start=parse_utc(start), end=parse_utc(end), prices=week)
    return compute_metrics(run_backtest(spec)).return_percent


def test_a_small_search_ranks_trials_and_its_best_reproduces_exactly(
    week: Path, tmp_path: Path
) -> None:
    done = search(week, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert re.search(r"study limit_ladder-return-\w+: 8 trials, \d completed", done.stdout)
    header = ["#", "trial", "return", "spacing_percent", "rungs", "expiry"]
    assert header in [line.split() for line in done.stdout.splitlines()]
    assert "hyperopt: 8/8 trials, best return" in done.stderr
    study = study_of(tmp_path / "out")
    assert len(study.trials) == 8
    complete = [t for t in study.trials if t.state.name == "COMPLETE"]
    best = max(complete, key=lambda t: Decimal(t.user_attrs["value"]))
    # The exact parameters are on the grid of the bounds' places (one decimal).
    spacing = best.user_attrs["params"]["spacing_percent"]
    assert Decimal(spacing) == Decimal(spacing).quantize(Decimal("0.1"))
    again = rerun(week, best.user_attrs["params"])
    assert again == Decimal(best.user_attrs["value"])  # exactly, not as a float
    assert best.value == float(again)
    toml = (tmp_path / "out" / "best.toml").read_text()
    assert f"trial {best.number}, return {again}" in toml
    assert f'spacing_percent = "{spacing}"' in toml and "[[strategies]]" in toml
    assert toml.strip() in done.stdout
    # The best trial's full report (bot backtest --report's files) says the same, exactly.
    report = json.loads((tmp_path / "out" / "best" / "report.json").read_text())
    assert Decimal(report["metrics"]["return_percent"]) == again
    assert (tmp_path / "out" / "best" / "report.html").is_file()


def test_a_stopped_search_resumes_without_running_a_trial_twice(week: Path, tmp_path: Path) -> None:
    first = search(week, tmp_path / "out", trials=4)
    assert first.returncode == 0, first.stderr
    before = {t.number: (t.datetime_start, t.params) for t in study_of(tmp_path / "out").trials}
    assert sorted(before) == [0, 1, 2, 3]
    second = search(week, tmp_path / "out", trials=6)
    assert second.returncode == 0, second.stderr
    trials = study_of(tmp_path / "out").trials
    assert sorted(t.number for t in trials) == [0, 1, 2, 3, 4, 5]
    for t in trials[:4]:  # the first four were not run again
        assert (t.datetime_start, t.params) == before[t.number]
    assert "hyperopt: 6/6 trials" in second.stderr
    again = search(week, tmp_path / "out", trials=6)  # full: nothing to do
    assert again.returncode == 0 and len(study_of(tmp_path / "out").trials) == 6


def test_a_trial_whose_worker_was_killed_is_failed_by_the_next_run(
    week: Path, tmp_path: Path
) -> None:
    first = search(week, tmp_path / "out", trials=2)
    assert first.returncode == 0, first.stderr
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # its pid names no process now
    study = study_of(tmp_path / "out")
    owners = {
        "killed": f"{socket.gethostname()}:{dead.pid}",
        "alive": f"{socket.gethostname()}:{os.getpid()}",
        "elsewhere": f"another-machine:{dead.pid}",
    }
    numbers = {}
    for name, owner in owners.items():  # as a worker leaves a trial it was running
        trial = study.ask()
        trial.set_user_attr("worker", owner)
        numbers[name] = trial.number
    second = search(week, tmp_path / "out", trials=6)
    assert second.returncode == 0, second.stderr
    states = {t.number: t.state.name for t in study_of(tmp_path / "out").trials}
    assert states[numbers["killed"]] == "FAIL"  # its worker is gone: failed, counted
    assert states[numbers["alive"]] == states[numbers["elsewhere"]] == "RUNNING"  # left
    assert list(states.values()).count("COMPLETE") == 3  # 2 + the one trial that fits


def test_the_holdout_reports_the_top_trials_on_the_end_of_the_window(
    week: Path, tmp_path: Path
) -> None:
    done = search(week, tmp_path / "out", "--holdout", "25%")
    assert done.returncode == 0, done.stderr
    head = "holdout 2026-01-06T05:59:15Z to 2026-01-07T23:59:00Z (not searched):"
    assert head in done.stdout
    table = done.stdout.split(head)[1].split("\n\n")[0].strip().splitlines()
    assert table[0].split()[:4] == ["#", "trial", "return", "in-sample"]
    rows = table[1:]
    assert 1 <= len(rows) <= 5
    study = study_of(tmp_path / "out")
    # The search saw only the first 75 %: its window is in the study's record.
    assert study.user_attrs["window"] == "2026-01-01T00:00:00+00:00..2026-01-06T05:59:15+00:00"
    number = int(rows[0].split()[1])
    params = study.trials[number].user_attrs["params"]
    held = rerun(week, params, "2026-01-06T05:59:15Z", END)
    assert held is not None
    assert f"{held:.6f}".rstrip("0").rstrip(".") == rows[0].split()[3]


def test_two_workers_share_one_study_file(week: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = [
        sys.executable, "-m", "bot", "hyperopt", "--strategy", "limit_ladder", "--params",
        FIXED, "--space", SPACE, "--schedule", "1h", "--from", START, "--to", END,
        "--prices", str(week), "--trials", "16", "--out", str(out), "--study", "shared",
    ]  # fmt: skip
    out.mkdir()
    # The study exists before the two start (as a first worker would have made it).
    first = subprocess.Popen([*args, "--seed", "1"], cwd=ROOT, env=clean_env(), text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    other = subprocess.Popen([*args, "--seed", "2"], cwd=ROOT, env=clean_env(), text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    outputs = [p.communicate(timeout=300) for p in (first, other)]
    assert first.returncode == 0 and other.returncode == 0, [e for _, e in outputs]
    study = optuna.load_study(study_name="shared", storage=f"sqlite:///{out / 'study.db'}")
    trials = study.trials
    numbers = sorted(t.number for t in trials)
    assert numbers == list(range(len(trials)))  # every trial recorded once
    assert 16 <= len(trials) <= 17  # each worker may finish the trial it started
    assert len({t.user_attrs["worker"] for t in trials}) == 2  # both contributed
    assert all(t.state.name in ("COMPLETE", "FAIL") for t in trials)
    assert all("params" in t.user_attrs for t in trials)
    # Both workers contributed: each says how many it saw done, and the study has them all.
    for stdout, _ in outputs:
        assert re.search(r"study shared: 1[67] trials", stdout), stdout


def test_a_point_drawn_again_takes_its_first_trials_score(week: Path, tmp_path: Path) -> None:
    done = bot(
        "hyperopt", "--strategy", "limit_ladder", "--params", f"{FIXED},spacing_percent=1",
        "--space", "rungs=[2,3]", "--schedule", "1h", "--from", START, "--to", END,
        "--prices", str(week), "--trials", "6", "--sampler", "random", "--seed", "3",
        "--out", str(tmp_path / "out"), timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    trials = study_of(tmp_path / "out").trials
    assert len(trials) == 6
    repeats = [t for t in trials if "same_as" in t.user_attrs]
    distinct = {t.user_attrs["params"]["rungs"] for t in trials}
    assert len(repeats) == 6 - len(distinct) >= 4  # each distinct point backtested once
    for t in repeats:
        first = trials[t.user_attrs["same_as"]]
        assert first.user_attrs["params"] == t.user_attrs["params"]
        assert first.user_attrs["value"] == t.user_attrs["value"]
    ranking = done.stdout.split("\n\n")[1].splitlines()
    assert len(ranking) == 1 + len(distinct)  # the header and each point once
    assert "importances: only one parameter is searched: skipped" in done.stdout


def test_jobs_run_trials_in_worker_processes(week: Path, tmp_path: Path) -> None:
    done = search(week, tmp_path / "out", "--jobs", "2", trials=6)
    assert done.returncode == 0, done.stderr
    trials = study_of(tmp_path / "out").trials
    assert 6 <= len(trials) <= 7
    assert sorted(t.number for t in trials) == list(range(len(trials)))


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (("--space", "spacing=0.5..4"), "--space spacing: not a parameter of this strategy"),
        (("--space", "rungs=1..x"), "--space rungs: 'x' is not a number"),
        (("--space", "rungs=0..4"), "--space rungs=0: rungs: Input should be greater than"),
        (("--objective", "sharpe"), "--objective 'sharpe': expected return, entry_vs_mean"),
        (("--sampler", "grid"), "--sampler 'grid': expected one of tpe, random, cmaes"),
        (("--holdout", "100%"), "--holdout '100%'"),
        (("--from", "2027-01-01", "--to", "2027-02-01"), "no prices in"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    week: Path, tmp_path: Path, change: tuple[str, ...], said: str
) -> None:
    args = {
        "--strategy": "limit_ladder", "--params": FIXED, "--space": SPACE, "--from": START,
        "--to": END, "--prices": str(week), "--trials": "2", "--out": str(tmp_path / "o"),
    }  # fmt: skip
    for option, value in zip(change[::2], change[1::2], strict=True):
        args[option] = value
    done = bot("hyperopt", *[x for pair in args.items() for x in pair])
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_a_storage_it_cannot_reach_is_one_line_without_its_password(
    week: Path, tmp_path: Path
) -> None:
    done = bot(
        "hyperopt", "--strategy", "limit_ladder", "--params", FIXED, "--space", SPACE,
        "--from", START, "--to", END, "--prices", str(week), "--trials", "2",
        "--storage", "postgresql+psycopg://alice:s3cretpw@127.0.0.1:1/db", "--study", "x",
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--storage: cannot open the study" in lines[0]
    assert "s3cretpw" not in done.stderr and "alice" not in done.stderr


def test_without_optuna_the_verb_names_the_extra(week: Path, tmp_path: Path) -> None:
    shadow = tmp_path / "shadow" / "optuna"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('optuna is not installed here')\n")
    done = subprocess.run(
        [sys.executable, "-m", "bot", "hyperopt", "--strategy", "limit_ladder"],
        cwd=ROOT,
        env=clean_env(PYTHONPATH=f"{shadow.parent}:{ROOT}"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "bot: error: bot hyperopt needs Optuna: pip install 'aptos-dca-bot[search]'"
    )


def test_bot_help_does_not_import_optuna() -> None:
    code = "import sys, bot.cli, bot.cli.hyperopt_cmd; print('optuna' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"


def test_ctrl_c_stops_after_the_running_trial_and_the_search_resumes(
    week: Path, tmp_path: Path
) -> None:
    import signal
    import time

    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "bot", "hyperopt", "--strategy", "limit_ladder", "--params",
        FIXED, "--space", SPACE, "--schedule", "15m", "--from", START, "--to", END,
        "--prices", str(week), "--trials", "400", "--sampler", "random", "--seed", "5",
        "--out", str(out), "--study", "s",
    ]  # fmt: skip
    running = subprocess.Popen(
        command, cwd=ROOT, env=clean_env(), text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"sqlite:///{out / 'study.db'}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.3)
        try:
            if len(optuna.load_study(study_name="s", storage=url).trials) >= 2:
                break
        except Exception:
            continue  # not created yet
    running.send_signal(signal.SIGINT)
    stdout, stderr = running.communicate(timeout=120)
    assert running.returncode == 0, stderr
    assert "(stopped: run again to resume)" in stdout
    assert "stopping after the running trial(s)" in stderr
    trials = optuna.load_study(study_name="s", storage=url).trials
    done = len(trials)
    assert 2 <= done < 400
    assert all(t.state.name in ("COMPLETE", "FAIL") for t in trials)  # none left running
    assert not any(t.user_attrs.get("stopped") for t in trials)  # the trial was finished
    command[command.index("400")] = str(done + 2)
    resumed = subprocess.run(
        command, cwd=ROOT, env=clean_env(), text=True, capture_output=True, timeout=300,
        check=False,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    after = optuna.load_study(study_name="s", storage=url).trials
    assert len(after) == done + 2
    assert [t.datetime_start for t in after[:done]] == [t.datetime_start for t in trials]
