"""The signer's own knobs (gas margin, expiration, polling), read from `[chain]`.

The `[chain]` section does not have these keys yet; until it does, `from_chain` falls back
to the defaults below for every key the section lacks.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from bot.config import ChainSettings

__all__ = ["SignerSettings"]


@dataclass(frozen=True)
class SignerSettings:
    """How the signer prices gas, expires transactions and waits for them.

    Attributes:
        gas_margin: `max_gas_amount` = simulated gas used × this, rounded up (capped by
            `[risk].max_gas_amount`).
        expiration_seconds: a transaction expires this long after the node's ledger time.
        poll_interval_seconds: between `by_hash` polls.
        first_poll_delay_seconds: before the first poll after submitting.
        max_submit_attempts: sends of the same bytes after 507/429/connection refused.
        max_sequence_retries: re-signs after the node says the sequence number is too old.
        wait_timeout_seconds: how long (local time) the node may stay unreachable while a
            transaction is waited for, before its outcome is declared unknown.
        gas_price_ttl_seconds: how long a gas price estimate is reused.
    """

    gas_margin: Decimal = Decimal("1.5")
    expiration_seconds: int = 60
    poll_interval_seconds: float = 1.0
    first_poll_delay_seconds: float = 0.5
    max_submit_attempts: int = 5
    max_sequence_retries: int = 3
    wait_timeout_seconds: float = 300.0
    gas_price_ttl_seconds: float = 30.0

    def __post_init__(self) -> None:
        if not isinstance(self.gas_margin, Decimal) or self.gas_margin < 1:
            raise ValueError("gas_margin must be a Decimal ≥ 1")
        if self.expiration_seconds < 1:
            raise ValueError("expiration_seconds must be ≥ 1")

    @classmethod
    def from_chain(cls, chain: ChainSettings) -> SignerSettings:
        """Read the `[chain]` keys that exist (`gas_margin`, `expiration_seconds`, …)."""
        values: dict[str, Any] = {}
        for name in cls.__dataclass_fields__:
            value = getattr(chain, name, None)
            if value is not None:
                values[name] = value
        return cls(**values)
