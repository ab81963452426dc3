"""What the Telegram control says: plain text (no markup), cut to Telegram's limits.

Pure functions of what the daemon knows — its status, the journal's orders, the
accounting's summaries (`bot.accounting`) — so they are tested without a bot. Amounts are
exact decimals as the journal holds them; USD figures are shown to the cent (half to
even), prices to 6 significant digits. Definitions of the figures: docs/accounting.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Final

from bot.accounting import BucketPeriod, Figures, Summary
from bot.accounting.exact import total
from bot.journal.views import OrderView
from bot.money import format_decimal
from bot.ops.status_file import DaemonStatus
from bot.price_view import (
    PriceConvention,
    amounts_text,
    measured_price_text,
    percent_text,
    usd_text,
)

__all__ = [
    "HELP",
    "MESSAGE_LIMIT",
    "balance_text",
    "orders_text",
    "period_text",
    "profit_text",
    "split_message",
    "status_text",
    "utf16_length",
]

MESSAGE_LIMIT: Final = 4000
"""Longest message we send, in UTF-16 code units (Telegram's limit is 4096)."""

HELP: Final = "\n".join(
    [
        "Read:",
        "/status - the daemon and its strategies",
        "/orders - open orders",
        "/profit - per strategy: invested, received, average entry, P&L",
        "/daily [n] - the last n days (default 7)",
        "/weekly [n] - the last n weeks (default 8)",
        "/monthly [n] - the last n months (default 6)",
        "/balance - the wallet's balances",
        "Control (each asks for a confirmation tap):",
        "/pause STRATEGY - stop ticking a strategy",
        "/resume STRATEGY - tick it again",
        "/stopentry - pause every strategy (placed orders stay open)",
        "/cancel ORDER - cancel an order (its id, or the start of it)",
        "/reconcile - settle what lost its answer now",
        "/help - this list",
    ]
)


def utf16_length(text: str) -> int:
    """`text`'s length as Telegram counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def split_message(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """`text` in messages of at most `limit` UTF-16 units, cut between lines.

    A single line longer than `limit` is cut inside (at a character boundary). Empty text
    gives one message saying so (Telegram refuses empty messages).
    """
    if not text.strip():
        return ["(nothing to say)"]
    parts: list[str] = []
    current: list[str] = []
    size = 0
    for line in _short_lines(text.split("\n"), limit):
        extra = utf16_length(line) + (1 if current else 0)
        if current and size + extra > limit:
            parts.append("\n".join(current))
            current, size = [], 0
            extra = utf16_length(line)
        current.append(line)
        size += extra
    if current:
        parts.append("\n".join(current))
    return [p for p in parts if p.strip()] or ["(nothing to say)"]


def _short_lines(lines: Iterable[str], limit: int) -> Iterable[str]:
    """Every line, the ones longer than `limit` cut in pieces of at most `limit` units."""
    for line in lines:
        while utf16_length(line) > limit:
            cut = limit
            while utf16_length(line[:cut]) > limit:
                cut -= 1
            yield line[:cut]
            line = line[cut:]
        yield line


# --- /status -----------------------------------------------------------------------------


def status_text(status: DaemonStatus) -> str:
    """The daemon in a few lines: state, health, each strategy, orders, poll, gas."""
    head = f"bot {status.state} ({status.mode} mode"
    head += ", dry run)" if status.dry_run else ")"
    lines = [head]
    if status.wallet:
        lines.append(f"wallet {status.wallet}")
    lines.append("health ok" if status.healthy else f"UNHEALTHY: {status.problem}")
    if status.healthy and status.problem:
        lines.append(status.problem)
    if status.clock != "real":
        lines.append(f"paper clock ({status.clock}), now {status.market_now}")
    if not status.strategies:
        lines.append("strategies: none")
    for name, s in sorted(status.strategies.items()):
        flag = " PAUSED" if s.paused else ""
        lines.append(
            f"{name}{flag}: {s.ticks} ticks, {s.actions} actions, {s.errors} errors, "
            f"last tick {s.last_tick or 'never'}"
        )
        if s.stuck:
            lines.append(f"  stuck: {s.stuck}")
        if s.last_error:
            lines.append(f"  last error: {s.last_error}")
    lines.append(f"open orders {status.open_orders}")
    lines.append(f"last good poll {status.last_poll_ok_at or 'never'}")
    lines.append(f"APT for gas {status.apt_balance or 'unknown'}")
    return "\n".join(lines)


# --- /orders -----------------------------------------------------------------------------


def orders_text(orders: Sequence[OrderView], prices: PriceConvention) -> str:
    """One line per open order: kind, id, strategy, status, progress."""
    if not orders:
        return "no open orders"
    lines = [f"{len(orders)} open order{'s' if len(orders) != 1 else ''}"]
    for order in orders:
        sold, bought = prices.label(order.from_token), prices.label(order.to_token)
        spent = order.amount_spent if order.amount_spent is not None else Decimal(0)
        line = (
            f"{order.kind} {order.order_id} ({order.strategy or 'not ours'}) {order.status}: "
            f"{format_decimal(spent)} of {format_decimal(order.amount_total)} {sold}"
        )
        if order.to_amount_received:
            line += f" -> {format_decimal(order.to_amount_received)} {bought}"
        else:
            line += f" -> {bought}"
        if order.orders_total:
            line += f", {order.orders_completed or 0} of {order.orders_total} done"
        lines.append(line)
    return "\n".join(lines)


# --- /profit -----------------------------------------------------------------------------


def profit_text(summaries: Mapping[str, Summary], prices: PriceConvention) -> str:
    """Per strategy: what went in and out, average entry vs the market, value, P&L."""
    if not summaries:
        return "no trades in the journal yet"
    blocks = [_profit_block(s, prices) for s in summaries.values()]
    pnl = [s.pnl_usd for s in summaries.values()]
    if len(blocks) > 1:
        known = [p for p in pnl if p is not None]
        whole = usd_text(total(known)) + ("" if len(known) == len(pnl) else " (priced ones only)")
        blocks.append(f"all strategies: P&L {whole}")
    return "\n\n".join(blocks)


def _profit_block(summary: Summary, prices: PriceConvention) -> str:
    totals = summary.totals
    lines = [
        f"{summary.name} ({totals.trades} trade{'s' if totals.trades != 1 else ''}, "
        f"cost basis {summary.method.upper()})",
        f"invested {amounts_text(totals.invested, prices)}",
        f"received {amounts_text(totals.received, prices)}",
    ]
    position = summary.position
    if position is not None and position.average_entry is not None:
        unit = f"{prices.label(position.pair.quote)} per {prices.label(position.pair.base)}"
        line = f"avg entry {measured_price_text(position.average_entry)} {unit}"
        if position.market_mean is not None:
            line += f", market mean {measured_price_text(position.market_mean)}"
        versus = position.entry_vs_market_percent
        if versus is not None:
            line += f" ({percent_text(versus)})"
        lines.append(line)
    values = [h.value_usd for h in summary.holdings]
    value = None if any(v is None for v in values) else total(v for v in values if v is not None)
    lines.append(f"value {usd_text(value)}" + ("" if value is not None else " (no recorded price)"))
    lines.append(
        f"P&L {usd_text(summary.pnl_usd)} (realised {usd_text(totals.realised_usd)}, "
        f"unrealised {usd_text(summary.unrealised_usd)})"
    )
    gas = format_decimal(Decimal(totals.gas_octas).scaleb(-8))
    lines.append(f"fees {usd_text(totals.fees_usd)}, gas {gas} APT ({usd_text(totals.gas_usd)})")
    if summary.unvalued:
        lines.append(f"{len(summary.unvalued)} trades without a USD price (not in USD figures)")
    return "\n".join(lines)


# --- /daily /weekly /monthly -------------------------------------------------------------


@dataclass
class _Row:
    """One bucket summed over every strategy."""

    first: date
    trades: int = 0
    traded: Decimal = Decimal(0)
    fees: Decimal = Decimal(0)
    realised: Decimal = Decimal(0)

    def add(self, figures: Figures) -> None:
        self.trades += figures.trades
        self.traded = total([self.traded, figures.traded_usd])
        self.fees = total([self.fees, figures.fees_usd, figures.gas_usd])
        self.realised = total([self.realised, figures.realised_usd])


def period_text(
    summaries: Mapping[str, Summary], period: BucketPeriod, count: int, zone: str
) -> str:
    """One line per day, week or month with trades: trades, traded, fees + gas, realised."""
    noun = {BucketPeriod.DAY: "day", BucketPeriod.WEEK: "week", BucketPeriod.MONTH: "month"}
    span = f"the last {count} {noun[period]}{'s' if count != 1 else ''} ({zone})"
    rows: dict[str, _Row] = {}
    for summary in summaries.values():
        for bucket in summary.buckets:
            rows.setdefault(bucket.label, _Row(bucket.first)).add(bucket.figures)
    if not rows:
        return f"no trades in {span}"
    lines = [f"{span}: trades, traded, fees+gas, realised P&L"]
    for label, row in sorted(rows.items(), key=lambda item: item[1].first, reverse=True):
        lines.append(
            f"{label}: {row.trades}, {usd_text(row.traded)}, {usd_text(row.fees)}, "
            f"{usd_text(row.realised)}"
        )
    return "\n".join(lines)


# --- /balance ----------------------------------------------------------------------------


def balance_text(wallet: str | None, balances: Sequence[tuple[str, Decimal | None]]) -> str:
    """The wallet's balance of each token (`unknown` where the node did not say)."""
    if wallet is None:
        return "no wallet configured"
    lines = [f"wallet {wallet}"]
    for label, amount in balances:
        lines.append(f"{label}: {'unknown' if amount is None else format_decimal(amount)}")
    return "\n".join(lines)
