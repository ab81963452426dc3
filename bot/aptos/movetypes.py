"""Move types (immutable tree, parser, canonical text) and aptos-sdk `TypeTag`s.

Canonical text (`str()` of every node; `parse_move_type` round-trips to it): `bool`, `u8` … `u256`,
`address`, `signer`, `&signer`, `vector<T>`, `T0`…, and structs `address::module::Name<A,B>` with
AIP-40 addresses and generic arguments comma-separated with **no space**. That is exactly
`bot.aptos.address.canonical_type_text` of any valid input. Parsing accepts any whitespace
between tokens (the node's display form writes `, `).

The SDK's primitive tag classes (`U64Tag`, …) carry a *value* and serialise it after the variant
byte — wrong for a type argument (a `u64` tag is the single byte 0x02) — and the SDK has no vector
tag, so `to_type_tag` wraps our `PrimitiveTag`/`VectorTag` (or the SDK's `StructTag`) in the
SDK's `TypeTag`, which then serialises correctly inside an `EntryFunction`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, TypeAlias

from aptos_sdk.account_address import AccountAddress
from aptos_sdk.bcs import Serializer
from aptos_sdk.type_tag import StructTag, TypeTag

from bot.aptos.address import Address, AddressError

__all__ = [
    "ADDRESS",
    "BOOL",
    "STD_ADDRESS",
    "STRING",
    "U8",
    "U16",
    "U32",
    "U64",
    "U128",
    "U256",
    "Generic",
    "MoveType",
    "MoveTypeError",
    "Primitive",
    "PrimitiveTag",
    "Signer",
    "Struct",
    "Vector",
    "VectorTag",
    "from_type_tag",
    "has_generics",
    "parse_move_type",
    "struct_type_tag",
    "substitute",
    "to_type_tag",
]

_MAX_DEPTH: Final = 64
# BCS variant index of each primitive in Move's `TypeTag` enum.
_VARIANT_OF: Final = dict(bool=0, u8=1, u64=2, u128=3, address=4, u16=8, u32=9, u256=10)
_NAME_OF_VARIANT: Final = {v: k for k, v in _VARIANT_OF.items()}
SIGNER_VARIANT: Final = 5
VECTOR_VARIANT: Final = 6
STRUCT_VARIANT: Final = 7

_TOKEN_RE: Final = re.compile(r"\s*(::|<|>|,|&|0[xX][0-9a-fA-F]+|[A-Za-z_][A-Za-z0-9_]*)")
_IDENT_RE: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_GENERIC_RE: Final = re.compile(r"^T([0-9]+)$")


class MoveTypeError(ValueError):
    """A text that is not a Move type, or a type that cannot be used where it was given."""


@dataclass(frozen=True, slots=True)
class Primitive:
    """`bool`, `u8`, `u16`, `u32`, `u64`, `u128`, `u256` or `address`."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in _VARIANT_OF:
            raise MoveTypeError(f"not a primitive Move type: {self.name!r}")

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Signer:
    """`signer`, or `&signer` when `ref` is true."""

    ref: bool = False

    def __str__(self) -> str:
        return "&signer" if self.ref else "signer"


@dataclass(frozen=True, slots=True)
class Vector:
    """`vector<element>`."""

    element: MoveType

    def __str__(self) -> str:
        return f"vector<{self.element}>"


@dataclass(frozen=True, slots=True)
class Struct:
    """`address::module::name<type_args…>`."""

    address: Address
    module: str
    name: str
    type_args: tuple[MoveType, ...] = ()

    def __post_init__(self) -> None:
        for ident in (self.module, self.name):
            if not _IDENT_RE.match(ident):
                raise MoveTypeError(f"not a Move identifier: {ident!r}")

    def __str__(self) -> str:
        head = f"{self.address}::{self.module}::{self.name}"
        if not self.type_args:
            return head
        return head + "<" + ",".join(str(arg) for arg in self.type_args) + ">"


@dataclass(frozen=True, slots=True)
class Generic:
    """The generic type parameter `T{index}` of a function."""

    index: int

    def __str__(self) -> str:
        return f"T{self.index}"


MoveType: TypeAlias = Primitive | Signer | Vector | Struct | Generic

BOOL: Final = Primitive("bool")
U8: Final = Primitive("u8")
U16: Final = Primitive("u16")
U32: Final = Primitive("u32")
U64: Final = Primitive("u64")
U128: Final = Primitive("u128")
U256: Final = Primitive("u256")
ADDRESS: Final = Primitive("address")
STD_ADDRESS: Final = Address(1)
STRING: Final = Struct(STD_ADDRESS, "string", "String")


# --- parsing -------------------------------------------------------------------------------


def _tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    end = len(text.rstrip())
    while pos < end:
        match = _TOKEN_RE.match(text, pos)
        if match is None:
            raise MoveTypeError(f"unexpected character at {pos} in Move type {text!r}")
        tokens.append(match.group(1))
        pos = match.end()
    return tokens


class _Parser:
    __slots__ = ("pos", "text", "tokens")

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0

    def fail(self, why: str) -> MoveTypeError:
        return MoveTypeError(f"{why} in Move type {self.text!r}")

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise self.fail("unexpected end")
        self.pos += 1
        return token

    def expect(self, token: str) -> None:
        got = self.take()
        if got != token:
            raise self.fail(f"expected {token!r}, got {got!r}")

    def parse(self, depth: int = 0) -> MoveType:
        if depth > _MAX_DEPTH:
            raise self.fail(f"nesting deeper than {_MAX_DEPTH}")
        word = self.take()
        if word == "&":
            if self.take() != "signer":
                raise self.fail("only `&signer` may be a reference")
            return Signer(ref=True)
        if word == "signer":
            return Signer()
        if word in _VARIANT_OF:
            return Primitive(word)
        if word == "vector":
            self.expect("<")
            element = self.parse(depth + 1)
            self.expect(">")
            return Vector(element)
        generic = _GENERIC_RE.match(word)
        if generic is not None:
            return Generic(int(generic.group(1)))
        if word[:2] in ("0x", "0X"):
            return self.parse_struct(word, depth)
        raise self.fail(f"unknown type {word!r}")

    def parse_struct(self, address_text: str, depth: int) -> Struct:
        try:
            address = Address.parse(address_text)
        except AddressError as exc:
            raise self.fail(str(exc)) from exc
        self.expect("::")
        module = self.take()
        self.expect("::")
        name = self.take()
        if not (_IDENT_RE.match(module) and _IDENT_RE.match(name)):
            raise self.fail(f"bad struct name {module!r}::{name!r}")
        args: list[MoveType] = []
        if self.peek() == "<":
            self.take()
            args.append(self.parse(depth + 1))
            while self.peek() == ",":
                self.take()
                args.append(self.parse(depth + 1))
            self.expect(">")
        return Struct(address, module, name, tuple(args))


@lru_cache(maxsize=4096)
def parse_move_type(text: str) -> MoveType:
    """Parse a Move type as ABI JSON and `type_arguments` write it (`vector<u8>`, `&signer`, `T0`).

    Raises:
        MoveTypeError: naming the text, when it is not a well-formed Move type.
    """
    if not isinstance(text, str):
        raise MoveTypeError(f"a Move type must be a string, got {type(text).__name__}")
    parser = _Parser(text)
    result = parser.parse()
    if parser.peek() is not None:
        raise parser.fail(f"unexpected {parser.peek()!r} after the type")
    return result


# --- generics ------------------------------------------------------------------------------


def has_generics(move_type: MoveType) -> bool:
    """True when the type mentions a generic parameter `T…` anywhere."""
    if isinstance(move_type, Generic):
        return True
    if isinstance(move_type, Vector):
        return has_generics(move_type.element)
    if isinstance(move_type, Struct):
        return any(has_generics(arg) for arg in move_type.type_args)
    return False


def substitute(move_type: MoveType, type_args: Sequence[MoveType]) -> MoveType:
    """Replace every generic parameter `T{i}` by `type_args[i]`.

    Raises:
        MoveTypeError: when the type uses a parameter index beyond `type_args`.
    """
    if isinstance(move_type, Generic):
        if move_type.index >= len(type_args):
            raise MoveTypeError(
                f"type uses T{move_type.index} but only {len(type_args)} type arguments given"
            )
        return type_args[move_type.index]
    if isinstance(move_type, Vector):
        return Vector(substitute(move_type.element, type_args))
    if isinstance(move_type, Struct) and move_type.type_args:
        return Struct(
            move_type.address,
            move_type.module,
            move_type.name,
            tuple(substitute(arg, type_args) for arg in move_type.type_args),
        )
    return move_type


# --- aptos-sdk TypeTag bridge --------------------------------------------------------------


class PrimitiveTag:
    """Inner value of an SDK `TypeTag` for a primitive: just the variant, no payload."""

    __slots__ = ("_variant",)

    def __init__(self, variant: int) -> None:
        self._variant = variant

    def variant(self) -> int:
        """The Move `TypeTag` enum index (0 bool, 1 u8, 2 u64, …)."""
        return self._variant

    def serialize(self, serializer: Serializer) -> None:
        """Nothing follows the variant index (the SDK's `TypeTag` writes the index)."""

    def __eq__(self, other: object) -> bool:
        # Variants 0..5 and 8..10 carry no structure: the same index is the same type.
        variant = getattr(other, "variant", None)
        return callable(variant) and variant() == self._variant

    def __str__(self) -> str:
        return _NAME_OF_VARIANT.get(self._variant, "signer")


class VectorTag:
    """Inner value of an SDK `TypeTag` for `vector<element>`."""

    __slots__ = ("element",)

    def __init__(self, element: TypeTag) -> None:
        self.element = element

    def variant(self) -> int:
        """The Move `TypeTag` enum index of vectors (6)."""
        return VECTOR_VARIANT

    def serialize(self, serializer: Serializer) -> None:
        """Write the element's tag (its own variant index and body)."""
        self.element.serialize(serializer)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VectorTag) and self.element == other.element

    def __str__(self) -> str:
        return f"vector<{self.element}>"


def to_type_tag(move_type: MoveType) -> TypeTag:
    """The aptos-sdk `TypeTag` of a concrete type (a type argument).

    Raises:
        MoveTypeError: for `signer` and unsubstituted generic parameters, which are not types
            a transaction may name.
    """
    if isinstance(move_type, Primitive):
        return TypeTag(PrimitiveTag(_VARIANT_OF[move_type.name]))
    if isinstance(move_type, Vector):
        return TypeTag(VectorTag(to_type_tag(move_type.element)))
    if isinstance(move_type, Struct):
        return struct_type_tag(
            move_type.address.to_bytes(),
            move_type.module,
            move_type.name,
            [to_type_tag(arg) for arg in move_type.type_args],
        )
    raise MoveTypeError(f"{move_type} cannot be a type argument")


def struct_type_tag(address: bytes, module: str, name: str, type_args: list[TypeTag]) -> TypeTag:
    """An SDK `TypeTag` holding the SDK's `StructTag` (whose constructor is untyped)."""
    tag = StructTag(AccountAddress(address), module, name, type_args)  # type: ignore[no-untyped-call, unused-ignore]
    return TypeTag(tag)


def from_type_tag(tag: TypeTag) -> MoveType:
    """The Move type of an aptos-sdk `TypeTag` (ours or the SDK's own tag classes).

    Raises:
        MoveTypeError: for a tag this module does not know.
    """
    inner = tag.value
    if isinstance(inner, StructTag):
        return Struct(
            Address.from_bytes(bytes(inner.address.address)),
            inner.module,
            inner.name,
            tuple(from_type_tag(arg) for arg in inner.type_args),
        )
    if isinstance(inner, VectorTag):
        return Vector(from_type_tag(inner.element))
    variant = inner.variant() if callable(getattr(inner, "variant", None)) else None
    if variant == SIGNER_VARIANT:
        return Signer()
    if isinstance(variant, int) and variant in _NAME_OF_VARIANT:
        return Primitive(_NAME_OF_VARIANT[variant])
    raise MoveTypeError(f"unknown type tag {inner!r}")
