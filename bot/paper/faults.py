"""Seeded faults the paper world injects into its HTTP faces (all off by default).

Each request draws once from a seeded generator and gets at most one fault:
* before applying the request: `rate_limited` (429 + Retry-After), `server_error` (500);
* after applying it: `timeout` (the answer comes after `timeout_seconds`, by which time the
  client has given up), `drop_after_apply` (headers promise a body that never comes:
  the connection is closed), `malformed_body` (a truncated JSON body);
* `latency_ms` delays every answer.

The "after" kinds are the dangerous ones for a client: the request *was* applied.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from bot.config import PaperFaultSettings

__all__ = ["Fault", "FaultPlan"]


class Fault(StrEnum):
    """What happens to one request."""

    NONE = "none"
    RATE_LIMITED = "rate_limited"
    SERVER_ERROR = "server_error"
    TIMEOUT = "timeout"
    DROP_AFTER_APPLY = "drop_after_apply"
    MALFORMED_BODY = "malformed_body"

    @property
    def before_apply(self) -> bool:
        """True when the request is refused without being applied."""
        return self in (Fault.RATE_LIMITED, Fault.SERVER_ERROR)


@dataclass
class FaultPlan:
    """Draws the fault of each request from the settings' probabilities."""

    settings: PaperFaultSettings

    def __post_init__(self) -> None:
        self._rng = random.Random(self.settings.seed)  # noqa: S311 - simulation, not crypto
        self.counts: dict[Fault, int] = dict.fromkeys(Fault, 0)

    @property
    def latency_seconds(self) -> float:
        """Delay added to every answer."""
        return self.settings.latency_ms / 1000

    def draw(self, path: str) -> Fault:
        """The fault for one request to `path`."""
        s = self.settings
        if s.endpoints and path not in s.endpoints:
            return Fault.NONE
        # One uniform draw in [0, 1) with 9 exact decimal places partitions the kinds.
        roll = Decimal(self._rng.randrange(1_000_000_000)) / Decimal(1_000_000_000)
        for fault, probability in (
            (Fault.RATE_LIMITED, s.rate_limited),
            (Fault.SERVER_ERROR, s.server_error),
            (Fault.TIMEOUT, s.timeout),
            (Fault.DROP_AFTER_APPLY, s.drop_after_apply),
            (Fault.MALFORMED_BODY, s.malformed_body),
        ):
            if roll < probability:
                self.counts[fault] += 1
                return fault
            roll -= probability
        self.counts[Fault.NONE] += 1
        return Fault.NONE
