"""Other bots' consoles, read by this one for the overview (`[[console.remotes]]`), read-only.

`RemoteBots.snapshot()` gives each remote's status, wallet P&L and open orders, fetched
server-side with that remote's bearer token (read once from its 0600 file at start, and
registered with the log redactor: it never reaches a browser, an answer or a log line).

* Fetches run concurrently, each remote bounded as a whole by `timeout` seconds (connect
  and its three requests); a remote that does not answer in time is `unreachable`.
  Requests are never retried and redirects never followed.
* A result, good or bad, is kept `cache_seconds`: polls within that time cost nothing,
  and a dead remote costs at most one `timeout` per `cache_seconds`. One fetch per
  remote at a time (concurrent polls share it).
* Remote answers are untrusted input: each body is read within `max_bytes`
  (`bot.bounded_body.read_limited`) and must fit the console's own models; otherwise the
  remote is `invalid`, with a reason naming the endpoint, never the remote's text.
* A 401/403/429 from the remote is `refused` (a wrong or expired token), and kept
  `REFUSED_SECONDS` before the token is tried again: the remote's failed-auth limit (10
  a minute per address) must not lock this bot's address out.

None of this runs unless a page asks (`GET /api/v1/remotes`); it runs on the event
loop, awaiting sockets only, so it never holds up trading.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

import httpx
from pydantic import BaseModel, SecretStr, ValidationError

from bot.bounded_body import ACCEPT_ENCODING, BodyRefused, BodyTooLarge, read_limited
from bot.clock import Clock
from bot.config import Settings
from bot.console.models import (
    OrdersPage,
    PnlSummaryModel,
    RemoteBotModel,
    RemotesAnswer,
    StatusAnswer,
)
from bot.logging import register_secret
from bot.secrets import SecretFileError, read_secret_file

__all__ = ["OPEN_ORDERS_SHOWN", "Remote", "RemoteBots", "RemoteSetupError", "remotes_of"]

OPEN_ORDERS_SHOWN: Final = 20
TIMEOUT_SECONDS: Final = 2.0
CACHE_SECONDS: Final = 5.0
REFUSED_SECONDS: Final = 60.0
MAX_BYTES: Final = 1_000_000
M = TypeVar("M", bound=BaseModel)


class RemoteSetupError(Exception):
    """A remote's token cannot be had (one line naming the remote and the file)."""


@dataclass(frozen=True)
class Remote:
    """One remote console: its name, base URL and token (never shown)."""

    name: str
    url: str
    token: SecretStr


def remotes_of(settings: Settings) -> list[Remote]:
    """The remotes of `[console]`, their tokens read from their 0600 files.

    Raises:
        RemoteSetupError: a token file missing, empty or readable by others.
    """
    found = []
    for entry in settings.console.remotes:
        try:
            token = read_secret_file(entry.token_file, what=f"console remote {entry.name} token")
        except SecretFileError as exc:
            raise RemoteSetupError(f"[console].remotes {entry.name!r}: {exc}") from None
        register_secret(token.get_secret_value())
        found.append(Remote(entry.name, entry.url, token))
    return found


class _RemotePnl(BaseModel):
    """The part of a remote's `/pnl` the overview shows (other fields are ignored)."""

    wallets: list[PnlSummaryModel]


class _Refused(Exception):
    pass


class _Invalid(Exception):
    pass


class RemoteBots:
    """The remotes and what was last learnt of each (see the module docstring)."""

    def __init__(
        self,
        remotes: Sequence[Remote],
        clock: Clock,
        *,
        timeout: float = TIMEOUT_SECONDS,
        cache_seconds: float = CACHE_SECONDS,
        max_bytes: int = MAX_BYTES,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.remotes = list(remotes)
        self._clock = clock
        self._timeout = timeout
        self._cache_seconds = cache_seconds
        self._max_bytes = max_bytes
        self._monotonic = monotonic
        self._known: dict[str, tuple[float, RemoteBotModel]] = {}
        self._running: dict[str, asyncio.Task[RemoteBotModel]] = {}

    async def snapshot(self) -> RemotesAnswer:
        """Every remote as last fetched, fetching those not fetched in `cache_seconds`."""
        now = self._monotonic()
        waiting: list[asyncio.Task[RemoteBotModel]] = []
        for remote in self.remotes:
            known = self._known.get(remote.name)
            if known is not None and now - known[0] < self._kept_for(known[1]):
                continue
            task = self._running.get(remote.name)
            if task is None:
                task = asyncio.create_task(self._fetch(remote), name=f"remote {remote.name}")
                self._running[remote.name] = task
            waiting.append(task)
        if waiting:  # each bounded by `timeout`; shielded: a dropped poll ends no fetch
            await asyncio.wait([asyncio.shield(t) for t in waiting])
        items = [
            self._known[r.name][1] if r.name in self._known else self._pending(r)
            for r in self.remotes
        ]
        return RemotesAnswer(items=items)

    def _kept_for(self, found: RemoteBotModel) -> float:
        """How long a result stands before the remote is asked again."""
        if found.state == "refused":
            return max(self._cache_seconds, REFUSED_SECONDS)
        return self._cache_seconds

    def _pending(self, remote: Remote) -> RemoteBotModel:
        return RemoteBotModel(
            name=remote.name,
            state="unavailable",
            problem="not fetched yet",
            checked_at=None,
            status=None,
            wallets=[],
            open_orders=None,
        )

    async def _fetch(self, remote: Remote) -> RemoteBotModel:
        try:
            found = await self._ask(remote)
        finally:
            self._running.pop(remote.name, None)
        self._known[remote.name] = (self._monotonic(), found)
        return found

    async def _ask(self, remote: Remote) -> RemoteBotModel:
        """One round of requests to `remote`, as a model whatever happened."""
        state, problem = "ok", None
        status, wallets, orders = None, [], None
        try:
            async with (
                asyncio.timeout(self._timeout),
                httpx.AsyncClient(
                    base_url=remote.url + "/api/v1",
                    timeout=self._timeout,
                    follow_redirects=False,
                    trust_env=False,
                    headers={
                        "Authorization": f"Bearer {remote.token.get_secret_value()}",
                        "Accept": "application/json",
                        "Accept-Encoding": ACCEPT_ENCODING,
                    },
                ) as client,
            ):
                status, pnl, orders = await asyncio.gather(
                    self._get(client, "/status", StatusAnswer),
                    self._get(client, "/pnl", _RemotePnl),
                    self._get(client, f"/orders?state=open&limit={OPEN_ORDERS_SHOWN}", OrdersPage),
                )
                wallets = pnl.wallets
        except TimeoutError:
            state, problem = "unreachable", f"no answer within {self._timeout:g} s"
        except httpx.TransportError as exc:
            state, problem = "unreachable", _transport_problem(exc)
        except _Refused as exc:
            state, problem = "refused", str(exc)
        except _Invalid as exc:
            state, problem = "invalid", str(exc)
        if state != "ok":
            status, wallets, orders = None, [], None
        return RemoteBotModel(
            name=remote.name,
            state=state,
            problem=problem,
            checked_at=self._clock.now(),
            status=status,
            wallets=wallets,
            open_orders=orders,
        )

    async def _get(self, client: httpx.AsyncClient, path: str, model: type[M]) -> M:
        """GET `path` and check its answer against `model` (untrusted: bounded, validated)."""
        endpoint = path.split("?")[0]
        async with client.stream("GET", path) as response:
            if response.status_code in (401, 403, 429):
                raise _Refused(f"the remote refused this bot's token (HTTP {response.status_code})")
            if response.status_code != 200:
                raise _Invalid(f"{endpoint}: HTTP {response.status_code}")
            try:
                body = await read_limited(response, self._max_bytes)
            except BodyTooLarge:
                raise _Invalid(f"{endpoint}: answer over {self._max_bytes} bytes") from None
            except BodyRefused:  # its text may quote the remote's header: our words instead
                raise _Invalid(
                    f"{endpoint}: answer in an encoding not asked for, or corrupt"
                ) from None
        try:
            return model.model_validate_json(body)
        except ValidationError as exc:
            errors = exc.errors()
            first = errors[0]["loc"][0] if errors and errors[0]["loc"] else None
            # Only a field of ours is named: deeper parts may be keys the remote chose.
            where = first if isinstance(first, str) and first in model.model_fields else "body"
            raise _Invalid(f"{endpoint}: not a console answer ({where})") from None


def _transport_problem(exc: httpx.TransportError) -> str:
    """A short reason for a failed connection (never the remote's text or the URL)."""
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, httpx.ConnectError):
        return "cannot connect"
    return f"connection failed ({type(exc).__name__})"
