"""The backtester's shortcuts answer exactly what the plain computations answer.

Price lookups search from their last answer, a pegged stable coin is a comparison, wire
values are made without text, repeated amounts share one `Decimal`, the column reader
reads a column at a time and groups rows by token without a full sort, a sweep hands
its task to each worker once, and a strategy's order list is kept in place. Each must
give the very same result as the long way.
"""

from __future__ import annotations

import functools
import multiprocessing
import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.aptos.tokens import Token
from bot.backtest import columns
from bot.backtest.context import HumanAmounts, _OrderList, _TickPrices, _wire, human
from bot.backtest.feed import load_feed
from bot.backtest.metrics import value_path
from bot.backtest.paths import ArrayPath, constant_path
from bot.backtest.result import BacktestResult
from bot.backtest.sweep import run_sweep
from bot.engine.strategy import Context, PriceInfo
from bot.money import format_decimal
from bot.paper.core.dca import DcaOrder
from bot.paper.core.prices import PriceBook, PricePath
from bot.paper.core.registry import PaperTokens
from bot.paper.core.series import load_series
from tests.support.backtest_results import USDC as USDC_KEY
from tests.support.backtest_results import buy, make_result, sell

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T0_US = int(T0.timestamp()) * 1_000_000
APT = "0x1::aptos_coin::AptosCoin"
APT_FA = "0xa"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
WBTC = "0x68844a0d7f2587e726ad0579f3d640865bb4162c08a4589eeda3f9689ec52a3d"


# --- price lookups --------------------------------------------------------------------------


def minute_path(count: int, seed: int) -> ArrayPath:
    rng = random.Random(seed)
    times = np.cumsum([rng.choice([1, 1, 1, 5, 90]) for _ in range(count)]) * 60_000_000
    coefs = np.array([rng.randint(1, 10**12) for _ in range(count)], dtype=np.int64)
    return ArrayPath(T0_US + times.astype(np.int64), coefs, -8)


@pytest.mark.parametrize("seed", range(4))
def test_lookups_in_any_order_answer_what_the_core_path_answers(seed: int) -> None:
    path = minute_path(3_000, seed)
    core = PricePath(path.times, path.prices)
    rng = random.Random(seed)
    moment = T0 - timedelta(minutes=3)
    for _ in range(4_000):  # small steps forward (slices), jumps, steps back, repeats
        step = rng.choice([0, 1, 7, 60, 61, 200, 1_440, -1, -60, -5_000])
        moment += timedelta(minutes=step, seconds=rng.choice([0, 0, 30]))
        assert path.at(moment) == core.at(moment)
        assert path.step_start(moment) == core.step_start(moment)
        assert path.point_index(moment) == core.point_index(moment)
        identity, price = path.anchor(moment)
        assert price == core.at(moment)
        assert (identity is None) == (core.step_start(moment) is None)


def test_an_anchor_changes_exactly_when_the_price_point_does() -> None:
    path = minute_path(500, 9)
    moments = [T0 + timedelta(seconds=17 * i) for i in range(-10, 3_000)]
    for earlier, later in pairwise(moments):
        same_point = path.step_start(earlier) == path.step_start(later)
        assert (path.anchor(earlier)[0] == path.anchor(later)[0]) == same_point


def test_a_pegged_coin_has_its_price_from_its_one_point_on() -> None:
    pegged = constant_path(Decimal(1), since_us=T0_US)
    assert pegged.at(T0 - timedelta(microseconds=1)) is None
    assert pegged.anchor(T0 - timedelta(microseconds=1)) == (None, None)
    assert pegged.at(T0) == pegged.at(T0 + timedelta(days=400)) == Decimal(1)
    assert pegged.step_start(T0 + timedelta(days=1)) == T0
    with pytest.raises(ValueError, match="naive"):
        pegged.at(datetime(2026, 1, 2))  # a naive time


# --- values as the strategy sees them ---------------------------------------------------


@settings(max_examples=3000)
@given(
    st.decimals(allow_nan=False)
    | st.builds(
        lambda c, e: Decimal(c).scaleb(e),
        st.integers(-(10**30), 10**30),
        st.integers(-40, 40),
    )
)
def test_wire_values_are_what_the_client_parses_off_the_text(value: Decimal) -> None:
    assert repr(_wire(value)) == repr(Decimal(format_decimal(value)))


def test_shared_human_amounts_are_the_exact_amounts() -> None:
    token = Token(decimals=6, symbol="USDC", fa_address=USDC)
    amounts = HumanAmounts(token, size=4)
    for units in [10_000_000, 5_000, 10_000_000, 0, 1, 7, 9, 10_000_000, 123_456_789]:
        assert repr(amounts(units)) == repr(human(units, token))
    assert amounts(10_000_000) is amounts(10_000_000)
    assert len(amounts.known) <= 4


# --- the column reader ----------------------------------------------------------------------


def messy_rows(seed: int, *, huge: bool = True) -> list[tuple[datetime, str, str]]:
    """Tokens interleaved or grouped, times out of order, repeats, awkward prices.

    `huge`: some prices are beyond int64 on the token's scale.
    """
    rng = random.Random(seed)
    tokens = rng.sample([APT, APT_FA, USDC, WBTC], rng.randint(1, 4))
    rows = []
    moment = T0
    for i in range(rng.randint(1, 1_500)):
        moment += timedelta(seconds=rng.choice([0, 60, 60, 3_600]))
        token = tokens[i % len(tokens)] if rng.random() < 0.6 else rng.choice(tokens)
        if huge and rng.random() < 0.03:
            price = f"{rng.randint(1, 10**25)}.{rng.randint(1, 999)}"  # beyond int64 scaled
        else:
            digits = "".join(str(rng.randint(0, 9)) for _ in range(rng.randint(0, 12)))
            price = f"{rng.choice([0, 1, 5, 99_999])}.{digits}1"
        rows.append((moment, token, price))
    if rng.random() < 0.3:
        rng.shuffle(rows)
    elif rng.random() < 0.3:
        rows.sort(key=lambda row: row[1])
    return rows


def write(path: Path, rows: list[tuple[datetime, str, str]]) -> Path:
    if path.suffix == ".parquet":
        stamps = pa.array([r[0] for r in rows], pa.timestamp("us", tz="UTC"))
        table = pa.table({"timestamp": stamps, "token": [r[1] for r in rows]})
        table = table.append_column("usdPrice", pa.array([r[2] for r in rows]))
        pq.write_table(table, path, row_group_size=random.Random(len(rows)).choice([50, 10**6]))
    else:
        lines = [f"{r[0].isoformat().replace('+00:00', 'Z')},{r[1]},{r[2]}" for r in rows]
        path.write_text("timestamp,token,usdPrice\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("seed", range(12))
def test_the_column_reader_reads_what_the_core_replays(
    tmp_path: Path, suffix: str, seed: int
) -> None:
    path = write(tmp_path / f"prices{suffix}", messy_rows(seed))
    key_of = PaperTokens.from_token_list().key_of  # the coin type and FA of APT merge
    feed = load_feed(path, key_of=key_of)
    paths, report = load_series(path, key_of=key_of)
    assert not feed.notes  # read column-wise, not by the row reader
    assert set(feed.series) == set(paths)
    for key, core in paths.items():
        series = feed.series[key]
        assert [series.time(i) for i in range(len(series))] == core.times
        assert [series.price(i) for i in range(len(series))] == core.prices
    assert (feed.rows, feed.duplicates) == (report.rows, report.duplicates)


@pytest.mark.parametrize("huge", [False, True])  # True: the threads give way to one pass
@pytest.mark.parametrize("seed", [0, 3, 5, 8])
def test_a_large_files_prices_read_on_two_threads_are_the_same(
    tmp_path: Path, seed: int, huge: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(columns, "_THREADED_ROWS", 1)  # every file with 2+ row groups
    rows = messy_rows(seed, huge=huge)
    path = tmp_path / "prices.parquet"
    stamps = pa.array([r[0] for r in rows], pa.timestamp("us", tz="UTC"))
    table = pa.table({"timestamp": stamps, "token": [r[1] for r in rows]})
    pq.write_table(table.append_column("usdPrice", pa.array([r[2] for r in rows])), path, 97)
    key_of = PaperTokens.from_token_list().key_of
    feed = load_feed(path, key_of=key_of)
    paths, report = load_series(path, key_of=key_of)
    for key, core in paths.items():
        series = feed.series[key]
        assert [series.time(i) for i in range(len(series))] == core.times
        assert [series.price(i) for i in range(len(series))] == core.prices
    assert (feed.rows, feed.duplicates, len(feed.series)) == (
        report.rows,
        report.duplicates,
        len(paths),
    )


def test_a_parquet_files_recording_flag_comes_from_its_statistics(tmp_path: Path) -> None:
    rows = 300
    native: list[str | None] = [None] * rows
    native[250] = "0.5"  # only in the second row group: not looked at (as before)
    table = pa.table(
        {
            "timestamp": pa.array(
                [T0 + timedelta(minutes=i) for i in range(rows)], pa.timestamp("us", tz="UTC")
            ),
            "token": [APT] * rows,
            "usdPrice": ["5.1"] * rows,
            "nativePrice": pa.array(native, pa.string()),
        }
    )
    for statistics in (True, False):
        later = tmp_path / f"later-{statistics}.parquet"
        pq.write_table(table, later, row_group_size=200, write_statistics=statistics)
        assert not load_feed(later).recorded
    native[5] = "0.5"
    first = tmp_path / "first.parquet"
    pq.write_table(table.set_column(3, "nativePrice", pa.array(native, pa.string())), first)
    assert load_feed(first).recorded


# --- sweeps ---------------------------------------------------------------------------------


class Unpicklable:
    """Stands for a large series: a task holding it must not be copied per combination."""

    def __reduce__(self) -> Any:
        raise TypeError("this task was pickled")


def one_buy(_held: Unpicklable, params: dict[str, Any]) -> BacktestResult:
    return make_result([buy(0, params["amount"], "1", "5")], ["5", "6"])


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="workers are spawned"
)
def test_a_forked_sweep_hands_its_task_to_each_worker_once_uncopied() -> None:
    task = functools.partial(one_buy, Unpicklable())
    rows = run_sweep(task, [{"amount": str(a)} for a in (5, 10, 15)], workers=2)
    assert [row.error for row in rows] == [None, None, None]
    assert sorted(row.params["amount"] for row in rows) == ["10", "15", "5"]


# --- metrics --------------------------------------------------------------------------------


def test_the_value_path_merges_fills_and_samples_in_time_order() -> None:
    fills = [
        buy(0, "100", "20", "5"),
        buy(2, "100", "25", "4"),
        buy(2, "50", "12.5", "4"),  # same time: after the one before it
        sell(3, "10", "60", "6"),
        buy(5, "100", "10", "10"),
    ]
    result = make_result(fills, ["5", "5", "4", "6", "8", "10"])
    in_order = value_path(result, fills, USDC_KEY, APT, points=10)
    shuffled = value_path(
        result, [fills[3], fills[0], fills[4], fills[1], fills[2]], USDC_KEY, APT, 10
    )
    assert shuffled == in_order
    assert [p.time.hour for p in in_order] == [0, 0, 1, 2, 2, 2, 3, 3, 4, 5, 5]
    assert in_order[-1].held == Decimal("57.5")  # 20 + 25 + 12.5 − 10 + 10
    assert in_order[-1].value_usd == Decimal("57.5") * 10 + 60


def test_tick_prices_read_lazily_are_the_prices_made_up_front() -> None:
    apt = Token(decimals=8, symbol="APT", coin_type=APT, fa_address=APT_FA)
    usdc = Token(decimals=6, symbol="USDC", fa_address=USDC)
    book = PriceBook(3, PaperTokens([apt, usdc]), T0)
    now = T0 + timedelta(days=2, minutes=7)
    identities = {key: (t.address, t.symbol) for t in (apt, usdc) for key in t.keys}
    up_front = {}
    for key, (address, symbol) in identities.items():
        usd = _wire(book.usd_visible(address, now))
        up_front[key] = PriceInfo(address, symbol, usd, _wire(book.change_24h(address, now)))
    lazy = _TickPrices(book, now, identities)
    assert lazy[APT_FA] == up_front[APT_FA]  # one read: that token only
    assert APT in lazy and "APT" not in lazy  # keys are identities, not symbols
    assert list(lazy) == list(up_front) and len(lazy) == len(up_front)
    assert dict(lazy.items()) == up_front and list(lazy.values()) == list(up_front.values())
    ctx = Context(strategy="s", now=now, prices=lazy, balances={}, orders=(), state={}, log=None)
    assert ctx.price("usdc") == up_front[USDC]  # by symbol, as strategies ask


# --- a strategy's order list --------------------------------------------------------------


class _Engine:
    """The part of a market's order engine `_OrderList` reads: orders by id."""

    def __init__(self) -> None:
        self.orders: dict[str, DcaOrder] = {}

    def get(self, order_id: str) -> DcaOrder:
        return self.orders[order_id]


@pytest.mark.parametrize("seed", range(30))
def test_the_order_list_kept_in_place_is_the_list_sorted_anew(seed: int) -> None:
    """Newest first, ties in creation order — also once a time goes back or changes.

    A time changes when a pending order is activated (`OrderEngineBase.activate`).
    """
    rng = random.Random(seed)
    usdc = Token(decimals=6, symbol="USDC", fa_address=USDC)
    apt = Token(decimals=8, symbol="APT", coin_type=APT)
    engine = _Engine()
    market: Any = type("Market", (), {"dca": engine, "limit": engine})()
    created: list[tuple[str, str]] = []
    listed = _OrderList(market, created, "s")
    at = T0
    for step in range(40):
        for _ in range(rng.choice([0, 1, 1, 3])):  # several orders at one moment, or none
            order_id = f"{step}-{len(created)}"
            back = rng.random() < 0.03  # now and then a time before the newest
            engine.orders[order_id] = DcaOrder(
                order_id=order_id,
                owner="w",
                recipient="w",
                sell=usdc,
                buy=apt,
                slippage=Decimal(1),
                created_at=at - timedelta(hours=5) if back else at,
                status="pending" if rng.random() < 0.05 else "active",
                seq=len(created),
                total=10,
                per_order=1,
                orders_total=10,
                interval=(1, "hour"),
            )
            created.append(("dca", order_id))
        pending = [o for o in engine.orders.values() if o.status == "pending"]
        if pending and rng.random() < 0.3:  # activated: its time is the activation's
            activated = rng.choice(pending)
            activated.status, activated.created_at = "active", at + timedelta(minutes=1)
        active = [o for o in engine.orders.values() if o.status == "active"]
        if active and rng.random() < 0.3:
            rng.choice(active).status = "filled"
        if rng.random() < 0.6:
            at += timedelta(minutes=rng.choice([1, 30]))
        in_creation = [engine.orders[order_id] for _kind, order_id in created]
        expected = sorted(in_creation, key=lambda o: o.created_at, reverse=True)  # stable
        got = listed.current()
        assert [(o.order_id, o.status) for o in got] == [(o.order_id, o.status) for o in expected]
