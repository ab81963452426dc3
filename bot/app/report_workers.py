"""A report of every strategy split across processes: parts of its strategies at once.

Each strategy is accounted on its own lots (`bot.accounting.by_strategy`), so a report of
several is the union of reports of parts of them. `split_report` reads what weighs and
names the work (each order's count of fills, the swaps and gas of every strategy), deals
the strategies into parts of about equal weight (`parts_by_weight`), accounts one part
here and each other in a forked process, in two steps:

1. each part reads its orders, fills and prices, accounts for them valued at its own
   latest moment, and tells the latest moment it recorded and what it traded;
2. told the report's moment of value (the window's end, else the latest of all parts),
   each values what it holds at that moment (`valued_anew`) and sends its summaries.

A part prices what a report of all strategies at once would price: its own tokens, and
those any strategy traded that it looks up (what its open orders hold). When something
was written while the parts read, each at its own moment (`fills_read.writes_watched`),
or what they traded is not what the counts said (an order whose fills moved nothing),
the report is built in one process instead. So the figures are always those of one
process (`tests/unit/app/test_report_workers.py` holds them equal).

Only where forking is sound: Linux, no other thread in this process (a lock held by one
would stay held in the child), a journal a second connection reaches (a SQLite file or
PostgreSQL, not an in-memory database). A part that cannot be forked, or whose child
dies without an answer (killed), is accounted here instead; an error in a child is
raised here, as in one process.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from bot.accounting.from_journal import (
    TRADED_FILL_TYPE,
    JournalRecords,
    accounted_name,
    swaps_and_gas,
)
from bot.accounting.records import APT_COIN_TYPE
from bot.accounting.report import valued_anew
from bot.app.report import Report, ReportAccounting
from bot.app.report_load import JournalLoad, load_part
from bot.journal.db import is_sqlite, sqlite_file

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from bot.accounting import Summary
    from bot.accounting.locked import Locked
    from bot.journal import Journal

__all__ = ["may_fork", "parts_by_weight", "processors", "run_in_parts", "split_report"]

CGROUPS: Final = Path("/sys/fs/cgroup")
"""Where cgroup v2 is mounted: each group's `cpu.max` is its quota (`max 100000`: none;
`150000 100000`: one and a half processors)."""
OWN_CGROUP: Final = Path("/proc/self/cgroup")
"""Which cgroup this process is in."""
_ANY_MOMENT: Final = datetime(2000, 1, 1, tzinfo=UTC)
"""A part's first moment of value when it recorded none (every part is valued anew)."""

_L = TypeVar("_L")  # what a part loaded
_U = TypeVar("_U")  # what a part tells the others after loading
_D = TypeVar("_D")  # what every part is told back
_R = TypeVar("_R")  # a part's result

Accounted = tuple[dict[str, "Summary"], dict[str, list["Locked"]]]
"""What a part of a report gives: its strategies' summaries and what their orders hold."""


def processors(cgroups: Path = CGROUPS, own: Path = OWN_CGROUP) -> int:
    """The processors this process may run on: its own, within its cgroups' CPU quotas.

    A container or a service limited to one CPU (`docker run --cpus 1`, systemd's
    `CPUQuota=100%`) sees every processor of its host, and parts would only take turns
    on the one. cgroup v2 (`cpu.max` of its own group and each above it, under `cgroups`;
    `own`: which group it is in); a fractional quota counts as the next whole processor.
    """
    try:
        count = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        count = os.cpu_count() or 1
    quota = _cgroup_quota(cgroups, own)
    return count if quota is None else max(1, min(count, quota))


def _cgroup_quota(cgroups: Path, own: Path) -> int | None:
    """The fewest whole processors any cgroup of this process allows; None: no quota."""
    try:
        lines = own.read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    # cgroup v2's line is `0::/the/group`; in a namespace (a container) it is `0::/`.
    group = next((line[3:] for line in lines if line.startswith("0::")), "/")
    folder = cgroups / group.strip("/")
    quotas = []
    for level in (folder, *folder.parents):
        if level != cgroups and cgroups not in level.parents:
            break
        try:
            limit, period = (level / "cpu.max").read_text(encoding="ascii").split()[:2]
            if limit != "max":  # "max": no quota at this level
                quotas.append(-(-int(limit) // int(period)))  # whole processors, rounded up
        except (OSError, ValueError, ZeroDivisionError):  # none here, or not of this form
            continue
    return min(quotas, default=None)


def may_fork(journal: Journal) -> bool:
    """Whether a report on `journal` may be split across forked processes (see above)."""
    if not sys.platform.startswith("linux") or threading.active_count() != 1:
        return False
    url = journal.engine.url
    return not is_sqlite(url) or sqlite_file(url) is not None


def parts_by_weight(weights: dict[str, int], count: int) -> list[list[str]]:
    """The names dealt into at most `count` parts of about equal weight, heaviest part first.

    Heaviest name first, each to the lightest part so far (ties: the earlier part); as
    many parts as names of positive weight, at most `count`; names of no weight go to the
    lightest part too.
    """
    heavy = sum(1 for weight in weights.values() if weight > 0)
    parts: list[list[str]] = [[] for _ in range(max(1, min(count, heavy)))]
    loads = [0] * len(parts)
    for name in sorted(weights, key=lambda n: (-weights[n], n)):
        lightest = loads.index(min(loads))
        parts[lightest].append(name)
        loads[lightest] += weights[name]
    order = sorted(range(len(parts)), key=lambda i: -loads[i])
    return [parts[i] for i in order if parts[i]]


def split_report(
    journal: Journal, accounting: ReportAccounting, processes: int, split_from: int
) -> Report | None:
    """The report of every strategy, its parts accounted in up to `processes` processes.

    None when it is not split: fewer than `split_from` fills, a single part, or a process
    that may not fork (`may_fork`); and, after the parts ran, when they did not trade what
    the counts announced or when fills, prices or orders were written meanwhile (each part
    reads the journal at its own moment). The caller then builds it in one process.
    """
    from bot.journal.fills_read import writes_watched

    if processes < 2 or not may_fork(journal):
        return None
    with writes_watched(journal) as written:
        plan = _plan(journal, processes, split_from)
        if plan is None:
            return None
        done = _account_in_parts(journal, accounting, plan)
        if not done.told.exact or written():
            return None
    request = accounting.request
    if done.told.valued_at is None:
        return Report(request, None, {})
    summaries: dict[str, Summary] = {}
    locked: dict[str, list[Locked]] = {}
    for value in done.values:
        assert value is not None  # exact: every part finished
        summaries.update(value[0])
        locked.update(value[1])
    return Report(
        request,
        done.told.valued_at,
        dict(sorted(summaries.items())),
        dict(sorted(locked.items())),
        tuple(plan.rest.gas_unknown),
    )


@dataclass(frozen=True)
class _Plan:
    """A report's parts (strategy names), and what every part needs that is read once."""

    parts: list[list[str]]
    rest: JournalRecords
    """The swaps and gas of every strategy."""
    traded: set[str]
    """The tokens of the orders with fills and of the swaps: what the parts will trade."""


def _plan(journal: Journal, processes: int, split_from: int) -> _Plan | None:
    """The parts of a report of every strategy; None below `split_from` fills or in one."""
    from bot.journal.fills_read import order_fill_counts

    orders = order_fill_counts(journal, of_type=TRADED_FILL_TYPE)
    if sum(count for *_, count in orders) < split_from:
        return None
    rest = swaps_and_gas(journal)  # read once, here; every part takes its strategies'
    weights: Counter[str] = Counter()
    traded: set[str] = set()
    for strategy, sold, bought, count in orders:  # a strategy of open orders alone too
        weights[accounted_name(strategy)] += count
        if count:
            traded.update((sold, bought))
    for trade in rest.trades:
        weights[trade.strategy] += 1
        traded.update((trade.sold_token, trade.bought_token))
    for cost in rest.gas:
        weights[cost.strategy] += 0  # and of gas alone
    parts = parts_by_weight(dict(weights), processes)  # more contend: measured slower
    return _Plan(parts, rest, traded) if len(parts) > 1 else None


def _account_in_parts(
    journal: Journal, accounting: ReportAccounting, plan: _Plan
) -> Parted[_Moment, Accounted | None]:
    """Each part loaded and accounted at once (`run_in_parts`), valued at one moment."""
    request = accounting.request

    def load(names: list[str]) -> tuple[_Part, _Told]:
        loaded = load_part(journal, names, plan.rest, plan.traded)
        first = request.end or loaded.latest or _ANY_MOMENT  # valued anew once all agree
        summaries = accounting.summaries(loaded, first)
        return _Part(loaded, summaries), _Told(loaded.latest, loaded.traded)

    def agree(told: list[_Told]) -> _Moment:
        latest = max((t.latest for t in told if t.latest is not None), default=None)
        # Priced as one process would have: unless an order's fills traded nothing (zero
        # amounts), what the parts traded is what the counts said.
        exact = frozenset().union(*(t.traded for t in told)) == {*plan.traded, APT_COIN_TYPE}
        return _Moment(request.end if request.end is not None else latest, exact)

    def finish(part: _Part, moment: _Moment) -> Accounted | None:
        if not moment.exact:
            return None
        if moment.valued_at is None:
            return {}, {}
        book, at = part.loaded.book, moment.valued_at
        summaries = {
            name: s if s.valued_at == at else valued_anew(s, book, at)
            for name, s in part.summaries.items()
        }
        return summaries, accounting.locked(part.loaded, at)

    return run_in_parts(
        plan.parts, load, agree, finish, in_child=lambda: journal.engine.dispose(close=False)
    )


@dataclass(frozen=True)
class _Part:
    """What a part of a split report loaded and its summaries, valued at its own moment."""

    loaded: JournalLoad
    summaries: dict[str, Summary]


@dataclass(frozen=True)
class _Told:
    """What a part tells the others: its latest moment recorded and what it traded."""

    latest: datetime | None
    traded: frozenset[str]


@dataclass(frozen=True)
class _Moment:
    """What every part of a split report is told: the moment of value, and whether exact.

    Exact: the parts priced what one process would have (else it is built in one).
    """

    valued_at: datetime | None
    exact: bool


@dataclass(frozen=True)
class Parted(Generic[_D, _R]):
    """What `run_in_parts` gave: what every part was told, and each part's result in order."""

    told: _D
    values: list[_R]


class _ChildGone(Exception):
    """A child process ended without an answer (killed, or out of memory)."""


def run_in_parts(
    parts: Sequence[Any],
    load: Callable[[Any], tuple[_L, _U]],
    agree: Callable[[list[_U]], _D],
    finish: Callable[[_L, _D], _R],
    *,
    in_child: Callable[[], None] = lambda: None,
) -> Parted[_D, _R]:
    """`finish(load(part))` of each part, the first here, each other in a forked child.

    In two steps: every part loads and tells what `load` gave as its second value; with
    `agree` of all of them (in the parts' order) each finishes. `in_child` runs first in
    each child (to let go of connections inherited from this process). The results come
    in the parts' order. A child that dies without an answer has its part done here; an
    error a child raises is raised here, once every child is stopped.
    """
    import multiprocessing  # only here: `bot report` of a few fills never needs it

    context = multiprocessing.get_context("fork")
    for stream in (sys.stdout, sys.stderr):  # a child must not write this one's buffer again
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):  # closed: nothing to write twice
                stream.flush()
    children: list[_Child] = []
    try:
        for part in parts[1:]:
            if children and children[-1].gone:  # the last fork failed: try no more
                children.append(_Child(None))
            else:
                children.append(_Child.fork(context, part, load, finish, in_child))
        loaded: dict[int, _L] = {}  # the parts done here, by index
        loaded[0], said = load(parts[0])
        told: list[_U] = [said]
        for index, child in enumerate(children, start=1):
            try:
                told.append(child.answer())
            except _ChildGone:
                loaded[index], said = load(parts[index])
                told.append(said)
        agreed = agree(told)
        for index, child in enumerate(children, start=1):
            if index not in loaded and not child.tell(agreed):
                loaded[index] = load(parts[index])[0]
        values: list[_R] = [finish(loaded.pop(0), agreed)]
        for index, child in enumerate(children, start=1):
            if index not in loaded:
                try:
                    values.append(child.answer())
                    continue
                except _ChildGone:
                    loaded[index] = load(parts[index])[0]
            values.append(finish(loaded.pop(index), agreed))
        return Parted(agreed, values)
    finally:
        for child in children:
            child.stop()


class _Child:
    """A forked child doing one part, and this process's end of the pipe to it.

    Gone (its part done here instead) when it could not be forked, or died unanswered.
    """

    def __init__(self, process: Any, connection: Connection | None = None) -> None:
        self.process = process
        self.connection = connection
        self.gone = process is None

    @classmethod
    def fork(
        cls,
        context: Any,
        part: Any,
        load: Callable[[Any], tuple[Any, Any]],
        finish: Callable[[Any, Any], Any],
        in_child: Callable[[], None],
    ) -> _Child:
        """A child forked to do `part`; gone when the system would not fork.

        No pipes, processes or memory left to this one: it does the part itself.
        """
        try:
            ours, theirs = context.Pipe()
        except OSError:
            return cls(None)
        try:
            process = context.Process(
                target=_child, args=(theirs, part, load, finish, in_child), daemon=True
            )
            process.start()
        except OSError:
            ours.close()
            return cls(None)
        finally:
            theirs.close()
        return cls(process, ours)

    def answer(self) -> Any:
        """Its next answer; its error raised here; `_ChildGone` when it died without one."""
        if not self.gone and self.connection is not None:
            try:
                kind, value = self.connection.recv()
            except (EOFError, OSError):
                pass
            else:
                if kind == "error":
                    raise value
                return value
        self.stop()
        raise _ChildGone

    def tell(self, value: Any) -> bool:
        """Send it `value`; False when it is gone (its pipe closed: killed)."""
        if not self.gone and self.connection is not None:
            try:
                self.connection.send(value)
                return True
            except OSError:
                pass
        self.stop()
        return False

    def stop(self) -> None:
        """Close the pipe and reap the process, stopped first if it still runs (again: no-op)."""
        self.gone = True
        if self.connection is not None:
            self.connection.close()
        if self.process is not None:
            if self.process.is_alive():
                self.process.terminate()
            self.process.join()


def _child(
    connection: Connection,
    part: Any,
    load: Callable[[Any], tuple[Any, Any]],
    finish: Callable[[Any, Any], Any],
    in_child: Callable[[], None],
) -> None:
    """A forked child: load its part, say so, hear what all agreed, finish and answer.

    Every error of its work is sent to the parent to raise; when the parent is gone
    (its end of the pipe closed), there is nobody to answer.
    """
    try:
        try:
            in_child()
            loaded, said = load(part)
        except BaseException as exc:  # every error is the parent's to raise
            _say(connection, ("error", _portable(exc)))
            return
        if not _say(connection, ("ok", said)):
            return
        try:
            agreed = connection.recv()
        except (EOFError, OSError):
            return
        try:
            answer = ("ok", finish(loaded, agreed))
        except BaseException as exc:
            answer = ("error", _portable(exc))
        _say(connection, answer)
    finally:
        connection.close()


def _say(connection: Connection, message: tuple[str, Any]) -> bool:
    """Send `message` to the parent; False when it is gone.

    What cannot be pickled is sent as the error it raised instead.
    """
    try:
        connection.send(message)
    except (EOFError, OSError):
        return False
    except Exception as exc:  # pickling it failed: nothing was written
        return _say(connection, ("error", _portable(exc)))
    return True


def _portable(exc: BaseException) -> BaseException:
    """`exc`, or its words in a `RuntimeError` when it does not survive a pickle both ways."""
    try:
        pickle.loads(pickle.dumps(exc))  # noqa: S301 - our own bytes, just made
    except Exception:  # any: the parent must get an error it can raise
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc
