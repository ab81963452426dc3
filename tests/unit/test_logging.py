from __future__ import annotations

import base64
import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import structlog

from bot.logging import (
    REDACTED,
    Redactor,
    configure_logging,
    get_logger,
    register_secret,
    secret_variants,
)

API_KEY = "a9Zq-api-key-0123456789"
KEY_HEX = "4f1d" * 16  # 32 bytes
KEY_BYTES = bytes.fromhex(KEY_HEX)
AIP80 = f"ed25519-priv-0x{KEY_HEX}"
B64 = base64.b64encode(KEY_BYTES).decode()


def redact(event: dict[str, Any], secrets: tuple[str, ...] = (API_KEY, "0x" + KEY_HEX)) -> Any:
    return Redactor(secrets)(None, "info", event)


@pytest.mark.parametrize(
    "leak",
    [API_KEY, "0x" + KEY_HEX, KEY_HEX, KEY_HEX.upper(), AIP80, B64, B64.rstrip("=")],
)
def test_registered_secret_masked_in_every_form(leak: str) -> None:
    out = redact({"event": f"calling with {leak}!", "key": leak})
    assert out == {"event": f"calling with {REDACTED}!", "key": REDACTED}


def test_private_key_given_in_aip80_form_masks_hex_and_base64() -> None:
    out = redact({"a": KEY_HEX, "b": B64, "c": "0x" + KEY_HEX}, secrets=(AIP80,))
    assert out == {"a": REDACTED, "b": REDACTED, "c": REDACTED}


def test_nested_dicts_lists_and_tuples() -> None:
    out = redact(
        {
            "event": "request",
            "headers": {"x-api-key": API_KEY, "accept": "json"},
            "args": [1, ["deep", {"k": f"pk={AIP80}"}], (API_KEY, None)],
            "ok": True,
            "n": 5,
        }
    )
    assert out == {
        "event": "request",
        "headers": {"x-api-key": REDACTED, "accept": "json"},
        "args": [1, ["deep", {"k": f"pk={REDACTED}"}], (REDACTED, None)],
        "ok": True,
        "n": 5,
    }


def test_exception_value_redacted() -> None:
    out = redact({"error": ValueError(f"bad key {API_KEY}")})
    assert out["error"] == f"ValueError: bad key {REDACTED}"


def test_other_objects_stringified_and_redacted() -> None:
    class Holder:
        def __str__(self) -> str:
            return f"Holder({API_KEY})"

    assert redact({"obj": Holder()})["obj"] == f"Holder({REDACTED})"


def test_unregistered_aip80_key_masked_by_pattern() -> None:
    other = "ed25519-priv-0x" + "c3" * 32
    secp = "secp256k1-priv-0x" + "7e" * 32
    out = Redactor()(None, "info", {"event": f"loaded {other} and {secp} ok"})
    assert out["event"] == f"loaded {REDACTED} and {REDACTED} ok"


def test_unregistered_hex_after_priv_hint_masked() -> None:
    out = Redactor()(None, "info", {"event": f"private_key=0x{'c3' * 32}"})
    assert "c3" * 32 not in out["event"]
    assert REDACTED in out["event"]


def test_other_text_left_alone() -> None:
    event = {
        "event": "swap 0x1::aptos_coin::AptosCoin -> 0xa",
        "wallet": "0x" + "ab" * 32,
        "tx": "0x" + "cd" * 32,
        "amount": "10.5",
    }
    assert redact(dict(event)) == event


def test_short_secrets_ignored() -> None:
    redactor = Redactor(["abc", ""])
    assert redactor(None, "info", {"event": "abc"}) == {"event": "abc"}


def test_secret_variants() -> None:
    variants = secret_variants("0x" + KEY_HEX)
    assert {
        KEY_HEX,
        "0x" + KEY_HEX,
        KEY_HEX.upper(),
        "0x" + KEY_HEX.upper(),
        AIP80,
        B64,
        base64.urlsafe_b64encode(KEY_BYTES).decode().rstrip("="),
    } <= variants
    assert secret_variants(AIP80) == variants | {AIP80}
    assert secret_variants(f"  {API_KEY}\n") == {API_KEY}


# --- configured output -------------------------------------------------------------


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    config = structlog.get_config()
    out = io.StringIO()
    configure_logging(fmt="json", stream=out)
    yield out
    structlog.configure(**config)
    root.handlers[:] = handlers
    root.setLevel(level)


def lines(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_structlog_output_redacted(stream: io.StringIO) -> None:
    secret = "cfg-secret-5566778899"
    register_secret(secret)
    get_logger("test").info("using key", key=secret, note=f"k={secret}")
    [record] = lines(stream)
    assert secret not in stream.getvalue()
    assert record["key"] == REDACTED
    assert record["note"] == f"k={REDACTED}"
    assert record["event"] == "using key"
    assert record["level"] == "info"


def test_secret_registered_after_configure_still_masked(stream: io.StringIO) -> None:
    secret = "late-secret-1122334455"
    register_secret(secret)
    get_logger().warning(f"late {secret}")
    assert secret not in stream.getvalue()
    assert REDACTED in stream.getvalue()


def test_exception_trace_redacted(stream: io.StringIO) -> None:
    secret = "trace-secret-99887766"
    register_secret(secret)
    try:
        raise RuntimeError(f"failed with {secret}")
    except RuntimeError:
        get_logger().exception("boom")
    [record] = lines(stream)
    assert secret not in stream.getvalue()
    assert "RuntimeError" in record["exception"]


def test_stdlib_logging_redacted(stream: io.StringIO) -> None:
    secret = "stdlib-secret-55443322"
    register_secret(secret)
    logging.getLogger("x").warning("header x-api-key: %s", secret)
    [record] = lines(stream)
    assert secret not in stream.getvalue()
    assert record["event"] == f"header x-api-key: {REDACTED}"
    assert record["level"] == "warning"
