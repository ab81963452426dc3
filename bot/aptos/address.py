"""Aptos account addresses, coin types and function ids: one canonical form for each.

Every part of the bot (API client, signer policy, journal, paper world) compares Aptos
identities through this module, so no two places disagree on whether `0x7fd5…` and
`0x07fd5…` are the same address.

* An address is a 32-byte value. It parses from `0x` + 1..64 hex digits (leading zeros
  optional, any case) and prints in the AIP-40 form: "special" addresses `0x0`…`0xf` short,
  every other address long (64 hex digits).
* A coin type is `address::module::Struct` with optional generic arguments
  (`…::house_lp::MKLP<…::fa_box::W_USDC>`); its canonical text has every embedded address
  in AIP-40 form and no whitespace.
* A function id is `address::module::function`.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "Address",
    "AddressError",
    "FunctionId",
    "canonical_type_text",
    "is_coin_type",
    "looks_like_address",
    "split_names",
]

_HEX_RE: Final = re.compile(r"^(?:0[xX])?([0-9a-fA-F]{1,64})$")
# An address inside a type string is always followed by `::`.
_EMBEDDED_ADDRESS_RE: Final = re.compile(r"0[xX][0-9a-fA-F]{1,64}(?=::)")
_IDENT_RE: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MAX: Final = (1 << 256) - 1
_SPECIAL_LIMIT: Final = 16  # AIP-40: 0x0 … 0xf print short


class AddressError(ValueError):
    """A text that is not a valid Aptos address, type or function id."""


class Address:
    """An Aptos account (or object / FA metadata) address: an immutable 32-byte value."""

    __slots__ = ("_value",)

    _value: int

    def __init__(self, value: int) -> None:
        if not 0 <= value <= _MAX:
            raise AddressError(f"address out of range: {value}")
        object.__setattr__(self, "_value", value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Address is immutable")

    @classmethod
    def parse(cls, text: str) -> Address:
        """Parse `0x1`, `0x07fd5…` or 64 hex digits (with or without `0x`) to an address.

        Raises:
            AddressError: naming the text, when it is not 1..64 hex digits.
        """
        if not isinstance(text, str):
            raise AddressError(f"address must be a string, got {type(text).__name__}")
        match = _HEX_RE.match(text.strip())
        if match is None:
            raise AddressError(f"not an Aptos address: {text!r}")
        return cls(int(match.group(1), 16))

    @classmethod
    def from_bytes(cls, raw: bytes) -> Address:
        """Build from the 32 raw bytes used in BCS."""
        if len(raw) != 32:
            raise AddressError(f"an address is 32 bytes, got {len(raw)}")
        return cls(int.from_bytes(raw, "big"))

    def to_bytes(self) -> bytes:
        """The 32 raw bytes (big-endian), as BCS writes an address."""
        return self._value.to_bytes(32, "big")

    @property
    def long(self) -> str:
        """`0x` followed by exactly 64 lowercase hex digits."""
        return f"0x{self._value:064x}"

    @property
    def is_special(self) -> bool:
        """True for the AIP-40 special addresses `0x0`…`0xf`."""
        return self._value < _SPECIAL_LIMIT

    def __str__(self) -> str:
        """The AIP-40 display form."""
        return f"0x{self._value:x}" if self.is_special else self.long

    def __repr__(self) -> str:
        return f"Address({self})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Address):
            return self._value == other._value
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._value)

    def __lt__(self, other: Address) -> bool:
        return self._value < other._value

    def __reduce__(self) -> tuple[type[Address], tuple[int]]:
        return (Address, (self._value,))


def looks_like_address(text: object) -> bool:
    """True when `text` is a bare address (no `::`), in any accepted form."""
    return isinstance(text, str) and _HEX_RE.match(text.strip()) is not None


def canonical_type_text(text: str) -> str:
    """Canonical text of a Move type string: embedded addresses in AIP-40 form, no spaces.

    `0x07fd5…::thl_coin::THL` and `0x7fd5…::thl_coin::THL` give the same text. The text is
    not otherwise validated here (the full Move type parser is `bot.aptos.movetypes`).
    """
    compact = "".join(text.split())
    return _EMBEDDED_ADDRESS_RE.sub(lambda m: str(Address.parse(m.group(0))), compact)


def is_coin_type(text: object) -> bool:
    """True when `text` has the shape `address::module::Name[<…>]` of a legacy coin type."""
    if not isinstance(text, str):
        return False
    head = text.strip().split("<", 1)[0]
    parts = head.split("::")
    return (
        len(parts) == 3
        and looks_like_address(parts[0])
        and all(_IDENT_RE.match(p) for p in parts[1:])
    )


class FunctionId:
    """`address::module::function`, compared by canonical address and names."""

    __slots__ = ("address", "function", "module")

    address: Address
    module: str
    function: str

    def __init__(self, address: Address, module: str, function: str) -> None:
        for name in (module, function):
            if not _IDENT_RE.match(name):
                raise AddressError(f"not a Move identifier: {name!r}")
        self.address = address
        self.module = module
        self.function = function

    @classmethod
    def parse(cls, text: str) -> FunctionId:
        """Parse `0x1::coin::transfer`; raise `AddressError` naming the text otherwise."""
        parts = text.strip().split("::") if isinstance(text, str) else []
        if len(parts) != 3:
            raise AddressError(f"not a function id (address::module::function): {text!r}")
        return cls(Address.parse(parts[0]), parts[1], parts[2])

    @property
    def module_id(self) -> str:
        """`address::module` in canonical form."""
        return f"{self.address}::{self.module}"

    def __str__(self) -> str:
        return f"{self.address}::{self.module}::{self.function}"

    def __repr__(self) -> str:
        return f"FunctionId({self})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FunctionId):
            return (self.address, self.module, self.function) == (
                other.address,
                other.module,
                other.function,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.address, self.module, self.function))


def split_names(text: str) -> list[str]:
    """Comma-separated names (addresses, coin types, symbols), blanks dropped.

    Commas inside `<…>` do not split: a generic coin type holds commas.
    """
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += (char == "<") - (char == ">")
        current.append(char)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]
