"""`--space` of `bot hyperopt`: the grammar, exact values from float suggestions, and the
check of a space against a real strategy's parameters model."""

from __future__ import annotations

from decimal import Decimal

import pytest

from bot.backtest.hyperopt import OBJECTIVES, SearchError, resolve_objective, typed_params
from bot.backtest.hyperopt_report import best_toml
from bot.backtest.search_space import (
    Dimension,
    SpaceError,
    base_point,
    parse_space,
    validate_space,
)
from bot.config import StrategyEntry
from strategies.limit_ladder import LimitLadderParams
from strategies.recurring_dca import RecurringDcaParams

LADDER_FIXED = {
    "sell_token": "USDC",
    "buy_token": "APT",
    "amount_per_rung": "10",
    "redrift_percent": "5",
}
DCA_FIXED = {"from_token": "USDC", "to_token": "APT", "amount_per_order": "10", "orders": 4}


def test_the_issues_example_parses() -> None:
    dims = parse_space("spacing_percent=0.5..5,rungs=1..10,interval=[1 hour,6 hour,1 day]")
    assert dims == [
        Dimension("spacing_percent", "decimal", Decimal("0.5"), Decimal(5), Decimal("0.1")),
        Dimension("rungs", "int", Decimal(1), Decimal(10)),
        Dimension("interval", "choice", choices=("1 hour", "6 hour", "1 day")),
    ]
    assert base_point(dims) == {"spacing_percent": Decimal("0.5"), "rungs": 1, "interval": "1 hour"}


def test_steps_log_scales_and_finer_bounds() -> None:
    step, log, fine, int_step = parse_space("a=1..2:0.25, b=0.1~10, c=0.50..5.00, d=2..20:3")
    assert (step.kind, step.step) == ("decimal", Decimal("0.25"))
    assert (log.kind, log.log, log.step) == ("decimal", True, None)
    assert fine.step == Decimal("0.01")
    assert (int_step.kind, int_step.step) == ("int", Decimal(3))
    assert parse_space("n=1~100")[0] == Dimension("n", "int", Decimal(1), Decimal(100), log=True)


@pytest.mark.parametrize(
    ("space", "named"),
    [
        ("spacing_percent", "spacing_percent"),
        ("rungs=1..", "rungs"),
        ("rungs=5..1", "rungs=5..1"),
        ("rungs=a..b", "'a' is not a number"),
        ("rungs=[1,2", "'[' without ']'"),
        ("rungs=[1,,2]", "an empty value"),
        ("rungs=[1,1]", "a value given twice"),
        ("rungs=1..5,rungs=[2]", "rungs: given twice"),
        ("x=0.1~10:0.1", "a log range takes no step"),
        ("x=0~10", "a log range needs a positive low bound"),
        ("x=1..5:0", "the step must be positive"),
        ("x=1..NaN", "not a finite number"),
        ("", "no parameter to search"),
        ("9x=1..2", "not a parameter name"),
    ],
)
def test_a_bad_space_is_one_line_naming_it(space: str, named: str) -> None:
    with pytest.raises(SpaceError, match=None) as caught:
        parse_space(space)
    message = str(caught.value)
    assert named in message and "\n" not in message


def test_float_suggestions_become_exact_decimals_on_the_grid() -> None:
    spacing = parse_space("spacing_percent=0.5..5")[0]
    assert spacing.exact(0.7000000000000001) == Decimal("0.7")
    assert spacing.exact(4.999999999) == Decimal("5.0")
    assert spacing.exact(0.30000000000000004) == Decimal("0.5")  # clamped to the bounds
    stepped = parse_space("x=1..2:0.25")[0]
    assert stepped.exact(1.2600000001) == Decimal("1.25")
    assert stepped.exact(1.99) == Decimal("2.00")
    logged = parse_space("x=0.1~10")[0]
    assert logged.exact(3.14159) == Decimal("3.1")
    assert logged.exact(0.1000000001) == Decimal("0.1")
    # The same suggestion always gives the same exact value.
    assert {spacing.exact(2.3000000000000003) for _ in range(3)} == {Decimal("2.3")}
    assert parse_space("r=1..10")[0].exact(7) == 7
    assert parse_space("i=[1 hour,1 day]")[0].exact("1 day") == "1 day"


def test_a_space_is_checked_against_the_ladders_parameters() -> None:
    ok = parse_space("spacing_percent=0.5..5,rungs=1..10,expiry=[1 hour,6 hour,1 day]")
    validate_space(ok, LADDER_FIXED, LimitLadderParams)
    with pytest.raises(SpaceError, match=r"--space spacing: not a parameter .*rungs"):
        validate_space(parse_space("spacing=1..2"), LADDER_FIXED, LimitLadderParams)
    with pytest.raises(SpaceError, match=r"spacing_percent is required: fix it with --params"):
        validate_space(parse_space("rungs=1..5"), LADDER_FIXED, LimitLadderParams)
    fixed = {**LADDER_FIXED, "spacing_percent": "1"}
    with pytest.raises(SpaceError, match=r"rungs=51: rungs: .*less than or equal to 50"):
        validate_space(parse_space("rungs=1..51"), fixed, LimitLadderParams)
    with pytest.raises(SpaceError, match=r"rungs=1.5: rungs: .*integer"):
        validate_space(parse_space("rungs=1.5..3"), fixed, LimitLadderParams)
    with pytest.raises(SpaceError, match=r"expiry=fortnight: expiry"):
        validate_space(parse_space("expiry=[1 day,fortnight],rungs=1..3"), fixed, LimitLadderParams)
    # rungs × spacing ≥ 100 in a corner is a rule between fields: the trial fails alone.
    validate_space(parse_space("rungs=1..40,spacing_percent=1..5"), LADDER_FIXED, LimitLadderParams)


def test_a_space_is_checked_against_the_dcas_parameters() -> None:
    validate_space(parse_space("interval=[1 hour,6 hour,1 day]"), DCA_FIXED, RecurringDcaParams)
    with pytest.raises(SpaceError, match=r"interval=1 fortnight: interval"):
        validate_space(parse_space("interval=[1 hour,1 fortnight]"), DCA_FIXED, RecurringDcaParams)
    with pytest.raises(SpaceError, match=r"amount_per_order=-1: amount_per_order"):
        fixed = {k: v for k, v in DCA_FIXED.items() if k != "amount_per_order"}
        fixed["interval"] = "1 hour"
        validate_space(parse_space("amount_per_order=-1..10"), fixed, RecurringDcaParams)


def test_objectives_by_name_or_function() -> None:
    assert resolve_objective("return").direction == "maximize"
    assert resolve_objective("entry_vs_mean").direction == "minimize"
    assert set(OBJECTIVES) == {"return", "entry_vs_mean", "pnl_per_drawdown"}
    custom = resolve_objective("tests.unit.backtest.test_search_space:_fills", "minimize")
    assert custom.direction == "minimize"
    for bad, said in [
        ("sharpe", "expected return, entry_vs_mean, pnl_per_drawdown"),
        ("no_such_module_x:f", "cannot import"),
        ("tests.unit.backtest.test_search_space:nothing", "has no function"),
    ]:
        with pytest.raises(SearchError, match=said):
            resolve_objective(bad)
    with pytest.raises(SearchError, match="always minimized"):
        resolve_objective("entry_vs_mean", "maximize")


def _fills(result: object, metrics: object) -> int:
    return 1


def test_the_best_entry_is_ready_toml() -> None:
    import tomllib

    dims = parse_space("spacing_percent=0.5..5,rungs=1..10,expiry=[1 hour,1 day]")
    params = {
        **LADDER_FIXED,
        **typed_params(dims, {"spacing_percent": "0.9", "rungs": "2", "expiry": "1 day"}),
    }
    entry = StrategyEntry(
        name="ladder", plugin="limit_ladder", schedule={"interval_seconds": 3600}, params={}
    )
    text = best_toml(entry, params, "trial 3")
    data = tomllib.loads(text, parse_float=Decimal)
    (block,) = data["strategies"]
    assert block["params"]["rungs"] == 2 and block["params"]["spacing_percent"] == "0.9"
    parsed = StrategyEntry.model_validate(block)
    checked = LimitLadderParams.model_validate(parsed.params)
    assert checked.spacing_percent == Decimal("0.9") and checked.rungs == 2
