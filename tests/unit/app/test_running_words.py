"""The running bot speaks in the user's terms: fills and summaries in numbers.

A stepped paper run (the real embedded paper world, engine, signer, tracker and SQLite
journal of `test_daemon`'s rig): the console's lines say what was bought, for how much,
at what price, the average entry and how many slices are done, the numbers those of the
journal; the summary comes at its interval of the injected (stepped) clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.accounting.exact import total
from bot.app.summaries import SUMMARY_JOB
from bot.chain import new_key_file
from bot.clock import Clock
from bot.price_view import PriceConvention
from tests.unit.app.test_daemon import Folder, dca, schedule, started

HOUR = timedelta(hours=1)
FILL = re.compile(
    r"^a bought (?P<got>[\d.]+) APT for (?P<paid>[\d.]+) USDC at (?P<price>[\d.]+) USDC per APT "
    r"\(avg entry (?P<avg>[\d.]+), (?P<done>\d+) of 7 done\)$"
)
SUMMARY = re.compile(
    r"^a: invested (?P<paid>[\d.]+) USDC, received (?P<got>[\d.]+) APT; avg entry "
    r"(?P<avg>[\d.]+) vs market [\d.]+ USDC per APT \([+-][\d.]+ %\); "
    r"value [\d,.]+ USD; P&L [+-][\d,.]+ USD \(FIFO\)$"
)


@dataclass
class TimedLines:
    """A reporter keeping each line with the market time it was said at."""

    clock: Clock | None = None
    said: list[tuple[datetime, str]] = field(default_factory=list)
    warned: list[str] = field(default_factory=list)

    def say(self, line: str) -> None:
        assert self.clock is not None
        self.said.append((self.clock.now(), line))

    def warn(self, line: str) -> None:
        self.warned.append(line)


@pytest.fixture
def folder(tmp_path: Path) -> Folder:
    wallet = new_key_file(tmp_path / "wallet.key")
    return Folder(tmp_path, str(wallet))


async def test_a_stepped_paper_run_says_fills_and_summaries_in_numbers(folder: Folder) -> None:
    folder.write(
        dca("a"),
        sections=(
            "[record]\nenabled = true\nevery_seconds = 3600\n"
            "[display]\nsummary_every_seconds = 43200\n"
        ),
    )
    async with started(folder) as rig:
        daemon, runtime = rig.daemon, rig.runtime
        lines = TimedLines(runtime.clock)
        daemon.reporter = lines
        driver = await schedule(daemon)
        assert SUMMARY_JOB in [j.name for j in driver.jobs]
        start = runtime.clock.now()
        await driver.run_until(start + timedelta(days=2, hours=1))
        said = [line for _, line in lines.said]
        assert not any("FillsRecorded" in line or "Order" in line for line in said), said

        # Every slice: its own amounts and price, the average entry, slices done of 7.
        fills = [m for m in map(FILL.match, said) if m]
        assert [m["done"] for m in fills] == ["1", "2", "3"], said
        [order] = runtime.journal.orders(strategy="a")
        traded = [f for f in runtime.journal.fills("dca", order.order_id) if f.type == "filled"]
        assert [(Decimal(m["paid"]), Decimal(m["got"])) for m in fills] == [
            (f.from_amount, f.to_amount) for f in traded
        ]
        prices = PriceConvention(["USDC"], runtime.tokens)
        paid, got = (
            total(Decimal(m["paid"]) for m in fills),
            total(Decimal(m["got"]) for m in fills),
        )
        average = prices.of_amounts(paid, "USDC", got, "APT")
        assert average is not None and Decimal(fills[-1]["avg"]) == average.value

        # The summary every 12 market hours from the start, one line per strategy.
        summaries = [(at, line) for at, line in lines.said if line.startswith("a: invested")]
        assert [at - start for at, _ in summaries] == [12 * HOUR, 24 * HOUR, 36 * HOUR, 48 * HOUR]
        last = SUMMARY.match(summaries[-1][1])
        assert last is not None, summaries[-1][1]
        assert (Decimal(last["paid"]), Decimal(last["got"])) == (paid, got)
        assert last["avg"] == fills[-1]["avg"]
        assert lines.warned == []


async def test_no_summary_when_turned_off(folder: Folder) -> None:
    """(A dry run has none either: `test_daemon` pins its jobs.)"""
    folder.write(dca("a"), sections="[display]\nsummary_every_seconds = 0\n")
    async with started(folder) as rig:
        driver = await schedule(rig.daemon)
        assert SUMMARY_JOB not in [j.name for j in driver.jobs]
