"""One retry back-off and one `Retry-After` parser, for everything in the bot that retries.

The provider's API client, the node client, the signer's resends of the same bytes, the
daemon's wait for a service in bad weather and the alert channels all pace their retries
with `Backoff`; each keeps its own numbers (first delay, cap, how long a server's
Retry-After is honoured) as configuration of this one policy. Which failures may be
retried is not decided here but by the caller: only a request that certainly did not
reach the server (`bot.errors.NotSent`), or one the server refused without acting on it,
is retried; an unknown outcome never is.

Back-off runs on real time (asyncio cannot follow a simulated clock). Its jitter comes from
an injected random source and a Retry-After's HTTP date is measured against an injected
`now`, so tests are deterministic and no logic here reads the wall clock.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Final, Protocol

from bot.clock import ensure_utc

__all__ = ["Backoff", "Jitter", "parse_retry_after"]

_MAX_EXPONENT: Final = 1000
"""2.0 ** 1024 overflows: past this many doublings every ceiling is the cap anyway."""


class Jitter(Protocol):
    """A source of uniform floats in [0, 1) (`random.Random` fits; seed it in tests)."""

    def random(self) -> float:
        """The next draw."""
        ...


class Backoff:
    """Exponential back-off with jitter and a cap, honouring a server's Retry-After.

    Before attempt n + 1 (n counts the failed attempts, from 1) the wait is between half
    and all of `min(cap, base * 2 ** (n - 1))`. When the server said how long to wait
    (`retry_after`, seconds), the wait is `min(retry_after_cap, retry_after * (1 +
    retry_after_jitter * u))` instead, or the longer of that and the back-off when
    `at_least_backoff`. `u` is one draw of the random source per delay.

    Args:
        base: the first delay's ceiling (seconds, > 0).
        cap: the longest back-off (seconds, > 0).
        rng: the jitter's random source (default: a fresh `random.Random`).
        retry_after_cap: the longest wait granted to a Retry-After (default: `cap`;
            `math.inf` when the parser's limit is the only bound).
        retry_after_jitter: the fraction added on top of a Retry-After, at most.
        at_least_backoff: a Retry-After never shortens the back-off.
    """

    def __init__(
        self,
        base: float,
        cap: float,
        rng: Jitter | None = None,
        *,
        retry_after_cap: float | None = None,
        retry_after_jitter: float = 0.1,
        at_least_backoff: bool = False,
    ) -> None:
        if not (base > 0 and cap > 0):
            raise ValueError(f"back-off base and cap must be > 0 (got {base}, {cap})")
        ceiling = cap if retry_after_cap is None else retry_after_cap
        if not ceiling >= 0 or not retry_after_jitter >= 0:
            raise ValueError("retry_after_cap and retry_after_jitter must be ≥ 0")
        self.base = base
        self.cap = cap
        self.retry_after_cap = ceiling
        self.retry_after_jitter = retry_after_jitter
        self.at_least_backoff = at_least_backoff
        self._rng: Jitter = rng or random.Random()  # noqa: S311 - jitter, not cryptography

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt `attempt` (from 1) before the next one."""
        if attempt < 1:
            raise ValueError(f"attempt counts from 1 (got {attempt})")
        jitter = self._rng.random()
        ceiling = min(self.cap, self.base * 2.0 ** min(attempt - 1, _MAX_EXPONENT))
        backoff = ceiling * (0.5 + 0.5 * jitter)
        if retry_after is None:
            return backoff
        honoured = min(
            self.retry_after_cap, max(0.0, retry_after) * (1 + self.retry_after_jitter * jitter)
        )
        return max(backoff, honoured) if self.at_least_backoff else honoured


def parse_retry_after(value: str | None, *, now: datetime, limit: float) -> float | None:
    """Seconds a `Retry-After` header asks for, held to [0, `limit`]; None if absent or unreadable.

    Reads delta-seconds (leniently: "1.5" is 1.5 s, "-5" is 0, "inf" is `limit`) and an
    HTTP date, measured from `now` (aware, from the caller's injected clock); a date without
    a zone is GMT, as HTTP dates are. A date in the past is 0.
    """
    if not value:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - ensure_utc(now)).total_seconds()
    if math.isnan(seconds):
        return None
    return max(0.0, min(seconds, limit))
