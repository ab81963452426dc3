from __future__ import annotations

import json
from typing import Any

import pytest
from aptos_sdk.bcs import Serializer
from aptos_sdk.transactions import EntryFunction, TransactionPayload

from bot.aptos.address import FunctionId
from bot.aptos.codec import (
    AbiError,
    ArgumentError,
    DecodeError,
    FunctionAbi,
    ModuleAbi,
    canonical_value,
    decode_entry_function,
    decode_value,
    encode_entry_function,
    encode_value,
    json_type_name,
    resolve_function,
)
from bot.aptos.movetypes import parse_move_type
from tests.support.fixtures import FIXTURES as SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES / "aptos"
ROUTER = (
    "0x1c3206329806286fd2223647c9f9b130e66baeb6d7224a18c1f642ffe48f3b4c::panora_swap::router_entry"
)
LONG_1 = "0x" + "0" * 63 + "1"


def load(name: str) -> Any:
    path = FIXTURES / name
    if not path.is_file():
        raise FileNotFoundError(f"fixture missing (tests must not skip): {path}")
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def panora() -> ModuleAbi:
    return ModuleAbi.from_json(load("panora_swap_module_abi.json"))


@pytest.fixture(scope="module")
def txdata() -> Any:
    return load("panora_router_entry_txdata.json")


def payload_bytes(entry: EntryFunction) -> bytes:
    ser = Serializer()  # type: ignore[no-untyped-call, unused-ignore]
    TransactionPayload(entry).serialize(ser)
    return ser.output()


# --- hand-checked BCS per type -------------------------------------------------------------


@pytest.mark.parametrize(
    ("move_type", "value", "bcs_hex"),
    [
        ("bool", True, "01"),
        ("bool", "false", "00"),
        ("u8", 0, "00"),
        ("u8", "255", "ff"),
        ("u16", 258, "0201"),
        ("u32", "4294967295", "ffffffff"),
        ("u64", "18305", "8147000000000000"),
        ("u64", 2**64 - 1, "ff" * 8),
        ("u128", str(2**128 - 1), "ff" * 16),
        ("u128", 1, "01" + "00" * 15),
        ("u256", str(2**256 - 1), "ff" * 32),
        ("u256", 2**255, "00" * 31 + "80"),
        ("address", "0x1", "00" * 31 + "01"),
        ("address", LONG_1, "00" * 31 + "01"),
        ("address", "0xABC", "00" * 30 + "0abc"),
        ("0x1::string::String", "", "00"),
        ("0x1::string::String", "héllo", "06" + "héllo".encode().hex()),
        # uleb128 lengths ≥ 128: 128 = 0x80 0x01, 300 = 0xac 0x02, 16384 = 0x80 0x80 0x01.
        ("0x1::string::String", "a" * 128, "8001" + "61" * 128),
        ("vector<u8>", "0x" + "00" * 300, "ac02" + "00" * 300),
        ("vector<u8>", [7] * 16384, "808001" + "07" * 16384),
        ("vector<u8>", "0x", "00"),
        ("vector<u8>", "0xa086010000000000", "08a086010000000000"),
        ("vector<u8>", ["3", 0], "020300"),
        ("vector<u64>", ["1000"], "01e803000000000000"),
        ("vector<bool>", [True, "false"], "020100"),
        ("vector<vector<u8>>", [[1, 2], []], "0202010200"),
        ("vector<vector<u8>>", ["0x0102", "0x"], "0202010200"),
        ("0x1::option::Option<u64>", None, "00"),
        ("0x1::option::Option<u64>", "5", "010500000000000000"),
        ("0x1::option::Option<u64>", {"vec": []}, "00"),
        ("0x1::option::Option<u64>", {"vec": [5]}, "010500000000000000"),
        ("0x1::option::Option<signer>", None, "00"),
        ("0x1::option::Option<vector<u8>>", [], "0100"),
        ("0x1::option::Option<0x1::option::Option<u8>>", {"vec": [None]}, "0100"),
        ("0x1::object::Object<0x1::fungible_asset::Metadata>", "0xa", "00" * 31 + "0a"),
    ],
)
def test_encode_is_hand_checked(move_type: str, value: object, bcs_hex: str) -> None:
    assert encode_value(move_type, value).hex() == bcs_hex


@pytest.mark.parametrize(
    ("move_type", "bcs_hex", "canonical"),
    [
        ("bool", "01", True),
        ("u8", "ff", 255),
        ("u16", "0201", 258),
        ("u32", "ffffffff", 4294967295),
        ("u64", "ff" * 8, str(2**64 - 1)),
        ("u128", "ff" * 16, str(2**128 - 1)),
        ("u256", "ff" * 32, str(2**256 - 1)),
        ("address", "00" * 31 + "01", "0x1"),
        ("address", "00" * 31 + "10", "0x" + "0" * 62 + "10"),
        ("0x1::string::String", "8001" + "61" * 128, "a" * 128),
        ("vector<u8>", "020300", "0x0300"),
        ("vector<vector<u8>>", "0202010200", ["0x0102", "0x"]),
        ("vector<u16>", "020100ffff", [1, 65535]),
        ("0x1::option::Option<u64>", "00", None),
        ("0x1::option::Option<u64>", "010500000000000000", "5"),
        ("0x1::option::Option<0x1::option::Option<u8>>", "0100", {"vec": [None]}),
        ("0x1::option::Option<0x1::option::Option<u8>>", "010107", 7),
        (
            "0x1::option::Option<0x1::option::Option<0x1::option::Option<u8>>>",
            "010100",
            {"vec": [{"vec": [None]}]},
        ),
        ("0x1::object::Object<T0>", "00" * 31 + "0a", "0xa"),
    ],
)
def test_decode_gives_canonical_json(move_type: str, bcs_hex: str, canonical: object) -> None:
    assert decode_value(move_type, bytes.fromhex(bcs_hex)) == canonical
    # Canonical JSON encodes back to exactly the same bytes.
    assert encode_value(move_type, canonical).hex() == bcs_hex


def test_canonical_value_normalises_accepted_forms() -> None:
    assert canonical_value("u64", 5) == "5"
    assert canonical_value("u8", "7") == 7
    assert canonical_value("bool", "true") is True
    assert canonical_value("address", LONG_1) == "0x1"
    assert canonical_value("address", "0x7fd5") == "0x" + "0" * 60 + "7fd5"
    assert canonical_value("vector<u8>", ["1", 2]) == "0x0102"
    assert canonical_value("0x1::option::Option<u64>", {"vec": ["9"]}) == "9"


# --- rejections ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("move_type", "value", "json_type"),
    [
        ("u8", 256, "number"),
        ("u8", "256", "string"),
        ("u8", -1, "number"),
        ("u8", "-1", "string"),
        ("u64", 2**64, "number"),
        ("u128", str(2**128), "string"),
        ("u256", 2**256, "number"),
        ("u64", 1.0, "number"),
        ("u64", 1.5, "number"),
        ("u64", True, "boolean"),
        ("u64", "0x10", "string"),
        ("u64", " 1", "string"),
        ("u64", "1e3", "string"),
        ("u64", "", "string"),
        ("u64", None, "null"),
        ("u64", [1], "array"),
        ("bool", 1, "number"),
        ("bool", "True", "string"),
        ("bool", None, "null"),
        ("address", "1", "string"),
        ("address", "0x", "string"),
        ("address", "0x" + "1" * 65, "string"),
        ("address", "0xgg", "string"),
        ("address", 1, "number"),
        ("0x1::string::String", 5, "number"),
        ("0x1::string::String", None, "null"),
        ("0x1::string::String", "\ud800", "string"),
        ("vector<u8>", "0x123", "string"),
        ("vector<u8>", "hello", "string"),
        ("vector<u8>", "0xzz", "string"),
        ("vector<u8>", {"a": 1}, "object"),
        ("vector<u8>", [256], "number"),
        ("vector<u8>", ["x"], "string"),
        ("vector<u64>", "0x00", "string"),
        ("vector<vector<u8>>", ["0x1"], "string"),
        ("0x1::option::Option<u64>", "abc", "string"),
        ("0x1::option::Option<u64>", {"vec": [1, 2]}, "object"),
        ("0x1::option::Option<u64>", {"other": []}, "object"),
        ("0x1::option::Option<signer>", "0x1", "string"),
        ("0x1::object::Object<T0>", "nope", "string"),
        ("0x1::coin::Coin<u8>", {}, "object"),
        ("0x1::string::String2", "x", "string"),
        ("signer", None, "null"),
        ("T0", 1, "number"),
    ],
)
def test_encode_rejects_mismatches(move_type: str, value: object, json_type: str) -> None:
    with pytest.raises(ArgumentError) as info:
        encode_value(move_type, value)
    err = info.value
    assert err.index is None
    assert err.move_type == str(parse_move_type(move_type))
    assert err.json_type == json_type
    assert str(err).startswith(f"value ({err.move_type})")
    assert f"got {json_type}" in str(err)


def test_error_names_argument_index_type_and_json_type(panora: ModuleAbi, txdata: Any) -> None:
    args = list(txdata["arguments"])
    args[4] = {"not": "bytes"}  # vector<u8>
    with pytest.raises(ArgumentError) as info:
        encode_entry_function(panora, ROUTER, txdata["type_arguments"], args)
    assert str(info.value) == (
        "argument 4 (vector<u8>): expected a 0x hex string or an array of u8, got object"
    )
    assert (info.value.index, info.value.move_type, info.value.json_type) == (
        4,
        "vector<u8>",
        "object",
    )


def test_nested_error_names_the_path(panora: ModuleAbi, txdata: Any) -> None:
    args = list(txdata["arguments"])
    args[6] = [[["162"]], [["0", "-3"]], [["0"]]]  # vector<vector<vector<u64>>>
    with pytest.raises(ArgumentError) as info:
        encode_entry_function(panora, ROUTER, txdata["type_arguments"], args)
    assert str(info.value) == (
        "argument 6 (vector<vector<vector<u64>>>) at [1][0][1] (u64): "
        "expected u64 as an integer or decimal string, got string '-3'"
    )
    args = list(txdata["arguments"])
    args[14] = [["0xa08"]]  # Option<vector<vector<vector<u8>>>>, odd-length hex
    with pytest.raises(ArgumentError, match=r"argument 14 .* at \.some\[0\]\[0\] \(vector<u8>\)"):
        encode_entry_function(panora, ROUTER, txdata["type_arguments"], args)


def test_float_is_reported_as_floating_point() -> None:
    with pytest.raises(ArgumentError, match=r"got number \(floating-point\) 2\.0"):
        encode_value("u64", 2.0)


def test_argument_count_mismatch(panora: ModuleAbi, txdata: Any) -> None:
    with pytest.raises(ArgumentError, match=r"router_entry expects 20 arguments .* got 19"):
        encode_entry_function(panora, ROUTER, txdata["type_arguments"], txdata["arguments"][1:])


def test_type_argument_problems(panora: ModuleAbi, txdata: Any) -> None:
    with pytest.raises(AbiError, match="expects 32 type arguments, got 31"):
        encode_entry_function(panora, ROUTER, txdata["type_arguments"][1:], txdata["arguments"])
    bad = list(txdata["type_arguments"])
    bad[3] = "0x1::string::"
    with pytest.raises(ArgumentError, match="type argument 3"):
        encode_entry_function(panora, ROUTER, bad, txdata["arguments"])
    bad[3] = "signer"
    with pytest.raises(ArgumentError, match="type argument 3"):
        encode_entry_function(panora, ROUTER, bad, txdata["arguments"])


def test_non_entry_and_unknown_functions(panora: ModuleAbi) -> None:
    with pytest.raises(AbiError, match="not an entry function"):
        encode_entry_function(panora, "router", ["0x1::string::String"] * 32, [])
    with pytest.raises(AbiError, match="no module"):
        encode_entry_function(panora, "nope", [], [])
    with pytest.raises(AbiError, match="no module"):
        resolve_function(panora, "0x2::panora_swap::router_entry")


# --- ABI loading -----------------------------------------------------------------------------


def test_abi_accepts_bare_and_wrapped_module_json() -> None:
    bare = load("panora_swap_module_abi.json")
    wrapped = {"bytecode": "0x00", "abi": bare}
    a = resolve_function(bare, "router_entry")
    b = resolve_function(wrapped, ROUTER)
    c = resolve_function([wrapped], FunctionId.parse(ROUTER))
    assert a.params == b.params == c.params
    assert str(a.function_id) == ROUTER
    assert len(a.params) == 21 and len(a.arg_types) == 20
    # Only the *leading* signer is dropped: `Option<signer>` stays as argument 0.
    assert str(a.arg_types[0]) == "0x1::option::Option<signer>"
    assert a.type_params == 32 and a.is_entry


def test_abi_rejects_garbage() -> None:
    with pytest.raises(AbiError):
        ModuleAbi.from_json({"name": "m"})
    with pytest.raises(AbiError):
        ModuleAbi.from_json({"address": "0x1", "name": "m", "exposed_functions": [{"x": 1}]})
    module = ModuleAbi.from_json(
        {"address": "0x1", "name": "m", "exposed_functions": [{"name": "f", "params": ["u9"]}]}
    )
    with pytest.raises(AbiError, match="u9"):
        module.function("f")


def test_generic_parameters_are_substituted() -> None:
    fn = FunctionAbi(
        FunctionId.parse("0x1::m::f"),
        [
            parse_move_type(t)
            for t in ("&signer", "vector<T0>", "0x1::object::Object<T1>", "0x1::option::Option<T0>")
        ],
        2,
    )
    entry = encode_entry_function(fn, "f", ["u16", "0x1::m::Thing"], [[1, "2"], "0x5", None])
    assert [a.hex() for a in entry.args] == ["0201000200", "00" * 31 + "05", "00"]
    decoded = decode_entry_function(entry, fn)
    assert decoded["type_arguments"] == ["u16", "0x1::m::Thing"]
    assert decoded["arguments"] == [[1, 2], "0x5", None]


# --- the real router txData against the real ABI ---------------------------------------------

ROUTER_CANONICAL: list[object] = [
    None,  # Option<signer>
    "0x53aed9413aa7a4aa64305191875df907b9fcf323cba8621a4fe48573dbd18a3e",
    "1",  # u64 stays a decimal string
    1,  # u8 becomes a number
    "0x0300",  # vector<u8> from ["3", "0"]
    [["0x28"], ["0x0b"], ["0x0b"]],  # vector<vector<vector<u8>>>: innermost as hex
    [[["162"]], [["0"]], [["0"]]],
    [[[True]], [[True]], [[True]]],  # "true" strings become booleans
    ["0x02", "0x04", "0x04"],
    [[["0x0"]]],
    [["0x357b0b74bc833e95a115ad22604854d6b0fca151cecd94111770e5d6ffc9dc2b"]]
    + [["0x2ebb2ccac5e027a87fa0e2e5f656a3a4238d6a48d93ec9b610d570fc0aa0df12"]] * 2,
    [["0x2ebb2ccac5e027a87fa0e2e5f656a3a4238d6a48d93ec9b610d570fc0aa0df12"]] * 3,
    None,
    [[["10000"]], [["10000"]], [["10000"]]],
    [["0xa086010000000000"]],  # Option<vector<vector<vector<u8>>>>: Some, hex = raw bytes
    "0x2ebb2ccac5e027a87fa0e2e5f656a3a4238d6a48d93ec9b610d570fc0aa0df12",
    ["1000"],
    "18305",
    "0",
    "0xd0b17bea776bb87b70b2fb2ca631014f0ca94fc1acde4b8ff1a763f4172aa6c4",
]


def test_router_txdata_round_trips_to_canonical_json(panora: ModuleAbi, txdata: Any) -> None:
    entry = encode_entry_function(
        panora, txdata["function"], txdata["type_arguments"], txdata["arguments"]
    )
    decoded = decode_entry_function(entry, panora)
    assert decoded["function"] == ROUTER
    assert decoded["type_arguments"] == txdata["type_arguments"]  # already canonical
    assert decoded["arguments"] == ROUTER_CANONICAL
    # Hand-checked bytes of the tricky ones.
    assert entry.args[0].hex() == "00"  # Option<signer> None
    assert entry.args[3].hex() == "01"  # u8
    assert entry.args[4].hex() == "020300"
    assert entry.args[5].hex() == "0301012801010b01010b"
    assert entry.args[7].hex() == "03010101010101010101"
    assert entry.args[9].hex() == "010101" + "00" * 32
    assert entry.args[12].hex() == "00"
    assert entry.args[14].hex() == "01010108a086010000000000"
    assert entry.args[17].hex() == "8147000000000000"
    # Canonical JSON re-encodes to identical bytes.
    again = encode_entry_function(panora, ROUTER, decoded["type_arguments"], decoded["arguments"])
    assert payload_bytes(again) == payload_bytes(entry)


def test_decode_accepts_a_payload_and_checks_the_module(panora: ModuleAbi, txdata: Any) -> None:
    entry = encode_entry_function(panora, ROUTER, txdata["type_arguments"], txdata["arguments"])
    assert decode_entry_function(TransactionPayload(entry), panora)["arguments"] == ROUTER_CANONICAL
    other = ModuleAbi.from_json({**load("panora_swap_module_abi.json"), "address": "0x2"})
    with pytest.raises(AbiError):
        decode_entry_function(entry, other)


def test_decode_rejects_bad_argument_bytes(panora: ModuleAbi, txdata: Any) -> None:
    entry = encode_entry_function(panora, ROUTER, txdata["type_arguments"], txdata["arguments"])
    entry.args[17] = entry.args[17] + b"\x00"
    with pytest.raises(DecodeError, match=r"argument 17 \(u64\): 1 trailing bytes"):
        decode_entry_function(entry, panora)
    entry.args[17] = entry.args[17][:4]
    with pytest.raises(DecodeError, match=r"argument 17.*truncated"):
        decode_entry_function(entry, panora)
    entry.args.pop()
    with pytest.raises(DecodeError, match="expects 20 arguments, got 19"):
        decode_entry_function(entry, panora)


@pytest.mark.parametrize(
    ("move_type", "bcs_hex", "why"),
    [
        ("bool", "02", "bool byte"),
        ("u64", "01", "truncated"),
        ("u8", "0101", "trailing"),
        ("vector<u8>", "8000", "non-canonical"),
        ("vector<u8>", "ffffffff07", "truncated"),
        ("vector<u8>", "ffffffff0f", "exceeds the BCS limit"),
        ("vector<u8>", "ffffffff1f", "does not fit in u32"),
        ("vector<u8>", "ffffffffff01", "longer than 5 bytes"),
        ("vector<u8>", "0201", "truncated"),
        ("0x1::string::String", "02c328", "UTF-8"),
        ("0x1::option::Option<u8>", "020101", "0 or 1"),
        ("0x1::option::Option<signer>", "01", "signer"),
        ("0x1::coin::Coin<u8>", "00", "unsupported"),
        ("address", "00" * 31, "truncated"),
    ],
)
def test_decode_rejects_malformed_bytes(move_type: str, bcs_hex: str, why: str) -> None:
    with pytest.raises(DecodeError, match=why):
        decode_value(move_type, bytes.fromhex(bcs_hex))


def test_json_type_names() -> None:
    samples: list[object] = [None, True, 1, 1.5, "s", [], {}, b""]
    assert [json_type_name(v) for v in samples] == [
        "null",
        "boolean",
        "number",
        "number",
        "string",
        "array",
        "object",
        "bytes",
    ]
