"""The console's read endpoints: status, strategies, orders, intents, transactions, prices.

Every journal read runs in a worker thread (`ConsoleCore.off_loop`). Lists are newest
first, paged by `cursor` (the `next_cursor` of the previous page) and `limit` (at most
`views.MAX_LIMIT`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Final, Literal

from fastapi import APIRouter, HTTPException, Query

from bot import __version__
from bot.accounting import BucketPeriod, CostMethod
from bot.aptos.tokens import TokenLookupError, token_key
from bot.console.core import ConsoleCore, not_found
from bot.console.models import (
    AlertModel,
    AlertsAnswer,
    BalanceModel,
    BalancesAnswer,
    FillsPage,
    HealthAnswer,
    IntentModel,
    IntentsPage,
    OrderDetail,
    OrdersPage,
    PnlAnswer,
    PricesAnswer,
    ScheduleModel,
    StatusAnswer,
    StrategiesAnswer,
    StrategyModel,
    TransactionsPage,
    ValueAnswer,
)
from bot.console.pnl import PnlQuery, pnl_answer
from bot.console.value import DEFAULT_POINTS, MAX_POINTS, value_answer
from bot.console.views import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    fill_model,
    fill_of_order_model,
    intent_model,
    order_model,
    page,
    plain,
    price_model,
    transaction_model,
    transition_model,
)
from bot.domain import APT_COIN_TYPE, CLOSED_STATUSES, LIVE_ORDER_STATUSES, OrderKind, OrderStatus
from bot.engine.pauses import paused_strategies
from bot.journal import Journal
from bot.journal.fill_pages import FillQuery, fills_page
from bot.journal.intents import INTENT_STATES
from bot.journal.transactions import TX_STATES
from bot.journal.views import OrderView
from bot.ops.status_file import DaemonStatus, StrategyStatus

__all__ = ["ORDER_STATES", "find_order", "orders_of_id", "read_router"]

ORDER_STATES: Final = ("open", "closed", *(str(s) for s in OrderStatus))
"""What `/orders?state=` takes: `open` (may still trade), `closed`, or one status."""
MAX_PRICES: Final = 5000

Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Rows per page.")]
Cursor = Annotated[int | None, Query(ge=1, description="The `next_cursor` of the previous page.")]


def find_order(orders: list[OrderView], order_id: str, kind: str | None) -> OrderView:
    """The one order of that id (and kind).

    Raises:
        HTTPException: 404 when there is none, 409 when both kinds have it and no kind
            was given.
    """
    found = [o for o in orders if kind is None or o.kind == kind]
    if not found:
        raise not_found(f"no order {order_id!r} in the journal")
    if len(found) > 1:
        raise HTTPException(409, f"order {order_id!r} exists as dca and limit: give kind")
    return found[0]


def orders_of_id(journal: Journal, order_id: str) -> list[OrderView]:
    """The stored orders of that id (one per kind that has it)."""
    return [o for kind in ("dca", "limit") if (o := journal.order(kind, order_id)) is not None]


def _status_answer(status: DaemonStatus | None) -> StatusAnswer:
    if status is None:
        return StatusAnswer(available=False)
    return StatusAnswer(
        available=True,
        state=status.state,
        mode=status.mode,
        wallet=status.wallet,
        version=status.version,
        dry_run=status.dry_run,
        started_at=status.started_at,
        updated_at=status.updated_at,
        healthy=status.healthy,
        problem=status.problem,
        open_orders=status.open_orders,
        apt_balance=status.apt_balance,
        errors=status.errors,
        last_poll_at=status.last_poll_at,
        last_poll_ok_at=status.last_poll_ok_at,
        heartbeat_seconds=status.heartbeat_seconds,
        reloaded_at=status.reloaded_at,
        market_now=status.market_now,
        clock=status.clock,
    )


def _strategies(core: ConsoleCore) -> StrategiesAnswer:
    """Configured strategies, plus any the status or the pause flags name."""
    sources = core.sources
    entries = {e.name: e for e in sources.settings().strategies}
    status = sources.status()
    seen = status.strategies if status is not None else {}
    paused = paused_strategies(sources.journal)
    items = []
    for name in sorted({*entries, *seen, *paused}):
        entry = entries.get(name)
        counters = seen.get(name, StrategyStatus())
        known = name in seen
        items.append(
            StrategyModel(
                name=name,
                configured=entry is not None,
                plugin=entry.plugin if entry else None,
                enabled=entry.enabled if entry else None,
                params=plain(entry.params) if entry else {},
                schedule=None
                if entry is None
                else ScheduleModel(
                    interval_seconds=entry.schedule.interval_seconds,
                    cron=entry.schedule.cron,
                    tick_at_start=entry.schedule.tick_at_start,
                ),
                budget=plain(entry.budget) if entry else {},
                paused=name in paused or counters.paused,
                paused_since=paused.get(name),
                ticks=counters.ticks if known else None,
                actions=counters.actions if known else None,
                errors=counters.errors if known else None,
                refused=counters.refused if known else None,
                last_tick=counters.last_tick,
                last_error=counters.last_error,
                next_tick=counters.next_tick,
                stuck=counters.stuck,
            )
        )
    return StrategiesAnswer(items=items)


def read_router(core: ConsoleCore) -> APIRouter:
    """The read endpoints over `core`'s sources."""
    router = APIRouter()
    sources = core.sources

    @router.get("/health", response_model=HealthAnswer)
    async def health() -> HealthAnswer:
        """Whether the daemon runs and is healthy, by its last status."""
        status = await core.off_loop(sources.status)
        running = status is not None and status.state in ("starting", "running")
        return HealthAnswer(
            ok=running and bool(status and status.healthy),
            state=status.state if status else None,
            healthy=status.healthy if status else None,
            problem=status.problem if status else None,
            version=__version__,
            now=core.clock.now(),
        )

    @router.get("/status", response_model=StatusAnswer)
    async def status() -> StatusAnswer:
        """The daemon's last status: state, wallet, counters, last poll, APT for gas."""
        return _status_answer(await core.off_loop(sources.status))

    @router.get("/strategies", response_model=StrategiesAnswer)
    async def strategies() -> StrategiesAnswer:
        """Each strategy's parameters, schedule, last tick, errors, pause."""
        return await core.off_loop(lambda: _strategies(core))

    @router.get("/orders", response_model=OrdersPage)
    async def orders(
        strategy: str | None = None,
        kind: OrderKind | None = None,
        state: Annotated[
            Literal[ORDER_STATES] | None,  # type: ignore[valid-type]
            Query(description="open, closed, or one status"),
        ] = None,
        cursor: Cursor = None,
        limit: Limit = DEFAULT_LIMIT,
    ) -> OrdersPage:
        """Orders newest first, filtered by strategy, kind and state."""

        def read() -> OrdersPage:
            statuses = None
            if state == "open":
                statuses = list(LIVE_ORDER_STATUSES)
            elif state == "closed":
                statuses = list(CLOSED_STATUSES)
            elif state is not None:
                statuses = [state]
            rows, total = sources.journal.orders_page(
                status=statuses, strategy=strategy, kind=kind, before_row_id=cursor, limit=limit + 1
            )
            more = len(rows) > limit
            items = [order_model(o, sources.symbol) for o in rows[:limit]]
            next_cursor = str(rows[limit - 1].row_id) if more else None
            return OrdersPage(items=items, total=total, next_cursor=next_cursor)

        return await core.off_loop(read)

    @router.get("/orders/{order_id}", response_model=OrderDetail, responses={404: {}, 409: {}})
    async def order(order_id: str, kind: OrderKind | None = None) -> OrderDetail:
        """One order with its transitions, fills, intent and transactions."""

        def read() -> OrderDetail:
            journal = sources.journal
            found = find_order(orders_of_id(journal, order_id), order_id, kind)
            intent = None if found.intent_id is None else journal.intent(found.intent_id)
            txs = [] if intent is None else journal.transactions(intent_id=intent.id)
            return OrderDetail(
                order=order_model(found, sources.symbol),
                transitions=[
                    transition_model(t) for t in journal.transitions(found.kind, order_id)
                ],
                fills=[fill_model(f) for f in journal.fills(found.kind, order_id)],
                intent=None if intent is None else intent_model(intent),
                transactions=[transaction_model(t) for t in txs],
            )

        return await core.off_loop(read)

    @router.get("/fills", response_model=FillsPage)
    async def fills(
        strategy: str | None = None,
        order: Annotated[str | None, Query(description="An order id.")] = None,
        kind: OrderKind | None = None,
        type: Annotated[
            str | None, Query(max_length=40, description="`filled`, `created`, `refund`…")
        ] = None,
        start: Annotated[datetime | None, Query(alias="from")] = None,
        end: Annotated[datetime | None, Query(alias="to")] = None,
        cursor: Cursor = None,
        limit: Limit = DEFAULT_LIMIT,
    ) -> FillsPage:
        """Fills of every order newest first, by strategy, order, kind, type and [from, to)."""
        query = FillQuery(strategy, order, kind, type, _aware(start), _aware(end))

        def read() -> FillsPage:
            rows, total = fills_page(sources.journal, query, before_row_id=cursor, limit=limit + 1)
            items = [fill_of_order_model(f, sources.symbol) for f in rows[:limit]]
            next_cursor = str(rows[limit - 1].row_id) if len(rows) > limit else None
            return FillsPage(items=items, total=total, next_cursor=next_cursor)

        return await core.off_loop(read)

    @router.get("/intents", response_model=IntentsPage)
    async def intents(
        strategy: str | None = None,
        state: Literal[INTENT_STATES] | None = None,  # type: ignore[valid-type]
        cursor: Cursor = None,
        limit: Limit = DEFAULT_LIMIT,
    ) -> IntentsPage:
        """Intents newest first, filtered by strategy and state."""

        def read() -> IntentsPage:
            states = None if state is None else [state]
            rows = sources.journal.intents(states, strategy)
            found = page(rows, lambda i: i.id, cursor=cursor, limit=limit)
            items = [intent_model(i) for i in found.items]
            return IntentsPage(items=items, total=found.total, next_cursor=found.next_cursor)

        return await core.off_loop(read)

    @router.get("/intents/{intent_id}", response_model=IntentModel, responses={404: {}})
    async def intent(intent_id: int) -> IntentModel:
        """One intent with every state it went through."""

        def read() -> IntentModel:
            found = sources.journal.intent(intent_id)
            if found is None:
                raise not_found(f"no intent {intent_id} in the journal")
            return intent_model(found, sources.journal.intent_history(intent_id))

        return await core.off_loop(read)

    @router.get("/transactions", response_model=TransactionsPage)
    async def transactions(
        state: Literal[TX_STATES] | None = None,  # type: ignore[valid-type]
        intent_id: Annotated[int | None, Query(ge=1)] = None,
        cursor: Cursor = None,
        limit: Limit = DEFAULT_LIMIT,
    ) -> TransactionsPage:
        """Signed transactions newest first (`cursor`: a position in the journal)."""

        def read() -> TransactionsPage:
            states = None if state is None else [state]
            rows = list(enumerate(sources.journal.transactions(intent_id, states), start=1))
            found = page(rows, lambda r: r[0], cursor=cursor, limit=limit)
            items = [transaction_model(tx) for _, tx in found.items]
            return TransactionsPage(items=items, total=found.total, next_cursor=found.next_cursor)

        return await core.off_loop(read)

    @router.get("/balances", response_model=BalancesAnswer)
    async def balances() -> BalancesAnswer:
        """The balances the daemon last reported (today: APT for gas)."""
        status = await core.off_loop(sources.status)
        if status is None or status.apt_balance is None:
            return BalancesAnswer(source="none", as_of=None, items=[])
        apt = BalanceModel(token=APT_COIN_TYPE, symbol="APT", amount=status.apt_balance)
        items = [apt]
        return BalancesAnswer(source="status", as_of=status.updated_at, items=items)

    @router.get("/prices", response_model=PricesAnswer)
    async def prices(
        token: Annotated[str, Query(description="A coin type or FA address.")],
        start: Annotated[datetime | None, Query(alias="from")] = None,
        end: Annotated[datetime | None, Query(alias="to")] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_PRICES)] = 500,
    ) -> PricesAnswer:
        """Recorded prices of one token in [from, to), the latest `limit` of them."""
        try:
            canonical = token_key(token)
        except TokenLookupError as exc:
            raise HTTPException(422, f"query.token: {exc}") from None
        since, until = _aware(start), _aware(end)

        def read() -> PricesAnswer:
            ticks = sources.journal.price_ticks(canonical, since, until)[-limit:]
            return PricesAnswer(token=canonical, items=[price_model(t) for t in ticks])

        return await core.off_loop(read)

    @router.get("/alerts", response_model=AlertsAnswer)
    async def alerts(limit: Limit = DEFAULT_LIMIT) -> AlertsAnswer:
        """The daemon's recent alerts, newest first (when it keeps them)."""
        recent = sources.alerts
        if recent is None:
            return AlertsAnswer(kept=False, items=[])
        kept = await core.off_loop(recent)
        newest = sorted(kept, key=lambda a: a.at, reverse=True)[:limit]
        items = [
            AlertModel(kind=a.kind, text=a.text, at=a.at, fields=dict(a.fields)) for a in newest
        ]
        return AlertsAnswer(kept=True, items=items)

    @router.get("/pnl", response_model=PnlAnswer)
    async def pnl(
        start: Annotated[datetime | None, Query(alias="from")] = None,
        end: Annotated[datetime | None, Query(alias="to")] = None,
        by: BucketPeriod | None = None,
    ) -> PnlAnswer:
        """P&L per strategy and per wallet, by `[accounting]` (cost basis, time zone)."""
        since, until = _aware(start), _aware(end)
        if since is not None and until is not None and since > until:
            raise HTTPException(422, "query.from: is after query.to")
        accounting = sources.settings().accounting
        query = PnlQuery(
            start=since,
            end=until,
            period=by,
            zone=accounting.time_zone,
            method=CostMethod(accounting.cost_basis),
        )
        return await core.off_loop(
            lambda: pnl_answer(sources.journal, query, sources.quote_of, sources.symbol)
        )

    @router.get("/value", response_model=ValueAnswer)
    async def value(
        start: Annotated[datetime | None, Query(alias="from")] = None,
        end: Annotated[datetime | None, Query(alias="to")] = None,
        points: Annotated[int, Query(ge=2, le=MAX_POINTS)] = DEFAULT_POINTS,
    ) -> ValueAnswer:
        """Each wallet's value, remaining cost and P&L at `points` moments of [from, to]."""
        since, until = _aware(start), _aware(end)
        if since is not None and until is not None and since > until:
            raise HTTPException(422, "query.from: is after query.to")
        method = CostMethod(sources.settings().accounting.cost_basis)
        return await core.off_loop(
            lambda: value_answer(
                sources.journal, start=since, end=until, points=points, method=method
            )
        )

    return router


def _aware(moment: datetime | None) -> datetime | None:
    """A query time as aware UTC (no offset given: UTC, as everywhere in the bot)."""
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
