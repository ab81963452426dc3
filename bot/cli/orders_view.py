"""What `bot orders` and `bot orders show` print: rows, tables and one order, from the journal.

Prices are shown in the `[display].price_quote` convention (`bot.price_view`), progress
with its unit (slices of a DCA, the sold token of a limit order), and ages and expiries on
the clock the journal's times were written with (`market_time`).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import cache
from typing import Any

from bot.aptos.tokens import TokenBook
from bot.clock import Clock, parse_utc
from bot.config import Settings
from bot.journal import FillView, Journal, OrderTransitionView, OrderView
from bot.money import format_decimal
from bot.ops.status_file import read_status, status_path
from bot.price_view import Bound, Price, PriceConvention, common_unit

__all__ = [
    "MarketTime",
    "convention",
    "duration",
    "market_time",
    "order_row",
    "show_json",
    "show_lines",
    "table_lines",
]


@cache
def _offline_book() -> TokenBook:
    """The packaged token list: symbols for the journal's addresses, without the network."""
    from bot.paper.core.registry import PaperTokens

    return PaperTokens.from_token_list().book


def convention(settings: Settings) -> PriceConvention:
    """The configured price convention, naming tokens from the packaged token list."""
    return PriceConvention(settings.display.price_quote, _offline_book(), short_names=True)


@dataclass(frozen=True)
class MarketTime:
    """The current time on the clock the journal's times were written with."""

    now: datetime
    clock: str
    """`real`, or an embedded paper world's `accelerated` / `stepped` clock."""

    def note(self) -> str | None:
        """A line saying which clock ages are counted on (None on the real clock)."""
        if self.clock == "real":
            return None
        return f"times on the paper world's {self.clock} clock, now {self.now.isoformat()}"


def market_time(settings: Settings, journal: Journal, wall: Clock) -> MarketTime:
    """The time the bot's clock reads now, for ages and expiries.

    The clock the bot's verbs build (`bot.app.runtime.connect`): real time live and with
    a served paper world; an embedded paper world's own clock otherwise, built the same
    way (`build_world` from its snapshot, never behind the journal's latest record). A
    running daemon's world is ahead of its last snapshot: the time its status file says
    (`market_now`) counts too. A snapshot that cannot be read is left to the verbs that
    trade; the latest time the journal holds stands in.
    """
    paper = settings.paper
    if settings.mode != "paper" or paper.url or paper.clock == "real":
        return MarketTime(wall.now(), "real")
    from bot.app.runtime import embedded_snapshot
    from bot.paper.world import SnapshotError, build_world

    times = [o.last_seen_at for o in journal.orders()]
    times += [i.updated_at for i in journal.intents()]
    with suppress(SnapshotError):
        world = build_world(
            paper.model_copy(update={"snapshot_file": embedded_snapshot(settings)}),
            not_before=max(times, default=None),
        )
        times.append(world.market.clock.now())
    status = read_status(status_path(settings.journal.url, settings.daemon.status_file))
    if status is not None and status.market_now and status.clock != "real":
        with suppress(ValueError):  # an unreadable time says nothing about the clock
            times.append(parse_utc(status.market_now))
    return MarketTime(max(times) if times else wall.now(), paper.clock)


def duration(seconds: int) -> str:
    """`3d`, `5h`, `12m`, `40s`: the largest whole unit (negative counts as 0)."""
    seconds = max(0, seconds)
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _progress(order: OrderView, prices: PriceConvention) -> str:
    """`3/10 slices` of a DCA, `12.5/25 USDC` (sold of the amount) otherwise."""
    if order.kind == "dca" and order.orders_total:
        return f"{order.orders_completed or 0}/{order.orders_total} slices"
    spent = order.amount_spent or Decimal(0)
    return (
        f"{format_decimal(spent)}/{format_decimal(order.amount_total)} "
        f"{prices.label(order.from_token)}"
    )


def _limits(order: OrderView, prices: PriceConvention) -> list[Price]:
    """The order's price limits: a limit order's rate, a DCA's bounds."""
    rates: list[tuple[Decimal | None, Bound]] = (
        [(order.rate, "min")]
        if order.kind == "limit"
        else [(order.min_rate, "min"), (order.max_rate, "max")]
    )
    found = []
    for rate, bound in rates:
        price = None
        if rate is not None:
            price = prices.of_rate(rate, got=order.to_token, paid=order.from_token, bound=bound)
        if price is not None:
            found.append(price)
    return found


def _average(order: OrderView, prices: PriceConvention) -> Price | None:
    """The average price of what was sold so far (None before any fill)."""
    spent, received = order.amount_spent or Decimal(0), order.to_amount_received or Decimal(0)
    return prices.of_amounts(spent, order.from_token, received, order.to_token)


def order_row(order: OrderView, prices: PriceConvention, now: datetime) -> dict[str, Any]:
    """One order as JSON data (documented in docs/operations.md, "Orders")."""
    average = _average(order, prices)
    limits = _limits(order, prices)
    return {
        "id": order.order_id,
        "kind": order.kind,
        "strategy": order.strategy,
        "pair": f"{prices.label(order.from_token)}→{prices.label(order.to_token)}",
        "from_token": order.from_token,
        "to_token": order.to_token,
        "amount_total": format_decimal(order.amount_total),
        "amount_spent": _text(order.amount_spent),
        "to_amount_received": _text(order.to_amount_received),
        "progress": _progress(order, prices),
        "price_unit": prices.unit(order.from_token, order.to_token),
        "limit_price": ", ".join(p.number for p in limits) or None,
        "average_price": average.number if average else None,
        "status": order.status,
        "expire_at": order.expire_at.isoformat() if order.expire_at else None,
        "created_at": order.created_at.isoformat(),
        "age_seconds": max(0, int((now - order.created_at).total_seconds())),
    }


FEES_INCLUDED = "the keeper's fees included"
"""How an order's average price is counted: what it sold, fees and all, per unit received."""
AVERAGE_NOTE = (
    f"AVG PRICE: what was sold ({FEES_INCLUDED}) per unit received, so a filled limit "
    "order's can lie a little beyond its LIMIT"
)
"""The line under a table that shows a limit order's average price."""


def _text(value: Decimal | None) -> str | None:
    return format_decimal(value) if value is not None else None


def table_lines(orders: Sequence[OrderView], prices: PriceConvention, now: datetime) -> list[str]:
    """The `bot orders` table; the price unit in the headers when every row shares it."""
    rows = [order_row(o, prices, now) for o in orders]
    unit = common_unit([r["price_unit"] for r in rows])
    suffix = f" ({unit})" if unit else ""

    def price(row: dict[str, Any], key: str) -> str:
        value = row[key]
        if value is None:
            return "-"
        return value if unit else f"{value} {row['price_unit']}"

    table = [
        ["ID", "KIND", "PAIR", "PROGRESS", f"LIMIT{suffix}", f"AVG PRICE{suffix}", "STATUS", "AGE"]
    ]
    table += [
        [
            r["id"][:12],
            r["kind"],
            r["pair"],
            r["progress"],
            price(r, "limit_price"),
            price(r, "average_price"),
            r["status"],
            duration(r["age_seconds"]),
        ]
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in table
    ]
    if any(r["kind"] == "limit" and r["average_price"] is not None for r in rows):
        lines.append(AVERAGE_NOTE)
    return lines


def _limit_terms(order: OrderView, prices: PriceConvention) -> str:
    """`buy APT at ≤ 4.931 USDC per APT`: what the order's limits allow."""
    limits = _limits(order, prices)
    if not limits:
        return "none (any price)" if order.kind == "dca" else "unknown"
    quote = prices.quote_of(order.from_token, order.to_token)
    side = "buy" if quote == order.from_token else "sell"
    base = order.to_token if side == "buy" else order.from_token
    return f"{side} {prices.label(base)} at " + " and ".join(str(p) for p in limits)


def show_json(
    order: OrderView,
    transitions: Sequence[OrderTransitionView],
    fills: Sequence[FillView],
    prices: PriceConvention,
    now: datetime,
) -> dict[str, Any]:
    """`bot orders show --json`: the row, the limits, the transitions and the fills."""
    data = order_row(order, prices, now)
    data["limit"] = _limit_terms(order, prices)
    if order.kind == "dca" and order.interval_value:
        data["interval"] = f"{order.interval_value} {order.interval_period or ''}".rstrip()
    data["transitions"] = [
        {
            "from": t.from_status,
            "to": t.to_status,
            "observed_at": t.observed_at.isoformat(),
            "source": t.source,
        }
        for t in transitions
    ]
    data["fills"] = [_fill_json(order, f, prices) for f in fills]
    return data


def _fill_json(order: OrderView, fill: FillView, prices: PriceConvention) -> dict[str, Any]:
    price = None
    if fill.from_amount is not None and fill.to_amount is not None:
        price = prices.of_amounts(
            fill.from_amount, order.from_token, fill.to_amount, order.to_token
        )
    if price is None and fill.price_to_per_from is not None:
        price = prices.of_rate(fill.price_to_per_from, got=order.to_token, paid=order.from_token)
    return {
        "tx_id": fill.tx_id,
        "tx_number": fill.tx_number,
        "type": fill.type,
        "from_amount": _text(fill.from_amount),
        "to_amount": _text(fill.to_amount),
        "fee_amount": _text(fill.fee_amount),
        "price": price.number if price else None,
        "time": fill.time.isoformat() if fill.time else None,
        "recorded_at": fill.recorded_at.isoformat(),
    }


def show_lines(
    data: dict[str, Any], order: OrderView, prices: PriceConvention, now: datetime
) -> list[str]:
    """`bot orders show`: one fact per line, then the transitions and the fills with times."""
    sold, bought = prices.label(order.from_token), prices.label(order.to_token)
    unit = data["price_unit"]
    average = data["average_price"]
    facts = [
        ("id", data["id"]),
        ("kind", data["kind"]),
        ("strategy", data["strategy"] or "-"),
        ("pair", data["pair"]),
        ("status", data["status"]),
        ("amount", f"{data['amount_total']} {sold}"),
        ("progress", data["progress"]),
        ("received", f"{data['to_amount_received'] or '0'} {bought}"),
        ("limit price", data["limit"]),
        (
            "average price",
            f"{average} {unit} ({FEES_INCLUDED})" if average else "- (nothing filled yet)",
        ),
        ("created", f"{data['created_at']} ({duration(data['age_seconds'])} ago)"),
    ]
    if "interval" in data:
        facts.insert(7, ("interval", f"every {data['interval']}"))
    if order.expire_at is not None:
        left = int((order.expire_at - now).total_seconds())
        when = f"in {duration(left)}" if left > 0 else f"{duration(-left)} ago"
        facts.append(("expires", f"{data['expire_at']} ({when})"))
    elif order.kind == "limit":
        facts.append(("expires", "none recorded"))
    out = [f"{key:<14} {value}" for key, value in facts]
    out.append("transitions:")
    for t in data["transitions"]:
        out.append(f"  {t['observed_at']}  {t['from'] or '-'} → {t['to']}  ({t['source']})")
    out.append(f"fills: {len(data['fills'])}")
    for f in data["fills"]:
        when = f["time"] or f"{f['recorded_at']} (recorded)"
        amounts = f"{f['from_amount'] or '-'} {sold} → {f['to_amount'] or '-'} {bought}"
        price = f" at {f['price']} {unit}" if f["price"] else ""
        out.append(f"  {when}  #{f['tx_number']} {f['type']:<9} {amounts}{price}")
    return out
