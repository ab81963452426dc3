"""Errors of the provider API, sorted by what the caller must do next.

```
BotError                    (bot.errors: shared with the chain tree)
└── ApiError
    ├── RequestRuleError    a request broke a rule of the spec; nothing was sent
    ├── ApiNotSent          connect error/timeout, pool timeout: never reached the server;
    │                       safe to retry (also a `bot.errors.NotSent`: catch it by that name,
    │                       which this module re-exports)
    ├── OutcomeUnknown      sent, but no complete answer (read timeout, request deadline,
    │                       dropped connection; to a createOrder/cancelOrder also a 5xx or
    │                       a 2xx body it cannot read): reconcile, never blindly retry
    ├── MalformedResponse   a 2xx whose body is not the shape the spec describes, or is
    │                       over the size or JSON nesting limit
    ├── NoRoute             a swap answer with `quotes: []`: the provider found no route
    │                       (a real answer, not a fault: never retried)
    └── ResponseError       the server answered with an error status
        ├── BadRequest      400
        ├── Unauthorized    401 (missing or wrong API key)
        ├── NotFound        404
        ├── RateLimited     429 (carries `retry_after`)
        ├── ServerError     5xx
        └── UnexpectedStatus any other non-2xx
```

Messages name the endpoint and, for response errors, the server's `message`; they never
contain request headers (where the API key lives).
"""

from __future__ import annotations

from typing import Any

from bot.errors import BotError, NotSent

__all__ = [
    "ApiError",
    "ApiNotSent",
    "BadRequest",
    "MalformedResponse",
    "NoRoute",
    "NotFound",
    "NotSent",
    "OutcomeUnknown",
    "RateLimited",
    "RequestRuleError",
    "ResponseError",
    "ServerError",
    "Unauthorized",
    "UnexpectedStatus",
    "error_for_status",
]


class ApiError(BotError):
    """Base of every error raised by the API client."""

    endpoint: str

    def __init__(self, message: str, *, endpoint: str = "") -> None:
        super().__init__(message)
        self.endpoint = endpoint


class RequestRuleError(ApiError, ValueError):
    """The request breaks a rule of the spec; it was not sent. `field` names the culprit."""

    def __init__(self, field: str, message: str, *, endpoint: str = "") -> None:
        super().__init__(f"{field}: {message}", endpoint=endpoint)
        self.field = field


class ApiNotSent(ApiError, NotSent):
    """The request never reached the provider (connection refused, connect timeout…)."""


class OutcomeUnknown(ApiError):
    """The request may or may not have been applied. Reconcile before doing anything else."""


class MalformedResponse(ApiError):
    """A success status with a body that does not have the spec's shape or breaks a bound."""

    def __init__(self, message: str, *, endpoint: str = "", body: str = "") -> None:
        super().__init__(message, endpoint=endpoint)
        self.body = body[:2000]


class NoRoute(ApiError):
    """The provider found no route for a swap: it answered `quotes: []`.

    SDK 1.3.1 reads the same answer as "No routes present". A real answer: never retried.

    Attributes:
        sell, buy: the tokens as sent (coin types or FA addresses).
        amount: the amount as sent (human units), of `sell` when `exact_in`, else of `buy`.
        exact_in: True when selling an exact amount.
    """

    def __init__(
        self, sell: str, buy: str, amount: str, *, exact_in: bool, endpoint: str = ""
    ) -> None:
        self.sell = sell
        self.buy = buy
        self.amount = amount
        self.exact_in = exact_in
        super().__init__(self.describe(sell, buy), endpoint=endpoint)

    def describe(self, sell_name: str, buy_name: str) -> str:
        """`no route for 10 APT → USDC` (ExactIn) or `no route for APT → 5 USDC` (ExactOut)."""
        if self.exact_in:
            return f"no route for {self.amount} {sell_name} → {buy_name}"
        return f"no route for {sell_name} → {self.amount} {buy_name}"


class ResponseError(ApiError):
    """The server answered with an error status.

    Attributes:
        status_code: the HTTP status.
        server_message: the body's `message`, or the raw text when the body is not the
            spec's `{statusCode, message, status}` shape.
        body: the parsed JSON body (or None), for diagnostics.
    """

    def __init__(
        self,
        status_code: int,
        server_message: str,
        *,
        endpoint: str = "",
        body: Any = None,
    ) -> None:
        self.status_code = status_code
        self.server_message = server_message
        self.body = body
        where = f"{endpoint}: " if endpoint else ""
        super().__init__(f"{where}HTTP {status_code}: {server_message}", endpoint=endpoint)


class BadRequest(ResponseError):
    """400: the server refused the request as malformed."""


class Unauthorized(ResponseError):
    """401: no API key, or a wrong one."""


class NotFound(ResponseError):
    """404: unknown token, order or path."""


class RateLimited(ResponseError):
    """429: the rate limit was breached; `retry_after` seconds, when the server said."""

    def __init__(
        self,
        status_code: int,
        server_message: str,
        *,
        endpoint: str = "",
        body: Any = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(status_code, server_message, endpoint=endpoint, body=body)
        self.retry_after = retry_after


class ServerError(ResponseError):
    """5xx: the server failed."""


class UnexpectedStatus(ResponseError):
    """A non-2xx status the spec does not list."""


def error_for_status(
    status_code: int,
    body_text: str,
    body: Any,
    *,
    endpoint: str,
    retry_after: float | None = None,
) -> ResponseError:
    """Build the most specific `ResponseError` for an error response.

    The spec's error body is `{statusCode, message, status: "fail"}`; any other body
    still yields a typed error carrying the raw text.
    """
    message = body_text.strip()[:500] or "(empty body)"
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        message = body["message"]
    if status_code == 429:
        return RateLimited(
            status_code, message, endpoint=endpoint, body=body, retry_after=retry_after
        )
    cls: type[ResponseError]
    if status_code == 400:
        cls = BadRequest
    elif status_code == 401:
        cls = Unauthorized
    elif status_code == 404:
        cls = NotFound
    elif status_code >= 500:
        cls = ServerError
    else:
        cls = UnexpectedStatus
    return cls(status_code, message, endpoint=endpoint, body=body)
