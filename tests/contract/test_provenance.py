"""Every contract fixture has a provenance row, and no row names a missing file."""

from __future__ import annotations

import re

from tests.support.evidence import FIXTURES, PROVENANCE


def test_every_fixture_is_listed_in_the_provenance_table_and_nothing_else_is() -> None:
    listed = set(re.findall(r"^\| `([^`]+)` \|", PROVENANCE.read_text(), flags=re.MULTILINE))
    present = {p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*.json")}
    assert present, "no fixtures found"
    assert present - listed == set(), f"fixtures without provenance: {sorted(present - listed)}"
    assert listed - present == set(), f"provenance rows without a file: {sorted(listed - present)}"


def test_forms_say_they_are_forms() -> None:
    text = PROVENANCE.read_text()
    for path in FIXTURES.rglob("*.form.json"):
        name = path.relative_to(FIXTURES).as_posix()
        rows = [line for line in text.splitlines() if line.startswith(f"| `{name}` |")]
        assert rows and "| **form** |" in rows[0], f"{name} is not marked as a form"
