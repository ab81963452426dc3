"""Hypothesis strategies for Move types and JSON values that match them.

`arg_types` draws entry-function argument types (primitives, strings, objects, and
vectors and options of them); `values(t)` draws `(JSON as a client may send it, its
canonical JSON)` pairs of type `t`, in every spelling the codec accepts.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from bot.aptos.address import Address
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
    MoveType,
    Primitive,
    Struct,
    Vector,
)

STD = Address(1)
BITS = {"u8": 8, "u16": 16, "u32": 32, "u64": 64, "u128": 128, "u256": 256}
METADATA = Struct(Address(0xABC), "fungible_asset", "Metadata")


def option(t: MoveType) -> Struct:
    """`0x1::option::Option<t>`."""
    return Struct(STD, "option", "Option", (t,))


OBJECT = Struct(STD, "object", "Object", (METADATA,))

LEAVES: list[MoveType] = [BOOL, U8, U16, U32, U64, U128, U256, ADDRESS, STRING, OBJECT]
leaf_types: st.SearchStrategy[MoveType] = st.sampled_from(LEAVES)
arg_types: st.SearchStrategy[MoveType] = st.recursive(
    leaf_types,
    lambda inner: st.one_of(inner.map(Vector), inner.map(option)),
    max_leaves=4,
)

Pair = tuple[Any, Any]  # (JSON as a client may send it, its canonical JSON)


def ints(t: Primitive) -> st.SearchStrategy[Pair]:
    """Unsigned integers of `t`'s width, as numbers or strings."""
    top = (1 << BITS[t.name]) - 1
    canonical = (lambda n: str(n)) if BITS[t.name] >= 64 else (lambda n: n)
    return st.integers(0, top).flatmap(
        lambda n: st.sampled_from([n, str(n)]).map(lambda v: (v, canonical(n)))
    )


def addresses() -> st.SearchStrategy[Pair]:
    """Addresses in long, short and upper-case spellings."""

    def forms(n: int) -> st.SearchStrategy[Pair]:
        canonical = str(Address(n))
        return st.sampled_from([f"0x{n:064x}", f"0x{n:x}", f"0X{n:X}"]).map(
            lambda v: (v, canonical)
        )

    return st.one_of(st.integers(0, 20), st.integers(0, (1 << 256) - 1)).flatmap(forms)


def byte_vectors() -> st.SearchStrategy[Pair]:
    """`vector<u8>` as hex (either case) or as a list of numbers or strings."""

    def forms(b: bytes) -> st.SearchStrategy[Pair]:
        canonical = "0x" + b.hex()
        return st.sampled_from(
            ["0x" + b.hex(), "0x" + b.hex().upper(), list(b), [str(x) for x in b]]
        ).map(lambda v: (v, canonical))

    return st.binary(max_size=140).flatmap(forms)


def values(t: MoveType) -> st.SearchStrategy[Pair]:
    """JSON values of type `t` with their canonical form."""
    if isinstance(t, Primitive):
        if t.name == "bool":
            return st.booleans().flatmap(
                lambda b: st.sampled_from([b, "true" if b else "false"]).map(lambda v: (v, b))
            )
        if t.name == "address":
            return addresses()
        return ints(t)
    if t == STRING:
        return st.text(st.characters(codec="utf-8"), max_size=140).map(lambda s: (s, s))
    if isinstance(t, Vector):
        if t.element == U8:
            return byte_vectors()
        return st.lists(values(t.element), max_size=3).map(
            lambda pairs: ([p[0] for p in pairs], [p[1] for p in pairs])
        )
    assert isinstance(t, Struct)
    if t.name == "Object":
        return addresses()
    inner = t.type_args[0]

    def some(pair: Pair) -> st.SearchStrategy[Pair]:
        json_value, canonical = pair
        if canonical is None or isinstance(canonical, dict):  # nested options: Some(None) …
            return st.just(({"vec": [json_value]}, {"vec": [canonical]}))
        wrapped = ({"vec": [json_value]}, canonical)
        if json_value is None or isinstance(json_value, dict):
            return st.just(wrapped)
        return st.sampled_from([(json_value, canonical), wrapped])

    none: st.SearchStrategy[Pair] = st.sampled_from([(None, None), ({"vec": []}, None)])
    return st.one_of(none, values(inner).flatmap(some))
