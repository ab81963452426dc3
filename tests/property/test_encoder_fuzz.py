"""Bad input: the signer's argument encoder gets arbitrary (Move type, JSON value) pairs.

For every pair the codec either encodes — and then its bytes are exactly what an independent
reference encoder (the aptos-sdk's own BCS `Serializer`, driven by the rules the codec
documents) writes, and decoding them gives the canonical JSON — or it raises `ArgumentError`
with a one-line message naming the type and what was expected. Never a wrong encoding.

The values are mismatched on purpose: bools for integers, negative and overflowing numbers,
decimal text beyond u256, wrong element types deep inside vectors, bad or short addresses,
options in every spelling, lone surrogates in strings, floats, objects.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from aptos_sdk.bcs import Serializer
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from bot.aptos.address import Address, FunctionId
from bot.aptos.codec import (
    MAX_SEQUENCE_LENGTH,
    AbiError,
    ArgumentError,
    FunctionAbi,
    decode_entry_function,
    decode_value,
    encode_entry_function,
    encode_value,
)
from bot.aptos.movetypes import (
    STRING,
    U8,
    U64,
    Generic,
    MoveType,
    Primitive,
    Signer,
    Struct,
    Vector,
)
from tests.support.move_values import LEAVES, option, values

FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BITS = {"u8": 8, "u16": 16, "u32": 32, "u64": 64, "u128": 128, "u256": 256}
STD = Address(1)
COIN = Struct(STD, "coin", "Coin", (Struct(STD, "aptos_coin", "AptosCoin"),))


class Refuse(Exception):
    """The reference says: this value does not fit this type."""


# --- the reference encoder: the documented rules, on the SDK's Serializer -------------------


def reference(t: MoveType, value: Any) -> tuple[bytes, Any]:
    """(BCS bytes, canonical JSON) of `value` as `t`, or raise `Refuse`."""
    out = Serializer()
    canonical = _write(out, t, value)
    return out.output(), canonical


def _integer(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise Refuse
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and re.fullmatch(r"[0-9]{1,100}", value, re.ASCII):
        number = int(value)
    else:
        raise Refuse
    if not 0 <= number < 2 ** BITS[name]:
        raise Refuse
    return number


def _address(value: Any) -> tuple[int, str]:
    if not (isinstance(value, str) and re.fullmatch(r"0[xX][0-9a-fA-F]{1,64}", value)):
        raise Refuse
    number = int(value[2:], 16)
    return number, f"0x{number:x}" if number < 16 else f"0x{number:064x}"  # AIP-40


def _write(out: Serializer, t: MoveType, value: Any) -> Any:
    if isinstance(t, Primitive):
        if t.name == "bool":
            if not isinstance(value, bool) and value not in ("true", "false"):
                raise Refuse
            flag = value if isinstance(value, bool) else value == "true"
            out.bool(flag)
            return flag
        if t.name == "address":
            number, text = _address(value)
            out.fixed_bytes(number.to_bytes(32, "big"))
            return text
        number = _integer(t.name, value)
        getattr(out, t.name)(number)
        return str(number) if BITS[t.name] >= 64 else number
    if isinstance(t, Vector):
        if t.element == U8 and isinstance(value, str):
            match = re.fullmatch(r"0[xX]([0-9a-fA-F]*)", value)
            if match is None or len(match.group(1)) % 2:
                raise Refuse
            data = bytes.fromhex(match.group(1))
            out.to_bytes(data)
            return "0x" + data.hex()
        if not isinstance(value, list):
            raise Refuse
        out.uleb128(len(value))
        items = [_write(out, t.element, item) for item in value]
        if t.element == U8:
            return "0x" + bytes(items).hex()
        return items
    if t == STRING:
        if not isinstance(value, str):
            raise Refuse
        try:
            out.str(value)
        except UnicodeEncodeError:
            raise Refuse from None
        return value
    if isinstance(t, Struct) and t.address == STD and len(t.type_args) == 1:
        if (t.module, t.name) == ("object", "Object"):
            number, text = _address(value)
            out.fixed_bytes(number.to_bytes(32, "big"))
            return text
        if (t.module, t.name) == ("option", "Option"):
            return _write_option(out, t.type_args[0], value)
    raise Refuse  # signer, unsubstituted generics, any other struct


def _write_option(out: Serializer, inner: MoveType, value: Any) -> Any:
    if isinstance(value, dict):
        items = value.get("vec")
        if set(value) != {"vec"} or not isinstance(items, list) or len(items) > 1:
            raise Refuse
        present, item = bool(items), (items[0] if items else None)
    else:
        present, item = value is not None, value
    out.uleb128(1 if present else 0)
    if not present:
        return None
    canonical = _write(out, inner, item)
    return {"vec": [canonical]} if canonical is None or isinstance(canonical, dict) else canonical


# --- generators -------------------------------------------------------------------------------

EDGE_INTS = [0, 1, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1, 2**64]
EDGE_INTS += [2**128 - 1, 2**128, 2**256 - 1, 2**256, -1, -(2**64)]
json_scalars: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(EDGE_INTS),
    st.integers(),
    st.floats(allow_nan=True),
    st.sampled_from(EDGE_INTS).map(str),
    st.sampled_from(["", "-1", "+1", "1.0", "1e3", " 7", "007", "٣", "0" * 101, "true"]),
    st.sampled_from(["True", "false", "0x", "0x0", "0X1F", "0xabc", "0x" + "f" * 64]),
    st.sampled_from(["0x" + "0" * 65, "0xg1", "1x1", "0x1 ", "\ud800", "a\udfffb"]),
    st.text(max_size=20),
)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(["vec", "x"]), inner, max_size=2),
        inner.map(lambda v: {"vec": [v]}),
    ),
    max_leaves=8,
)
supported_types: st.SearchStrategy[MoveType] = st.recursive(
    st.sampled_from(LEAVES),
    lambda inner: st.one_of(inner.map(Vector), inner.map(option)),
    max_leaves=4,
)
any_types: st.SearchStrategy[MoveType] = st.recursive(
    st.one_of(
        st.sampled_from(LEAVES),
        st.sampled_from([Signer(), Signer(ref=True), Generic(0), COIN, Struct(STD, "m", "S")]),
    ),
    lambda inner: st.one_of(inner.map(Vector), inner.map(option)),
    max_leaves=4,
)


def damaged(value: Any, data: st.DataObject) -> Any:
    """A valid value with one part swapped for arbitrary JSON (deep inside, sometimes)."""
    if isinstance(value, list) and value and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(value) - 1))
        return [*value[:i], damaged(value[i], data), *value[i + 1 :]]
    if isinstance(value, dict) and value.get("vec") and data.draw(st.booleans()):
        return {"vec": [damaged(value["vec"][0], data)]}
    return data.draw(json_values)


@st.composite
def typed_values(draw: st.DrawFn) -> tuple[MoveType, Any]:
    """Any type with a valid, a damaged or an arbitrary value."""
    how = draw(st.sampled_from(["valid", "damaged", "arbitrary"]))
    if how == "arbitrary":
        return draw(any_types), draw(json_values)
    t = draw(supported_types)
    valid, _canonical = draw(values(t))
    return t, valid if how == "valid" else damaged(valid, draw(st.data()))


# --- properties -------------------------------------------------------------------------------


@FUZZ
@given(typed_values())
def test_an_encoding_is_the_reference_encoding_or_a_clear_refusal(
    case: tuple[MoveType, Any],
) -> None:
    t, value = case
    try:
        expected, canonical = reference(t, value)
    except Refuse:
        event("refused")
        with pytest.raises(ArgumentError) as info:
            encode_value(t, value)
        message = str(info.value)
        assert "\n" not in message and message.startswith(f"value ({t})")
        assert "expected" in message and f"got {info.value.json_type}" in message
        return
    event("encoded")
    data = encode_value(t, value)
    assert data == expected
    assert decode_value(t, data) == canonical
    assert encode_value(t, canonical) == data  # the canonical form is a fixed point


@FUZZ
@given(
    st.lists(typed_values().filter(lambda c: not isinstance(c[0], Signer)), max_size=4),
    st.integers(0, 5),
)
@example(cases=[(Vector(Generic(index=0)), [])], arity=1)  # the ABI's fault, not the value's
def test_a_whole_call_encodes_argument_by_argument_or_names_the_bad_one(
    cases: list[tuple[MoveType, Any]], arity: int
) -> None:
    params: list[MoveType] = [Signer(ref=True), *(t for t, _ in cases)]  # signers lead only
    fn = FunctionAbi(FunctionId.parse("0x1::m::f"), params, 0)
    arguments = [v for _, v in cases]
    if arity < len(arguments):
        arguments = arguments[:arity]  # sometimes too few
    if len(arguments) != len(cases):
        with pytest.raises(ArgumentError) as counted:
            encode_entry_function(fn, "f", [], arguments)
        assert "\n" not in str(counted.value) and "arguments" in str(counted.value)
        return
    # Argument by argument, as the codec goes: a parameter type using T0 (never declared:
    # the function takes no type arguments) is the ABI's fault, even for a value such as
    # an empty vector that needs no element type; otherwise the value must fit.
    for index, ((t, _), value) in enumerate(zip(cases, arguments, strict=True)):
        if fn.arg_has_generics[index]:
            with pytest.raises(AbiError, match="type argument") as bad_abi:
                encode_entry_function(fn, "f", [], arguments)
            assert "\n" not in str(bad_abi.value) and f"argument {index}:" in str(bad_abi.value)
            return
        try:
            reference(t, value)
        except Refuse:
            with pytest.raises(ArgumentError) as info:
                encode_entry_function(fn, "f", [], arguments)
            assert "\n" not in str(info.value)
            assert info.value.index == index
            assert str(info.value).startswith(f"argument {index} (")
            return
    expected = [reference(t, v)[1] for (t, _), v in zip(cases, arguments, strict=True)]
    entry = encode_entry_function(fn, "f", [], arguments)
    assert decode_entry_function(entry, fn)["arguments"] == expected


@FUZZ
@given(st.one_of(st.text(max_size=30), st.sampled_from(["u64", "vector<u8", "0x1::m::S<>"])))
def test_an_unreadable_type_argument_is_refused_by_name(text: str) -> None:
    fn = FunctionAbi(FunctionId.parse("0x1::m::g"), [Signer(ref=True), Generic(0)], 1)
    try:
        entry = encode_entry_function(fn, "g", [text], ["1"])
    except (ArgumentError, AbiError) as exc:
        assert "\n" not in str(exc)
        return
    assert len(entry.ty_args) == 1


class _Claims(list[Any]):
    """A list that claims more elements than BCS can count."""

    def __len__(self) -> int:
        return MAX_SEQUENCE_LENGTH + 1


def test_a_sequence_longer_than_bcs_allows_is_refused_before_encoding() -> None:
    with pytest.raises(ArgumentError, match="at most 2147483647 elements"):
        encode_value(Vector(U64), _Claims())


def test_an_abi_using_an_undeclared_type_parameter_is_an_abi_error() -> None:
    fn = FunctionAbi(FunctionId.parse("0x1::m::f"), [Signer(ref=True), Vector(Generic(1))], 1)
    with pytest.raises(AbiError, match="argument 0"):
        encode_entry_function(fn, "f", ["u64"], [["1"]])
