"""Parameter search on Optuna (`bot hyperopt`): every trial one backtest through the engine.

A study lives in an Optuna storage (a local SQLite file by default, any SQLAlchemy URL
Optuna supports to share it between machines). Workers — processes here, or on other
machines with the same `--storage` and `--study` — each loop: ask the study for a trial,
draw its parameters from the space (`bot.backtest.search_space`, exact values), run the
backtest (the `run` the command line hands over: the same engine, the prices read once),
compute the objective from `bot.backtest.metrics` and tell the study. Objective values
are floats in the study (Optuna stores floats); the exact `Decimal` and the exact
parameters are kept beside each trial (`user_attrs` `value` and `params`).

Counting: a worker stops once the study holds `trials` trials (finished, failed or
running; a trial stopped by Ctrl-C is not counted and its parameters are drawn again),
so the same command run again resumes a study, and several workers together stop near
the total — each may finish the trial it is running, so a study can end with up to
`workers − 1` trials more than asked. A trial whose parameters the strategy refuses (a
rule between fields, e.g. rungs × spacing ≥ 100) or that trades nothing fails with one
line (`user_attrs["error"]`); it counts as a trial of the space.

Optuna is imported by the functions that use it, never at import time.
"""

from __future__ import annotations

import importlib
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from bot.backtest.metrics import DEFAULT_PATH_POINTS, Metrics, compute_metrics
from bot.backtest.result import BacktestResult
from bot.backtest.search_space import Dimension

if TYPE_CHECKING:
    import optuna

__all__ = [
    "OBJECTIVES",
    "SAMPLERS",
    "ExactTrial",
    "HoldoutRow",
    "Objective",
    "SearchError",
    "SearchPlan",
    "Snapshot",
    "exact_trials",
    "fail_orphans",
    "holdout_rows",
    "importances",
    "open_study",
    "resolve_objective",
    "run_worker",
    "snapshot",
    "typed_params",
]

Direction = Literal["maximize", "minimize"]
RunTrial = Callable[[dict[str, Any]], BacktestResult]
SAMPLERS: Final = ("tpe", "random", "cmaes")
_CREATE_ATTEMPTS: Final = 5
DRAWDOWN_FLOOR_USD: Final = Decimal("0.01")
"""`pnl_per_drawdown` divides by the drawdown counted as at least this (no division by 0)."""


class SearchError(ValueError):
    """A search that cannot start as asked (objective, sampler, storage, study); one line."""


class TrialError(ValueError):
    """One trial has no objective value (e.g. it traded nothing); the trial fails."""


@dataclass(frozen=True)
class Objective:
    """What a trial is scored by: a figure of the backtest and whether higher is better."""

    name: str
    direction: Direction
    measure: Callable[[BacktestResult, Metrics], Any]
    path_points: int = DEFAULT_PATH_POINTS
    """The value path's resolution the score needs: 0 when it does not read the drawdown
    (return, entry vs mean), which spares each trial the path's 4,000 points."""

    def score(self, result: BacktestResult) -> Decimal:
        """The exact score of one run, its metrics computed as this objective needs."""
        return self.value(result, compute_metrics(result, points=self.path_points))

    def value(self, result: BacktestResult, metrics: Metrics) -> Decimal:
        """The exact score of one run.

        Raises:
            TrialError: undefined (no trades) or not a finite number.
        """
        raw = self.measure(result, metrics)
        if raw is None:
            raise TrialError(f"{self.name}: undefined for this run (no trades)")
        if isinstance(raw, bool) or not isinstance(raw, int | float | Decimal):
            raise TrialError(f"{self.name}: returned {type(raw).__name__}, not a number")
        exact = raw if isinstance(raw, Decimal) else Decimal(repr(raw))
        if not exact.is_finite():
            raise TrialError(f"{self.name}: returned {raw}, not a finite number")
        return exact


def _pnl_per_drawdown(_: BacktestResult, metrics: Metrics) -> Decimal | None:
    if metrics.return_percent is None:
        return None
    return metrics.pnl_usd / max(metrics.max_drawdown_usd, DRAWDOWN_FLOOR_USD)


OBJECTIVES: Final[dict[str, Objective]] = {
    "return": Objective("return", "maximize", lambda _, m: m.return_percent, 0),
    "entry_vs_mean": Objective(
        "entry_vs_mean", "minimize", lambda _, m: m.entry_vs_mean_percent, 0
    ),
    "pnl_per_drawdown": Objective("pnl_per_drawdown", "maximize", _pnl_per_drawdown),
}
"""Built-in objectives: total return (%), average entry vs the mean price (%, lower is
better) and P&L (USD) per USD of maximum drawdown."""


def resolve_objective(name: str, direction: str | None = None) -> Objective:
    """A built-in objective, or `module.path:function` (called with result and metrics).

    A user function's direction is `direction` (default maximize); the built-ins have
    their own. The current folder is importable, as with `python -m`.

    Raises:
        SearchError: an unknown name, a function that cannot be imported, a bad direction.
    """
    if direction is not None and direction not in ("maximize", "minimize"):
        raise SearchError(f"--direction {direction!r}: expected maximize or minimize")
    if name in OBJECTIVES:
        builtin = OBJECTIVES[name]
        if direction is not None and direction != builtin.direction:
            raise SearchError(f"--objective {name} is always {builtin.direction}d")
        return builtin
    module_name, sep, function = name.partition(":")
    if not sep or not module_name or not function:
        raise SearchError(
            f"--objective {name!r}: expected {', '.join(OBJECTIVES)} or module.path:function"
        )
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise SearchError(f"--objective {name!r}: cannot import {module_name}: {exc}") from None
    measure = getattr(module, function, None)
    if not callable(measure):
        raise SearchError(f"--objective {name!r}: {module_name} has no function {function}")
    chosen: Direction = "minimize" if direction == "minimize" else "maximize"
    return Objective(name, chosen, measure)


@dataclass(frozen=True)
class SearchPlan:
    """One search: the space, the objective, where the study is kept and how to sample."""

    dimensions: tuple[Dimension, ...]
    objective: Objective
    trials: int
    storage: str  # an SQLAlchemy URL
    study: str
    sampler: str = "tpe"
    seed: int | None = None
    tags: Mapping[str, str] = field(default_factory=dict)
    """What the study is of (strategy, window, space, objective): a study joined later
    must match, so trials of different searches never mix."""


def _storage(url: str) -> Any:
    import optuna

    engine: dict[str, Any] = {}
    if url.startswith("sqlite"):
        # Several worker processes write one file: wait for the lock instead of failing.
        engine = {"connect_args": {"timeout": 120}}
    return optuna.storages.RDBStorage(url, engine_kwargs=engine)


def _sampler(plan: SearchPlan, offset: int) -> Any:
    import optuna

    seed = None if plan.seed is None else plan.seed + offset
    if plan.sampler == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if plan.sampler == "cmaes":
        from importlib.util import find_spec

        if find_spec("cmaes") is None:  # Optuna's CMA-ES sampler needs it
            raise SearchError("--sampler cmaes needs the cmaes package: pip install cmaes")
        return optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False)
    # constant_liar: a running trial of another worker counts as a bad one, so parallel
    # workers spread out instead of drawing near the same point.
    return optuna.samplers.TPESampler(seed=seed, constant_liar=True)


def open_study(plan: SearchPlan, *, offset: int = 0) -> optuna.Study:
    """Create the study, or join it if it exists (the same search only).

    `offset` moves the sampler's seed: each worker, and each resumed run, draws anew.

    Raises:
        SearchError: the storage cannot be opened, or the study is of another search.
    """
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    from sqlalchemy.exc import IntegrityError, ProgrammingError

    sampler = _sampler(plan, offset)
    try:
        for attempt in range(_CREATE_ATTEMPTS):
            try:
                with _creating(plan.storage):
                    study = optuna.create_study(
                        storage=_storage(plan.storage),
                        study_name=plan.study,
                        direction=plan.objective.direction,
                        sampler=sampler,
                        load_if_exists=True,
                    )
                break
            except (IntegrityError, ProgrammingError):
                # Another worker made the tables or the study at the same moment (a
                # server database: duplicate key / table); what it made is there now.
                if attempt == _CREATE_ATTEMPTS - 1:
                    raise
                time.sleep(0.2 * (attempt + 1))
    except SearchError:
        raise
    except Exception as exc:
        problem = _without_secrets(_one_line(exc), plan.storage)
        raise SearchError(f"--storage: cannot open the study: {problem}") from None
    if study.direction.name.lower() != plan.objective.direction:
        raise SearchError(
            f"--study {plan.study}: that study is {study.direction.name.lower()}d, "
            f"the objective is {plan.objective.direction}d"
        )
    kept = study.user_attrs
    for key, value in plan.tags.items():
        if key in kept and kept[key] != value:
            raise SearchError(
                f"--study {plan.study}: it searches {key} {kept[key]!r}, not {value!r} "
                "(name another study)"
            )
        if key not in kept:
            study.set_user_attr(key, value)
    return study


@contextmanager
def _creating(url: str) -> Iterator[None]:
    """One process at a time makes a SQLite study file's tables and study.

    Else two workers starting at once both try `CREATE TABLE`; a server database
    needs no lock here.
    """
    path = _sqlite_path(url)
    if path is None:
        yield
        return
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _sqlite_path(url: str) -> Path | None:
    """The file of a `sqlite:///…` URL (None: another engine, or in memory)."""
    prefix = "sqlite:///"
    if not url.startswith(prefix) or url == prefix + ":memory:":
        return None
    return Path(url.removeprefix(prefix).split("?")[0])


def run_worker(
    plan: SearchPlan,
    run: RunTrial,
    *,
    stop: Callable[[], bool] = lambda: False,
    on_trial: Callable[[optuna.Study], None] | None = None,
    offset: int = 0,
) -> int:
    """Run trials until the study holds `plan.trials` or `stop()`; returns how many ran.

    Parameters already scored in the study (the sampler may draw a point again) are not
    run again: the backtest is deterministic, so the trial takes the earlier trial's exact
    score (`user_attrs["same_as"]` names it). KeyboardInterrupt during a trial marks the
    trial stopped (failed, not counted) and is raised again.
    """
    import optuna

    study = open_study(plan, offset=offset + counted_or_zero(plan))
    fail_orphans(study)
    worker = f"{socket.gethostname()}:{os.getpid()}"  # who ran it, in the study's record
    ran = 0
    while not stop():
        trials = study.get_trials(deepcopy=False)
        if sum(1 for t in trials if not t.user_attrs.get("stopped")) >= plan.trials:
            break
        scored = {
            _key(t.user_attrs["params"]): t
            for t in trials
            if t.state == optuna.trial.TrialState.COMPLETE and "value" in t.user_attrs
        }
        trial = study.ask()
        try:
            point = {d.name: d.exact(_suggest(trial, d)) for d in plan.dimensions}
            exact = {k: str(v) for k, v in point.items()}
            trial.set_user_attr("params", exact)
            trial.set_user_attr("worker", worker)
            earlier = scored.get(_key(exact))
            if earlier is not None:
                trial.set_user_attr("same_as", earlier.number)
                value = Decimal(earlier.user_attrs["value"])
            else:
                value = plan.objective.score(run(point))
        except KeyboardInterrupt:
            trial.set_user_attr("stopped", True)
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            raise
        except Exception as exc:
            trial.set_user_attr("error", _one_line(exc))
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
        else:
            trial.set_user_attr("value", str(value))
            study.tell(trial, float(value))
        ran += 1
        if on_trial is not None:
            on_trial(study)
    return ran


def fail_orphans(study: optuna.Study) -> list[int]:
    """Mark failed the running trials whose worker process on this machine is gone.

    A worker killed outright (kill -9, the out-of-memory killer, a power loss) leaves its
    trial `RUNNING`: it would stay so for good, and TPE's constant liar would keep taking
    it for a bad point. Its `worker` attribute (host:pid) names the process; when that
    host is this one and no process has that pid, it ran nothing since. A worker on
    another machine cannot be asked: its trials stay as they are. Returns the numbers of
    the trials failed (they still count toward the study's total, as failed trials do).
    """
    import optuna

    host = socket.gethostname()
    failed = []
    for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        name, _, pid = str(trial.user_attrs.get("worker", "")).rpartition(":")
        if name != host or not pid.isdigit() or _process_exists(int(pid)):
            continue
        try:  # another worker starting at the same moment may fail it first
            study.tell(trial.number, state=optuna.trial.TrialState.FAIL, skip_if_finished=True)
        except (RuntimeError, ValueError):
            continue
        failed.append(trial.number)
    return failed


def _process_exists(pid: int) -> bool:
    """True when this machine has a process `pid` (another user's included), or may have.

    A pid no process can have (out of range) is taken as existing: its trial is left.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _key(params: Mapping[str, str]) -> str:
    return json.dumps(dict(params), sort_keys=True)


def counted_or_zero(plan: SearchPlan) -> int:
    """How many trials the study already holds (0 if it does not exist yet)."""
    import optuna

    try:
        summaries = optuna.get_all_study_summaries(_storage(plan.storage))
    except Exception:
        return 0
    return next((s.n_trials for s in summaries if s.study_name == plan.study), 0)


def _suggest(trial: optuna.Trial, dim: Dimension) -> Any:
    if dim.kind == "choice":
        return trial.suggest_categorical(dim.name, list(dim.choices))
    if dim.kind == "int":
        step = int(dim.step) if dim.step is not None else 1
        return trial.suggest_int(dim.name, int(dim.low), int(dim.high), step=step, log=dim.log)
    grid = float(dim.step) if dim.step is not None else None
    return trial.suggest_float(dim.name, float(dim.low), float(dim.high), step=grid, log=dim.log)


@dataclass(frozen=True)
class ExactTrial:
    """A completed trial as the search ran it: its number, exact score and parameters."""

    number: int
    value: Decimal
    params: dict[str, str]


def exact_trials(study: optuna.Study, direction: Direction) -> list[ExactTrial]:
    """The completed trials, best first (ties: the earlier trial).

    Each set of parameters once: its first trial (a point drawn again took its score).
    """
    import optuna

    done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    first: dict[str, ExactTrial] = {}
    for t in sorted(done, key=lambda t: t.number):
        if "value" in t.user_attrs:
            params = dict(t.user_attrs["params"])
            first.setdefault(
                _key(params), ExactTrial(t.number, Decimal(t.user_attrs["value"]), params)
            )
    trials = list(first.values())
    sign = -1 if direction == "maximize" else 1
    return sorted(trials, key=lambda t: (sign * t.value, t.number))


@dataclass(frozen=True)
class Snapshot:
    """How far a study is: counted trials, completed, failed, the best so far."""

    counted: int
    complete: int
    failed: int
    best: ExactTrial | None


def snapshot(study: optuna.Study, direction: Direction) -> Snapshot:
    """The study now (for the progress line and the summary)."""
    import optuna

    trials = study.get_trials(deepcopy=False)
    best = exact_trials(study, direction)
    failed = sum(
        1
        for t in trials
        if t.state == optuna.trial.TrialState.FAIL and not t.user_attrs.get("stopped")
    )
    return Snapshot(
        counted=sum(1 for t in trials if not t.user_attrs.get("stopped")),
        complete=sum(1 for t in trials if t.state == optuna.trial.TrialState.COMPLETE),
        failed=failed,
        best=best[0] if best else None,
    )


def importances(study: optuna.Study, names: Sequence[str], seed: int | None) -> dict[str, float]:
    """Each parameter's importance (PED-ANOVA, normalised; `seed` is unused by it).

    Raises:
        SearchError: it cannot be computed (fewer than 2 completed trials, a single
            parameter, or the evaluator's own refusal).
    """
    import optuna

    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    if len(names) < 2:
        raise SearchError("importances: only one parameter is searched")
    if len(complete) < 2:
        raise SearchError("importances: fewer than 2 completed trials")
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PED-ANOVA is "experimental" in Optuna
            # PED-ANOVA needs nothing beyond Optuna (fANOVA would need scikit-learn).
            evaluator = optuna.importance.PedAnovaImportanceEvaluator()
            return optuna.importance.get_param_importances(
                study, evaluator=evaluator, params=list(names)
            )
    except Exception as exc:  # e.g. a parameter that never varied
        raise SearchError(f"importances: {_one_line(exc)}") from None


@dataclass(frozen=True)
class HoldoutRow:
    """A top trial scored in-sample (the search) and on the held-out end of the window."""

    place: int
    trial: ExactTrial
    holdout: Decimal | None
    error: str | None = None


def holdout_rows(
    top: Sequence[ExactTrial], run: RunTrial, objective: Objective
) -> list[HoldoutRow]:
    """Run each trial's parameters again on the holdout window (`run`) and score them."""
    rows = []
    for place, trial in enumerate(top, start=1):
        try:
            result = run(dict(trial.params))
            rows.append(HoldoutRow(place, trial, objective.score(result)))
        except Exception as exc:
            rows.append(HoldoutRow(place, trial, None, _one_line(exc)))
    return rows


def typed_params(dimensions: Sequence[Dimension], params: Mapping[str, str]) -> dict[str, Any]:
    """A trial's exact parameter texts as the space's values (int, Decimal or text)."""
    kinds = {d.name: d.kind for d in dimensions}
    typed: dict[str, Any] = {}
    for name, text in params.items():
        kind = kinds.get(name)
        typed[name] = int(text) if kind == "int" else Decimal(text) if kind == "decimal" else text
    return typed


def _without_secrets(text: str, url: str) -> str:
    """A driver's error about `url` without the URL's password, user or tokens."""
    from bot.logging import REDACTED, redact, url_secrets

    for secret in sorted(url_secrets(url), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return redact(text)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
