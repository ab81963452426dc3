"""Which configured strategies a backtest runs beside the one it is asked about.

Live, every configured strategy runs, so a strategy whose `order_sources()` names other
instances (a `take_profit` with `entry_from`) sees their orders. A backtest of one
configured strategy runs those instances too — its *companions* — and theirs in turn, in
the config's order (docs/backtesting.md, "Companions").
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bot.config import StrategyEntry
from bot.engine.plugins import PluginError, build_strategy

__all__ = ["CompanionError", "companions_of"]


class CompanionError(ValueError):
    """A companion cannot be run: not configured, or its plugin refuses it; one line."""


def companions_of(
    entry: StrategyEntry, configured: Sequence[StrategyEntry], strategy_dirs: Sequence[Path]
) -> tuple[StrategyEntry, ...]:
    """The configured entries whose orders `entry` reads, directly or through another.

    Args:
        entry: the strategy backtested (its parameters as the run uses them).
        configured: the `[[strategies]]` entries (their order is kept).
        strategy_dirs: folders of user strategy plugins.

    Raises:
        CompanionError: an instance named is not configured, or cannot be built.
    """
    by_name = {e.name: e for e in configured}
    wanted: set[str] = set()
    pending = [entry]
    while pending:
        current = pending.pop()
        for name in _sources(current, strategy_dirs):
            if name == entry.name or name in wanted or name == current.name:
                continue
            found = by_name.get(name)
            if found is None:
                known = ", ".join(by_name) or "none"
                raise CompanionError(
                    f"strategy {current.name!r} reads the orders of {name!r} "
                    f"(order_sources()), which is not a configured strategy "
                    f"(configured: {known})"
                )
            wanted.add(name)
            pending.append(found)
    return tuple(e for e in configured if e.name in wanted)


def _sources(entry: StrategyEntry, strategy_dirs: Sequence[Path]) -> list[str]:
    """The instances `entry`'s strategy reads the orders of (`order_sources()`)."""
    try:
        strategy = build_strategy(entry, strategy_dirs)
    except PluginError as exc:
        raise CompanionError(exc.problems[0]) from None
    try:
        names = list(strategy.order_sources())
    except Exception as exc:  # plugin code: any failure is the plugin's, one line
        raise CompanionError(
            f"strategy {entry.name!r}: order_sources() failed: {type(exc).__name__}: {exc}"
        ) from None
    if not all(isinstance(name, str) for name in names):
        raise CompanionError(f"strategy {entry.name!r}: order_sources() must give names")
    return names
