"""The base of every config section (`bot.config`, `bot.config_paper`)."""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, field_validator

__all__ = ["MAX_SETTING", "Section"]

MAX_SETTING: Final = 10**12
"""The largest magnitude of a plain number setting (seconds, counts, sizes); amounts are
`Decimal`s and are bounded where they are defined."""


class Section(BaseModel):
    """A TOML table: unknown keys refused, values frozen, no inf/NaN, no absurd numbers."""

    # allow_inf_nan=False: `speed = inf` or `1e400` is out of range, not a valid setting.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="after")
    @classmethod
    def _bounded(cls, value: Any) -> Any:
        # `expiration_seconds = 10**30` passes every `ge=` bound and then overflows a
        # timedelta (or a sleep) deep inside the daemon: refuse it here, naming the key.
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if number and abs(value) > MAX_SETTING:
            raise ValueError(f"must be at most {MAX_SETTING:,} in size")
        return value
