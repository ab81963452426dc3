"""`loads_exact` refuses deep nesting before parsing; `json_depth` ignores brackets in strings."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from bot.money import MAX_JSON_DEPTH, json_depth, loads_exact


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("1", 0),
        ('"[[[["', 0),
        ("[]", 1),
        ('{"a": [1, {"b": []}]}', 4),
        ('["\\"[[[", "\\\\", ["]]]]"]]', 2),  # escaped quotes and backslashes inside strings
        ("[[[]],[[[]]]]", 4),
    ],
)
def test_json_depth_counts_only_structure(text: str, depth: int) -> None:
    assert json_depth(text) == depth


def test_nesting_up_to_the_limit_parses_and_one_more_is_refused() -> None:
    at_limit = "[" * MAX_JSON_DEPTH + "1.5" + "]" * MAX_JSON_DEPTH
    value = loads_exact(at_limit)
    for _ in range(MAX_JSON_DEPTH):
        value = value[0]
    assert value == Decimal("1.5")
    with pytest.raises(ValueError, match=f"nested {MAX_JSON_DEPTH + 1} levels deep"):
        loads_exact("[" + at_limit + "]")


def test_very_deep_input_is_a_value_error_never_a_recursion_error() -> None:
    for body in (b"[" * 100_000, b'{"a":' * 100_000, b"[" * 100_000 + b"]" * 100_000):
        with pytest.raises(ValueError, match="nested 100000 levels deep"):
            loads_exact(body)


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps(["[" * 1000, "{" * 1000])
    assert loads_exact(text) == ["[" * 1000, "{" * 1000]


def test_utf16_bytes_are_measured_as_json_reads_them() -> None:
    """U+5B22 is the bytes 0x5B ('[') 0x22 ('"') in UTF-16-LE: no bracket, no quote."""
    text = json.dumps(["\u5b22" * 200], ensure_ascii=False)
    assert loads_exact(text.encode("utf-16")) == ["\u5b22" * 200]


def test_the_limit_can_be_set_per_call() -> None:
    assert loads_exact("[[1]]", max_depth=2) == [[1]]
    with pytest.raises(ValueError, match="the limit is 1"):
        loads_exact("[[1]]", max_depth=1)
