"""The console's routes for the reports folder and the remote bots.

* `GET /api/v1/reports` — the HTML reports under `[console].reports_dir`;
  `GET /reports/files/{path}` — one file of that folder, read-only (`bot.console.reports`),
  an HTML report under a Content-Security-Policy that lets no script run.
* `GET /api/v1/remotes` — each remote bot's status, wallet P&L and open orders
  (`bot.console.remotes`); no remote configured: an empty list.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from bot.console.core import ConsoleCore
from bot.console.models import RemotesAnswer, ReportsAnswer
from bot.console.remotes import RemoteBots
from bot.console.reports import REPORT_CSP, list_reports, read_report, reports_root

__all__ = ["remote_router", "report_api_router", "report_file_router"]


def report_api_router(core: ConsoleCore) -> APIRouter:
    """`/reports` under the API prefix."""
    router = APIRouter()

    @router.get("/reports", response_model=ReportsAnswer)
    async def reports() -> ReportsAnswer:
        """The HTML reports under `[console].reports_dir`, newest first."""
        root = reports_root(core.sources.settings())
        return await core.off_loop(lambda: list_reports(root))

    return router


def report_file_router(core: ConsoleCore, headers: dict[str, str]) -> APIRouter:
    """`/reports/files/{path}`: one file of the reports folder (a page: session needed)."""
    router = APIRouter(include_in_schema=False)

    @router.get("/reports/files/{path:path}")
    async def report_file(path: str) -> Response:
        """The file at `path` in the reports folder, or 404 for anything else."""
        root = reports_root(core.sources.settings())
        found = await core.off_loop(lambda: read_report(root, path))
        if found is None:
            return Response(b'{"detail": "no such report"}', 404, media_type="application/json")
        html = found.media_type.startswith("text/html")
        extra = {"content-security-policy": REPORT_CSP} if html else {}
        return Response(found.content, media_type=found.media_type, headers={**headers, **extra})

    return router


def remote_router(remotes: RemoteBots | None) -> APIRouter:
    """`/remotes` under the API prefix."""
    router = APIRouter()

    @router.get("/remotes", response_model=RemotesAnswer)
    async def remote_bots() -> RemotesAnswer:
        """Each remote bot as this console last reached it (read-only)."""
        if remotes is None:
            return RemotesAnswer(items=[])
        return await remotes.snapshot()

    return router
