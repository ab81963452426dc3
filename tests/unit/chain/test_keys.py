from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path

import pytest
from aptos_sdk import ed25519
from aptos_sdk.account_address import AccountAddress
from nacl.signing import SigningKey
from pydantic import SecretStr

from bot.aptos.address import Address
from bot.chain.errors import KeyFileError
from bot.chain.keys import (
    account_address,
    aip80_text,
    authentication_key,
    load_private_key,
    new_key_file,
    parse_private_key,
)
from bot.logging import _ACTIVE_REDACTOR
from harness.paper_chain import FIXTURES

SEED_HEX = "4a6d287353203941768551f66446d5d4a85ab685b5b444041801014ae39419b5"
# The OKX wallet SDK's vector: this seed signs as this sender (first 32 bytes of its BCS).
KNOWN_ADDRESS = "0x7eaead7cf02b43db13f948bc3e2704c8885b2aebf0c214ff980b791cbf227c19"


def key_file(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "wallet.key"
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def forms(seed_hex: str) -> list[str]:
    raw = bytes.fromhex(seed_hex)
    return [
        seed_hex,
        seed_hex.upper(),
        "0x" + seed_hex,
        "ed25519-priv-0x" + seed_hex,
        base64.b64encode(raw).decode(),
    ]


@pytest.mark.parametrize(
    "text",
    [
        f"ed25519-priv-0x{SEED_HEX}",
        SEED_HEX,
        f"0x{SEED_HEX}",
        f"0X{SEED_HEX.upper()}",
        f"  ed25519-priv-0x{SEED_HEX}\n",
    ],
)
def test_accepted_forms_give_the_same_key(tmp_path: Path, text: str) -> None:
    key = load_private_key(key_file(tmp_path, text), None)
    assert bytes(key.key.encode()).hex() == SEED_HEX
    assert str(account_address(key)) == KNOWN_ADDRESS


def test_address_matches_the_sdk_and_a_known_vector() -> None:
    okx = json.loads((FIXTURES / "okx_signed_entry_function_vector.json").read_text())
    assert okx["privateKey"][2:66] == SEED_HEX
    assert okx["expected"].startswith(KNOWN_ADDRESS[2:])
    key = parse_private_key(SEED_HEX, source="test")
    sdk = AccountAddress.from_key(key.public_key())
    assert account_address(key) == Address.from_bytes(bytes(sdk.address))
    assert account_address(key.public_key()) == account_address(key)
    assert authentication_key(key.public_key()) == bytes(sdk.address)


@pytest.mark.parametrize("text", [SEED_HEX, "0x" + SEED_HEX, "ed25519-priv-0x" + SEED_HEX])
def test_loading_prints_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    load_private_key(key_file(tmp_path, text), None)
    load_private_key(None, SecretStr(text))
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ""


def test_from_environment_value() -> None:
    key = load_private_key(None, SecretStr("0x" + SEED_HEX))
    assert str(account_address(key)) == KNOWN_ADDRESS


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (SEED_HEX[:-2], "62 hex digits"),
        (SEED_HEX + "00", "66 hex digits"),
        ("0x" + SEED_HEX * 2, "128 hex digits"),
        (SEED_HEX[:-1] + "g", "other characters"),
        ("secp256k1-priv-0x" + SEED_HEX, "secp256k1 key"),
        ("not a key at all, clearly", "other characters"),
    ],
)
def test_malformed_keys_are_refused_without_content(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = key_file(tmp_path, text)
    with pytest.raises(KeyFileError) as info:
        load_private_key(path, None)
    message = str(info.value)
    assert problem in message
    assert str(path) in message
    assert SEED_HEX[:16] not in message.lower()
    assert info.value.__cause__ is None
    assert info.value.__context__ is None or info.value.__suppress_context__


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_open_key_file_refused_with_chmod_hint(tmp_path: Path, mode: int) -> None:
    path = key_file(tmp_path, "ed25519-priv-0x" + SEED_HEX, mode)
    with pytest.raises(KeyFileError) as info:
        load_private_key(path, None)
    message = str(info.value)
    assert f"chmod 600 {path}" in message
    for form in forms(SEED_HEX):
        assert form not in message


def test_missing_empty_and_ambiguous_sources(tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match="does not exist"):
        load_private_key(tmp_path / "nope", None)
    with pytest.raises(KeyFileError, match="empty"):
        load_private_key(key_file(tmp_path, "\n"), None)
    with pytest.raises(KeyFileError, match="bot keys new"):
        load_private_key(None, None)
    with pytest.raises(KeyFileError, match="keep only one") as info:
        load_private_key(key_file(tmp_path, SEED_HEX), SecretStr(SEED_HEX))
    assert SEED_HEX not in str(info.value)


def test_every_form_is_registered_with_the_redactor(tmp_path: Path) -> None:
    seed = "11" * 16 + "2a" * 16
    load_private_key(key_file(tmp_path, seed), None)
    for form in forms(seed):
        assert _ACTIVE_REDACTOR.redact(f"x {form} y") == "x [REDACTED] y", form


def test_new_key_file_is_0600_aip80_and_loads(tmp_path: Path) -> None:
    path = tmp_path / "new.key"
    address = new_key_file(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert text.startswith("ed25519-priv-0x") and len(text.strip()) == len("ed25519-priv-0x") + 64
    key = load_private_key(path, None)
    assert account_address(key) == address
    assert aip80_text(key) == text.strip()
    assert [p.name for p in tmp_path.iterdir()] == ["new.key"]  # no temporary left behind


def test_new_key_file_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "existing.key"
    path.write_text("precious")
    with pytest.raises(KeyFileError, match="already exists"):
        new_key_file(path)
    assert path.read_text() == "precious"


def test_new_key_file_respects_a_restrictive_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        path = tmp_path / "k"
        new_key_file(path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_sdk_key_objects_round_trip() -> None:
    key = ed25519.PrivateKey(SigningKey(bytes.fromhex(SEED_HEX)))
    assert aip80_text(key) == "ed25519-priv-0x" + SEED_HEX
