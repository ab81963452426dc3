"""The shape comparison itself: what it reports, and what it must not hide."""

from __future__ import annotations

from decimal import Decimal

from tests.support.shape import Difference, compare, shape


def test_shape_names_keys_array_elements_and_json_types() -> None:
    body = {"quotes": [{"txData": {"arguments": [None, "1", ["0x"]]}}], "n": Decimal("1.5")}
    assert shape(body) == {
        "": {"object"},
        "n": {"number"},
        "quotes": {"array"},
        "quotes[]": {"object"},
        "quotes[].txData": {"object"},
        "quotes[].txData.arguments": {"array"},
        "quotes[].txData.arguments[]": {"null", "string", "array"},
        "quotes[].txData.arguments[][]": {"string"},
    }


def test_missing_extra_and_type_changed_are_reported_at_their_top_path() -> None:
    reference = {"feeToken": {"address": "0x1", "decimals": 6}, "quotes": [{"a": "1"}]}
    candidate = {"quotes": [{"a": 1, "feeAmount": "0"}], "legacy": {"x": 1}}
    assert compare(candidate, reference) == [
        Difference("feeToken", "missing", "object"),
        Difference("legacy", "extra", "object"),
        Difference("quotes[].a", "type-changed", "number where the reference has string"),
        Difference("quotes[].feeAmount", "extra", "string"),
    ]


def test_null_is_compatible_but_a_real_type_change_is_not() -> None:
    assert compare({"p": None}, {"p": "1"}) == []
    assert compare({"p": "1"}, {"p": None}) == []
    assert compare({"p": True}, {"p": "true"}) == [
        Difference("p", "type-changed", "boolean where the reference has string")
    ]


def test_optional_paths_may_be_absent_on_either_side_but_types_still_count() -> None:
    reference = {"route": [{"percentage": 100}], "x": "1"}
    assert compare({"x": "1"}, reference, optional=["route"]) == []
    assert compare({"x": "1", "route": [{"percentage": "100"}]}, reference, optional=["route"]) == [
        Difference("route[].percentage", "type-changed", "string where the reference has number")
    ]
    assert compare({}, reference, optional=["route"]) == [Difference("x", "missing", "string")]
