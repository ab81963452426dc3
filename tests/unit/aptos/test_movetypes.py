from __future__ import annotations

import pytest
from aptos_sdk.bcs import Deserializer
from aptos_sdk.type_tag import StructTag, TypeTag, U64Tag

from bot.aptos.address import Address, canonical_type_text
from bot.aptos.movetypes import (
    ADDRESS,
    BOOL,
    STRING,
    U8,
    U16,
    U32,
    U64,
    U128,
    U256,
    Generic,
    MoveTypeError,
    Primitive,
    Signer,
    Struct,
    Vector,
    from_type_tag,
    has_generics,
    parse_move_type,
    substitute,
    to_type_tag,
)
from bot.aptos.transactions import read_type_tag

THL = "0x07fd500c11216f0fe3095d0c4b8aa4d64a4e2e04f83758462f2b127255643615::thl_coin::THL"


def tag_bytes(tag: TypeTag) -> bytes:
    data: bytes = tag.to_bytes()
    return data


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bool", BOOL),
        ("u8", U8),
        ("u16", U16),
        ("u32", U32),
        ("u64", U64),
        ("u128", U128),
        ("u256", U256),
        ("address", ADDRESS),
        ("signer", Signer(ref=False)),
        ("&signer", Signer(ref=True)),
        ("0x1::string::String", STRING),
        ("T0", Generic(0)),
        ("T31", Generic(31)),
        ("vector<vector<vector<u8>>>", Vector(Vector(Vector(U8)))),
        ("0x1::option::Option<u64>", Struct(Address(1), "option", "Option", (U64,))),
        (
            "0x1::object::Object<0x1::fungible_asset::Metadata>",
            Struct(
                Address(1), "object", "Object", (Struct(Address(1), "fungible_asset", "Metadata"),)
            ),
        ),
        (
            "0x1::option::Option<0x1::coin::Coin<T0>>",
            Struct(
                Address(1), "option", "Option", (Struct(Address(1), "coin", "Coin", (Generic(0),)),)
            ),
        ),
    ],
)
def test_parse_known_types(text: str, expected: object) -> None:
    parsed = parse_move_type(text)
    assert parsed == expected
    assert str(parsed) == text
    assert parse_move_type(str(parsed)) == parsed


def test_option_of_deep_vectors_from_the_panora_abi() -> None:
    text = "0x1::option::Option<vector<vector<vector<vector<vector<u8>>>>>>"
    parsed = parse_move_type(text)
    assert isinstance(parsed, Struct) and parsed.name == "Option"
    inner = parsed.type_args[0]
    depth = 0
    while isinstance(inner, Vector):
        inner, depth = inner.element, depth + 1
    assert (depth, inner) == (5, U8)
    assert str(parsed) == text


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        # Long-form special address → short; leading-zero non-special address keeps 64 digits.
        (
            "0x0000000000000000000000000000000000000000000000000000000000000001::aptos_coin::AptosCoin",
            "0x1::aptos_coin::AptosCoin",
        ),
        ("0x7fd500c11216f0fe3095d0c4b8aa4d64a4e2e04f83758462f2b127255643615::thl_coin::THL", THL),
        (" 0x1::m::Pair< u8 , 0x1::string::String > ", "0x1::m::Pair<u8,0x1::string::String>"),
        ("vector< vector<u8> >", "vector<vector<u8>>"),
        ("& signer", "&signer"),
        ("0X1::m::S", "0x1::m::S"),
    ],
)
def test_canonical_text(text: str, canonical: str) -> None:
    assert str(parse_move_type(text)) == canonical
    # Same convention as the address module's canonical type text.
    assert canonical_type_text(text) == canonical


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "u512",
        "vector",
        "vector<>",
        "vector<u8",
        "vector<u8>>",
        "vector<u8,u16>",
        "&u8",
        "&mut signer",
        "0x1::m",
        "0x1::m::",
        "0x1::m::S<>",
        "0x1::m::S<u8,>",
        "0xzz::m::S",
        "0x1::1m::S",
        "std::string::String",
        "u8 u8",
        "T",
        "Tx",
        "u8;",
        "0x" + "1" * 65 + "::m::S",
        "vector<" * 70 + "u8" + ">" * 70,
    ],
)
def test_parse_errors_name_the_text(text: str) -> None:
    with pytest.raises(MoveTypeError) as info:
        parse_move_type(text)
    assert f"Move type {text!r}" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_parse_rejects_non_strings() -> None:
    with pytest.raises(MoveTypeError, match="must be a string"):
        parse_move_type(7)


def test_primitive_constructor_validates() -> None:
    with pytest.raises(MoveTypeError):
        Primitive("u7")


def test_generics_and_substitution() -> None:
    t = parse_move_type("vector<0x1::m::Pair<T1,vector<T0>>>")
    assert has_generics(t)
    assert not has_generics(parse_move_type("vector<0x1::m::Pair<u8,address>>"))
    concrete = substitute(t, [U64, STRING])
    assert str(concrete) == "vector<0x1::m::Pair<0x1::string::String,vector<u64>>>"
    assert not has_generics(concrete)
    with pytest.raises(MoveTypeError, match="T1"):
        substitute(t, [U64])


@pytest.mark.parametrize(
    ("text", "bcs_hex"),
    [
        ("bool", "00"),
        ("u8", "01"),
        ("u64", "02"),
        ("u128", "03"),
        ("address", "04"),
        ("u16", "08"),
        ("u32", "09"),
        ("u256", "0a"),
        ("vector<u8>", "0601"),
        ("vector<vector<u64>>", "060602"),
        (
            "0x1::string::String",
            "07" + "00" * 31 + "01" + "06" + b"string".hex() + "06" + b"String".hex() + "00",
        ),
        (
            "0x1::option::Option<u64>",
            "07" + "00" * 31 + "01" + "06" + b"option".hex() + "06" + b"Option".hex() + "0102",
        ),
    ],
)
def test_type_tag_bcs_is_hand_checked(text: str, bcs_hex: str) -> None:
    tag = to_type_tag(parse_move_type(text))
    assert tag_bytes(tag).hex() == bcs_hex
    back = read_type_tag(Deserializer(bytes.fromhex(bcs_hex)))
    assert tag_bytes(back).hex() == bcs_hex
    assert str(from_type_tag(back)) == text


def test_type_tag_agrees_with_the_sdk_struct_parser() -> None:
    ours = to_type_tag(parse_move_type(THL))
    sdks = TypeTag(StructTag.from_str(THL))
    assert ours == sdks
    assert tag_bytes(ours) == tag_bytes(sdks)
    assert str(from_type_tag(sdks)) == THL


def test_from_type_tag_accepts_the_sdk_primitive_tags() -> None:
    assert from_type_tag(TypeTag(U64Tag(0))) == U64
    # …and our primitive tags compare equal to the SDK's.
    assert to_type_tag(U64) == TypeTag(U64Tag(123))
    assert to_type_tag(U64) != to_type_tag(U8)


def test_to_type_tag_rejects_non_types() -> None:
    for text in ("signer", "&signer", "T0", "vector<T0>", "0x1::m::S<signer>"):
        with pytest.raises(MoveTypeError):
            to_type_tag(parse_move_type(text))
