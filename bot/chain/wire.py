"""HTTP details of the node API: error bodies, ledger headers, its retry numbers."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

import httpx

from bot.chain.errors import MempoolFull, NodeError, NodeRateLimited, SequenceTooOld
from bot.money import loads_exact
from bot.retry import Backoff, Jitter, parse_retry_after

__all__ = [
    "HEADER_CHAIN_ID",
    "HEADER_LEDGER_US",
    "NODE_BACKOFF_BASE_SECONDS",
    "NODE_RETRY_AFTER_LIMIT_SECONDS",
    "SEQUENCE_NUMBER_TOO_OLD_VM_CODE",
    "error_from_response",
    "ledger_header",
    "node_backoff",
]

SEQUENCE_NUMBER_TOO_OLD_VM_CODE: Final = 3
HEADER_CHAIN_ID: Final = "x-aptos-chain-id"
HEADER_LEDGER_US: Final = "x-aptos-ledger-timestampusec"
NODE_BACKOFF_BASE_SECONDS: Final = 0.25
NODE_RETRY_AFTER_LIMIT_SECONDS: Final = 600.0
"""A node's `Retry-After` is read up to ten minutes (`NodeRateLimited.retry_after`)."""


def ledger_header(response: httpx.Response) -> int | None:
    """The answer's `X-Aptos-Ledger-TimestampUsec`, or None."""
    value = response.headers.get(HEADER_LEDGER_US)
    return int(value) if value is not None and value.strip().isdigit() else None


def error_from_response(response: httpx.Response, route: str, *, now: datetime) -> NodeError:
    """The most specific `NodeError` for an error answer.

    The node's error body is `{message, error_code, vm_error_code}`; any other body still
    yields a typed error carrying the raw text. `now` (the caller's wall clock) dates a
    429's `Retry-After` when it is an HTTP date.
    """
    body: Any = None
    try:
        body = loads_exact(response.content)
    except ValueError:
        body = None
    message = response.text.strip()[:300] or "(empty body)"
    error_code = ""
    vm_code: int | None = None
    if isinstance(body, Mapping):
        message = str(body.get("message", message))[:500]
        error_code = str(body.get("error_code") or "")
        raw_vm = body.get("vm_error_code")
        if isinstance(raw_vm, int) and not isinstance(raw_vm, bool):
            vm_code = raw_vm
    status = response.status_code
    kwargs: dict[str, Any] = {
        "error_code": error_code,
        "vm_error_code": vm_code,
        "endpoint": route,
    }
    if status == 429:
        retry = parse_retry_after(
            response.headers.get("retry-after"), now=now, limit=NODE_RETRY_AFTER_LIMIT_SECONDS
        )
        return NodeRateLimited(status, message, retry_after=retry, **kwargs)
    if status == 507 or error_code == "mempool_is_full":
        return MempoolFull(status, message, **kwargs)
    if status == 400 and (
        error_code == "sequence_number_too_old"
        or (error_code == "vm_error" and vm_code == SEQUENCE_NUMBER_TOO_OLD_VM_CODE)
        or "SEQUENCE_NUMBER_TOO_OLD" in message
    ):
        return SequenceTooOld(status, message, **kwargs)
    return NodeError(status, message, **kwargs)


def node_backoff(cap: float, rng: Jitter | None = None) -> Backoff:
    """The node's back-off: 0.25 s doubling up to `cap`.

    A Retry-After is honoured in full (plus up to 10%), even above `cap`: the server asked
    for it, and the parser already holds it to `NODE_RETRY_AFTER_LIMIT_SECONDS`.
    """
    return Backoff(NODE_BACKOFF_BASE_SECONDS, cap, rng, retry_after_cap=math.inf)
