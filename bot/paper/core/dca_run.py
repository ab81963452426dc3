"""Consecutive slices of one DCA order run in one go: the same fills, less work per slice.

`DcaEngine.process` runs a due slice through the one general path (`_slice`: `quote_swap`,
`execute_swap`, the ledger, a tx detail). When its caller knows that nothing but queued
events can happen until some time (`run_until`: `PaperMarket.advance_to` while no limit
order can fill), the order's next slots run here, one after another, as long as nothing
else comes between them: a slot runs only if it is due by then and before every other
queued event (one due at the same time goes first: the queue orders equal times by
insertion, and the slot would have been queued last). A year of hourly slices between
two daily ticks is then a loop over slot times, not 8,760 trips through the event queue.

Each slot does exactly what `_slice` does, with the arithmetic of `quote_swap`,
`Pool.out_for_in` and `execute_swap` written out for this one case (ExactIn, no
integrator fee): the same pool — re-anchored at each new price point of either token
(`PoolBook.paths_for`, `PricePath.point_counts`: one search for all the slots, and
`anchor_reserve`), else moved by the previous slot's trade —, the same fees (keeper,
platform, pool), slippage minimum, rate bounds, adverse move and tx details. What the
slots move in the ledger is summed and moved once at the end (each account and token
first touched in the order the slots would first touch it), and the pool's reserves are
set once (`PoolBook.set_reserves`). Anything out of the ordinary — no price at the first
slot, an open ledger savepoint, an oracle without price paths, an escrow not holding the
order's balance, another event due at the slot's time — and no run starts: the general
path takes the slot.

`tests/unit/paper/test_dca_run.py` runs orders both ways on random series and compares
everything (records, balances, pools).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from datetime import datetime
from itertools import accumulate, repeat
from typing import TYPE_CHECKING, Final

from bot.clock import MICROSECOND, to_micros
from bot.paper.core.ledger import MARKET
from bot.paper.core.orders import FIXED_PERIODS, TxDetailRecord, add_period, human_rate
from bot.paper.core.pools import anchor_reserve, same_token
from bot.paper.core.swaps import min_out_of

if TYPE_CHECKING:
    from bot.paper.core.dca import DcaEngine, DcaOrder
    from bot.paper.core.prices import PricePath

__all__ = ["run_slices"]

_BPS: Final = 10_000
_FILLED: Final = "filled"
_ATTEMPTED: Final = "attempted"
_FAILED: Final = "failed"


def run_slices(engine: DcaEngine, order: DcaOrder, until: datetime) -> int:
    """Run `order`'s next slots due by `until` before any other queued event.

    Returns how many slots ran (`orders_done` moved on by as many); 0 when the run cannot
    start (then the general path runs the next slot).
    """
    ledger, pools = engine.ledger, engine.pools
    sell, buy, first = order.sell, order.buy, order.first_at
    if ledger.in_savepoint or first is None or same_token(sell, buy):
        return 0
    if order.orders_done >= order.orders_total:
        return 0
    paths = pools.paths_for(sell, buy)
    if paths is None or ledger.balance(order.escrow, sell.address) != order.balance:
        return 0
    moments, stamps = _slot_times(order, first, until, engine.events.peek_time())
    if not moments:
        return 0
    # Each token's price point at each slot (a count of change points): the pool
    # re-anchors at a slot where either differs from the slot before.
    sell_points, buy_points = (path.point_counts(stamps) for path in paths)
    if not (sell_points[0] and buy_points[0]):
        return 0  # no price yet: the general path says so (`NoPrice`)
    run = _Run(engine, order, pools.pool(sell, buy, moments[0]).reserves(sell))
    run.run(moments, sell_points, buy_points, paths)
    return run.finish()


def _slot_times(
    order: DcaOrder, first: datetime, until: datetime, queued: datetime | None
) -> tuple[list[datetime], list[int]]:
    """The order's next slots due by `until` and before `queued`: times, µs since the epoch."""
    value, period = order.interval
    step = FIXED_PERIODS.get(period)
    found: list[datetime] = []
    slot = order.orders_done
    moments: Iterable[datetime]
    if step is None:  # calendar months
        moments = (add_period(first, k * value, period) for k in range(slot, order.orders_total))
    else:  # exact: timedelta sums are integer sums
        stride = step * value
        left = order.orders_total - slot - 1
        moments = accumulate(repeat(stride, left), operator.add, initial=first + stride * slot)
    for moment in moments:
        if moment > until or (queued is not None and moment >= queued):
            break
        found.append(moment)
    if step is None or not found:
        return found, [to_micros(moment) for moment in found]
    start, every = to_micros(found[0]), (step * value) // MICROSECOND
    return found, list(range(start, start + every * len(found), every))


class _Run:
    """One run of slots: the pool's reserves, the order's counters, the ledger's sums."""

    def __init__(self, engine: DcaEngine, order: DcaOrder, reserves: tuple[int, int]) -> None:
        self.engine, self.order = engine, order
        self.reserves = reserves
        """The pool's reserves of the sold and of the bought token."""
        self.sums = [0, 0, 0, 0]
        """Sold to the market, the platform fee, bought, the keeper fee: each in all."""
        self.touched: list[int] = []
        """The indices of `sums` in the order each first moved something."""
        self.records: list[TxDetailRecord] = []
        self.spent = self.received = self.fees_paid = self.executed = 0
        self.at: datetime | None = None

    def run(
        self,
        moments: list[datetime],
        sell_points: list[int],
        buy_points: list[int],
        paths: tuple[PricePath, PricePath],
    ) -> None:
        """Run the slots at `moments` (each token's price point at each given).

        One slot is `DcaEngine._slice`, step by step; the locals are its values.
        """
        engine, order = self.engine, self.order
        sell, buy, order_id = order.sell, order.buy, order.order_id
        pools = engine.pools
        settings = pools.settings_for(sell, buy)
        depth, keep = settings.depth_usd, _BPS - settings.fee_bps
        platform_bps, keeper_bps = engine.fees.platform_fee_bps, engine.keeper_fee_bps
        adverse, slippage = engine.adverse_pct, order.slippage
        low, high = order.min_rate, order.max_rate
        per_order, slots = order.per_order, order.orders_total
        slot, balance, attempts = order.orders_done, order.balance, order.attempts
        number = len(order.details)
        # The records' ids (one record a slot), made in one go.
        tx_ids = iter(engine.ids.txs(order_id, range(number + 1, number + 1 + len(moments))))
        x, y = self.reserves
        sums, touched, records = self.sums, self.touched, self.records
        spent = received = fees_paid = executed = 0
        anchored = (sell_points[0], buy_points[0])
        made = (0, 0, 0, 0)  # (sell point, its reserve, buy point, its reserve) last made
        for at, sell_point, buy_point in zip(moments, sell_points, buy_points, strict=True):
            if sell_point != anchored[0] or buy_point != anchored[1]:  # the pool re-anchors
                x, y = made[1], made[3]
                if sell_point != made[0]:
                    x = anchor_reserve(depth, paths[0].point_price(sell_point), sell)
                if buy_point != made[2]:
                    y = anchor_reserve(depth, paths[1].point_price(buy_point), buy)
                made, anchored = (sell_point, x, buy_point, y), (sell_point, buy_point)
            slot += 1
            consumed = per_order + order.remainder if slot == slots else per_order
            if consumed > balance:
                consumed = balance
            keeper = consumed * keeper_bps // _BPS
            swap_in = consumed - keeper
            attempts += 1
            number += 1
            # quote_swap (ExactIn, no integrator fee): the platform fee, then the pool's out.
            platform = swap_in * platform_bps // _BPS
            net = swap_in - platform
            out = 0
            if net > 0:
                effective = net * keep
                out = (y * effective) // (x * _BPS + effective)
            kind, got, fee, rate, filled = _FAILED, out, 0, None, False
            if swap_in > 0 and out > 0:  # else quote_swap: SwapError, a failed slot
                rate = human_rate(out, buy, swap_in, sell)
                if (low is None or rate >= low) and (high is None or rate <= high):
                    filled = True  # the quote's minimum (slippage ≥ 0) is at most `out`
                    if adverse:  # execute_swap prices it anew, that much worse
                        got = min_out_of(out, adverse)
                        # Under it, or nothing: SwapError / SlippageExceeded, a failed slot.
                        filled = got > 0 and got >= min_out_of(out, slippage)
                else:
                    kind = _ATTEMPTED  # outside the order's rate bounds
            if filled:
                kind, fee = _FILLED, keeper
                if got != out:
                    rate = human_rate(got, buy, swap_in, sell)
                if not (sums[1] and sums[3]):  # a move that moved nothing yet: note its turn
                    for index, amount in enumerate((swap_in, platform, got, keeper)):
                        if amount and not sums[index]:
                            touched.append(index)
                sums[0] += swap_in
                sums[1] += platform
                sums[2] += got
                sums[3] += keeper
                x += net
                y -= got
                balance -= consumed
                spent += consumed
                received += got
                fees_paid += keeper
                executed += 1
            else:
                got = 0  # nothing bought (failed or attempted)
            records.append(  # by position, as `OrderEngineBase._record` makes them
                TxDetailRecord(
                    next(tx_ids),
                    number,
                    kind,
                    attempts,
                    consumed,
                    got,
                    fee,
                    at,
                    None,
                    rate,
                )
            )
        self.reserves, self.at = (x, y), moments[-1] if moments else None
        self.slot, self.attempts = slot, attempts
        self.spent, self.received, self.fees_paid, self.executed = (
            spent,
            received,
            fees_paid,
            executed,
        )

    def finish(self) -> int:
        """Move the sums, set the pool, update the order; returns the slots run."""
        engine, order, at = self.engine, self.order, self.at
        if at is None:
            return 0
        sell, buy, escrow = order.sell.address, order.buy.address, order.escrow
        moves = (
            (sell, escrow, MARKET),
            (sell, MARKET, engine.fees.platform_account),
            (buy, MARKET, order.recipient),
            (sell, escrow, engine.keeper_account),
        )
        engine.ledger.transfers([(*moves[index], self.sums[index]) for index in self.touched])
        engine.pools.set_reserves(order.sell, order.buy, at, self.reserves)
        order.details += self.records
        order.attempts = self.attempts
        order.orders_done = self.slot
        order.orders_executed += self.executed
        order.spent += self.spent
        order.received += self.received
        order.fees_paid += self.fees_paid
        return len(self.records)
