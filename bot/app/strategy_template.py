"""`bot strategies new NAME`: a strategy plugin and its test, written from a template.

The plugin (`<dir>/<NAME>.py`) has its parameters' model, `tokens()`, `on_tick` and
`on_order_event` with docstrings in the hook style of `bot.engine.strategy` (when, must
not, returns); the test (`<tests>/test_<NAME>.py`) validates the parameters by the
loader and runs the plugin in a one-day backtest (`bot.backtest.runner.run_backtest`)
on a made-up hourly series. Both pass ruff (as a user folder sees `bot`: a third-party
package), `bot strategies check` and pytest as written.
"""

from __future__ import annotations

import json
import keyword
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bot.app.errors import SetupError

__all__ = ["TEMPLATES", "NewStrategy", "check_name", "config_entry", "write_strategy"]

TEMPLATES: Final = ("recurring_dca",)
"""The templates a new strategy starts from (`--from`)."""

_PLUGIN: Final = '''\
"""{title}: keep one DCA order running between two tokens, a new one when it ends.

Made by `bot strategies new {name}` from the `recurring_dca` template: change `on_tick`
to decide otherwise. A strategy returns actions and never sends anything itself: the
engine risk-checks them, journals them and carries them out (live, paper, dry run and
backtest alike). The plugin API and its hooks: `bot.engine.strategy`, docs/strategies.md.
"""

from __future__ import annotations

from decimal import Decimal
from typing import ClassVar

from bot.engine.strategy import (
    Action,
    Context,
    CreateDca,
    OrderEvent,
    Period,
    Strategy,
    StrategyParams,
    parse_period,
)
from pydantic import Field, model_validator


class {cls}Params(StrategyParams):
    """Parameters of `{name}`: the `params` of its `[[strategies]]` entry.

    Attributes:
        from_token: the token spent (symbol or address), e.g. `USDC`.
        to_token: the token bought, e.g. `APT`.
        amount_per_order: how much of `from_token` each slice spends (> 0).
        orders: slices per DCA order (at least 1; default 7).
        interval: time between slices, e.g. `"1 day"` (the default), `"6h"`.
    """

    from_token: str = Field(min_length=1)
    to_token: str = Field(min_length=1)
    amount_per_order: Decimal = Field(gt=0)
    orders: int = Field(default=7, ge=1)
    interval: Period = "1 day"

    @model_validator(mode="after")
    def _different_tokens(self) -> {cls}Params:
        if self.from_token.lower() == self.to_token.lower():
            raise ValueError("from_token and to_token must differ")
        return self


class {cls}(Strategy[{cls}Params]):
    """Keep one DCA order running from `from_token` to `to_token`, renewed when it ends.

    State: none; the orders in `ctx.orders` say what was done.
    """

    name: ClassVar[str] = "{name}"

    def tokens(self) -> list[str]:
        """The tokens whose prices and balances this strategy needs: the pair it trades.

        When: at load (`bot config check`), and as the engine gathers a tick's prices.
        Must not: depend on anything but the parameters; block.
        Returns: the names; `ctx.prices` and `ctx.balances` hold these (and APT).
        """
        return [self.params.from_token, self.params.to_token]

    async def on_tick(self, ctx: Context) -> list[Action]:
        """Create the next DCA order when none of this strategy's is live.

        When: on every fire of the strategy's schedule.
        Must not: block (no network, no heavy computation), keep references to `ctx`.
        Returns: the actions to take now; an empty list means nothing. Each action has
        an idempotency key: returned again on a later tick, it is never done twice.
        Here the key counts the DCA orders made so far, so it stays the same until the
        new order is in `ctx.orders`.
        """
        if ctx.live_orders("dca"):
            return []
        made = sum(1 for order in ctx.orders if order.kind == "dca")
        number, unit = parse_period(self.params.interval)
        return [
            CreateDca(
                key=f"{{self.instance}}:dca:{{made}}",
                sell=self.params.from_token,
                buy=self.params.to_token,
                amount=self.params.amount_per_order,
                amount_type="perorder",
                orders=self.params.orders,
                interval_value=number,
                interval_period=unit,
            )
        ]

    async def on_order_event(self, ctx: Context, event: OrderEvent) -> list[Action]:
        """Renew at once when one of this strategy's DCA orders changes (as a tick would).

        When: after the order tracker records a transition or new fills of an order this
        strategy created. Must not: block.
        Returns: actions to take at once (same rules as `on_tick`).
        """
        return await self.on_tick(ctx) if event.kind == "dca" else []
'''

_TEST: Final = '''\
"""Tests of the `{name}` strategy: its parameters, and a one-day backtest on made-up prices.

Made by `bot strategies new {name}`; run it with `python -m pytest` on this file.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from bot.backtest.runner import run_backtest
from bot.backtest.spec import BacktestSpec
from bot.config import Schedule, StrategyEntry
from bot.engine.plugins import PluginError, build_strategy

STRATEGIES = (Path(__file__).parent / {strategies}).resolve()
"""The folder of the plugin (`[scheduler].strategy_dirs`)."""
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
START = datetime(2026, 1, 1, tzinfo=UTC)


def write_prices(path: Path, hours: int) -> Path:
    """An hourly series (the bot's CSV format): APT around 5 USD, USDC at 1."""
    lines = ["timestamp,token,symbol,usdPrice"]
    for hour in range(hours + 1):
        at = (START + timedelta(hours=hour)).isoformat().replace("+00:00", "Z")
        apt = Decimal(5) + Decimal(hour % 7 - 3) / 100
        lines.append(f"{{at}},{{APT}},APT,{{apt}}")
        lines.append(f"{{at}},{{USDC}},USDC,1")
    path.write_text("\\n".join(lines) + "\\n")
    return path


def entry(**params: Any) -> StrategyEntry:
    """A `[[strategies]]` entry of `{name}`: 10 USDC → APT, 4 hourly slices per order."""
    return StrategyEntry(
        name="{name}-test",
        plugin="{name}",
        schedule=Schedule(interval_seconds=3600),
        params={{
            "from_token": "USDC",
            "to_token": "APT",
            "amount_per_order": "10",
            "orders": 4,
            "interval": "1 hour",
            **params,
        }},
    )


def test_the_loader_refuses_bad_parameters() -> None:
    """A negative amount is refused when the config is loaded, naming the field."""
    with pytest.raises(PluginError, match="amount_per_order"):
        build_strategy(entry(amount_per_order="-1"), [STRATEGIES])


def test_a_day_of_backtest_buys_apt_every_hour(tmp_path: Path) -> None:
    """A day ticked hourly: DCA slices of 10 USDC, renewed, nothing refused or failed."""
    spec = BacktestSpec(
        strategy=entry(),
        start=START,
        end=START + timedelta(hours=24),
        prices=write_prices(tmp_path / "prices.csv", 24),
        strategy_dirs=[STRATEGIES],
        funding={{"USDC": Decimal(1000)}},
    )
    result = run_backtest(spec)
    assert result.errors == []
    assert result.refused == 0
    trades = [fill for fill in result.fills if not fill.skipped]
    assert len(trades) >= 8  # at least two DCA orders of 4 slices: it renews
    assert all(fill.sold == Decimal(10) and fill.bought > 0 for fill in trades)
'''


@dataclass(frozen=True)
class NewStrategy:
    """What `write_strategy` wrote."""

    name: str
    plugin: Path
    test: Path


def _class_name(name: str) -> str:
    """`my_dca` → `MyDca`."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) or "Strategy"


def check_name(name: str) -> str:
    """A new plugin's name: a Python identifier (it names the module and the plugin).

    Raises:
        SetupError: anything else, a keyword, or a name starting with `_` (the loader
            skips such files).
    """
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
        raise SetupError(
            f"NAME: {name!r} is not a Python identifier (letters, digits and '_', "
            "not first a digit or '_')"
        )
    return name


def write_strategy(
    name: str,
    *,
    template: str = TEMPLATES[0],
    directory: Path = Path("strategies"),
    tests: Path = Path("tests"),
    force: bool = False,
) -> NewStrategy:
    """Write the plugin `<directory>/<name>.py` and its test `<tests>/test_<name>.py`.

    Raises:
        SetupError: a bad name or template, or a file exists (without `force`), or a
            file cannot be written; then nothing is written.
    """
    check_name(name)
    if template not in TEMPLATES:
        raise SetupError(f"--from: {template!r} is not one of {', '.join(TEMPLATES)}")
    plugin = directory / f"{name}.py"
    test = tests / f"test_{name}.py"
    for path in (plugin, test):
        if (path.exists() or path.is_symlink()) and not force:
            raise SetupError(f"{path} exists; refusing to overwrite it (--force replaces it)")
    relative = Path(os.path.relpath(directory.resolve(), tests.resolve())).as_posix()
    title = name.replace("_", " ").capitalize()
    texts = {
        plugin: _PLUGIN.format(name=name, cls=_class_name(name), title=title),
        test: _TEST.format(name=name, strategies=json.dumps(relative)),
    }
    _write_all(texts)
    return NewStrategy(name, plugin, test)


def _write_all(texts: dict[Path, str]) -> None:
    """Each text to a temporary file beside its path, then all renamed into place.

    A failure before the renames leaves nothing (no plugin without its test); a rename
    replaces a link, never writes through it. The temporary names are `bot init`'s for
    its config (`init_dir._write_config`), and the files get the user's umask.
    """
    made: list[tuple[Path, Path]] = []
    try:
        for path, text in texts.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            made.append((temporary, path))
            temporary.write_text(text, encoding="utf-8")
        for temporary, path in made:
            os.replace(temporary, path)
    except OSError as exc:
        for temporary, _ in made:
            temporary.unlink(missing_ok=True)
        raise SetupError(f"{path}: {exc.strerror or exc}") from None


def config_entry(name: str) -> str:
    """The `[[strategies]]` entry that runs the new plugin (its params as in the test)."""
    return (
        "[[strategies]]\n"
        f'name = "{name}"\n'
        f'plugin = "{name}"\n'
        "schedule = { interval_seconds = 3600 }\n"
        'params = { from_token = "USDC", to_token = "APT", amount_per_order = "10", '
        'orders = 7, interval = "1 day" }\n'
    )
