"""The daemon's side of the Telegram control: its answers, and the poller's task.

`DaemonDesk` answers the control's read commands from what the running daemon knows: its
status snapshot, the journal's open orders, the accounting over the journal
(`bot.app.report.build_report`, run in a worker thread on its own read-only journal so a
large report never holds up the event loop the strategies tick on) and the wallet's
balances from the node (each read bounded by a timeout). `ControlTask` runs the poller
(`bot.ops.telegram_control`) beside the daemon's other tasks, restarts it when `[alerts]`
is reloaded, and stops it at shutdown; a dry run has none (it must not take commands
meant for the daemon holding the wallet).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from datetime import UTC, datetime, time, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Final

from bot.accounting import BucketPeriod, CostMethod, Summary, bucket_of, zone_of
from bot.app.errors import SetupError
from bot.app.report import ReportRequest, build_report_off_loop
from bot.aptos.address import Address
from bot.aptos.tokens import Token, TokenLookupError
from bot.domain import LIVE_ORDER_STATUSES
from bot.engine.strategy import needed_tokens
from bot.journal import JournalError
from bot.journal.views import OrderView
from bot.logging import get_logger
from bot.money import from_base_units
from bot.ops.alert_channels import AlertConfigError, resolve_secret
from bot.ops.telegram_answers import (
    balance_text,
    orders_text,
    period_text,
    profit_text,
    status_text,
)
from bot.ops.telegram_control import TelegramControl

if TYPE_CHECKING:
    from bot.app.daemon import Daemon

__all__ = ["ControlTask", "DaemonDesk", "build_control", "window_start"]

BALANCE_TIMEOUT: Final = 10.0
"""Seconds one balance read from the node may take."""
_MIN_PREFIX: Final = 6


def window_start(now: datetime, period: BucketPeriod, count: int, zone_name: str) -> datetime:
    """The start (UTC) of the `count` latest buckets of `period` up to `now`, in the zone."""
    zone = zone_of(zone_name)
    first = bucket_of(now, period, zone)
    if period is BucketPeriod.DAY:
        first -= timedelta(days=count - 1)
    elif period is BucketPeriod.WEEK:
        first -= timedelta(weeks=count - 1)
    else:
        months = first.year * 12 + first.month - 1 - (count - 1)
        first = first.replace(year=months // 12, month=months % 12 + 1)
    return datetime.combine(first, time(0), tzinfo=zone).astimezone(UTC)


class DaemonDesk:
    """Answers from one running daemon (`bot.ops.telegram_control.ControlDesk`)."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon

    def status(self) -> str:
        """The daemon's status as the heartbeat writes it."""
        return status_text(self.daemon.snapshot())

    def _open_orders(self) -> list[OrderView]:
        runtime = self.daemon.runtime
        return runtime.journal.orders(status=LIVE_ORDER_STATUSES, wallet=runtime.wallet)

    async def orders(self) -> str:
        """The wallet's open orders (journal)."""
        return orders_text(self._open_orders(), self.daemon.engine.convention)

    async def _report(
        self, start: datetime | None, period: BucketPeriod | None
    ) -> str | dict[str, Summary]:
        settings = self.daemon.settings
        request = ReportRequest(
            start=start,
            period=period,
            zone=settings.accounting.time_zone,
            method=CostMethod(settings.accounting.cost_basis),
        )
        configured = [s.name for s in settings.strategies]
        quote_of = self.daemon.engine.convention.quote_of
        try:
            report = await build_report_off_loop(
                settings.journal.url,
                request,
                configured,
                quote_of,
                wallet=self.daemon.runtime.journal.wallet,
            )
        except (JournalError, SetupError, OSError) as exc:
            return f"the journal cannot be read now: {exc}".splitlines()[0]
        return report.summaries

    async def profit(self) -> str:
        """Per strategy, over the whole journal."""
        found = await self._report(None, None)
        if isinstance(found, str):
            return found
        return profit_text(found, self.daemon.engine.convention)

    async def period(self, period: BucketPeriod, count: int) -> str:
        """The last `count` buckets of `period`, summed over the strategies."""
        zone = self.daemon.settings.accounting.time_zone
        start = window_start(self.daemon.runtime.clock.now(), period, count, zone)
        found = await self._report(start, period)
        return found if isinstance(found, str) else period_text(found, period, count, zone)

    async def balance(self) -> str:
        """APT, the strategies' tokens and those of the open orders, read from the node.

        The balances are read at once (each within `BALANCE_TIMEOUT`); the open orders
        come from an indexed query in a worker thread, not the wallet's whole history.
        """
        runtime = self.daemon.runtime
        wallet = runtime.wallet
        if wallet is None:
            return balance_text(None, [])
        names = ["APT"]
        for strategy in self.daemon.engine.strategies.values():
            names += needed_tokens(strategy)
        live = await asyncio.to_thread(
            runtime.journal.orders, wallet=wallet, status=LIVE_ORDER_STATUSES
        )
        for order in live:
            names += [order.from_token, order.to_token]
        tokens: dict[str, Token] = {}
        unknown: list[str] = []
        for name in names:
            try:
                token = runtime.tokens.find(name)
            except TokenLookupError:
                if name not in unknown:
                    unknown.append(name)
                continue
            tokens.setdefault(token.address, token)
        label = self.daemon.engine.convention.label
        amounts = await asyncio.gather(*(self._balance(wallet, t) for t in tokens.values()))
        rows: list[tuple[str, Decimal | None]] = [
            (label(token.address), amount)
            for token, amount in zip(tokens.values(), amounts, strict=True)
        ]
        rows += [(label(name), None) for name in unknown]
        return balance_text(wallet, rows)

    async def _balance(self, wallet: str, token: Token) -> Decimal | None:
        try:
            units = await asyncio.wait_for(
                self.daemon.runtime.node.balance(Address.parse(wallet), token.address),
                BALANCE_TIMEOUT,
            )
        except Exception:  # informative only: a node hiccup or timeout
            return None
        return from_base_units(units, token.decimals)

    def strategies(self) -> Collection[str]:
        """The running and the paused strategies."""
        engine = self.daemon.engine
        return {*engine.strategies, *engine.paused}

    async def find_order(self, text: str) -> tuple[str, str] | str:
        """The open order whose id is `text`, or starts with it (at least 6 characters)."""
        wanted = text.strip().lower()
        orders = self._open_orders()
        exact = [o for o in orders if o.order_id.lower() == wanted]
        prefixed = [o for o in orders if o.order_id.lower().startswith(wanted)]
        found = exact or (prefixed if len(wanted) >= _MIN_PREFIX else [])
        if len(found) == 1:
            return found[0].kind, found[0].order_id
        if found:
            return f"{text[:80]!r} names {len(found)} open orders; give more of the id"
        return f"no open order {text[:80]!r} (see /orders)"


def build_control(daemon: Daemon) -> TelegramControl | None:
    """The daemon's control poller, or None (off, a dry run, or no bot token).

    Raises:
        AlertConfigError: the token file is unusable (named).
    """
    alerts = daemon.settings.alerts
    if not alerts.control_enabled or daemon.dry_run:
        return None
    token = resolve_secret(
        alerts.telegram_bot_token, alerts.telegram_bot_token_file, what="telegram bot token"
    )
    if token is None:
        return None
    chats = alerts.control_chat_ids or [alerts.telegram_chat_id or ""]
    return TelegramControl(
        api_url=alerts.telegram_api_url,
        token=token,
        chat_ids=[c for c in chats if c],
        user_ids=alerts.control_user_ids,
        desk=DaemonDesk(daemon),
        journal=daemon.runtime.journal,
        clock=daemon.wall,
        poll_seconds=alerts.control_poll_seconds,
        confirm_seconds=alerts.control_confirm_seconds,
    )


class ControlTask:
    """The poller's task in the daemon: started, restarted on reload, stopped."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.task: asyncio.Task[None] | None = None
        self._log = get_logger("telegram")

    def start(self) -> None:
        """Start polling when `[alerts].control_enabled` (an unusable token is logged)."""
        try:
            control = build_control(self.daemon)
        except AlertConfigError as exc:
            self._log.error("telegram.control_off", reason=str(exc))
            return
        if control is not None:
            self.task = asyncio.create_task(control.run_forever(), name="telegram-control")
            self._log.info("telegram.control_on", chats=len(control.chat_ids))

    async def stop(self) -> None:
        """Stop polling (waits for the task to end)."""
        task, self.task = self.task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def restart(self) -> None:
        """Stop, then start with the daemon's current settings."""
        await self.stop()
        self.start()
