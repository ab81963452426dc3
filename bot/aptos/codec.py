"""ABI-driven JSON ⇄ BCS for Move entry-function arguments.

The signer encodes the swap API's `txData` (`function`, `type_arguments`, `arguments`) with the
function's on-chain ABI; the paper world's node decodes what was submitted with the same ABI. Both
go through this module, so they cannot disagree on a single byte.

JSON accepted when encoding (the forms the real service sends):

* integers: JSON numbers or decimal strings (`"18305"`); never floats, bools, hex or signs;
* `bool`: `true`/`false` or the strings `"true"`/`"false"`;
* `address` and `0x1::object::Object<T>`: `"0x…"` with 1..64 hex digits (short or long form);
* `0x1::string::String`: any JSON string (UTF-8);
* `vector<u8>`: an array of u8 values, or a `"0x…"` hex string meaning the raw bytes
  (`"0xa086010000000000"` is 8 bytes); other vectors: arrays;
* `0x1::option::Option<T>`: `null`, the bare inner value, or the node's `{"vec": [...]}` form.

Canonical JSON (what decoding returns; encoding it again gives the same bytes): u8/u16/u32 as
numbers, u64/u128/u256 as decimal strings (the node's convention), bools as booleans, addresses
and objects in AIP-40 form, strings as text, `vector<u8>` as `"0x…"`, other vectors as arrays,
`Option` as `null` or the bare value — except when the inner value is itself an option's
`null` or `{"vec": …}` (nested options), which is written `{"vec": [inner]}` because the bare
form would read back as a different value.

Argument indices in errors count the JSON `arguments` list, i.e. the parameters after the leading
`signer`/`&signer` ones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Final, TypeAlias, TypedDict

from aptos_sdk.account_address import AccountAddress
from aptos_sdk.bcs import Deserializer
from aptos_sdk.transactions import EntryFunction, ModuleId, TransactionPayload
from aptos_sdk.type_tag import TypeTag

from bot.aptos.abi import AbiError, AbiSource, FunctionAbi, ModuleAbi, resolve_function
from bot.aptos.address import Address, AddressError, FunctionId
from bot.aptos.movetypes import (
    STD_ADDRESS,
    STRING,
    U8,
    MoveType,
    MoveTypeError,
    Primitive,
    Signer,
    Struct,
    Vector,
    from_type_tag,
    parse_move_type,
    substitute,
    to_type_tag,
)

__all__ = [
    "AbiError",
    "AbiSource",
    "ArgumentError",
    "CodecError",
    "DecodeError",
    "DecodedCall",
    "FunctionAbi",
    "JsonValue",
    "ModuleAbi",
    "canonical_value",
    "decode_entry_function",
    "decode_value",
    "encode_entry_function",
    "encode_value",
    "json_type_name",
    "json_u64",
    "read_bytes",
    "read_exact",
    "read_length",
    "read_uleb128",
    "resolve_function",
]

JsonValue: TypeAlias = bool | int | str | list["JsonValue"] | dict[str, "JsonValue"] | None

MAX_SEQUENCE_LENGTH: Final = (1 << 31) - 1  # BCS limit on any length prefix
_INT_BYTES: Final = {"u8": 1, "u16": 2, "u32": 4, "u64": 8, "u128": 16, "u256": 32}
_INT_AS_STRING: Final = frozenset({"u64", "u128", "u256"})
_DECIMAL_RE: Final = re.compile(r"[0-9]{1,100}")
_HEX_RE: Final = re.compile(r"0[xX]([0-9a-fA-F]*)")
_ADDRESS_RE: Final = re.compile(r"0[xX][0-9a-fA-F]{1,64}")


class CodecError(ValueError):
    """Base of every error this module raises."""


class ArgumentError(CodecError):
    """A JSON argument (or type argument) that does not fit its Move type.

    Attributes:
        index: position in the JSON `arguments` list (None for a lone `encode_value`).
        move_type: canonical text of the argument's declared type.
        json_type: JSON type of the offending (possibly nested) value.
    """

    def __init__(self, message: str, index: int | None, move_type: str, json_type: str) -> None:
        super().__init__(message)
        self.index = index
        self.move_type = move_type
        self.json_type = json_type


class DecodeError(CodecError):
    """BCS bytes that are truncated, malformed, non-canonical or have trailing bytes."""


class DecodedCall(TypedDict):
    """An entry-function call in canonical JSON form."""

    function: str
    type_arguments: list[str]
    arguments: list[JsonValue]


def json_u64(value: object, name: str, error: type[ValueError] = ValueError) -> int:
    """A u64 from canonical JSON (a decimal string or an int, never a bool).

    Raises:
        error: naming `name`, when the value is not a u64.
    """
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise error(f"{name} is not a u64")
    try:
        number = int(value)
    except ValueError:
        raise error(f"{name} is not a u64") from None
    if not 0 <= number <= 2**64 - 1:
        raise error(f"{name} is out of the u64 range")
    return number


def json_type_name(value: object) -> str:
    """The JSON type of a Python value from `json.loads` (`null`, `boolean`, `number`, …)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


# --- encoding ------------------------------------------------------------------------------


class _MismatchError(Exception):
    """A value that does not fit `move_type`; `path` is filled in while unwinding."""

    def __init__(self, move_type: MoveType, expected: str, value: object) -> None:
        super().__init__(expected)
        self.move_type = move_type
        self.expected = expected
        self.value = value
        self.path: list[str] = []


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return " true" if value else " false"
    if isinstance(value, int | float | str):
        text = repr(value)
        return " " + (text if len(text) <= 48 else text[:45] + "...")
    return ""


def _argument_error(index: int | None, arg_type: MoveType, m: _MismatchError) -> ArgumentError:
    head = f"argument {index}" if index is not None else "value"
    where = ""
    if m.path or m.move_type != arg_type:
        where = f" at {''.join(m.path) or 'value'} ({m.move_type})"
    json_type = json_type_name(m.value)
    if isinstance(m.value, float):
        json_type += " (floating-point)"
    message = f"{head} ({arg_type}){where}: expected {m.expected}, got {json_type}"
    return ArgumentError(message + _shown(m.value), index, str(arg_type), json_type_name(m.value))


def _as_int(t: Primitive, value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and _DECIMAL_RE.fullmatch(value):
        number = int(value)
    else:
        raise _MismatchError(t, f"{t.name} as an integer or decimal string", value)
    bits = _INT_BYTES[t.name] * 8
    if not 0 <= number < (1 << bits):
        raise _MismatchError(t, f"{t.name} in 0..2^{bits}-1", value)
    return number


def _as_bool(t: MoveType, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if value == "true":
        return True
    if value == "false":
        return False
    raise _MismatchError(t, 'true/false or "true"/"false"', value)


def _as_address(t: MoveType, value: object) -> bytes:
    if isinstance(value, str) and _ADDRESS_RE.fullmatch(value):
        return Address.parse(value).to_bytes()
    raise _MismatchError(t, "an address string 0x + 1..64 hex digits", value)


def _hex_bytes(t: MoveType, value: str) -> bytes:
    match = _HEX_RE.fullmatch(value)
    if match is None or len(match.group(1)) % 2:
        raise _MismatchError(t, "a 0x hex string of whole bytes or an array of u8", value)
    return bytes.fromhex(match.group(1))


def _write_length(out: bytearray, t: MoveType, length: int, value: object) -> None:
    if length > MAX_SEQUENCE_LENGTH:
        raise _MismatchError(t, f"at most {MAX_SEQUENCE_LENGTH} elements", value)
    while length >= 0x80:
        out.append((length & 0x7F) | 0x80)
        length >>= 7
    out.append(length)


def _is_std(t: Struct, module: str, name: str, arity: int) -> bool:
    return (
        t.name == name
        and t.module == module
        and t.address == STD_ADDRESS
        and len(t.type_args) == arity
    )


def _encode(t: MoveType, value: object, out: bytearray) -> None:
    if isinstance(t, Primitive):
        name = t.name
        if name == "bool":
            out.append(1 if _as_bool(t, value) else 0)
        elif name == "address":
            out += _as_address(t, value)
        else:
            out += _as_int(t, value).to_bytes(_INT_BYTES[name], "little")
    elif isinstance(t, Vector):
        _encode_vector(t, value, out)
    elif isinstance(t, Struct):
        if t == STRING:
            if not isinstance(value, str):
                raise _MismatchError(t, "a string", value)
            try:
                data = value.encode("utf-8")
            except UnicodeEncodeError:
                raise _MismatchError(t, "a string of valid Unicode", value) from None
            _write_length(out, t, len(data), value)
            out += data
        elif _is_std(t, "option", "Option", 1):
            _encode_option(t, value, out)
        elif _is_std(t, "object", "Object", 1):
            out += _as_address(t, value)
        else:
            raise _MismatchError(t, "a supported type (only String, Option, Object)", value)
    elif isinstance(t, Signer):
        raise _MismatchError(t, "nothing: a signer cannot be passed as an argument", value)
    else:
        raise _MismatchError(t, "a concrete type (unsubstituted generic parameter)", value)


def _encode_vector(t: Vector, value: object, out: bytearray) -> None:
    element = t.element
    if element == U8 and isinstance(value, str):
        data = _hex_bytes(t, value)
        _write_length(out, t, len(data), value)
        out += data
        return
    if not isinstance(value, list | tuple):
        expected = "a 0x hex string or an array of u8" if element == U8 else "an array"
        raise _MismatchError(t, expected, value)
    _write_length(out, t, len(value), value)
    for i, item in enumerate(value):
        try:
            _encode(element, item, out)
        except _MismatchError as m:
            m.path.insert(0, f"[{i}]")
            raise


def _encode_option(t: Struct, value: object, out: bytearray) -> None:
    inner_type = t.type_args[0]
    if isinstance(value, Mapping):
        inner = value.get("vec")
        if set(value) != {"vec"} or not isinstance(inner, list | tuple) or len(inner) > 1:
            raise _MismatchError(t, 'null, the bare value or {"vec": [] | [value]}', value)
        present, item = bool(inner), (inner[0] if inner else None)
    else:
        present, item = value is not None, value
    if not present:
        out.append(0)
        return
    out.append(1)
    try:
        _encode(inner_type, item, out)
    except _MismatchError as m:
        m.path.insert(0, ".some")
        raise


def _as_move_type(move_type: MoveType | str) -> MoveType:
    return parse_move_type(move_type) if isinstance(move_type, str) else move_type


def encode_value(move_type: MoveType | str, value: object) -> bytes:
    """BCS of one JSON value of the given Move type.

    Raises:
        ArgumentError: when the value does not fit the type (message names type and JSON type).
        MoveTypeError: when `move_type` is unparsable text.
    """
    t = _as_move_type(move_type)
    out = bytearray()
    try:
        _encode(t, value, out)
    except _MismatchError as m:
        raise _argument_error(None, t, m) from None
    return bytes(out)


@lru_cache(maxsize=1024)
def _type_argument(text: str) -> tuple[MoveType, TypeTag]:
    # The cached SDK tag objects are shared by every EntryFunction built from the same text;
    # nothing in this project (or the SDK) mutates a TypeTag after construction.
    move_type = parse_move_type(text)
    return move_type, to_type_tag(move_type)


def _type_arguments(values: Sequence[str | MoveType]) -> tuple[list[MoveType], list[TypeTag]]:
    types: list[MoveType] = []
    tags: list[TypeTag] = []
    for i, value in enumerate(values):
        try:
            if isinstance(value, str):
                move_type, tag = _type_argument(value)
            else:
                move_type, tag = value, to_type_tag(value)
        except MoveTypeError as exc:
            raise ArgumentError(
                f"type argument {i}: {exc}", i, str(value), json_type_name(value)
            ) from exc
        types.append(move_type)
        tags.append(tag)
    return types, tags


def encode_entry_function(
    abi: AbiSource,
    function: str | FunctionId,
    type_arguments: Sequence[str | MoveType],
    arguments: Sequence[object],
) -> EntryFunction:
    """Encode a call (e.g. the swap API's `txData`) to an aptos-sdk `EntryFunction`.

    Args:
        abi: the module ABI (see `resolve_function`); pass a `FunctionAbi` or `ModuleAbi` to
            parse it only once.
        function: `0x…::module::name` or just `name`.
        type_arguments: type texts such as `0x1::aptos_coin::AptosCoin`.
        arguments: JSON values, one per parameter after the leading signers.

    Raises:
        AbiError: unknown or non-entry function, wrong type-argument count, an ABI whose
            parameters use an undeclared type parameter.
        ArgumentError: wrong argument count, or a value that does not fit its type.
    """
    fn = resolve_function(abi, function)
    if not fn.is_entry:
        raise AbiError(f"{fn.function_id} is not an entry function")
    if len(type_arguments) != fn.type_params:
        raise AbiError(
            f"{fn.name} expects {fn.type_params} type arguments, got {len(type_arguments)}"
        )
    if len(arguments) != len(fn.arg_types):
        raise ArgumentError(
            f"{fn.name} expects {len(fn.arg_types)} arguments (after the leading signers), "
            f"got {len(arguments)}",
            None,
            "",
            "array",
        )
    types, tags = _type_arguments(type_arguments)
    encoded: list[bytes] = []
    for i, (t, value) in enumerate(zip(fn.arg_types, arguments, strict=True)):
        try:
            arg_type = substitute(t, types) if fn.arg_has_generics[i] else t
        except MoveTypeError as exc:  # the ABI uses a type parameter it does not declare
            raise AbiError(f"{fn.function_id} argument {i}: {exc}") from None
        out = bytearray()
        try:
            _encode(arg_type, value, out)
        except _MismatchError as m:
            raise _argument_error(i, arg_type, m) from None
        encoded.append(bytes(out))
    address = fn.function_id.address
    module = ModuleId(AccountAddress(address.to_bytes()), fn.function_id.module)
    return EntryFunction(module, fn.name, tags, encoded)


# --- decoding ------------------------------------------------------------------------------


def read_exact(des: Deserializer, length: int) -> bytes:
    """Read exactly `length` bytes, or raise `DecodeError` (not the SDK's bare `Exception`)."""
    if des.remaining() < length:
        raise DecodeError(f"truncated: need {length} bytes, {des.remaining()} left")
    data: bytes = des.fixed_bytes(length)
    return data


def read_uleb128(des: Deserializer) -> int:
    """Read a canonical ULEB128 u32 (BCS rejects padded forms such as `80 00`).

    Raises:
        DecodeError: for truncated, over-long or non-canonical encodings.
    """
    value = 0
    for shift in range(0, 35, 7):
        byte = read_exact(des, 1)[0]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if byte == 0 and shift:
                raise DecodeError("non-canonical uleb128 (trailing zero byte)")
            if value > 0xFFFFFFFF:
                raise DecodeError("uleb128 value does not fit in u32")
            return value
    raise DecodeError("uleb128 longer than 5 bytes")


def read_length(des: Deserializer) -> int:
    """Read a BCS length prefix (at most 2^31-1)."""
    length = read_uleb128(des)
    if length > MAX_SEQUENCE_LENGTH:
        raise DecodeError(f"length {length} exceeds the BCS limit")
    return length


def read_bytes(des: Deserializer) -> bytes:
    """Read a length-prefixed byte string."""
    return read_exact(des, read_length(des))


def _decode(t: MoveType, des: Deserializer) -> JsonValue:
    if isinstance(t, Primitive):
        name = t.name
        if name == "bool":
            byte = read_exact(des, 1)[0]
            if byte > 1:
                raise DecodeError(f"bool byte must be 0 or 1, got {byte}")
            return byte == 1
        if name == "address":
            return str(Address.from_bytes(read_exact(des, 32)))
        size = _INT_BYTES[name]
        number = int.from_bytes(read_exact(des, size), "little")
        return str(number) if name in _INT_AS_STRING else number
    if isinstance(t, Vector):
        if t.element == U8:
            return "0x" + read_bytes(des).hex()
        return [_decode(t.element, des) for _ in range(read_length(des))]
    if isinstance(t, Struct):
        if t == STRING:
            raw = read_bytes(des)
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DecodeError(f"String is not valid UTF-8: {exc}") from None
        if _is_std(t, "option", "Option", 1):
            count = read_length(des)
            if count > 1:
                raise DecodeError(f"an Option holds 0 or 1 elements, got {count}")
            if count == 0:
                return None
            inner = _decode(t.type_args[0], des)
            # A bare null or {"vec": …} would read back as a different (outer) option value.
            return {"vec": [inner]} if inner is None or isinstance(inner, dict) else inner
        if _is_std(t, "object", "Object", 1):
            return str(Address.from_bytes(read_exact(des, 32)))
        raise DecodeError(f"unsupported argument type {t}")
    if isinstance(t, Signer):
        raise DecodeError("a signer cannot be an argument value")
    raise DecodeError(f"unsubstituted generic parameter {t}")


def _decode_all(t: MoveType, data: bytes, what: str) -> JsonValue:
    des = Deserializer(bytes(data))
    try:
        value = _decode(t, des)
        if des.remaining():
            raise DecodeError(f"{des.remaining()} trailing bytes")
    except DecodeError as exc:
        raise DecodeError(f"{what} ({t}): {exc}") from None
    return value


def decode_value(move_type: MoveType | str, data: bytes) -> JsonValue:
    """Canonical JSON of one BCS value; all bytes must be consumed.

    Raises:
        DecodeError: for truncated, malformed or trailing bytes.
    """
    return _decode_all(_as_move_type(move_type), data, "value")


def canonical_value(move_type: MoveType | str, value: object) -> JsonValue:
    """The canonical JSON form of an accepted JSON value (`decode(encode(value))`)."""
    t = _as_move_type(move_type)
    return decode_value(t, encode_value(t, value))


def decode_entry_function(entry: EntryFunction | TransactionPayload, abi: AbiSource) -> DecodedCall:
    """Decode a submitted call back to canonical JSON by the function's ABI.

    Raises:
        AbiError: when the ABI lacks the function or its module/type-argument count differ.
        DecodeError: wrong argument count, or argument bytes that do not decode exactly.
    """
    if isinstance(entry, TransactionPayload):
        entry = entry.value
    if not isinstance(entry, EntryFunction):
        raise DecodeError(f"not an entry function payload: {type(entry).__name__}")
    address = Address.from_bytes(bytes(entry.module.address.address))
    try:
        function_id = FunctionId(address, entry.module.name, entry.function)
    except AddressError as exc:
        raise DecodeError(str(exc)) from exc
    fn = resolve_function(abi, function_id)
    try:
        types = [from_type_tag(tag) for tag in entry.ty_args]
    except MoveTypeError as exc:
        raise DecodeError(str(exc)) from exc
    if len(types) != fn.type_params:
        raise AbiError(f"{fn.name} expects {fn.type_params} type arguments, got {len(types)}")
    if len(entry.args) != len(fn.arg_types):
        raise DecodeError(f"{fn.name} expects {len(fn.arg_types)} arguments, got {len(entry.args)}")
    arguments = [
        _decode_all(substitute(t, types) if fn.arg_has_generics[i] else t, data, f"argument {i}")
        for i, (t, data) in enumerate(zip(fn.arg_types, entry.args, strict=True))
    ]
    return {
        "function": str(function_id),
        "type_arguments": [str(t) for t in types],
        "arguments": arguments,
    }
