"""What the daemon sees, turned into alerts.

The daemon calls these hooks; each decides whether an alert is due and emits it through
the `Alerter` (which never blocks). No hook raises. Order alerts carry numbers: a new fill
(`fill`) its amounts, its price and the strategy's average entry after it; an
ended order (`order_filled`, `order_expired`, `order_cancelled`) what it spent, got and
gave back (`bot.ops.fill_news`, read once per event with the console's line).

Conditions that persist are reported once, not at every tick: a strategy's same error
again within an hour, the same risk cap of the same strategy within an hour, a strategy
stuck once until it makes progress again, low APT until it recovers (or every six hours
while it stays low), a polling outage once until a poll succeeds again.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Final, Protocol

from bot.chain.errors import ForeignSigner
from bot.clock import Clock
from bot.config import AlertSettings
from bot.domain import CAP_RULES
from bot.engine.actions import describe
from bot.engine.engine import TickReport
from bot.engine.events import (
    FillsRecorded,
    ForeignOrder,
    OrderCancelled,
    OrderEvent,
    OrderExpired,
    OrderFilled,
)
from bot.journal import OrderView
from bot.logging import get_logger
from bot.money import format_decimal
from bot.ops.alert_channels import iso_utc
from bot.ops.fill_news import FillNews, FillNewsReader, OrderEnd, short_id
from bot.price_view import PriceConvention

__all__ = [
    "CAP_RULES",
    "LOW_APT_REPEAT",
    "REPEAT_AFTER",
    "AlertSink",
    "AlertSources",
    "OrderLookup",
    "short_id",
]

REPEAT_AFTER: Final = timedelta(hours=1)
"""The same strategy error, or the same cap of the same strategy, is re-sent after this."""
LOW_APT_REPEAT: Final = timedelta(hours=6)
"""While APT stays low, the alert is repeated this often."""

_ORDER_ALERTS: Final = (
    (OrderFilled, "order_filled", "filled"),
    (OrderExpired, "order_expired", "expired"),
    (OrderCancelled, "order_cancelled", "cancelled"),
)
_DAEMON_ALERTS: Final = {"started": "daemon_started", "stopped": "daemon_stopped"}


class AlertSink(Protocol):
    """Where alerts go (`bot.ops.alerts.Alerter`)."""

    @property
    def clock(self) -> Clock:
        """The clock alert times come from."""
        ...

    def wants(self, kind: str) -> bool:
        """True when an alert of `kind` would be sent."""
        ...

    def emit(self, kind: str, text: str, **fields: object) -> None:
        """Queue an alert (never blocks, never raises)."""
        ...


class OrderLookup(Protocol):
    """Finds a stored order (`bot.journal.Journal` is one)."""

    def order(self, kind: str, order_id: str) -> OrderView | None:
        """The stored order, or None."""
        ...


class AlertSources:
    """Turns order events, tick reports and heartbeat readings into alerts.

    `orders` (optional, e.g. the journal) adds the owning strategy and the amounts to
    order alerts; `news` (optional) the numbers of fills (`fill` alerts, sent only with
    it) and of ended orders. `expect_polls=False` (a dry run has no order tracker) turns
    the no-poll check off.
    """

    def __init__(
        self,
        alerter: AlertSink,
        settings: AlertSettings,
        *,
        orders: OrderLookup | None = None,
        expect_polls: bool = True,
        convention: PriceConvention | None = None,
        news: FillNewsReader | None = None,
    ) -> None:
        self.convention = convention
        self.news = news
        self.alerter = alerter
        self.settings = settings
        self.orders = orders
        self.expect_polls = expect_polls
        self._errors: dict[str, tuple[str, datetime]] = {}
        self._caps: dict[tuple[str, str], datetime] = {}
        self._low_apt_alerted_at: datetime | None = None
        self._watching_since: datetime | None = None
        self._outage_reported = False
        self._stuck: set[str] = set()
        self._log = get_logger("alerts")

    # --- order events ---------------------------------------------------------------------

    def on_order_event(self, event: OrderEvent) -> None:
        """An order filled, expired or was cancelled (subscribe this to the tracker)."""
        try:
            self._order_event(event)
        except Exception as exc:
            self._failed("order_event", exc)

    def _order_event(self, event: OrderEvent) -> None:
        if isinstance(event, ForeignOrder):  # the tracker reports each id once
            label = {"dca": "DCA", "limit": "Limit"}.get(event.kind, event.kind)
            self.alerter.emit(
                "foreign_order",
                f"{label} order {short_id(event.order_id)} listed for our wallet belongs to "
                f"{short_id(event.listed_for)}: ignored",
                order_kind=event.kind,
                order_id=event.order_id,
                listed_for=event.listed_for,
            )
            return
        if isinstance(event, FillsRecorded):
            self._fill(event)
            return
        found = next(((k, v) for cls, k, v in _ORDER_ALERTS if isinstance(event, cls)), None)
        if found is None:
            return
        kind, verb = found
        if not self.alerter.wants(kind):
            return
        label = {"dca": "DCA", "limit": "Limit"}.get(event.kind, event.kind)
        fields: dict[str, object] = {"order_kind": event.kind, "order_id": event.order_id}
        owner = ""
        view = self.orders.order(event.kind, event.order_id) if self.orders else None
        if view is not None:
            owner = f" of {view.strategy}" if view.strategy else ""
            fields |= _order_fields(view)
        text = f"{label} order {short_id(event.order_id)}{owner} {verb}"
        end = self.news.news(event) if self.news is not None else None
        if isinstance(end, OrderEnd):
            text = end.line()
            fields |= end.fields()
        self.alerter.emit(kind, text, **fields)

    def _fill(self, event: FillsRecorded) -> None:
        """New fills that traded: amounts, price, the strategy's average entry, progress."""
        if self.news is None or not self.alerter.wants("fill"):
            return
        news = self.news.news(event)
        if isinstance(news, FillNews):
            self.alerter.emit("fill", news.line(), **news.fields())

    # --- tick reports ---------------------------------------------------------------------

    def on_tick_report(self, report: TickReport) -> None:
        """A strategy failed, an action's transaction failed, or a risk cap refused it."""
        try:
            self._tick_report(report)
        except Exception as exc:
            self._failed("tick_report", exc)

    def _tick_report(self, report: TickReport) -> None:
        name = report.strategy
        now = self.alerter.clock.now()
        if report.ok:
            self._errors.pop(name, None)
        else:
            error = report.error or "unknown error"
            last = self._errors.get(name)
            if last is None or last[0] != error or now - last[1] >= REPEAT_AFTER:
                self._errors[name] = (error, now)
                self.alerter.emit(
                    "strategy_error", f"Strategy {name} failed: {error}", strategy=name, error=error
                )
        for action, outcome in report.outcomes:
            if outcome.state != "failed":
                continue
            what = describe(action, self.convention)
            detail = f": {outcome.detail}" if outcome.detail else ""
            self.alerter.emit(
                "transaction_failed",
                f"{name}: {what} failed{detail}",
                strategy=name,
                action=what,
                detail=outcome.detail or None,
                tx_hash=outcome.tx_hash,
                order_id=outcome.order_id,
            )
        for action, refusal in report.refusals:
            rule = refusal.rule
            if rule not in CAP_RULES:
                continue
            last_cap = self._caps.get((name, rule))
            if last_cap is not None and now - last_cap < REPEAT_AFTER:
                continue
            self._caps[(name, rule)] = now
            what = describe(action, self.convention)
            self.alerter.emit(
                "risk_cap_hit",
                f"{name}: {what} refused ({refusal})",
                strategy=name,
                rule=rule,
                reason=str(refusal),
                action=what,
            )

    def on_stuck(self, stuck: Mapping[str, str]) -> None:
        """The strategies getting nowhere now: each alerted once per spell of being stuck."""
        try:
            for name, why in stuck.items():
                if name not in self._stuck:
                    self.alerter.emit(
                        "strategy_stuck",
                        f"Strategy {name} is stuck: {why}",
                        strategy=name,
                        reason=why,
                    )
            self._stuck = set(stuck)
        except Exception as exc:
            self._failed("stuck", exc)

    # --- heartbeat ------------------------------------------------------------------------

    def on_heartbeat(
        self, now: datetime, last_poll_ok_at: datetime | None, apt_balance: Decimal | None
    ) -> None:
        """Low APT for gas; no successful order poll for `no_poll_minutes`.

        `apt_balance` None: not known this time (no alert either way). `last_poll_ok_at`
        None: no poll has succeeded yet, so the outage is counted from the first heartbeat.
        """
        try:
            self._low_apt(now, apt_balance)
        except Exception as exc:
            self._failed("heartbeat", exc)
        try:
            self._no_poll(now, last_poll_ok_at)
        except Exception as exc:
            self._failed("heartbeat", exc)

    def _low_apt(self, now: datetime, balance: Decimal | None) -> None:
        if balance is None:
            return
        threshold = self.settings.low_apt_for_gas
        if balance >= threshold:
            self._low_apt_alerted_at = None
            return
        last = self._low_apt_alerted_at
        if last is not None and now - last < LOW_APT_REPEAT:
            return
        self._low_apt_alerted_at = now
        self.alerter.emit(
            "low_apt_for_gas",
            f"Low APT for gas: {format_decimal(balance)} APT left "
            f"(alert below {format_decimal(threshold)} APT)",
            apt_balance=balance,
            threshold=threshold,
        )

    def _no_poll(self, now: datetime, last_ok: datetime | None) -> None:
        if not self.expect_polls:
            return
        if self._watching_since is None:
            self._watching_since = now
        since = last_ok if last_ok is not None else self._watching_since
        limit = timedelta(minutes=self.settings.no_poll_minutes)
        if now - since < limit:
            self._outage_reported = False
            return
        if self._outage_reported:
            return
        self._outage_reported = True
        minutes = int((now - since).total_seconds() // 60)
        last = f"last success {iso_utc(last_ok)}" if last_ok is not None else "none since start"
        self.alerter.emit(
            "no_poll",
            f"No successful order poll for {minutes} minutes ({last})",
            minutes=minutes,
            last_poll_ok_at=last_ok,
        )

    # --- the wallet -----------------------------------------------------------------------

    def on_foreign_signer(self, cause: ForeignSigner) -> None:
        """Another signer used one of the wallet's sequence numbers: trading is paused."""
        try:
            self.alerter.emit(
                "foreign_signer",
                f"Foreign signer on wallet {short_id(cause.sender)}: sequence number "
                f"{cause.sequence_number} used by {short_id(cause.foreign_hash)}, not by this "
                "bot. Trading paused until the daemon is restarted.",
                wallet=cause.sender,
                sequence_number=cause.sequence_number,
                foreign_hash=cause.foreign_hash,
            )
        except Exception as exc:
            self._failed("foreign_signer", exc)

    # --- daemon ---------------------------------------------------------------------------

    def on_daemon(self, state: str, detail: str = "") -> None:
        """The daemon `started` or `stopped` (other states are ignored)."""
        try:
            kind = _DAEMON_ALERTS.get(state)
            if kind is None:
                return
            suffix = f": {detail}" if detail else ""
            self.alerter.emit(kind, f"Daemon {state}{suffix}", detail=detail or None)
        except Exception as exc:
            self._failed("daemon", exc)

    def _failed(self, hook: str, exc: Exception) -> None:
        self._log.error("alerts.source_failed", hook=hook, error=type(exc).__name__)


def _order_fields(view: OrderView) -> Mapping[str, object]:
    """What the journal knows of an order that a person wants in its alert."""
    return {
        "strategy": view.strategy,
        "from_token": view.from_token,
        "to_token": view.to_token,
        "amount_total": view.amount_total,
        "amount_spent": view.amount_spent,
        "to_amount_received": view.to_amount_received,
    }
