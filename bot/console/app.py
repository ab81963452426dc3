"""`create_app`: the console's FastAPI application over the daemon's sources.

Everything lives under `/api/v1` and needs the bearer token (`access.BearerAuth`, in
front of every route, so an unknown path is a 401 too); the OpenAPI schema and its page
(`/openapi.json`, `/docs`) are open: they describe the API and hold no data. Refusals
are one line: `{"detail": "..."}`; a malformed request is a 422 naming the field first
(`body.kind: …`), never echoing what was sent.

The dashboard's pages (`bot.console.pages`) are served by the same app: a browser logs in
once and carries a session cookie (`bot.console.session`) instead of the token.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBearer

from bot import __version__
from bot.clock import Clock
from bot.console.access import BearerAuth, FailedAuthLimit
from bot.console.controls import PREFIX, control_router
from bot.console.core import ConsoleCore
from bot.console.extra_routes import remote_router, report_api_router, report_file_router
from bot.console.pages import PAGE_HEADERS, page_router
from bot.console.reads import read_router
from bot.console.remotes import RemoteBots
from bot.console.session import Sessions
from bot.console.sources import ConsoleSources
from bot.journal.errors import JournalError

__all__ = ["create_app"]

_BEARER = HTTPBearer(auto_error=False, description="`[console]` token (docs/console.md)")


def create_app(
    sources: ConsoleSources,
    *,
    token: str,
    clock: Clock,
    monotonic: Callable[[], float] = time.monotonic,
    read_threads: int = 4,
    poll_seconds: float = 5.0,
    remotes: RemoteBots | None = None,
) -> FastAPI:
    """The console application.

    Args:
        sources: what the daemon has (journal, settings, status, alerts).
        token: the bearer token every `/api/v1` request must carry (non-empty).
        clock: when a control was asked (the commands' `created_at`), the health's `now`.
        monotonic: the failed-auth limit's clock (injected by tests).
        read_threads: how many journal reads may run at once, each in a worker thread.
        poll_seconds: how often an open dashboard page asks for changes.
        remotes: other bots' consoles shown read-only on the overview (None: none).
    """
    core = ConsoleCore(sources, clock, threads=read_threads)
    app = FastAPI(
        title="aptos-dca-bot console",
        version=__version__,
        description="Watch and steer the running bot (docs/console.md).",
        docs_url="/docs",
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    guarded = [Depends(_BEARER)]  # the schema's "Authorize"; BearerAuth does the checking
    app.include_router(read_router(core), prefix=PREFIX, dependencies=guarded)
    app.include_router(control_router(core), prefix=PREFIX, dependencies=guarded)
    app.include_router(report_api_router(core), prefix=PREFIX, dependencies=guarded)
    app.include_router(remote_router(remotes), prefix=PREFIX, dependencies=guarded)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(JournalError, _journal_error)
    limit = FailedAuthLimit(monotonic)
    sessions = Sessions(token, clock.now)
    app.include_router(page_router(sessions, limit, poll_seconds))
    app.include_router(report_file_router(core, PAGE_HEADERS))
    app.add_middleware(BearerAuth, token=token, limit=limit, sessions=sessions)
    return app


async def _invalid(request: Request, exc: Exception) -> JSONResponse:
    """422 naming the field and what is wrong with it; the input is never echoed."""
    assert isinstance(exc, RequestValidationError)
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error.get("loc", ())) or "request"
        problems.append(f"{where}: {error.get('msg', 'invalid')}")
    return JSONResponse({"detail": "; ".join(problems) or "invalid request"}, status_code=422)


async def _journal_error(request: Request, exc: Exception) -> JSONResponse:
    """503: the journal could not answer (one line, naming no secret)."""
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return JSONResponse({"detail": f"journal unavailable: {reason}"}, status_code=503)
