"""The small parts: durations, which tokens get recorded, storing a long series at once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.aptos.address import split_names
from bot.history.selection import choose_tokens, offline_token
from bot.history.ticks import store_block
from bot.history.units import parse_seconds, parse_token_values
from bot.journal import Journal, PriceTickRow
from bot.paper.core.registry import PaperTokens
from bot.paper.core.series import SeriesBlock

BOOK = PaperTokens.from_token_list().book
APT = BOOK.find("APT")
USDC = BOOK.find("USDC")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30), ("5m", 300), ("1h", 3600), ("60", 60), (" 2D ", 172_800), ("5 minutes", 300)],
)
def test_durations(text: str, seconds: int) -> None:
    assert parse_seconds(text) == seconds


@pytest.mark.parametrize("text", ["", "0", "0s", "1.5m", "-5", "5 lightyears", "m"])
def test_bad_durations_name_the_field(text: str) -> None:
    with pytest.raises(ValueError, match=r"^--every: .* is not a duration: "):
        parse_seconds(text, field="--every")


def test_name_lists_keep_generic_coin_types_whole() -> None:
    generic = "0x1::pool::LP<0x1::aptos_coin::AptosCoin, 0x2::usdc::USDC>"
    assert split_names(f"APT, {generic},,USDC ") == ["APT", generic, "USDC"]


def test_token_values_are_exact_and_positive() -> None:
    assert parse_token_values(["APT=5.000000000000000001,USDC=1", "WETH=3000"], field="-x") == {
        "APT": Decimal("5.000000000000000001"),
        "USDC": Decimal(1),
        "WETH": Decimal(3000),
    }
    for bad, why in (("APT", "TOKEN=VALUE"), ("APT=0", "> 0"), ("APT=abc", "not a number")):
        with pytest.raises(ValueError, match=f"--start-price '{bad}': .*{why}"):
            parse_token_values([bad], field="--start-price")


def test_offline_tokens_come_from_the_packaged_list_or_are_addresses() -> None:
    assert offline_token("apt") == (APT.address, "APT", APT)
    assert offline_token("0x" + "ab" * 32) == ("0x" + "ab" * 32, None, None)
    with pytest.raises(LookupError, match="give its coin type or FA address"):
        offline_token("NOPE")


def test_without_a_list_the_declared_tokens_are_recorded_once() -> None:
    declared = ["USDC", "APT", APT.address, "usdc", "weekly-apt"]  # names, not all tokens
    choice = choose_tokens(BOOK, [], declared)
    assert [t.symbol for t in choice.tokens] == ["USDC", "APT"]  # each once
    assert choice.problems == []


def test_an_explicit_list_wins_and_unknown_names_are_problems() -> None:
    choice = choose_tokens(BOOK, ["APT", "nope", APT.fa_address or ""], ["USDC"])
    assert [t.symbol for t in choice.tokens] == ["APT"]  # the FA spelling is the same token
    assert choice.problems == ["unknown token 'nope'"]


def test_a_long_series_is_stored_at_once_and_a_second_time_changes_nothing(
    tmp_path: Path,
) -> None:
    base = (T0 - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    block = SeriesBlock(
        APT.address,
        [base + m * 60_000_000 for m in range(1000)],
        [Decimal("5.000000000000000001") + m for m in range(1000)],
        "APT",
    )
    with Journal.open(f"sqlite:///{tmp_path / 'bot.db'}") as journal:
        journal.add_price_ticks([PriceTickRow(T0, APT.address, Decimal(99))])  # already there
        assert store_block(journal, block) == (999, 1)
        assert store_block(journal, block) == (0, 1000)
        ticks = journal.price_ticks(APT.address)
    assert len(ticks) == 1000
    assert ticks[0].usd_price == Decimal(99)  # what was stored first stays
    assert ticks[1].usd_price == Decimal("6.000000000000000001")
    assert ticks[-1].timestamp == T0 + timedelta(minutes=999)
    assert ticks[-1].symbol == "APT"
