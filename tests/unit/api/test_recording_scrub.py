"""What a recorded answer may never contain, and exact JSON (bot.api.recording, answer_files)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from bot.api import PanoraClient
from bot.api.answer_files import answer_files, dumps_exact
from bot.api.recording import WALLET_PLACEHOLDER, Scrubber, recording_transport
from bot.config import ApiSettings
from bot.logging import REDACTED
from bot.money import loads_exact

WALLET = "0x000" + "7e" * 30 + "a"  # leading zeros: a short form exists
LONG = WALLET[2:]
SHORT = "0x" + LONG.lstrip("0")


@pytest.mark.parametrize(
    "form", [WALLET, LONG, LONG.upper(), SHORT, SHORT.upper(), "0X" + LONG.upper()]
)
def test_every_form_of_a_configured_wallet_is_replaced(form: str) -> None:
    scrub = Scrubber([WALLET])
    assert scrub.text(f"to {form}, ok") == f"to {WALLET_PLACEHOLDER}, ok"
    assert scrub.text(f"{form}::module::Coin") == f"{WALLET_PLACEHOLDER}::module::Coin"


def test_longer_hex_runs_and_special_addresses_are_left_alone() -> None:
    scrub = Scrubber([WALLET, "0x1"])
    longer = "0x" + LONG + "ff"
    assert scrub.text(longer) == longer
    assert scrub.text("0x1::aptos_coin::AptosCoin") == "0x1::aptos_coin::AptosCoin"


def test_wallets_are_learned_from_the_request_only() -> None:
    scrub = Scrubber()
    scrub.learn_request([("toWalletAddress", SHORT)], b"")
    assert scrub.text(WALLET) == WALLET_PLACEHOLDER
    other = "0x" + "ab" * 32
    scrub.learn_request([], b'{"data": {"walletAddress": "%s"}}' % other.encode())
    assert scrub.text(other.upper()) == WALLET_PLACEHOLDER
    body = {"keeperWalletAddress": "0x1", "type": "0x1::coin::T"}  # a provider's wallet field
    assert scrub.value(body) == {"keeperWalletAddress": WALLET_PLACEHOLDER, "type": "0x1::coin::T"}
    assert scrub.text("0x1::coin::T") == "0x1::coin::T"  # never learned from an answer


def test_credential_query_values_and_registered_secrets_are_hidden() -> None:
    scrub = Scrubber(secrets=["s3cret-api-key-123"])
    assert scrub.param("api_key", "anything") == REDACTED
    assert scrub.param("x-api-key", "anything") == REDACTED
    assert scrub.param("tokenAddress", "0x1::a::B") == "0x1::a::B"
    assert scrub.param("toWalletAddress", "0x2") == WALLET_PLACEHOLDER
    assert scrub.text("key=s3cret-api-key-123") == f"key={REDACTED}"
    assert scrub.text("ed25519-priv-0x" + "11" * 32) == REDACTED


def test_exact_json_keeps_every_digit() -> None:
    text = '{"a":1.50,"b":[1E-8,0.000000010],"c":"x\\u00e9","d":null,"e":true,"f":12}'
    value = loads_exact(text)
    out = dumps_exact(value)
    back = loads_exact(out)
    assert back == value and '"a":1.50' in out
    # Every digit and exponent kept (`0.000000010` is written `1.0E-8`, never a float's).
    assert back["b"][1].as_tuple() == Decimal("0.000000010").as_tuple()
    huge = dumps_exact(loads_exact("1e999999999"))  # written as it came, never expanded
    assert huge == "1E+999999999"
    with pytest.raises(ValueError):
        dumps_exact(Decimal("NaN"))
    with pytest.raises(ValueError):
        dumps_exact(1.5)


async def test_an_in_memory_answer_is_recorded_too(tmp_path: Path) -> None:
    """A transport whose answers are ready-made (httpx.MockTransport) still gets recorded."""
    prices = [{"tokenAddress": "0x1::aptos_coin::AptosCoin", "decimals": 8, "usdPrice": "5"}]

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=prices)

    settings = ApiSettings(base_url="http://provider.test", record_answers_dir=tmp_path / "a")
    moment = datetime(2031, 5, 6, 7, 8, 9, tzinfo=UTC)
    transport = recording_transport(
        settings, httpx.MockTransport(answer), now=lambda: moment, mode="live"
    )
    async with PanoraClient.from_settings(settings, api_key=None, transport=transport) as client:
        await client.get_prices()
    [(_seq, path)] = answer_files(tmp_path / "a")
    assert path.name == "answers-20310506-000001.jsonl"
    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    assert record["time"] == "2031-05-06T07:08:09Z" and record["body"] == prices
