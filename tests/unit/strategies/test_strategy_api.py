"""The strategy API for authors: `Strategy[P]`, the parameter types, declared tokens."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import Field, ValidationError
from structlog.testing import capture_logs

from bot.config import StrategyEntry
from bot.engine import plugins
from bot.engine.plugins import PluginError, build_strategy, declared_tokens
from bot.engine.strategy import (
    Action,
    Context,
    Period,
    Slippage,
    Strategy,
    StrategyParams,
    needed_tokens,
    parse_period,
    period_length,
    window,
)
from strategies.dip_buyer import DipBuyer
from strategies.limit_ladder import LimitLadder
from strategies.rebalancer import Rebalancer
from strategies.recurring_dca import RecurringDca
from strategies.take_profit import TakeProfit
from tests.unit.strategies.support import build


class PairParams(StrategyParams):
    sell_token: str
    buy_token: str
    extra_tokens: list[str] = Field(default_factory=list)
    label: str = "my plan"
    every: Period = "1 day"
    slippage: Slippage | None = None


class Pair(Strategy[PairParams]):
    """A generic strategy: `Params` comes from the brackets."""

    name: ClassVar[str] = "pair"

    async def on_tick(self, ctx: Context) -> list[Action]:
        return []


@pytest.fixture(autouse=True)
def no_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugins, "entry_points", lambda *, group: list[EntryPoint]())


def entry(plugin: str, name: str = "s", enabled: bool = True, **params: Any) -> StrategyEntry:
    return StrategyEntry(
        name=name,
        plugin=plugin,
        schedule={"interval_seconds": 60},
        params=params,
        enabled=enabled,
    )


def test_the_model_in_brackets_is_the_params_and_types_self_params() -> None:
    assert Pair.Params is PairParams
    strategy = Pair("p", PairParams(sell_token="USDC", buy_token="APT"))
    assert strategy.params.buy_token == "APT"  # typed PairParams: no isinstance needed


def test_params_of_another_model_are_refused_in_one_place() -> None:
    with pytest.raises(TypeError, match=r"^pair needs PairParams, got StrategyParams$"):
        Pair("p", StrategyParams())  # type: ignore[arg-type]  # what a checker catches


def test_a_params_that_contradicts_the_brackets_is_refused_at_class_creation() -> None:
    with pytest.raises(TypeError, match="Params is not a PairParams"):

        class Wrong(Strategy[PairParams]):
            Params: ClassVar[type[StrategyParams]] = StrategyParams


def test_the_default_tokens_are_the_token_fields() -> None:
    params = PairParams(sell_token="USDC", buy_token="APT", extra_tokens=["WETH", "USDC"])
    # `label` and `every` are strings too, but name no token: never guessed from
    assert needed_tokens(Pair("p", params)) == ["USDC", "APT", "WETH"]


@pytest.mark.parametrize(
    ("cls", "params", "tokens"),
    [
        (
            RecurringDca,
            {
                "from_token": "USDC",
                "to_token": "APT",
                "amount_per_order": "5",
                "orders": 2,
                "interval": "1d",
            },
            ["USDC", "APT"],
        ),
        (
            LimitLadder,
            {
                "sell_token": "USDC",
                "buy_token": "APT",
                "rungs": 2,
                "spacing_percent": "1",
                "amount_per_rung": "5",
                "redrift_percent": "2",
                "expiry": "1 day",
            },
            ["USDC", "APT"],
        ),
        (
            DipBuyer,
            {"sell_token": "USDC", "buy_token": "APT", "amount": "5", "drop_percent": "5"},
            ["USDC", "APT"],
        ),
        (
            TakeProfit,
            {
                "token": "APT",
                "quote_token": "USDC",
                "entry_from": ["weekly-apt"],  # an instance name, not a token
                "targets": [{"percent_above": "10", "fraction": "0.5"}],
            },
            ["APT", "USDC"],
        ),
        (
            Rebalancer,
            {"weights": {"APT": "0.5", "WETH": "0.5"}, "band_percent": "5"},
            ["APT", "WETH", "USDC"],
        ),
    ],
)
def test_every_builtin_declares_its_tokens(
    cls: type[Strategy], params: dict[str, Any], tokens: list[str]
) -> None:
    assert needed_tokens(build(cls, **params)) == tokens


def test_period_and_slippage_parameters() -> None:
    params = PairParams(sell_token="a", buy_token="b", every="12h", slippage="auto")
    assert params.every == "12 hour"
    assert parse_period(params.every) == (12, "hour")
    assert period_length("1 month") == timedelta(days=30)
    assert PairParams(sell_token="a", buy_token="b", slippage="0.5").slippage == Decimal("0.5")
    with pytest.raises(ValidationError, match="'1 hr' is not a duration"):
        PairParams(sell_token="a", buy_token="b", every="1 hr")
    with pytest.raises(ValidationError, match="between 0 and 100"):
        PairParams(sell_token="a", buy_token="b", slippage="101")


def test_a_window_counts_exactly_from_the_epoch() -> None:
    day = timedelta(days=1)
    assert window(datetime(1970, 1, 3, 23, 59, 59, 999_999, tzinfo=UTC), day) == 2
    assert window(datetime(2026, 1, 1, tzinfo=UTC), timedelta(hours=12)) == 20_454 * 2


GENERIC_PLUGIN = '''
"""A user's plugin in the generic form, with the API's parameter types."""
from typing import ClassVar

from bot.engine.strategy import Period, Slippage, Strategy, StrategyParams


class HedgeParams(StrategyParams):
    hedge_token: str
    every: Period = "1h"
    slippage: Slippage | None = None


class Hedge(Strategy[HedgeParams]):
    """Hedges."""

    name: ClassVar[str] = "hedge"

    def tokens(self):
        return [self.params.hedge_token, "USDC"]

    async def on_tick(self, ctx):
        return []
'''

OLD_PLUGIN = '''
"""A plugin written against the earlier layout: helpers from strategies.recurring_dca."""
from bot.engine.strategy import Strategy, StrategyParams
from strategies.recurring_dca import cancelled_by_user, new_user_cancels, note_user_cancels


class OldParams(StrategyParams):
    pair_token: str = "APT"


class Old(Strategy):
    name = "old"
    Params = OldParams

    async def on_tick(self, ctx):
        return []
'''

BAD_TOKENS_PLUGIN = """
from bot.engine.strategy import Strategy, StrategyParams


class Bad(Strategy):
    name = "bad_tokens"

    def tokens(self):
        return ["APT", 5]

    async def on_tick(self, ctx):
        return []
"""


def test_user_folder_plugins_old_and_generic_build_and_declare(tmp_path: Path) -> None:
    (tmp_path / "hedge.py").write_text(textwrap.dedent(GENERIC_PLUGIN))
    (tmp_path / "old.py").write_text(textwrap.dedent(OLD_PLUGIN))
    hedge = build_strategy(entry("hedge", hedge_token="WETH", every="2 hours"), [tmp_path])
    assert hedge.params.model_dump() == {"hedge_token": "WETH", "every": "2 hour", "slippage": None}
    assert needed_tokens(hedge) == ["WETH", "USDC"]
    old = build_strategy(entry("old"), [tmp_path])
    assert needed_tokens(old) == ["APT"]


def test_a_tokens_declaration_that_fails_is_a_load_error(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(textwrap.dedent(BAD_TOKENS_PLUGIN))
    with pytest.raises(PluginError) as caught:
        build_strategy(entry("bad_tokens", name="b"), [tmp_path])
    assert str(caught.value) == (
        "strategy 'b' (bad_tokens): tokens(): TypeError: b: tokens() must give token names "
        "(strings)"
    )


def test_declared_tokens_of_the_enabled_entries_once_each(tmp_path: Path) -> None:
    (tmp_path / "hedge.py").write_text(textwrap.dedent(GENERIC_PLUGIN))
    entries = [
        entry("hedge", name="h", hedge_token="APT"),
        entry(
            "dip_buyer", name="d", sell_token="USDC", buy_token="WETH", amount="1", drop_percent="5"
        ),
        entry("hedge", name="off", enabled=False, hedge_token="NOPE"),
        entry("no_such_plugin", name="broken"),  # reported by the strategy check, not here
    ]
    assert declared_tokens(entries, [tmp_path]) == ["APT", "USDC", "WETH"]


SELL_BUY_PLUGIN = '''
"""A plugin written before tokens(): its token parameters have other names."""
from bot.engine.strategy import Strategy, StrategyParams


class SellBuyParams(StrategyParams):
    sell: str = "USDC"
    buy: str = "APT"


class SellBuy(Strategy[SellBuyParams]):
    name = "sell_buy"

    async def on_tick(self, ctx):
        return []
'''


def test_a_plugin_that_declares_no_tokens_is_told_so_at_load(tmp_path: Path) -> None:
    (tmp_path / "sell_buy.py").write_text(textwrap.dedent(SELL_BUY_PLUGIN))
    (tmp_path / "old.py").write_text(textwrap.dedent(OLD_PLUGIN))
    with capture_logs() as logs:
        built = build_strategy(entry("sell_buy", name="sb"), [tmp_path])
        build_strategy(entry("old"), [tmp_path])  # `pair_token`: declared by default
    assert needed_tokens(built) == []
    warned = [e for e in logs if e["event"] == "strategy.declares_no_tokens"]
    assert [(e["strategy"], e["plugin"]) for e in warned] == [("sb", "sell_buy")]
