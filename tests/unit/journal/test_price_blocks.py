"""The journal's bulk price methods: `add_price_block` and `downsample_price_ticks`.

Their everyday use (a series import, the retention pass) is tested in tests/unit/history;
here are the refusals, the atomicity of a refused block and the chunk edges.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

import pytest

from bot.journal import Journal, JournalError, PriceTickRow, prices

from .conftest import APT, T0, USDC

LONG_APT = "0x" + "0" * 63 + "1::aptos_coin::AptosCoin"


def minutes(n: int) -> list[datetime]:
    return [T0 + timedelta(minutes=m) for m in range(n)]


@pytest.mark.parametrize("dialect", ["sqlite", "other"])
@pytest.mark.parametrize("chunk", [5000, 2])
def test_a_block_is_stored_once_and_what_was_there_stays(
    journal: Journal, monkeypatch: pytest.MonkeyPatch, dialect: str, chunk: int
) -> None:
    monkeypatch.setattr(prices, "_INSERT_CHUNK", chunk)
    journal.add_price_ticks([PriceTickRow(T0 + timedelta(minutes=2), APT, Decimal(99))])
    calls: list[int] = []
    if dialect == "other":  # the chunked path through add_price_ticks
        monkeypatch.setattr(journal.engine.dialect, "name", "mysql")
        add = journal.add_price_ticks
        monkeypatch.setattr(journal, "add_price_ticks", lambda rows: calls.append(1) or add(rows))
    times = minutes(5)
    values = [Decimal("5.000000000000000001") + m for m in range(5)]
    sources = ["import", "paper", None, "import", "provider"]
    assert journal.add_price_block(LONG_APT, "APT", times, values, sources) == (4, 1)
    assert journal.add_price_block(APT, "APT", times, values, sources) == (0, 5)
    ticks = journal.price_ticks(APT)
    assert [t.timestamp for t in ticks] == times
    assert [t.usd_price for t in ticks] == [*values[:2], Decimal(99), *values[3:]]
    assert [t.source for t in ticks] == ["import", "paper", None, "import", "provider"]
    assert {t.token for t in ticks} == {APT} and ticks[0].symbol == "APT"
    assert len(calls) == (0 if dialect == "sqlite" else 2 * -(-5 // chunk))


def test_a_block_with_one_bad_tick_stores_nothing(journal: Journal) -> None:
    times = minutes(3)
    naive = [*times[:2], datetime(2026, 1, 1, 0, 2)]  # the naive one
    with pytest.raises(JournalError, match="storing price ticks failed"):
        journal.add_price_block(APT, None, naive, [Decimal(1)] * 3, [None] * 3)
    with pytest.raises(JournalError, match="storing price ticks failed"):
        journal.add_price_block(
            APT, None, times, [Decimal(1), Decimal(2), Decimal("NaN")], [None] * 3
        )
    assert journal.price_ticks(APT) == []


def test_a_malformed_block_is_refused_before_any_write(journal: Journal) -> None:
    times = minutes(2)
    with pytest.raises(JournalError, match="2 times, 1 prices, 2 sources"):
        journal.add_price_block(APT, None, times, [Decimal(1)], [None, None])
    with pytest.raises(JournalError, match="source: not a source name: 'From a friend'"):
        journal.add_price_block(APT, None, times, [Decimal(1)] * 2, ["paper", "From a friend"])
    with pytest.raises(JournalError, match="token: "):
        journal.add_price_block("APT", None, times, [Decimal(1)] * 2, [None, None])
    assert journal.price_ticks(APT) == []


def test_a_read_only_or_closed_journal_refuses_both(url: str, journal: Journal) -> None:
    one = ([T0], [Decimal(1)], [None])
    with Journal.open(url, readonly=True) as reader:
        with pytest.raises(JournalError, match="read-only: cannot store price ticks"):
            reader.add_price_block(APT, None, *one)
        with pytest.raises(JournalError, match="read-only: retention cannot delete ticks"):
            reader.downsample_price_ticks(T0, timedelta(hours=1))
    journal.close()
    with pytest.raises(JournalError, match="closed"):
        journal.add_price_block(APT, None, *one)
    with pytest.raises(JournalError, match="closed"):
        journal.downsample_price_ticks(T0, timedelta(hours=1))


def test_downsampling_refuses_a_naive_cutoff_and_an_empty_bucket(journal: Journal) -> None:
    with pytest.raises(JournalError, match="cutoff: "):
        journal.downsample_price_ticks(datetime(2026, 1, 1), timedelta(hours=1))
    with pytest.raises(JournalError, match="bucket: must be positive"):
        journal.downsample_price_ticks(T0, timedelta(0))


@pytest.mark.parametrize("batch", [20_000, 4, 1])
def test_downsampling_walks_tokens_in_batches_and_keeps_each_buckets_first(
    journal: Journal, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    monkeypatch.setattr(prices, "_DOWNSAMPLE_BATCH", batch)
    monkeypatch.setattr(prices, "_DELETE_CHUNK", 2)
    times = minutes(10)  # two 5-minute buckets per token
    for token in (APT, USDC):
        journal.add_price_block(token, None, times, [Decimal(1)] * 10, [None] * 10)
    cutoff = T0 + timedelta(minutes=9)  # the tenth tick of each token is not old
    assert journal.downsample_price_ticks(cutoff, timedelta(minutes=5)) == (14, 4)
    kept = [T0, T0 + timedelta(minutes=5), T0 + timedelta(minutes=9)]
    assert [t.timestamp for t in journal.price_ticks(APT)] == kept
    assert [t.timestamp for t in journal.price_ticks(USDC)] == kept
    assert journal.downsample_price_ticks(cutoff, timedelta(minutes=5)) == (0, 4)
