"""What `bot hyperopt` shows: the ranked trials, the importances, the holdout, the best entry.

Plain text (tables aligned for reading; the exact values are the trials' own text) and
the best parameters as a `[[strategies]]` TOML block ready to paste into a config. No
Optuna here: the search (`bot.backtest.hyperopt`) hands over exact trials.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from bot.backtest.hyperopt import ExactTrial, HoldoutRow
from bot.config import StrategyEntry

__all__ = ["TOP", "best_toml", "holdout_table", "importance_lines", "ranked_table"]

TOP = 10
"""Trials shown in the ranking."""


def ranked_table(trials: Sequence[ExactTrial], names: Sequence[str], objective: str) -> str:
    """The best `TOP` trials: place, trial number, objective, parameters."""
    header = ["#", "trial", objective, *names]
    rows = [
        [str(place), str(t.number), _number(t.value), *(t.params.get(n, "") for n in names)]
        for place, t in enumerate(trials[:TOP], start=1)
    ]
    return _align([header, *rows])


def holdout_table(rows: Sequence[HoldoutRow], names: Sequence[str], objective: str) -> str:
    """The top trials side by side: objective in-sample (the search) and on the holdout."""
    header = ["#", "trial", f"{objective} in-sample", f"{objective} holdout", *names]
    table = [header]
    for row in rows:
        held = _number(row.holdout) if row.holdout is not None else f"({row.error})"
        params = (row.trial.params.get(n, "") for n in names)
        table.append(
            [str(row.place), str(row.trial.number), _number(row.trial.value), held, *params]
        )
    return _align(table)


def importance_lines(values: Mapping[str, float]) -> list[str]:
    """`name  0.63  ############` per parameter, most important first."""
    width = max(len(n) for n in values)
    ordered = sorted(values.items(), key=lambda item: -item[1])
    return [f"  {n.ljust(width)}  {v:5.2f}  {'#' * round(v * 30)}" for n, v in ordered]


def best_toml(entry: StrategyEntry, params: Mapping[str, Any], note: str) -> str:
    """The best parameters as a `[[strategies]]` block (name, plugin, schedule, params).

    Decimals are written as strings (the config reads them exactly), unset (None)
    parameters are left out.
    """
    schedule = entry.schedule.model_dump(exclude_none=True)
    lines = [
        f"# {note}",
        "[[strategies]]",
        f"name = {_toml(entry.name)}",
        f"plugin = {_toml(entry.plugin)}",
        f"schedule = {_toml(schedule)}",
        f"params = {_toml({k: v for k, v in params.items() if v is not None})}",
    ]
    return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal | float):
        return json.dumps(str(value))
    if isinstance(value, Mapping):
        inner = ", ".join(f"{k} = {_toml(v)}" for k, v in value.items() if v is not None)
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def _number(value: Decimal) -> str:
    """Up to 6 decimal places for reading (the trial keeps the exact value)."""
    shown = f"{value:.6f}".rstrip("0").rstrip(".")
    return shown if shown not in ("-0", "") else "0"


def _align(table: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines = []
    for r in table:
        cells = [
            c.rjust(w) if 0 < i < 4 else c.ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
