"""HTTP details of the node API: error bodies, ledger headers, Retry-After and back-off."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any, Final

import httpx

from bot.chain.errors import MempoolFull, NodeError, NodeRateLimited, SequenceTooOld
from bot.money import loads_exact

__all__ = [
    "HEADER_CHAIN_ID",
    "HEADER_LEDGER_US",
    "SEQUENCE_NUMBER_TOO_OLD_VM_CODE",
    "backoff_delay",
    "error_from_response",
    "ledger_header",
    "retry_after",
]

SEQUENCE_NUMBER_TOO_OLD_VM_CODE: Final = 3
HEADER_CHAIN_ID: Final = "x-aptos-chain-id"
HEADER_LEDGER_US: Final = "x-aptos-ledger-timestampusec"


def ledger_header(response: httpx.Response) -> int | None:
    """The answer's `X-Aptos-Ledger-TimestampUsec`, or None."""
    value = response.headers.get(HEADER_LEDGER_US)
    return int(value) if value is not None and value.strip().isdigit() else None


def error_from_response(response: httpx.Response, route: str) -> NodeError:
    """The most specific `NodeError` for an error answer.

    The node's error body is `{message, error_code, vm_error_code}`; any other body still
    yields a typed error carrying the raw text.
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
        retry = retry_after(response.headers.get("retry-after"))
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


_MAX_RETRY_AFTER_SECONDS: Final = 600.0


def retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return min(float(text), _MAX_RETRY_AFTER_SECONDS)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    seconds = when.timestamp() - time.time()
    return max(0.0, min(seconds, _MAX_RETRY_AFTER_SECONDS))


def backoff_delay(attempt: int, retry_after: float | None, cap: float, base: float = 0.25) -> float:
    """Seconds before attempt `attempt + 1`: the server's Retry-After, else exponential, jittered.

    Retry-After is honoured even above `cap` (the server asked for it), up to ten minutes.
    """
    jitter = random.random()  # noqa: S311 - jitter, not cryptography
    if retry_after is not None:
        return retry_after * (1 + 0.1 * jitter)
    return min(cap, base * 2.0 ** (attempt - 1)) * (0.5 + 0.5 * jitter)
