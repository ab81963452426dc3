"""`bot.app.strategy_checks`: tokens, amounts and schedules checked before money moves."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.app.live_tokens import ProviderTokens, read_cache
from bot.app.strategy_checks import (
    PackagedTokens,
    TokenSourceError,
    amount_problem,
    check_strategy,
    longest_tick_gap,
)
from bot.aptos.tokens import Token, TokenBook
from bot.config import Schedule, StrategyEntry
from bot.engine.plugins import build_strategy

PAPER = PackagedTokens().book()
NOW = datetime(2026, 11, 25, 6, 0, tzinfo=UTC)


def entry(schedule: dict[str, Any] | None = None, **params: Any) -> StrategyEntry:
    base = {
        "from_token": "USDC",
        "to_token": "APT",
        "amount_per_order": "25",
        "interval": "1 day",
        "orders": 7,
    }
    return StrategyEntry(
        name="weekly-apt",
        plugin="recurring_dca",
        schedule=schedule or {"interval_seconds": 3600},
        params={**base, **params},
    )


def check(item: StrategyEntry, book: TokenBook = PAPER, **kw: Any) -> Any:
    return check_strategy(build_strategy(item), item, book, **kw)


def token(symbol: str, decimals: int, number: int) -> Token:
    return Token(decimals=decimals, symbol=symbol, fa_address=f"0x{number:x}")


FAKE_LIVE = TokenBook([token("APT", 8, 0xA), token("APTX", 8, 0xB1), token("USDC", 6, 0xC1)])
"""A provider's list as a test gives it: it knows APTX, which the packaged list does not."""


def test_the_example_strategy_passes_every_check() -> None:
    report = check(entry())
    assert (report.problems, report.warnings) == ([], [])


def test_an_unknown_token_is_named_with_its_parameter_and_the_closest_symbols() -> None:
    report = check(entry(to_token="APTT"))
    assert report.problems == [
        "weekly-apt: to_token 'APTT' is not a known token (did you mean APT, ZAPT, tAPT?)"
    ]


def test_a_faked_live_list_is_what_names_are_checked_against() -> None:
    report = check(entry(to_token="APTT"), FAKE_LIVE)
    assert report.problems == [
        "weekly-apt: to_token 'APTT' is not a known token (did you mean APT, APTX?)"
    ]
    assert check(entry(to_token="APTX"), FAKE_LIVE).problems == []
    assert check(entry(to_token="APTX")).problems[0].startswith("weekly-apt: to_token 'APTX'")


def test_against_an_incomplete_list_an_unknown_name_is_a_warning() -> None:
    report = check(entry(to_token="APTT"), complete=False)
    assert report.problems == []
    assert report.warnings == [
        "weekly-apt: to_token 'APTT' is not a known token (did you mean APT, ZAPT, tAPT?); "
        "not checked against the live list"
    ]


def test_an_amount_with_more_decimals_than_its_token_is_refused() -> None:
    report = check(entry(amount_per_order="10.0000001"))
    assert report.problems == [
        "weekly-apt: amount_per_order: amount 10.0000001 USDC has more than 6 decimals"
    ]


def test_an_amount_below_the_smallest_unit_is_refused_with_the_decimals() -> None:
    report = check(entry(amount_per_order="0.0000001"))
    assert report.problems == [
        "weekly-apt: amount_per_order: amount 0.0000001 USDC is below the smallest unit of "
        "USDC (0.000001, 6 decimals)"
    ]


def test_a_budget_is_checked_against_its_token_too() -> None:
    item = entry().model_copy(update={"budget": {"USDC": Decimal("1.1234567")}})
    assert check(item).problems == [
        "weekly-apt: budget.USDC: amount 1.1234567 USDC has more than 6 decimals"
    ]


def test_amount_problem_accepts_what_fits() -> None:
    usdc = token("USDC", 6, 0xC1)
    assert amount_problem(Decimal("0.000001"), usdc) is None
    assert amount_problem(Decimal("12.50"), usdc) is None


def test_a_dca_slice_shorter_than_the_ticks_is_warned_about() -> None:
    report = check(entry({"interval_seconds": 86_400}, interval="30 min"))
    assert report.problems == []
    assert report.warnings == [
        "weekly-apt: interval '30 minute' (each DCA slice) is shorter than the wait between "
        "its ticks (1 day): an order that ends is renewed only at the next tick; tick more "
        "often or lengthen the period"
    ]
    assert check(entry({"interval_seconds": 1800}, interval="30 min")).warnings == []


def test_a_cron_schedule_is_measured_by_its_longest_gap() -> None:
    weekdays = Schedule(cron="0 12 * * 1-5")
    assert longest_tick_gap(weekdays) == timedelta(days=3)
    report = check(entry({"cron": "0 12 * * 1-5"}, interval="1 day"))
    assert len(report.warnings) == 1 and "(3 days)" in report.warnings[0]


def test_a_limit_ladder_expiry_shorter_than_the_ticks_is_warned_about() -> None:
    ladder = StrategyEntry(
        name="ladder",
        plugin="limit_ladder",
        schedule={"interval_seconds": 7 * 86_400},
        params={
            "sell_token": "USDC",
            "buy_token": "APT",
            "rungs": 3,
            "spacing_percent": "2",
            "amount_per_rung": "10",
            "redrift_percent": "5",
            "expiry": "1 day",
        },
    )
    report = check(ladder)
    assert [w.split(" (")[0] for w in report.warnings] == ["ladder: expiry '1 day'"]


# --- the provider's list, cached -----------------------------------------------------------


class Provider:
    """A fake provider: counts the fetches, or fails like an unreachable one."""

    def __init__(self, book: TokenBook | None) -> None:
        self.book = book
        self.calls = 0

    async def fetch(self) -> TokenBook:
        self.calls += 1
        if self.book is None:
            raise OSError("connection refused")
        return self.book


def run(coroutine: Awaitable[TokenBook]) -> TokenBook:
    import asyncio

    async def wait() -> TokenBook:
        return await coroutine

    return asyncio.run(wait())


def test_the_live_list_is_fetched_once_then_read_from_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "provider-tokens.json"
    provider = Provider(FAKE_LIVE)
    first = ProviderTokens(provider.fetch, cache, NOW, run).book()
    later = ProviderTokens(provider.fetch, cache, NOW + timedelta(hours=1), run).book()
    assert provider.calls == 1
    assert first.find("APTX").decimals == later.find("APTX").decimals == 8
    assert read_cache(cache) is not None
    ProviderTokens(provider.fetch, cache, NOW + timedelta(hours=7), run).book()
    assert provider.calls == 2  # older than six hours: asked again


def test_an_unreachable_provider_is_said_not_hidden(tmp_path: Path) -> None:
    cache = tmp_path / "provider-tokens.json"
    cache.write_text("{not json", encoding="utf-8")  # a damaged cache counts as none
    with pytest.raises(TokenSourceError, match="cannot be had: connection refused"):
        ProviderTokens(Provider(None).fetch, cache, NOW, run).book()
