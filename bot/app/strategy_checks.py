"""What a configured strategy names, checked before any money moves (issue 21, item 3).

Pure: no network, no files. Given a built strategy, its `[[strategies]]` entry and the
tokens known (a `TokenBook` from a `TokenSource`), `check_strategy` finds:

- every token the strategy declares (`Strategy.tokens()`) that the book does not know,
  with the closest known symbols (`weekly-apt: to_token 'APTT' is not a known token (did
  you mean APT, ZAPT, tAPT?)`), or a symbol several tokens share;
- every amount finer than its token's decimals or below its smallest unit: the amount
  parameters (`amount`, `amount_per_order`, `amount_per_rung`… — named `amount*`, in the
  token spent: `from_token` or `sell_token`) and the entry's `budget`;
- periods that cannot work with the tick schedule: a DCA slice `interval` or an order
  `expiry` shorter than the longest wait between two ticks (warnings: the order ends and
  nothing renews it until the next tick).

Unknown tokens and bad amounts are problems (the CLI exits 2); schedule mismatches are
warnings. Where the tokens come from is the caller's: `PackagedTokens` (the paper
world's list; the paper mode's whole truth) or the provider's list (`bot.app.live_tokens`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Final, Protocol

from bot.aptos.tokens import Token, TokenBook, TokenLookupError
from bot.config import Schedule, StrategyEntry
from bot.engine.strategy import Strategy, needed_tokens, period_length
from bot.money import MoneyError, format_decimal, to_base_units
from bot.ops.config_check import closest_symbols

__all__ = [
    "SPENT_TOKEN_PARAMS",
    "PackagedTokens",
    "StrategyReport",
    "TokenSource",
    "TokenSourceError",
    "amount_problem",
    "check_strategies",
    "check_strategy",
    "longest_tick_gap",
]

SPENT_TOKEN_PARAMS: Final = ("from_token", "sell_token")
"""The parameters naming the token the `amount*` parameters are counted in (first found)."""
_ORDER_PERIODS: Final = {
    "interval": "each DCA slice",
    "expiry": "each order's life",
}
"""Period parameters compared with the tick schedule, and what they measure."""
_CRON_SAMPLES: Final = 400
_CRON_FROM: Final = datetime(2024, 1, 1, tzinfo=UTC)
"""Cron gaps are measured over a fixed stretch of fires (a leap year's start), not from now."""


class TokenSourceError(Exception):
    """The token list cannot be had (the provider unreachable, a malformed answer)."""


class TokenSource(Protocol):
    """Where the known tokens come from: the packaged list, the provider's, a test's."""

    label: str
    """How the list is named in messages (`packaged token list`, `provider's token list`)."""

    def book(self) -> TokenBook:
        """The known tokens.

        Raises:
            TokenSourceError: the list cannot be had (one line saying why).
        """
        ...


class PackagedTokens:
    """The token list packaged with the bot, the one the paper world trades."""

    label = "packaged token list"

    def book(self) -> TokenBook:
        """The packaged list's tokens (read once per call)."""
        from bot.paper.core.registry import PaperTokens

        return PaperTokens.from_token_list().book


@dataclass
class StrategyReport:
    """What `check_strategy` found: problems (refuse) and warnings (say, go on)."""

    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def extend(self, other: StrategyReport) -> None:
        """Add another report's lines after these."""
        self.problems.extend(other.problems)
        self.warnings.extend(other.warnings)


def _param_of(strategy: Strategy, name: str) -> str:
    """The parameter that names `name` (`to_token`, `weights`), or `token` when none does."""
    for key, value in strategy.params:
        if value == name:
            return key
        if isinstance(value, list | tuple | dict) and name in value:
            return key
    return "token"


def _unknown_line(instance: str, where: str, name: str, book: TokenBook) -> tuple[str, bool]:
    """(the line, whether the name is unknown rather than ambiguous); ("", False) if found."""
    try:
        book.find(name)
    except TokenLookupError as exc:
        closest = closest_symbols(book, name)
        if closest and closest[0].lower() == name.strip().lower():
            return f"{instance}: {where} {exc}", False  # several tokens answer to it
        hint = f" (did you mean {', '.join(closest)}?)" if closest else ""
        return f"{instance}: {where} {name!r} is not a known token{hint}", True
    return "", False


def amount_problem(amount: Decimal, token: Token) -> str | None:
    """Why `amount` of `token` cannot be sent, or None when it can.

    `0.0000001 USDC is below the smallest unit of USDC (0.000001, 6 decimals)` for a
    positive amount that rounds to nothing; `10.0000001 USDC has more than 6 decimals`.
    """
    shown = f"{format_decimal(amount)} {token.symbol}"
    smallest = Decimal(1).scaleb(-token.decimals)
    if 0 < amount < smallest:
        return (
            f"{shown} is below the smallest unit of {token.symbol} "
            f"({format_decimal(smallest)}, {token.decimals} decimals)"
        )
    try:
        to_base_units(amount, token.decimals)
    except MoneyError:
        return f"{shown} has more than {token.decimals} decimals"
    return None


def _amounts(strategy: Strategy, entry: StrategyEntry) -> Iterator[tuple[str, Decimal, str]]:
    """(where, amount, token name) of the strategy's amount parameters and its budget."""
    params = dict(strategy.params)
    spent = next((params[k] for k in SPENT_TOKEN_PARAMS if isinstance(params.get(k), str)), None)
    if spent is not None:
        for key, value in params.items():
            if key.startswith("amount") and isinstance(value, Decimal):
                yield key, value, spent
    for name, value in entry.budget.items():
        yield f"budget.{name}", value, name


def longest_tick_gap(schedule: Schedule) -> timedelta:
    """The longest wait between two ticks of `schedule` (for cron, over a year of fires)."""
    if schedule.interval_seconds is not None:
        return timedelta(seconds=schedule.interval_seconds)
    from bot.cron import cron_trigger

    trigger = cron_trigger(schedule.cron or "")
    longest = timedelta(0)
    previous: datetime | None = None
    moment = _CRON_FROM
    for _ in range(_CRON_SAMPLES):
        fire: Any = trigger.get_next_fire_time(previous, moment)
        if fire is None:
            break
        if previous is not None:
            longest = max(longest, fire - previous)
        previous, moment = fire, fire + timedelta(microseconds=1)
    return longest


def _every(length: timedelta) -> str:
    seconds = int(length.total_seconds())
    for unit, size in (("week", 604_800), ("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds % size == 0 and seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count > 1 else ''}"
    return f"{seconds} s"


def _schedule_lines(strategy: Strategy, entry: StrategyEntry) -> list[str]:
    gap = longest_tick_gap(entry.schedule)
    lines: list[str] = []
    for key, what in _ORDER_PERIODS.items():
        value = getattr(strategy.params, key, None)
        if not isinstance(value, str):
            continue
        try:
            length = period_length(value)
        except ValueError:
            continue
        if length < gap:
            lines.append(
                f"{entry.name}: {key} {value!r} ({what}) is shorter than the wait between "
                f"its ticks ({_every(gap)}): an order that ends is renewed only at the next "
                "tick; tick more often or lengthen the period"
            )
    return lines


def check_strategy(
    strategy: Strategy, entry: StrategyEntry, book: TokenBook, *, complete: bool = True
) -> StrategyReport:
    """Every unknown token, unsendable amount (problems) and schedule mismatch (warnings).

    Args:
        strategy: the entry's strategy, built (`bot.engine.plugins.build_strategy`).
        entry: its `[[strategies]]` entry (schedule, budget).
        book: the tokens known (`TokenSource.book()`).
        complete: `book` lists every token that can trade (paper's list in paper mode,
            the provider's live). False (live, checked against the packaged list only):
            a name it does not know is a warning, not a problem.
    """
    report = StrategyReport()
    known: dict[str, Token] = {}
    for name in needed_tokens(strategy):
        line, unknown = _unknown_line(entry.name, _param_of(strategy, name), name, book)
        if not line:
            known[name] = book.find(name)
        elif unknown and not complete:
            report.warnings.append(f"{line}; not checked against the live list")
        else:
            report.problems.append(line)
    for where, amount, name in _amounts(strategy, entry):
        token = known.get(name)
        if token is None:
            try:
                token = book.find(name)
            except TokenLookupError:
                continue  # said above (a strategy token) or by the config check (budget)
        problem = amount_problem(amount, token)
        if problem:
            report.problems.append(f"{entry.name}: {where}: amount {problem}")
    report.warnings.extend(_schedule_lines(strategy, entry))
    return report


def check_strategies(
    pairs: Iterable[tuple[Strategy, StrategyEntry]], book: TokenBook, *, complete: bool = True
) -> StrategyReport:
    """`check_strategy` of each (strategy, entry), the lines in order."""
    report = StrategyReport()
    for strategy, entry in pairs:
        report.extend(check_strategy(strategy, entry, book, complete=complete))
    return report
