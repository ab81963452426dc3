"""The shape of a JSON value (keys, JSON types, nesting) and a comparison of two shapes.

A shape maps each path to the set of JSON types seen there. Paths name object keys with
dots and array elements with `[]` (every element of an array shares one path, so an array
of records contributes the union of its records), e.g. `quotes[].txData.arguments[]`.

Rules of the comparison (`compare(candidate, reference)`):

* `missing`: a path of the reference that the candidate lacks;
* `extra`: a path of the candidate that the reference lacks;
* `type-changed`: a path both have, where the candidate shows a JSON type the reference
  never shows there. JSON `null` is compatible with every type (a sample holding `null`
  says nothing about the type of the non-null value), so `null` alone never changes a type.

`optional` names paths (and so everything below them) that the evidence marks as
sometimes absent (a `?` in the SDK's types): they are neither missing nor extra. Types
are still compared where both sides have them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Difference", "compare", "json_type", "shape"]

Shape = dict[str, set[str]]


def json_type(value: Any) -> str:
    """The JSON type name of a parsed value (`bool` is not a number; Decimal is one)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "number"


def shape(value: Any) -> Shape:
    """Every path of `value` with the JSON types seen there; the root is the path ``""``."""
    result: Shape = {}
    _walk(value, "", result)
    return result


def _walk(value: Any, path: str, into: Shape) -> None:
    into.setdefault(path, set()).add(json_type(value))
    if isinstance(value, dict):
        for key, item in value.items():
            _walk(item, f"{path}.{key}" if path else str(key), into)
    elif isinstance(value, list):
        for item in value:
            _walk(item, f"{path}[]", into)


@dataclass(frozen=True, order=True)
class Difference:
    """One way two shapes differ at one path."""

    path: str
    kind: str
    detail: str = ""

    def __str__(self) -> str:
        shown = self.path or "<root>"
        return f"{shown}: {self.kind}" + (f" ({self.detail})" if self.detail else "")


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(
        path == root or path.startswith(root + ".") or path.startswith(root + "[") for root in roots
    )


def compare(candidate: Any, reference: Any, *, optional: Iterable[str] = ()) -> list[Difference]:
    """How `candidate`'s shape differs from `reference`'s (sorted; empty: same shape)."""
    mine, theirs = shape(candidate), shape(reference)
    optional = tuple(optional)
    found: list[Difference] = []
    for path in sorted(theirs.keys() - mine.keys()):
        if not _under(path, optional) and not _covered(path, theirs.keys() - mine.keys()):
            found.append(Difference(path, "missing", _types(theirs[path])))
    for path in sorted(mine.keys() - theirs.keys()):
        if not _under(path, optional) and not _covered(path, mine.keys() - theirs.keys()):
            found.append(Difference(path, "extra", _types(mine[path])))
    for path in sorted(mine.keys() & theirs.keys()):
        new = (mine[path] - {"null"}) - theirs[path]
        if new and theirs[path] - {"null"}:
            detail = f"{_types(mine[path])} where the reference has {_types(theirs[path])}"
            found.append(Difference(path, "type-changed", detail))
    return sorted(found)


def _covered(path: str, absent: Iterable[str]) -> bool:
    """True when a shorter absent path already reports this one (report the top only)."""
    return any(other != path and _under(path, (other,)) for other in absent)


def _types(types: set[str]) -> str:
    return "|".join(sorted(types))
