"""The parameter sweep: grid parsing, ranking, worker processes, failing combinations."""

from __future__ import annotations

import functools
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.backtest.result import BacktestResult
from bot.backtest.sweep import (
    SweepAxis,
    SweepError,
    SweepRow,
    grid,
    parse_sweep,
    rank,
    ranking_table,
    run_sweep,
)
from tests.support.backtest_results import buy, make_result


def fake_backtest(pid_dir: Path, params: dict[str, Any]) -> BacktestResult:
    """One buy of `amount` USDC at 5, valued at `end` at the end; notes the worker's pid."""
    (pid_dir / str(os.getpid())).touch()
    if params["end"] == "boom":
        raise RuntimeError("the series file vanished\nsecond line")
    amount = Decimal(params["amount"])
    bought = amount / 5
    return make_result([buy(0, str(amount), str(bought), "5")], ["5", params["end"]])


def test_parse_sweep_and_grid_order() -> None:
    axes = parse_sweep(["amount=10,20", "interval=1 hour, 1 day", "min_rate=null,0.2"])
    assert axes == [
        SweepAxis("amount", ("10", "20")),
        SweepAxis("interval", ("1 hour", "1 day")),
        SweepAxis("min_rate", (None, "0.2")),
    ]
    combos = grid(axes)
    assert len(combos) == 8
    assert combos[0] == {"amount": "10", "interval": "1 hour", "min_rate": None}
    assert combos[1] == {"amount": "10", "interval": "1 hour", "min_rate": "0.2"}
    assert combos[-1] == {"amount": "20", "interval": "1 day", "min_rate": "0.2"}


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("amount", "expected param=v1,v2"),
        ("=1,2", "expected param=v1,v2"),
        ("amount=1,,2", "an empty value"),
        ("amount=", "an empty value"),
    ],
)
def test_bad_sweep_options_name_the_option(option: str, message: str) -> None:
    with pytest.raises(SweepError, match=message) as caught:
        parse_sweep([option])
    assert f"--sweep {option!r}" in str(caught.value)


def test_a_parameter_swept_twice_is_refused() -> None:
    with pytest.raises(SweepError, match="swept twice"):
        parse_sweep(["amount=1,2", "amount=3"])


def test_two_by_two_grid_is_ranked_by_return_then_pnl_in_worker_processes(
    tmp_path: Path,
) -> None:
    # Bought at 5: end 10 doubles (+100 %), end 6 gains 20 %; amount only scales the PnL.
    combos = grid(parse_sweep(["amount=100,200", "end=6,10"]))
    rows = run_sweep(functools.partial(fake_backtest, tmp_path), combos, workers=2)
    assert [(r.params["amount"], r.params["end"]) for r in rows] == [
        ("200", "10"),  # +100 %, PnL 200
        ("100", "10"),  # +100 %, PnL 100
        ("200", "6"),  # +20 %, PnL 40
        ("100", "6"),  # +20 %, PnL 20
    ]
    assert rows[0].return_percent == Decimal(100) and rows[0].pnl_usd == Decimal(200)
    assert rows[3].pnl_usd == Decimal(20) and rows[3].fills == 1
    worker_pids = {int(p.name) for p in tmp_path.iterdir()}
    assert worker_pids and os.getpid() not in worker_pids  # ran in subprocesses


def test_a_failing_combination_is_one_line_and_ranked_last(tmp_path: Path) -> None:
    combos = grid(parse_sweep(["amount=100", "end=boom,6"]))
    rows = run_sweep(functools.partial(fake_backtest, tmp_path), combos, workers=2)
    assert [r.params["end"] for r in rows] == ["6", "boom"]
    assert rows[1].error == "RuntimeError: the series file vanished"
    table = ranking_table(rows, ["amount", "end"])
    lines = table.splitlines()
    assert len(lines) == 3
    assert lines[2].split()[:3] == ["2", "100", "boom"]
    assert lines[2].endswith("boom  error: RuntimeError: the series file vanished")
    assert "+20.00%" in lines[1]


def test_ties_keep_grid_order_and_rows_without_a_return_follow() -> None:
    rows = [
        SweepRow(0, {"a": "x"}, return_percent=None, pnl_usd=Decimal(0)),
        SweepRow(1, {"a": "y"}, return_percent=Decimal(5), pnl_usd=Decimal(5)),
        SweepRow(2, {"a": "z"}, error="ValueError: bad"),
        SweepRow(3, {"a": "w"}, return_percent=Decimal(5), pnl_usd=Decimal(5)),
        SweepRow(4, {"a": "v"}, return_percent=Decimal(5), pnl_usd=Decimal(9)),
    ]
    assert [r.index for r in rank(rows)] == [4, 1, 3, 0, 2]


def test_ranking_table_aligns_columns() -> None:
    rows = [
        SweepRow(0, {"amount": "10"}, Decimal("12.346"), Decimal("1234.5"), Decimal(100)),
        SweepRow(1, {"amount": "200"}, Decimal("-3"), Decimal("-3"), Decimal(100)),
    ]
    lines = ranking_table(rows, ["amount"]).splitlines()
    assert lines[0].split() == [
        "#",
        "amount",
        "return",
        "vs",
        "lump",
        "PnL",
        "invested",
        "avg",
        "entry",
        "max",
        "DD",
        "max",
        "DD",
        "%",
        "fills",
        "skips",
        "fees",
    ]
    assert "+12.35%" in lines[1] and "1,234.50" in lines[1]
    assert len({len(line) for line in lines}) == 1  # every row as wide as the header
