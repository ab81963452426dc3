"""`check_settings`: what a loaded configuration still needs to run (plugins, token names)."""

from __future__ import annotations

from typing import Any

from bot.config import Settings
from bot.ops.config_check import check_settings, closest_symbols, token_names
from bot.paper.core.registry import PaperTokens

DCA: dict[str, Any] = {
    "name": "weekly-apt",
    "plugin": "recurring_dca",
    "schedule": {"interval_seconds": 3600},
    "params": {
        "from_token": "USDC",
        "to_token": "APT",
        "amount_per_order": "25",
        "interval": "1 day",
        "orders": 7,
    },
}
BOOK = PaperTokens.from_token_list().book


def settings(**values: Any) -> Settings:
    return Settings(**{"strategies": [DCA], **values})


def test_a_runnable_config_has_no_problem_and_no_warning() -> None:
    report = check_settings(
        settings(
            risk={"per_transaction_caps": {"USDC": "5", "APT": "1"}, "allowed_tokens": ["0xa"]}
        )
    )
    assert (report.ok, report.problems, report.warnings) == (True, [], [])


def test_every_token_name_of_risk_and_budgets_is_listed_with_its_key() -> None:
    config = settings(
        risk={
            "per_transaction_caps": {"USDC": "5"},
            "daily_spend_caps": {"APT": "1"},
            "allowed_tokens": ["USDT"],
            "pyth_feeds": {"WBTC": "0x" + "ab" * 32},
        },
        strategies=[
            {**DCA, "budget": {"USDC": "10"}},
            {**DCA, "name": "off", "enabled": False, "budget": {"NOPE": "1"}},
        ],
    )
    assert token_names(config) == [
        ("risk.per_transaction_caps.USDC", "USDC"),
        ("risk.daily_spend_caps.APT", "APT"),
        ("risk.pyth_feeds.WBTC", "WBTC"),
        ("risk.allowed_tokens", "USDT"),
        ("strategy 'weekly-apt' (recurring_dca): budget.USDC", "USDC"),
    ]


def test_unknown_tokens_in_paper_mode_are_problems_with_the_closest_symbols() -> None:
    report = check_settings(
        settings(
            risk={"daily_spend_caps": {"USDCC": "5"}, "allowed_tokens": ["APT", "APTT"]},
            strategies=[{**DCA, "budget": {"WETHH": "1"}}],
        ),
        BOOK,
    )
    assert report.problems == [
        "risk.daily_spend_caps.USDCC: unknown token 'USDCC' (closest: USDC, whUSDC, USDCso)",
        "risk.allowed_tokens: unknown token 'APTT' (closest: APT, ZAPT, tAPT)",
        "strategy 'weekly-apt' (recurring_dca): budget.WETHH: unknown token 'WETHH' "
        "(closest: WETH, whWETH, lzWETH)",
    ]
    assert report.warnings == []


def test_in_live_mode_an_unknown_name_is_a_warning_an_ambiguous_one_a_problem() -> None:
    report = check_settings(
        settings(mode="live", risk={"per_transaction_caps": {"USDCC": "5", "DAI": "1"}}), BOOK
    )
    assert report.warnings == [
        "risk.per_transaction_caps.USDCC: 'USDCC' is not in the packaged token list "
        "(closest: USDC, whUSDC, USDCso); not checked against the live list"
    ]
    assert len(report.problems) == 1
    assert report.problems[0].startswith(
        "risk.per_transaction_caps.DAI: symbol 'DAI' is ambiguous; use an address: "
    )
    assert "closest" not in report.problems[0]


def test_strategy_problems_come_from_the_shared_plugin_check() -> None:
    bad = [
        {**DCA, "name": "a", "plugin": "limit_ladderr"},
        {**DCA, "name": "b", "params": {**DCA["params"], "interval": "1 hr"}},
        {**DCA, "name": "c", "enabled": False, "plugin": "not_checked"},
    ]
    report = check_settings(settings(strategies=bad), BOOK)
    assert report.problems[0].startswith(
        "strategy 'a': unknown strategy plugin 'limit_ladderr' (closest: limit_ladder; available:"
    )
    assert report.problems[1].startswith(
        "strategy 'b' (recurring_dca): params.interval: '1 hr' is not a duration"
    )
    assert len(report.problems) == 2


def test_closest_symbols_ignore_case_and_give_up_on_nonsense() -> None:
    assert closest_symbols(BOOK, "usdcc")[0] == "USDC"
    assert closest_symbols(BOOK, "zzzzzzzzzzzz") == []
