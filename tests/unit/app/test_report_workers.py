"""A report split across forked processes gives the figures of one process, exactly.

The journal (a real SQLite file, and the same on PostgreSQL) has what a split must keep
apart and bring together: DCAs of two strategies, an order linked to no strategy, an
open order holding a token only another strategy traded (its value needs that one's
prices), a strategy of swaps and one of gas alone, gas of unknown price, and prices that
end at different moments per token (the moment of value is the latest of all parts).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import bot.app.report_workers as workers
from bot.accounting import BucketPeriod, CostMethod
from bot.app.errors import SetupError
from bot.app.report import ReportRequest, build_report
from bot.app.report_workers import may_fork, parts_by_weight, run_in_parts
from bot.journal import Journal
from bot.journal.views import (
    FillRecord,
    OrderObservation,
    OrderSnapshot,
    PriceTickRow,
    SwapFillRecord,
)
from tests.support.trade_journal import APT, USDC, WALLET

T0 = datetime(2026, 3, 28, 20, tzinfo=UTC)  # a daylight-saving change in Europe next day
GUI = "0xe4ccb6d39136469f376242c31b34d10515c8eaaa38092f804db8e08a8f53c5b2::assets_v1::EchoCoin002"
WBTC = "0x68844a0d7f2587e726ad0579f3d640865bb4162c08a4589eeda3f9689ec52a3d"
KEEPER = "0x" + "7a" * 32
MINUTE, HOUR = timedelta(minutes=1), timedelta(hours=1)

SPLIT = {"processes": 3, "split_from": 0}
REQUESTS = [
    ReportRequest(),
    ReportRequest(period=BucketPeriod.DAY),
    ReportRequest(period=BucketPeriod.WEEK, zone="Europe/Paris", method=CostMethod.AVERAGE),
    ReportRequest(start=T0 + timedelta(hours=30), end=T0 + timedelta(days=2)),
    ReportRequest(end=T0 - timedelta(days=1)),  # before anything: nothing traded
]


def _slices(prefix: str, count: int, start: datetime, price: str) -> list[FillRecord]:
    fills = [FillRecord(f"{prefix}c", "created", 1, Decimal(10 * count), time=start)]
    for n in range(count):
        fills.append(
            FillRecord(
                f"{prefix}f{n}",
                "filled",
                n + 2,
                Decimal(10),
                Decimal(price) + Decimal(n).scaleb(-3),
                Decimal("0.02") if n % 2 else None,
                start + timedelta(hours=5 * n),
                KEEPER,
            )
        )
    return fills


def _order(
    index: int, strategy: str | None, sold: str, bought: str, status: str = "active"
) -> OrderSnapshot:
    return OrderSnapshot(
        kind="dca" if index % 2 == 0 else "limit",
        order_id=f"0xorder{index}",
        wallet=WALLET,
        from_token=sold,
        to_token=bought,
        status=status,
        amount_total=Decimal(100),
        strategy=strategy,
        provider_created_at=T0,
    )


def _observed(
    index: int,
    strategy: str | None,
    sold: str,
    bought: str,
    fills: list[FillRecord],
    status: str = "active",
) -> OrderObservation:
    return OrderObservation(_order(index, strategy, sold, bought, status), fills=fills)


def _tx(n: int) -> str:
    return "0x" + f"{n:064x}"


def _write(url: str, *, untraded_wbtc: bool = False) -> None:
    """The journal above at `url`; `untraded_wbtc`: an order whose only fill moved nothing."""
    with Journal.open(url) as writer:
        observed = [
            OrderObservation(_order(0, "dca-apt", USDC, APT), fills=_slices("0xa", 6, T0, "1.9")),
            OrderObservation(
                _order(2, "dca-apt", USDC, APT),
                fills=_slices("0xb", 5, T0 + timedelta(hours=2), "2.1"),
            ),
            OrderObservation(
                _order(4, "dca-gui", USDC, GUI),
                fills=_slices("0xg", 7, T0 + timedelta(hours=1), "40"),
            ),
            OrderObservation(_order(1, None, APT, USDC), fills=_slices("0xn", 3, T0, "5.2")),
            # Open, holding GUI, which only dca-gui trades: valued at GUI's price.
            OrderObservation(_order(3, "ladder", GUI, USDC), fills=[]),
            OrderObservation(
                _order(5, "ladder", USDC, APT, "completed"), fills=_slices("0xl", 2, T0, "0.2")
            ),
        ]
        if untraded_wbtc:
            nothing = FillRecord("0xw1", "filled", 2, Decimal(0), Decimal(0), None, T0, KEEPER)
            observed.append(OrderObservation(_order(6, "dca-btc", USDC, WBTC), fills=[nothing]))
            observed.append(OrderObservation(_order(7, "ladder", WBTC, USDC), fills=[]))
        writer.observe_orders(observed, observed_at=T0 + timedelta(days=3), source="poll")
        writer.add_price_ticks(
            [
                PriceTickRow(T0 + timedelta(minutes=37 * n), token, Decimal(price) + n)
                for n in range(60)
                for token, price in ((APT, "5.5"), (USDC, "1"), (WBTC, "60000"))
            ]
            + [
                PriceTickRow(T0 + timedelta(minutes=41 * n), GUI, Decimal("0.025"))
                for n in range(90)
            ]
        )
        swap = writer.record_intent("dip", WALLET, "swap", "s", {}, at=T0).id
        aborted = writer.record_intent("dip", WALLET, "swap", "a", {}, at=T0).id
        create = writer.record_intent("gas-only", WALLET, "create_dca", "c", {}, at=T0).id
        old = writer.record_intent("gas-only", WALLET, "create_limit", "o", {}, at=T0).id
        for n, intent, state, price in (
            (1, swap, "committed", 100),
            (2, aborted, "failed", 100),
            (3, create, "committed", 100),
            (4, old, "committed", None),  # before the journal kept gas prices: unknown
        ):
            writer.record_transaction(_tx(n), WALLET, n, json.dumps({}), at=T0, intent_id=intent)
            writer.update_transaction(
                _tx(n),
                state,
                at=T0 + timedelta(hours=n),
                gas_used=1000 * n,
                gas_unit_price=price,
                committed_at=T0 + timedelta(hours=n),
            )
        writer.record_swap_fill(
            SwapFillRecord(swap, _tx(1), USDC, Decimal(100), APT, Decimal("18.9"), "chain", T0),
            at=T0,
        )


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'bot.db'}"
    return str(request.getfixturevalue("pg_database_url"))


@pytest.fixture
def splits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many parts each report was split into (an empty list: none was split)."""
    seen: list[int] = []
    real = workers.run_in_parts

    def counted(parts: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(len(parts))
        return real(parts, *args, **kwargs)

    monkeypatch.setattr(workers, "run_in_parts", counted)
    yield seen


def test_a_split_report_is_the_report_of_one_process(url: str, splits: list[int]) -> None:
    _write(url)
    with Journal.open(url, readonly=True, wallet=WALLET) as journal:
        for request in REQUESTS:
            one = build_report(journal, request, ["idle"])
            split = build_report(journal, request, ["idle"], **SPLIT)
            assert split == one, request
        whole = build_report(journal, ReportRequest(), [], **SPLIT)
    assert splits == [3] * (len(REQUESTS) + 1)
    assert set(whole.summaries) == {"(no strategy)", "dca-apt", "dca-gui", "dip", "ladder"}
    [held] = [lock for lock in whole.locked["ladder"] if lock.token == GUI]
    assert held.usd is not None  # GUI priced in ladder's part, though dca-gui traded it
    assert whole.gas_unknown == (_tx(4),)


def test_a_part_that_priced_what_nobody_traded_gives_way_to_one_process(
    tmp_path: Path, splits: list[int]
) -> None:
    """dca-btc's only fill moved nothing: one process prices no WBTC, so the split part
    that looked it up for ladder's open WBTC order must not either."""
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    _write(url, untraded_wbtc=True)
    with Journal.open(url, readonly=True, wallet=WALLET) as journal:
        one = build_report(journal, ReportRequest(), [])
        split = build_report(journal, ReportRequest(), [], **SPLIT)
    assert splits == [3] and split == one
    [wbtc] = [lock for lock in one.locked["ladder"] if lock.token == WBTC]
    assert wbtc.usd is None


def test_a_report_is_not_split_below_its_threshold_or_for_one_strategy(
    tmp_path: Path, splits: list[int]
) -> None:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    _write(url)
    with Journal.open(url, readonly=True, wallet=WALLET) as journal:
        build_report(journal, ReportRequest(), [], processes=3)  # 23 fills: under 25,000
        build_report(journal, ReportRequest(strategy="dca-apt"), [], **SPLIT)
        build_report(journal, ReportRequest(), [], processes=1, split_from=0)
    assert splits == []


def test_an_unknown_strategy_is_refused_as_in_one_process(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    _write(url)
    with (
        Journal.open(url, readonly=True, wallet=WALLET) as journal,
        pytest.raises(SetupError, match="unknown strategy 'nope'"),
    ):
        build_report(journal, ReportRequest(strategy="nope"), [], **SPLIT)


def test_only_a_process_that_may_fork_splits(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    _write(url)
    with Journal.open(url, readonly=True) as journal:
        assert may_fork(journal)
        stop = threading.Event()
        other = threading.Thread(target=stop.wait)
        other.start()
        try:
            assert not may_fork(journal)  # a lock another thread holds would stay held
        finally:
            stop.set()
            other.join()
    with Journal.open("sqlite://") as memory:  # a child's connection would see nothing
        assert not may_fork(memory)


def test_strategies_are_dealt_heaviest_first_to_the_lightest_part() -> None:
    weights = {"apt": 52_560, "btc": 26_280, "grid": 21_160, "gas": 0}
    assert parts_by_weight(weights, 2) == [["apt"], ["btc", "grid", "gas"]]
    assert parts_by_weight(weights, 3) == [["apt"], ["btc"], ["grid", "gas"]]
    assert parts_by_weight(weights, 8) == [["apt"], ["btc"], ["grid", "gas"]]
    assert parts_by_weight({"a": 0, "b": 0}, 4) == [["a", "b"]]
    assert parts_by_weight({}, 2) == []


def _parts_run(die: Callable[[int, str], None] | None = None) -> Any:
    """Parts 1..4: each loads p, tells p * 10; all agree on the sum; each finishes p + sum."""
    parent = os.getpid()

    def load(part: int) -> tuple[int, int]:
        if die is not None and os.getpid() != parent:
            die(part, "load")
        return part, part * 10

    def finish(part: int, agreed: int) -> tuple[int, int]:
        if die is not None and os.getpid() != parent:
            die(part, "finish")
        return part + agreed, os.getpid()

    return run_in_parts([1, 2, 3, 4], load, sum, finish)


def test_parts_run_in_children_and_come_back_in_order() -> None:
    done = _parts_run()
    assert done.told == 100
    assert [value for value, _ in done.values] == [101, 102, 103, 104]
    pids = [pid for _, pid in done.values]
    assert pids[0] == os.getpid() and len(set(pids)) == 4  # one child each for 2..4
    assert _no_child_left()


def _no_child_left() -> bool:
    """Every child of this process reaped (no zombie): waiting finds none."""
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.mark.parametrize("step", ["load", "finish"])
def test_a_child_that_dies_has_its_part_done_here(step: str) -> None:
    def die(part: int, at: str) -> None:
        if part == 3 and at == step:
            os._exit(9)  # as a kill would: no answer

    done = _parts_run(die)
    assert done.told == 100 and [value for value, _ in done.values] == [101, 102, 103, 104]
    assert done.values[2][1] == os.getpid()
    assert _no_child_left()


def test_a_child_killed_while_the_others_load_has_its_part_done_here(tmp_path: Path) -> None:
    """Part 2 has told and waits; it is killed while this process still loads part 1."""
    parent = os.getpid()
    loaded = tmp_path / "part-2-loaded"

    def load(part: int) -> tuple[int, int]:
        if os.getpid() != parent:
            loaded.touch()  # it tells at once after this
        elif part == 1:
            deadline = time.monotonic() + 10
            while not loaded.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.2)
            [child] = multiprocessing.active_children()
            child.kill()
            child.join()
        return part, part * 10

    def finish(part: int, agreed: int) -> tuple[int, int]:
        return part + agreed, os.getpid()

    done = run_in_parts([1, 2], load, sum, finish)
    assert loaded.exists() and done.told == 30
    assert done.values == [(31, parent), (32, parent)]
    assert _no_child_left()


def test_parts_that_cannot_be_forked_are_done_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """No process left to fork (a container's limit): what is not shared is done here."""
    from multiprocessing import context as forking

    real = forking.ForkProcess._Popen
    forks: list[object] = []

    def limited(process: Any) -> Any:
        forks.append(process)
        if len(forks) > 1:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return real(process)

    monkeypatch.setattr(forking.ForkProcess, "_Popen", staticmethod(limited))
    done = _parts_run()
    assert done.told == 100 and [value for value, _ in done.values] == [101, 102, 103, 104]
    pids = [pid for _, pid in done.values]
    assert pids[1] != os.getpid() and pids[0] == pids[2] == pids[3] == os.getpid()
    assert len(forks) == 2  # after a failed fork, no other is tried
    assert _no_child_left()


def test_an_os_error_of_a_childs_own_work_is_raised_here() -> None:
    """Not taken for a dead child (its part silently done again here)."""

    def fail(part: int, at: str) -> None:
        if part == 2 and at == "finish":
            raise FileNotFoundError(2, "No such file or directory", "prices.csv")

    with pytest.raises(FileNotFoundError, match=r"prices\.csv"):
        _parts_run(fail)
    assert _no_child_left()


def test_a_result_that_cannot_be_sent_is_raised_here() -> None:
    parent = os.getpid()

    def finish(part: int, agreed: int) -> Any:
        return part if os.getpid() == parent else (lambda: part)  # no pickle of a lambda

    with pytest.raises(Exception, match="pickle"):
        run_in_parts([1, 2], lambda part: (part, part), sum, finish)
    assert _no_child_left()


def test_an_error_in_a_child_is_raised_here_and_every_child_is_stopped() -> None:
    def fail(part: int, at: str) -> None:
        if part == 2 and at == "finish":
            raise SetupError(f"part {part} cannot be read")
        if part == 4 and at == "finish":
            threading.Event().wait(60)  # still at work when the error comes

    with pytest.raises(SetupError, match="part 2 cannot be read"):
        _parts_run(fail)
    assert _no_child_left()


class _Unpicklable(Exception):
    def __reduce__(self) -> Any:
        raise TypeError("no")


class _TwoArguments(Exception):
    """Pickles, but cannot be made again from its pickle (`__init__` wants two)."""

    def __init__(self, what: str, where: str) -> None:
        super().__init__(f"{what} at {where}")


@pytest.mark.parametrize(
    "error", [_Unpicklable("the journal is gone"), _TwoArguments("the journal is gone", "1")]
)
def test_an_error_that_cannot_travel_is_raised_by_its_words(error: Exception) -> None:
    def fail(part: int, at: str) -> None:
        if part == 2 and at == "load":
            raise error

    with pytest.raises(RuntimeError, match=f"{type(error).__name__}: the journal is gone"):
        _parts_run(fail)
    assert _no_child_left()


def test_a_report_during_writes_is_built_in_one_process(
    tmp_path: Path, splits: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A price recorded while the parts read: some would see it, some not. Built in one."""
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    _write(url)
    real = workers.load_part
    parent = os.getpid()

    def recording_meanwhile(*args: Any) -> Any:
        if os.getpid() == parent:  # the daemon records a price as this part loads
            with Journal.open(url) as writer:
                writer.add_price_ticks([PriceTickRow(T0 + timedelta(days=10), APT, Decimal(64))])
        return real(*args)

    monkeypatch.setattr(workers, "load_part", recording_meanwhile)
    with Journal.open(url, readonly=True, wallet=WALLET) as journal:
        split = build_report(journal, ReportRequest(), [], **SPLIT)
        monkeypatch.setattr(workers, "load_part", real)
        one = build_report(journal, ReportRequest(), [])
    assert splits == [3] and split == one
    assert split.valued_at == T0 + timedelta(days=10)
    prices = {h.price_usd for s in split.summaries.values() for h in s.holdings if h.token == APT}
    assert prices == {Decimal(64)}


def test_the_processors_are_those_of_the_cgroups_quota(tmp_path: Path) -> None:
    """cgroup v2: the quota of the process's own group and of each group above it."""
    mounted, own = tmp_path / "cgroup", tmp_path / "self-cgroup"
    group = mounted / "system.slice" / "bot.service"
    group.mkdir(parents=True)
    own.write_text("0::/system.slice/bot.service\n", encoding="utf-8")
    mine = workers.processors(tmp_path / "none", tmp_path / "none")

    def limited(**quotas: str) -> int:
        for folder, quota in ((group, quotas.get("own")), (group.parent, quotas.get("above"))):
            (folder / "cpu.max").unlink(missing_ok=True)
            if quota is not None:
                (folder / "cpu.max").write_text(quota + "\n", encoding="ascii")
        return workers.processors(mounted, own)

    assert limited() == mine  # no cpu.max: no quota
    assert limited(own="max 100000") == mine
    assert limited(own="100000 100000") == 1  # `--cpus 1`
    assert limited(own="50000 100000") == 1
    assert limited(own="150000 100000") == min(mine, 2)  # 1.5: two take turns on it
    assert limited(own="max 100000", above="100000 100000") == 1  # a slice above limits
    assert limited(own="6400000 100000") == mine
    assert limited(own="100000 0") == mine  # not of the kernel's form: ignored
    assert limited(own="garbage") == mine
    own.write_text("0::/\n", encoding="utf-8")  # in a namespace: its root is the group
    (mounted / "cpu.max").write_text("100000 100000\n", encoding="ascii")
    assert workers.processors(mounted, own) == 1


def test_the_report_command_asks_for_a_process_per_processor(
    tmp_path: Path, splits: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    import bot.cli.report_cmd as report_cmd
    from bot.cli import app

    url = f"sqlite:///{tmp_path / 'bot.db'}"
    _write(url)
    config = tmp_path / "bot.toml"
    config.write_text(
        f'mode = "paper"\n[wallet]\naddress = "{WALLET}"\n[journal]\nurl = "{url}"\n',
        encoding="utf-8",
    )
    asked: list[int] = []

    def small_journals_too(*args: Any, processes: int = 1, **kwargs: Any) -> Any:
        asked.append(processes)
        return build_report(*args, processes=processes, split_from=0, **kwargs)

    monkeypatch.setattr(report_cmd, "build_report", small_journals_too)
    monkeypatch.setattr(workers, "processors", lambda: 2)
    result = CliRunner().invoke(app, ["-c", str(config), "report", "--json"])
    assert result.exit_code == 0, result.output
    assert asked == [2] and splits == [2]
    data = json.loads(result.output)
    assert {s["strategy"] for s in data["strategies"]} == {
        "(no strategy)",
        "dca-apt",
        "dca-gui",
        "dip",
        "ladder",
    }
