"""Building short-lived frozen dataclass records cheaply on the hot path of the core.

A frozen dataclass's generated `__init__` sets every field through `object.__setattr__`
(the only way past the freeze), about 100 ns a field. Every swap builds a quote and an
execution of 6 to 11 fields that live for a moment, and a backtest makes thousands of
swaps, so there the setting costs more than the work. `frozen_record` makes the same
object (same class, same fields, equal and hashable alike) by filling its `__dict__`.

The instance then holds a dict of its own (about three times the constructor's compact
layout), so records that are kept — tx details, fills — use their constructor.
"""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["frozen_record"]

T = TypeVar("T")

_new = object.__new__


def frozen_record(cls: type[T], **values: Any) -> T:
    """An instance of the frozen dataclass `cls` with these field values.

    `values` must name every field (defaults are not filled in) and `cls` must have no
    `__post_init__` and no `__slots__`: it is the instance `cls(**values)` would be,
    without its per-field set-up.
    """
    record = _new(cls)
    record.__dict__.update(values)
    return record
