"""Seeded faults the paper world injects into its HTTP faces (all off by default).

Each request draws once from a seeded generator and gets at most one fault:
* before applying the request: `rate_limited` (429 + Retry-After), `server_error` (500);
* after applying it: `timeout` (the answer comes after `timeout_seconds`, by which time the
  client has given up), `drop_after_apply` (headers promise a body that never comes:
  the connection is closed), `malformed_body` (a truncated JSON body);
* `latency_ms` delays every answer.

The "after" kinds are the dangerous ones for a client: the request *was* applied.

The node face has read faults of its own (`NodeReadFaults`, from `[paper.node]`): a
`by_hash` 404 for a transaction the node holds, committed or pending (`by_hash_404`: a
pruned or load-balanced node), and an account read or account transaction listing answered
from an older ledger state, headers included (`stale_account`: a lagging node). Tests
also arm them deterministically: the next N account reads stale (`stale_next`), an
account listing that shows nothing (`listing_empty`: an index gap) or answers 500
(`listing_error`: a node run without that index).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from bot.config import PaperFaultSettings

__all__ = ["Fault", "FaultPlan", "NodeReadFault", "NodeReadFaults"]


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


class NodeReadFault(StrEnum):
    """A lie a node's read may tell."""

    BY_HASH_404 = "by_hash_404"
    STALE_ACCOUNT = "stale_account"


@dataclass
class NodeReadFaults:
    """Draws the node's read faults, seeded; each kind is a probability per read."""

    by_hash_404: float = 0.0
    stale_account: float = 0.0
    seed: int = 11
    stale_next: int = 0
    """Deterministic: the next this many account reads (or listings) are stale."""
    listing_empty: bool = False
    """The account transaction listing answers `[]`."""
    listing_error: bool = False
    """The account transaction listing answers 500."""

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)  # noqa: S311 - simulation, not crypto
        self.counts: dict[NodeReadFault, int] = dict.fromkeys(NodeReadFault, 0)

    def draw(self, kind: NodeReadFault) -> bool:
        """True when this read of `kind` lies (no draw at all while the kind is off)."""
        if kind is NodeReadFault.STALE_ACCOUNT and self.stale_next > 0:
            self.stale_next -= 1
            self.counts[kind] += 1
            return True
        probability = self.by_hash_404 if kind is NodeReadFault.BY_HASH_404 else self.stale_account
        if probability <= 0 or self._rng.random() >= probability:
            return False
        self.counts[kind] += 1
        return True
