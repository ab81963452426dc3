"""The console's controls: each one a command on the daemon's queue, journaled.

A control is checked against the journal and the running settings first (an unknown
strategy or order: 404 with one line; an order already closed: 409), then queued with
`enqueue_command` — its row keeps when (the console's clock) and from where (`by`: the
client's address, `source`: "console"). The daemon runs it (`bot.engine.commands`);
`GET /api/v1/commands/{id}` tells what became of it.

Kinds, as the daemon knows them: `pause` / `resume` `{strategy}`, `stopentry` (every
running strategy paused; placed orders stay), `cancel` `{kind, order_id}`, `reconcile`,
`reload` (re-read the config as SIGHUP does).
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from fastapi import APIRouter, Body, HTTPException, Query, Request

from bot.console.core import ConsoleCore, client_address, not_found
from bot.console.models import CancelBody, CommandAccepted, CommandModel, CommandsAnswer
from bot.console.reads import find_order, orders_of_id
from bot.console.views import DEFAULT_LIMIT, MAX_LIMIT, plain
from bot.domain import CLOSED_STATUSES
from bot.engine.pauses import paused_strategies
from bot.journal.views import CommandView

__all__ = ["SOURCE", "control_router"]

SOURCE: Final = "console"
"""The `source` of every command the console queues."""
PREFIX: Final = "/api/v1"


def _command_model(command: CommandView) -> CommandModel:
    return CommandModel(
        id=command.id,
        kind=command.kind,
        state=command.state,
        payload=plain(command.payload),
        created_at=command.created_at,
        updated_at=command.updated_at,
        result=command.result,
    )


def control_router(core: ConsoleCore) -> APIRouter:
    """The control endpoints (POST) and the command queue's views."""
    router = APIRouter()
    sources = core.sources

    async def enqueue(request: Request, kind: str, payload: dict[str, Any]) -> CommandAccepted:
        full = {**payload, "by": client_address(request), "source": SOURCE}
        at = core.clock.now()
        command_id = await core.off_loop(lambda: sources.journal.enqueue_command(kind, full, at=at))
        return CommandAccepted(
            command_id=command_id,
            kind=kind,
            state="queued",
            url=f"{PREFIX}/commands/{command_id}",
        )

    def known_strategy(name: str, kind: str) -> None:
        """404 unless the strategy can take it: runs or is enabled (a resume: or is paused)."""
        enabled = {e.name for e in sources.settings().strategies if e.enabled}
        status = sources.status()
        running = set(status.strategies) if status is not None else set()
        known = enabled | running
        if kind == "resume":
            known |= set(paused_strategies(sources.journal))
        if name in known:
            return
        listed = ", ".join(sorted(enabled | running)) or "none"
        raise not_found(f"no strategy {name!r} (known: {listed})")

    async def pause_or_resume(request: Request, name: str, kind: str) -> CommandAccepted:
        await core.off_loop(lambda: known_strategy(name, kind))
        return await enqueue(request, kind, {"strategy": name})

    @router.post(
        "/strategies/{name}/pause",
        status_code=202,
        response_model=CommandAccepted,
        responses={404: {}},
    )
    async def pause(request: Request, name: str) -> CommandAccepted:
        """Pause one strategy: it ticks no more until resumed (kept across restarts)."""
        return await pause_or_resume(request, name, "pause")

    @router.post(
        "/strategies/{name}/resume",
        status_code=202,
        response_model=CommandAccepted,
        responses={404: {}},
    )
    async def resume(request: Request, name: str) -> CommandAccepted:
        """Resume a paused strategy."""
        return await pause_or_resume(request, name, "resume")

    @router.post("/stopentry", status_code=202, response_model=CommandAccepted)
    async def stop_entries(request: Request) -> CommandAccepted:
        """Stop new entries: every running strategy paused; open orders stay managed."""
        return await enqueue(request, "stopentry", {})

    @router.post(
        "/orders/{order_id}/cancel",
        status_code=202,
        response_model=CommandAccepted,
        responses={404: {}, 409: {}},
    )
    async def cancel(
        request: Request,
        order_id: str,
        body: Annotated[CancelBody | None, Body()] = None,
    ) -> CommandAccepted:
        """Cancel one order through the daemon's executor (journaled as an intent)."""
        kind = body.kind if body is not None else None

        def check() -> tuple[str, str]:
            found = find_order(orders_of_id(sources.journal, order_id), order_id, kind)
            if found.status in CLOSED_STATUSES:
                raise HTTPException(409, f"order {order_id!r} is already {found.status}")
            return found.kind, found.order_id

        order_kind, canonical = await core.off_loop(check)
        return await enqueue(request, "cancel", {"kind": order_kind, "order_id": canonical})

    @router.post("/reconcile", status_code=202, response_model=CommandAccepted)
    async def reconcile(request: Request) -> CommandAccepted:
        """Settle now what lost its answer (as the periodic reconcile does)."""
        return await enqueue(request, "reconcile", {})

    @router.post("/reload", status_code=202, response_model=CommandAccepted)
    async def reload(request: Request) -> CommandAccepted:
        """Re-read the config file and apply what can change live (as SIGHUP)."""
        return await enqueue(request, "reload", {})

    @router.get("/commands", response_model=CommandsAnswer)
    async def commands(
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    ) -> CommandsAnswer:
        """The most recent commands (any source), newest first."""
        rows = await core.off_loop(sources.journal.commands)
        newest = sorted(rows, key=lambda c: c.id, reverse=True)[:limit]
        return CommandsAnswer(items=[_command_model(c) for c in newest])

    @router.get("/commands/{command_id}", response_model=CommandModel, responses={404: {}})
    async def command(command_id: int) -> CommandModel:
        """One command: queued, taken, done or failed, and the daemon's result line."""
        found = await core.off_loop(lambda: sources.journal.command(command_id))
        if found is None:
            raise not_found(f"no command {command_id}")
        return _command_model(found)

    return router
