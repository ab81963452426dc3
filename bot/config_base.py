"""The base of every config section (`bot.config`, `bot.config_paper`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Section"]


class Section(BaseModel):
    """A TOML table: unknown keys refused, values frozen, no inf/NaN."""

    # allow_inf_nan=False: `speed = inf` or `1e400` is out of range, not a valid setting.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
