"""`--space`: the parameters a search (`bot hyperopt`) varies, and how each is drawn.

Grammar (items separated by commas outside brackets):

* `name=a..b` — a range; integers when neither bound has a decimal point, else exact
  decimals; `name=a..b:step` draws on the grid `a, a+step, …`; without a step a decimal
  range draws on the grid of its bounds' decimal places (`0.5..5` → 0.5, 0.6, …, 5.0;
  write `0.50..5.00` for a finer one).
* `name=a~b` — the same range drawn on a log scale (no step; decimals are rounded to the
  bounds' places, and kept within the bounds).
* `name=[x,y,z]` — a choice among values, kept as the text given and read by the
  strategy's parameters model as any `--params` value is (`1 hour`, `3`, `true`).

The sampler (Optuna) suggests floats; a decimal dimension turns each suggestion into an
exact `Decimal` through the float's shortest repr, quantized to its step (or its bounds'
places) and clamped to the bounds (`Dimension.exact`), so the parameters a trial ran
with are exact, and the same suggestion always gives the same parameters.

This module is pure: no Optuna, no engine; `validate_space` checks a space against a
strategy's pydantic parameters model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

__all__ = ["Dimension", "SpaceError", "base_point", "parse_space", "validate_space"]

Kind = Literal["int", "decimal", "choice"]


class SpaceError(ValueError):
    """A `--space` that cannot be used; the message names the parameter or the item."""


@dataclass(frozen=True)
class Dimension:
    """One searched parameter.

    Attributes:
        name: the strategy parameter.
        kind: `int` (a whole-number range), `decimal` (an exact decimal range) or
            `choice` (one of `choices`, texts as given).
        low, high: the range's bounds (ranges only).
        step: the grid's step; for a decimal range without one, 10^-places of its bounds.
        log: drawn on a log scale.
        choices: the values of a choice.
    """

    name: str
    kind: Kind
    low: Decimal = Decimal(0)
    high: Decimal = Decimal(0)
    step: Decimal | None = None
    log: bool = False
    choices: tuple[str, ...] = ()

    def exact(self, suggested: Any) -> Any:
        """The exact parameter value of a sampler's suggestion (int, Decimal or text)."""
        if self.kind == "choice":
            return str(suggested)
        if self.kind == "int":
            return int(suggested)
        quantum = self.step if self.step is not None else _quantum(self.low, self.high)
        value = Decimal(repr(float(suggested)))
        if self.step is not None:  # on the grid low + k × step
            steps = ((value - self.low) / self.step).to_integral_value(ROUND_HALF_EVEN)
            value = self.low + steps * self.step
        value = value.quantize(quantum, ROUND_HALF_EVEN)
        return min(max(value, self.low), self.high)

    def corners(self) -> tuple[Any, ...]:
        """The values checked against the parameters model: the bounds, or every choice."""
        if self.kind == "choice":
            return self.choices
        if self.kind == "int":
            return (int(self.low), int(self.high))
        return (self.low, self.high)

    def describe(self) -> str:
        """The dimension as it was written (for reports)."""
        if self.kind == "choice":
            return f"{self.name}=[{','.join(self.choices)}]"
        joint = "~" if self.log else ".."
        tail = f":{self.step}" if self.step is not None and not self._derived_step else ""
        return f"{self.name}={self.low}{joint}{self.high}{tail}"

    @property
    def _derived_step(self) -> bool:
        return self.kind == "decimal" and self.step == _quantum(self.low, self.high)


def parse_space(text: str) -> list[Dimension]:
    """`'spacing_percent=0.5..5,rungs=1..10,interval=[1 hour,1 day]'` → dimensions.

    Raises:
        SpaceError: an item that is not `name=range` or `name=[values]`, a bad bound or
            step, an empty choice, or a parameter given twice.
    """
    dimensions: list[Dimension] = []
    for item in _items(text):
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise SpaceError(f"--space {item.strip()!r}: expected name=a..b or name=[x,y]")
        if not name.isidentifier():
            raise SpaceError(f"--space {name!r}: not a parameter name")
        if any(d.name == name for d in dimensions):
            raise SpaceError(f"--space {name}: given twice")
        dimensions.append(_dimension(name, value))
    if not dimensions:
        raise SpaceError("--space: no parameter to search")
    return dimensions


def base_point(dimensions: Sequence[Dimension]) -> dict[str, Any]:
    """Each dimension at its first value (the low bound, the first choice)."""
    return {d.name: d.corners()[0] for d in dimensions}


def validate_space(
    dimensions: Sequence[Dimension], fixed: Mapping[str, Any], model: type[BaseModel]
) -> None:
    """Check every dimension's bounds and choices against the strategy's parameters.

    Each value is validated with the fixed parameters and the other dimensions at their
    first value. Only errors of a field are the space's: a rule between fields (e.g. the
    ladder's rungs × spacing below 100) may hold in part of the space only, and a trial
    outside it fails alone (one line in the study).

    Raises:
        SpaceError: an unknown parameter, or a value the model refuses (naming both).
    """
    known = model.model_fields
    for dim in dimensions:
        if dim.name not in known:
            raise SpaceError(
                f"--space {dim.name}: not a parameter of this strategy "
                f"(parameters: {', '.join(known)})"
            )
    base = {**fixed, **base_point(dimensions)}
    for dim in dimensions:
        for value in dim.corners():
            try:
                model.model_validate({**base, dim.name: value})
            except ValidationError as exc:
                problem = _field_problem(dim.name, exc, set(known))
                if problem is not None:
                    raise SpaceError(f"--space {dim.name}={value}: {problem}") from None


def _field_problem(name: str, exc: ValidationError, known: set[str]) -> str | None:
    """The first error of a field: the searched one first, then a missing or fixed one."""
    fields = [e for e in exc.errors() if e.get("loc") and e["loc"][0] in known]
    fields.sort(key=lambda e: (e["loc"][0] != name, e.get("type") != "missing"))
    if not fields:
        return None
    error = fields[0]
    where = ".".join(str(p) for p in error["loc"])
    if error["loc"][0] == name:
        return f"{where}: {error.get('msg')}"
    if error.get("type") == "missing":
        return f"{where} is required: fix it with --params or search it with --space"
    return f"{where} (with it): {error.get('msg')}"


def _items(text: str) -> list[str]:
    """Split at commas outside brackets."""
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise SpaceError(f"--space {text!r}: a ']' without '['")
        if char == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth:
        raise SpaceError(f"--space {text!r}: a '[' without ']'")
    items.append("".join(current))
    return [i for i in items if i.strip()]


def _dimension(name: str, value: str) -> Dimension:
    if value.startswith("["):
        if not value.endswith("]"):
            raise SpaceError(f"--space {name}={value}: expected [x,y,…]")
        choices = tuple(v.strip() for v in value[1:-1].split(","))
        if any(not c for c in choices):
            raise SpaceError(f"--space {name}={value}: an empty value")
        if len(set(choices)) != len(choices):
            raise SpaceError(f"--space {name}={value}: a value given twice")
        return Dimension(name, "choice", choices=choices)
    log = "~" in value and ".." not in value
    bounds, _, step_text = value.partition(":")
    low_text, sep, high_text = bounds.partition("~" if log else "..")
    if not sep:
        raise SpaceError(f"--space {name}={value}: expected a..b, a~b (log) or [x,y,…]")
    low, high = _number(name, low_text), _number(name, high_text)
    if low >= high:
        raise SpaceError(f"--space {name}={value}: the low bound must be below the high one")
    decimal = any("." in t or "e" in t.lower() for t in (low_text, high_text))
    step = _number(name, step_text) if step_text.strip() else None
    if step is not None:
        if step <= 0:
            raise SpaceError(f"--space {name}={value}: the step must be positive")
        if log:
            raise SpaceError(f"--space {name}={value}: a log range takes no step")
        decimal = decimal or "." in step_text
    if log and low <= 0:
        raise SpaceError(f"--space {name}={value}: a log range needs a positive low bound")
    if not decimal:
        return Dimension(name, "int", low, high, step if step is not None else None, log)
    if step is None and not log:
        step = _quantum(low, high)
    return Dimension(name, "decimal", low, high, step, log)


def _number(name: str, text: str) -> Decimal:
    try:
        number = Decimal(text.strip())
    except InvalidOperation:
        raise SpaceError(f"--space {name}: {text.strip()!r} is not a number") from None
    if not number.is_finite():
        raise SpaceError(f"--space {name}: {text.strip()!r} is not a finite number")
    return number


def _quantum(low: Decimal, high: Decimal) -> Decimal:
    """10^-places: the finer of the two bounds' decimal places."""
    places = max(0, -int(low.as_tuple().exponent), -int(high.as_tuple().exponent))
    return Decimal(1).scaleb(-places)
