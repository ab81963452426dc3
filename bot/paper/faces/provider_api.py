"""The paper world's face for the provider's HTTP API (spec section 4), as an ASGI app.

Thin on purpose: routing, the `x-api-key` check (401), a per-key rate limit (429 with
`Retry-After`), seeded faults, the error body `{statusCode, message, status: "fail"}` and a
request log. Everything else is `PaperService`.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from bot.config import PaperSettings
from bot.domain import OrderKind
from bot.paper.faces.asgi import (
    HttpError,
    Receive,
    Request,
    Scope,
    Send,
    read_request,
    send_bytes,
    send_json,
)
from bot.paper.faults import Fault, FaultPlan
from bot.paper.service import PaperService

__all__ = ["LoggedRequest", "ProviderApi"]

_MALFORMED: Final = b'{"quotes": [{"toTokenAmount": "12'
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the paper world saw it (never the API key)."""

    method: str
    path: str
    status: int
    fault: str
    applied: bool


class _KeyLimiter:
    """A token bucket per API key; answers how long to wait when empty."""

    def __init__(self, rate: float, burst: int) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._state: dict[str, tuple[float, float]] = {}

    def retry_after(self, key: str, now: float) -> float | None:
        tokens, stamp = self._state.get(key, (self._burst, now))
        tokens = min(self._burst, tokens + (now - stamp) * self._rate)
        if tokens >= 1:
            self._state[key] = (tokens - 1, now)
            return None
        self._state[key] = (tokens, now)
        return (1 - tokens) / self._rate


class ProviderApi:
    """ASGI app serving the provider's endpoints over a `PaperService`."""

    def __init__(
        self,
        service: PaperService,
        settings: PaperSettings,
        *,
        sync: Callable[[], object] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.service = service
        self.faults = FaultPlan(settings.faults)
        self.request_log: list[LoggedRequest] = []
        self._keys = frozenset(settings.api_keys)
        self._limiter = _KeyLimiter(settings.rate_limit_per_second, settings.rate_limit_burst)
        self._sync = sync or (lambda: None)
        self._monotonic = monotonic
        self._timeout = settings.faults.timeout_seconds
        self._routes: dict[tuple[str, str], Callable[[Request], Any]] = {
            ("GET", "/prices"): service.prices,
            ("GET", "/tokenlist"): service.token_list,
            ("GET", "/swap/quote"): lambda r: service.swap(r, with_tx_data=False),
            ("POST", "/swap"): lambda r: service.swap(r, with_tx_data=True),
            ("POST", "/dca/v1/createOrder"): lambda r: service.create_order(OrderKind.DCA, r),
            ("POST", "/dca/v1/cancelOrder"): lambda r: service.cancel_order(OrderKind.DCA, r),
            ("POST", "/dca/v1/getOrders"): lambda r: service.get_orders(OrderKind.DCA, r),
            ("POST", "/limit/v1/createOrder"): lambda r: service.create_order(OrderKind.LIMIT, r),
            ("POST", "/limit/v1/cancelOrder"): lambda r: service.cancel_order(OrderKind.LIMIT, r),
            ("POST", "/limit/v1/getOrders"): lambda r: service.get_orders(OrderKind.LIMIT, r),
            ("POST", "/paper/v1/fund"): service.admin_fund,
            ("GET", "/paper/v1/status"): service.admin_status,
            ("POST", "/paper/v1/advance"): service.admin_advance,
        }

    def calls(self, method: str, path: str) -> list[LoggedRequest]:
        """Logged requests to one endpoint."""
        return [r for r in self.request_log if (r.method, r.path) == (method, path)]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI entry point."""
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        request = await read_request(scope, receive)
        fault = Fault.NONE
        applied = False
        try:
            handler = self._routes.get((request.method, request.path))
            if handler is None:
                raise HttpError(404, f"no endpoint {request.method} {request.path}")
            key = request.headers.get("x-api-key", "")
            if key not in self._keys:
                raise HttpError(401, "missing or invalid API key")
            wait = self._limiter.retry_after(key, self._monotonic())
            if wait is not None:
                raise HttpError(429, "rate limit exceeded", {"retry-after": str(math.ceil(wait))})
            if not request.path.startswith("/paper/"):
                fault = self.faults.draw(request.path)
            if fault is Fault.RATE_LIMITED:
                raise HttpError(429, "rate limit exceeded", {"retry-after": "1"})
            if fault is Fault.SERVER_ERROR:
                raise HttpError(500, "internal server error")
            self._sync()
            try:
                result = handler(request)
            except HttpError:
                raise
            except Exception:  # a paper-world bug: answer 500 in the spec's error shape
                _log.exception("paper world: %s %s failed", request.method, request.path)
                raise HttpError(500, "internal server error") from None
            applied = True
        except HttpError as error:
            self._log(request, error.status, fault, applied)
            body = {"statusCode": error.status, "message": error.message, "status": "fail"}
            await send_json(
                send, error.status, body, headers=error.headers, delay=self.faults.latency_seconds
            )
            return
        self._log(request, 200, fault, applied)
        delay = self.faults.latency_seconds + (self._timeout if fault is Fault.TIMEOUT else 0.0)
        if fault is Fault.MALFORMED_BODY:
            await send_bytes(send, 200, _MALFORMED, delay=delay)
        else:
            await send_json(send, 200, result, delay=delay, drop=fault is Fault.DROP_AFTER_APPLY)

    def _log(self, request: Request, status: int, fault: Fault, applied: bool) -> None:
        self.request_log.append(
            LoggedRequest(request.method, request.path, status, fault.value, applied)
        )


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
