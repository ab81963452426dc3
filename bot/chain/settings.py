"""The signer's view of `[chain]`: gas margin, expiration, polling and retry bounds.

The keys, their defaults and their bounds live once, in `bot.config.ChainSettings`;
`SignerSettings` is the frozen subset the signer and its submitter read, taken from a
loaded `[chain]` by `from_chain`. Its defaults are `ChainSettings`'s; built directly (tests,
benchmarks) it takes any value the signer can work with, zero waits included.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from bot.config import ChainSettings

__all__ = ["SignerSettings"]

_DEFAULTS: Final = ChainSettings()
"""`[chain]` as it is when the file says nothing: the one home of the defaults below."""


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

    gas_margin: Decimal = _DEFAULTS.gas_margin
    expiration_seconds: int = _DEFAULTS.expiration_seconds
    poll_interval_seconds: float = _DEFAULTS.poll_interval_seconds
    first_poll_delay_seconds: float = _DEFAULTS.first_poll_delay_seconds
    max_submit_attempts: int = _DEFAULTS.max_submit_attempts
    max_sequence_retries: int = _DEFAULTS.max_sequence_retries
    wait_timeout_seconds: float = _DEFAULTS.wait_timeout_seconds
    gas_price_ttl_seconds: float = _DEFAULTS.gas_price_ttl_seconds

    def __post_init__(self) -> None:
        if not isinstance(self.gas_margin, Decimal) or self.gas_margin < 1:
            raise ValueError("gas_margin must be a Decimal ≥ 1")
        if self.expiration_seconds < 1:
            raise ValueError("expiration_seconds must be ≥ 1")

    @classmethod
    def from_chain(cls, chain: ChainSettings) -> SignerSettings:
        """The signer's keys of a loaded `[chain]` (every one has a value there)."""
        return cls(**{name: getattr(chain, name) for name in cls.__dataclass_fields__})
