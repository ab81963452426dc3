"""`bot config check`: what a configuration needs to run, found without the network.

Loading the settings (`bot.config.load_settings`) checks each key on its own. This adds
what needs the plugins and the token list:

- every enabled `[[strategies]]` entry builds: its plugin is found and its `params`
  validate (`bot.engine.plugins.build_strategies`, the same function `bot once`,
  `bot run`, `bot strategies check` and `bot doctor` use);
- every token named by `[risk]` (`per_transaction_caps`, `daily_spend_caps`,
  `allowed_tokens`, `pyth_feeds`) and by the strategies' `budget`s resolves to exactly
  one token.

Tokens are looked up in the book given: by default the packaged token list
(`bot/paper/data/token-list.json`), offline. In paper mode that is the very list the paper
world trades, so a name it does not know is a problem. In live mode the provider's own list
is authoritative: `bot config check` passes it (`bot.app.live_tokens`, `complete=True`) and
an unknown name is a problem; checked against the packaged copy only (`--offline`, or the
provider unreachable), such a name is a warning ("not checked against the live list"). A
symbol shared by several tokens is a problem in both modes: the risk checker could not
tell which one a cap is for.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from bot.aptos.tokens import TokenBook, TokenLookupError
from bot.config import Settings
from bot.engine.plugins import PluginError, build_strategies

__all__ = ["CLOSEST", "ConfigReport", "check_settings", "closest_symbols", "token_names"]

CLOSEST: Final = 3
"""Known symbols suggested for an unknown token name."""


@dataclass
class ConfigReport:
    """What `check_settings` found: problems (exit 2) and warnings (shown, exit 0)."""

    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the configuration has no problem (warnings allowed)."""
        return not self.problems


def token_names(settings: Settings) -> list[tuple[str, str]]:
    """(where, name) of every token the config names in `[risk]` and in budgets.

    `where` is the key to show: `risk.per_transaction_caps.USDC`, `risk.allowed_tokens`,
    `strategy 'weekly-apt' (recurring_dca): budget.USDC`. Disabled strategies are left
    out, as their parameters are.
    """
    risk = settings.risk
    named: list[tuple[str, str]] = []
    for key, caps in (
        ("per_transaction_caps", risk.per_transaction_caps),
        ("daily_spend_caps", risk.daily_spend_caps),
        ("pyth_feeds", risk.pyth_feeds),
    ):
        named.extend((f"risk.{key}.{name}", name) for name in caps)
    named.extend(("risk.allowed_tokens", name) for name in risk.allowed_tokens)
    for entry in settings.strategies:
        if entry.enabled:
            where = f"strategy {entry.name!r} ({entry.plugin}): budget"
            named.extend((f"{where}.{name}", name) for name in entry.budget)
    return named


def closest_symbols(book: TokenBook, name: str, n: int = CLOSEST) -> list[str]:
    """The known symbols nearest to `name` (case-insensitive), best first."""
    by_lower: dict[str, str] = {}
    for token in book:
        for symbol in (token.provider_symbol, token.symbol):
            if symbol:
                by_lower.setdefault(symbol.lower(), symbol)
    matches = difflib.get_close_matches(name.strip().lower(), list(by_lower), n=n, cutoff=0.6)
    return [by_lower[m] for m in matches]


def _token_lines(
    named: Iterable[tuple[str, str]], book: TokenBook, *, live: bool
) -> tuple[list[str], list[str]]:
    problems: list[str] = []
    warnings: list[str] = []
    for where, name in named:
        try:
            book.find(name)
        except TokenLookupError as exc:
            closest = closest_symbols(book, name)
            if closest and closest[0].lower() == name.strip().lower():
                problems.append(f"{where}: {exc}")  # ambiguous: several tokens answer to it
                continue
            hint = f" (closest: {', '.join(closest)})" if closest else ""
            if live:
                warnings.append(
                    f"{where}: {name!r} is not in the packaged token list{hint}; "
                    "not checked against the live list"
                )
            else:
                problems.append(f"{where}: {exc}{hint}")
    return problems, warnings


def check_settings(
    settings: Settings, book: TokenBook | None = None, *, complete: bool = False
) -> ConfigReport:
    """Every problem that would stop `settings` from running, one line each.

    Args:
        settings: a configuration that loaded (`load_settings` found no problem).
        book: the tokens to resolve names against (default: the packaged token list).
        complete: `book` is the provider's own list (`bot.app.live_tokens`): in live
            mode too, a name it does not know is a problem, not a warning.
    """
    report = ConfigReport()
    try:
        build_strategies(settings.strategies, settings.scheduler.strategy_dirs)
    except PluginError as exc:
        report.problems.extend(exc.problems)
    if book is None:
        from bot.paper.core.registry import PaperTokens

        book = PaperTokens.from_token_list().book
    live = settings.mode == "live" and not complete
    problems, warnings = _token_lines(token_names(settings), book, live=live)
    report.problems.extend(problems)
    report.warnings.extend(warnings)
    return report
