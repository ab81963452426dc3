"""Finding plugins (package, user folders, entry points) and building configured ones."""

from __future__ import annotations

import textwrap
from decimal import Decimal
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, ClassVar

import pytest

from bot.config import StrategyEntry
from bot.engine import plugins
from bot.engine.plugins import PluginError, available_plugins, build_strategy, load_plugin
from bot.engine.strategy import Action, Context, Strategy
from strategies.dip_buyer import DipBuyer
from strategies.limit_ladder import LimitLadder
from strategies.rebalancer import Rebalancer
from strategies.recurring_dca import RecurringDca, RecurringDcaParams
from strategies.take_profit import TakeProfit

BUILTINS = {
    "recurring_dca": RecurringDca,
    "limit_ladder": LimitLadder,
    "dip_buyer": DipBuyer,
    "take_profit": TakeProfit,
    "rebalancer": Rebalancer,
}
USER_PLUGIN = '''
"""A user's grid strategy."""
from bot.engine.strategy import Strategy, StrategyParams


class GridParams(StrategyParams):
    step: int = 1


class Grid(Strategy):
    """Buys and sells on a grid.

    More words.
    """

    name = "my_grid"
    Params = GridParams

    async def on_tick(self, ctx):
        return []
'''


class FromPackage(Strategy):
    """Installed through an entry point."""

    name: ClassVar[str] = "from_package"

    async def on_tick(self, ctx: Context) -> list[Action]:
        return []


class FutureApi(FromPackage):
    """Written for a later plugin API."""

    name: ClassVar[str] = "future_api"
    api_version: ClassVar[int] = 2


def entry(plugin: str = "recurring_dca", **params: Any) -> StrategyEntry:
    return StrategyEntry(
        name="weekly-apt", plugin=plugin, schedule={"interval_seconds": 3600}, params=params
    )


@pytest.fixture
def entry_points(monkeypatch: pytest.MonkeyPatch) -> list[EntryPoint]:
    points: list[EntryPoint] = []

    def fake(*, group: str) -> list[EntryPoint]:
        assert group == "bot.strategies"
        return points

    monkeypatch.setattr(plugins, "entry_points", fake)
    return points


def point(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group="bot.strategies")


@pytest.mark.usefixtures("entry_points")
def test_builtins_are_found_by_name() -> None:
    for name, cls in BUILTINS.items():
        assert load_plugin(name) is cls
    listed = available_plugins()
    assert set(listed) == set(BUILTINS)
    assert listed["recurring_dca"].startswith("Keep a DCA running between two tokens")


@pytest.mark.usefixtures("entry_points")
def test_a_user_folder_plugin(tmp_path: Path) -> None:
    (tmp_path / "grid.py").write_text(USER_PLUGIN)
    cls = load_plugin("my_grid", [tmp_path])
    assert cls.name == "my_grid" and issubclass(cls, Strategy)
    assert available_plugins([tmp_path])["my_grid"] == "Buys and sells on a grid."
    strategy = build_strategy(entry("my_grid", step=3), [tmp_path])
    assert strategy.instance == "weekly-apt"
    assert strategy.params.model_dump() == {"step": 3}


@pytest.mark.usefixtures("entry_points")
def test_a_broken_user_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import does_not_exist_anywhere\n")
    with pytest.raises(PluginError, match=r"broken\.py: ModuleNotFoundError"):
        load_plugin("my_grid", [tmp_path])
    with pytest.raises(PluginError, match="not a directory"):
        load_plugin("my_grid", [tmp_path / "nope"])


def test_an_entry_point_plugin(entry_points: list[EntryPoint]) -> None:
    entry_points.append(point("from_package", f"{__name__}:FromPackage"))
    assert load_plugin("from_package") is FromPackage
    assert available_plugins()["from_package"] == "Installed through an entry point."


def test_a_broken_entry_point_is_named(entry_points: list[EntryPoint]) -> None:
    entry_points.append(point("gone", "no_such_module_here:Gone"))
    with pytest.raises(PluginError, match="plugin 'gone': entry point 'no_such_module_here:Gone'"):
        load_plugin("gone")


def test_another_api_version_is_refused(entry_points: list[EntryPoint]) -> None:
    entry_points.append(point("future_api", f"{__name__}:FutureApi"))
    with pytest.raises(PluginError, match="targets plugin API v2; this bot supports v1"):
        load_plugin("future_api")


def test_an_unknown_name_lists_the_available_ones(
    tmp_path: Path, entry_points: list[EntryPoint]
) -> None:
    (tmp_path / "grid.py").write_text(USER_PLUGIN)
    entry_points.append(point("from_package", f"{__name__}:FromPackage"))
    with pytest.raises(PluginError) as caught:
        load_plugin("recurring_dcaa", [tmp_path])
    assert str(caught.value) == (
        "unknown strategy plugin 'recurring_dcaa' (closest: recurring_dca; available: "
        "dip_buyer, from_package, "
        "limit_ladder, my_grid, rebalancer, recurring_dca, take_profit)"
    )


PARAMS: dict[str, Any] = {
    "from_token": "USDC",
    "to_token": "APT",
    "amount_per_order": "25",
    "interval": "1 day",
    "orders": 7,
}


@pytest.mark.usefixtures("entry_points")
def test_builds_a_configured_strategy() -> None:
    strategy = build_strategy(entry(**PARAMS))
    assert isinstance(strategy, RecurringDca)
    assert isinstance(strategy.params, RecurringDcaParams)
    assert strategy.params.amount_per_order == Decimal(25)


@pytest.mark.usefixtures("entry_points")
def test_a_bad_param_names_the_strategy_and_field() -> None:
    with pytest.raises(PluginError) as caught:
        build_strategy(entry(**{**PARAMS, "amount_per_order": "-5"}))
    assert str(caught.value) == (
        "strategy 'weekly-apt' (recurring_dca): params.amount_per_order: "
        "Input should be greater than 0 (got '-5')"
    )
    with pytest.raises(PluginError) as caught:
        build_strategy(entry(**{**PARAMS, "amount_per_ordr": "5", "orders": 0}))
    assert caught.value.problems == [
        "strategy 'weekly-apt' (recurring_dca): params.orders: "
        "Input should be greater than or equal to 1 (got 0)",
        "strategy 'weekly-apt' (recurring_dca): params.amount_per_ordr: "
        "unknown parameter (check the spelling; see docs/strategies.md)",
    ]
    with pytest.raises(PluginError, match=r"\(recurring_dca\): params: min_rate must not"):
        build_strategy(entry(**{**PARAMS, "min_rate": "2", "max_rate": "1"}))


def _toml_examples() -> list[str]:
    text = (Path(__file__).parents[3] / "docs" / "strategies.md").read_text()
    return [block.split("```", 1)[0] for block in text.split("```toml\n")[1:]]


@pytest.mark.usefixtures("entry_points")
def test_every_documented_example_builds() -> None:
    import tomllib

    examples = _toml_examples()
    assert len(examples) >= 5
    plugins_seen = set()
    for example in examples:
        data = tomllib.loads(textwrap.dedent(example), parse_float=Decimal)
        for item in data.get("strategies", []):
            strategy = build_strategy(StrategyEntry(**item))
            plugins_seen.add(strategy.name)
    assert plugins_seen == set(BUILTINS)
