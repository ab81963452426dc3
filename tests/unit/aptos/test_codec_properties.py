"""Property tests: random Move types with matching (and mismatching) random JSON values."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.aptos.address import Address, FunctionId, canonical_type_text
from bot.aptos.codec import (
    ArgumentError,
    DecodeError,
    FunctionAbi,
    decode_entry_function,
    decode_value,
    encode_entry_function,
    encode_value,
)
from bot.aptos.movetypes import (
    ADDRESS,
    BOOL,
    STRING,
    U8,
    Generic,
    MoveType,
    Primitive,
    Signer,
    Struct,
    Vector,
    parse_move_type,
)
from tests.support.move_values import BITS, Pair, arg_types, leaf_types, values

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])

typed_values = arg_types.flatmap(lambda t: values(t).map(lambda pair: (t, pair)))


@SETTINGS
@given(typed_values)
def test_decode_of_encode_is_canonical(case: tuple[MoveType, Pair]) -> None:
    t, (json_value, canonical) = case
    data = encode_value(t, json_value)
    assert decode_value(t, data) == canonical
    # The canonical form is a fixed point: it encodes to the very same bytes.
    assert encode_value(t, canonical) == data


# --- mismatched values -------------------------------------------------------------------------

JUNK: st.SearchStrategy[Any] = st.sampled_from([None, {}, {"k": 1}, [], 1.5, True])


def bad_values(t: MoveType) -> st.SearchStrategy[Any]:
    if isinstance(t, Primitive) and t.name in BITS:
        top = (1 << BITS[t.name]) - 1
        return st.one_of(
            st.integers(max_value=-1),
            st.integers(min_value=top + 1),
            st.integers(min_value=top + 1).map(str),
            st.sampled_from(["", "-1", "+1", "1.0", "0x1", " 1", "1_000", "one", 2.0, True]),
            st.floats(allow_nan=True),
            JUNK,
        )
    if t == BOOL:
        return st.one_of(
            st.integers(),
            st.sampled_from(["True", "1", "yes", ""]),
            JUNK.filter(lambda v: not isinstance(v, bool)),
        )
    if t == ADDRESS or (isinstance(t, Struct) and t.name == "Object"):
        return st.one_of(
            st.integers(),
            st.sampled_from(["", "0x", "1", "abc", "0xg", "0x" + "1" * 65, " 0x1"]),
            JUNK,
        )
    if t == STRING:
        return st.one_of(st.integers(), JUNK.filter(lambda v: not isinstance(v, str)))
    if isinstance(t, Vector):
        element_bad = bad_values(t.element).map(lambda v: [v])
        if t.element == U8:
            return st.one_of(
                element_bad, st.sampled_from(["0x1", "0xabc", "abcd", "0xzz", "zz", {}, 3, None])
            )
        return st.one_of(element_bad, st.sampled_from(["0x00", "text", {}, 3, None, True]))
    assert isinstance(t, Struct) and t.name == "Option"
    return st.one_of(
        # A bad inner value, given bare: never null or a dict (those are Option's own forms).
        bad_values(t.type_args[0]).filter(lambda v: v is not None and not isinstance(v, dict)),
        st.sampled_from([{"vec": [1, 2]}, {"vec": 5}, {"x": []}, {"vec": [], "y": 1}]),
    )


typed_bad_values = arg_types.flatmap(lambda t: bad_values(t).map(lambda v: (t, v)))


@SETTINGS
@given(typed_bad_values)
def test_mismatched_values_raise_a_clear_error(case: tuple[MoveType, Any]) -> None:
    t, value = case
    with pytest.raises(ArgumentError) as info:
        encode_value(t, value)
    message = str(info.value)
    assert message.startswith(f"value ({t})")
    assert "expected" in message and f"got {info.value.json_type}" in message
    assert info.value.move_type == str(t)


# --- whole calls -------------------------------------------------------------------------------


@SETTINGS
@given(st.lists(typed_values, max_size=5))
def test_entry_function_round_trip(cases: list[tuple[MoveType, Pair]]) -> None:
    params: list[MoveType] = [Signer(ref=True), *(t for t, _ in cases)]
    fn = FunctionAbi(FunctionId.parse("0x1::m::f"), params, 0)
    entry = encode_entry_function(fn, "f", [], [pair[0] for _, pair in cases])
    assert decode_entry_function(entry, fn) == {
        "function": "0x1::m::f",
        "type_arguments": [],
        "arguments": [pair[1] for _, pair in cases],
    }


@SETTINGS
@given(arg_types, st.binary(max_size=64))
def test_decode_of_arbitrary_bytes_is_exact_or_an_error(t: MoveType, data: bytes) -> None:
    try:
        value = decode_value(t, data)
    except DecodeError:
        return
    assert encode_value(t, value) == data


# --- type texts --------------------------------------------------------------------------------

identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True).filter(
    lambda s: (
        s not in ("vector", "signer", "bool", "address")
        and not s.startswith(("u8", "u16", "u32", "u64", "u128", "u256", "T"))
    )
)
any_types: st.SearchStrategy[MoveType] = st.recursive(
    st.one_of(
        leaf_types,
        st.integers(0, 40).map(Generic),
        st.builds(Struct, st.integers(0, (1 << 256) - 1).map(Address), identifiers, identifiers),
    ),
    lambda inner: st.one_of(
        inner.map(Vector),
        st.builds(
            Struct,
            st.integers(0, 300).map(Address),
            identifiers,
            identifiers,
            st.lists(inner, min_size=1, max_size=3).map(tuple),
        ),
    ),
    max_leaves=8,
)


def spaced(t: MoveType) -> str:
    """A non-canonical but valid spelling: long addresses, spaces after commas and inside <>."""
    if isinstance(t, Vector):
        return f"vector< {spaced(t.element)} >"
    if isinstance(t, Struct):
        head = f"{t.address.long}::{t.module}::{t.name}"
        if not t.type_args:
            return head
        return head + "<" + ", ".join(spaced(a) for a in t.type_args) + " >"
    return str(t)


@SETTINGS
@given(any_types)
def test_type_text_round_trips(t: MoveType) -> None:
    text = str(t)
    assert parse_move_type(text) == t
    assert parse_move_type(spaced(t)) == t
    assert canonical_type_text(spaced(t)) == text
    assert " " not in text
