"""The key never reaches a log, an exception message or the journal."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import structlog
from pydantic import SecretStr

from bot.chain.errors import ChainError, KeyFileError
from bot.chain.keys import load_private_key
from bot.logging import configure_logging
from harness.paper_chain import KEY, chain_rig, router_txdata, swap_intent

SEED = KEY.key.encode()  # the 32-byte seed of the test key


def key_forms() -> list[str]:
    hexed = SEED.hex()
    return [
        hexed,
        hexed.upper(),
        "ed25519-priv-0x" + hexed,
        base64.b64encode(SEED).decode(),
        base64.b64encode(bytes(KEY.key._signing_key)).decode(),  # nacl's 64-byte secret
        bytes(KEY.key._signing_key).hex(),
        repr(SEED),
    ]


def assert_clean(text: str) -> None:
    lowered = text.lower()
    for form in key_forms():
        assert form.lower() not in lowered, form[:12]


async def test_no_key_in_logs_errors_or_recorder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    texts: list[str] = []
    with structlog.testing.capture_logs() as logs:
        h = chain_rig()
        h.set_node(lose_first=1, refuse_first=(507,))
        outcome = await h.signer.execute(router_txdata(), swap_intent())
        texts.append(json.dumps(outcome.summary()))
        much = 10**15  # the simulation fails: no pool gives that much
        for data, intent in [
            (router_txdata(min_out=much), swap_intent(min_out=much)),
            ({"function": "0x1::aptos_account::transfer", "arguments": []}, swap_intent()),
            ({**router_txdata(), "arguments": []}, swap_intent()),
        ]:
            with pytest.raises(ChainError) as info:
                await h.signer.execute(data, intent)
            texts.append(str(info.value))
            texts.append(repr(info.value))
        await h.close()
        for text in (SEED.hex() + "zz", SEED.hex()[:-2], "secp256k1-priv-0x" + SEED.hex()):
            with pytest.raises(KeyFileError) as key_info:
                load_private_key(None, SecretStr(text))
            texts.append(str(key_info.value))
    texts += [json.dumps(s, default=str) for s in h.recorder.submitted.values()]
    texts += [json.dumps(o.summary()) for o in h.recorder.outcomes.values()]
    texts += [json.dumps(entry, default=str) for entry in logs]
    texts.append(repr(h.signer))
    captured = capsys.readouterr()
    texts += [captured.out, captured.err]
    assert logs and h.recorder.outcomes
    for text in texts:
        assert_clean(text)


def test_rendered_logs_redact_a_key_logged_by_mistake(tmp_path: Path) -> None:
    import io

    stream = io.StringIO()
    configure_logging(fmt="json", stream=stream)
    load_private_key(None, SecretStr(SEED.hex()))
    structlog.get_logger("x").info("oops", value=str(KEY), other=SEED.hex())
    out = stream.getvalue()
    assert "[REDACTED]" in out
    assert_clean(out)
