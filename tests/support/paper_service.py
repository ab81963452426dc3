"""The paper world's provider face in-process: settings, a client over ASGI, its error shape.

For the tests of the paper service (tests/unit/paper): a stepped clock, one API key and
a rate limit no test reaches; a client that talks to an ASGI app without a socket; the
spec's `fail` answer; a DCA createOrder body.
"""

from __future__ import annotations

from typing import Any

import httpx

from bot.config import PaperSettings

KEY = "k"
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
WALLET = "0x" + "ab" * 32
CREATE = "/dca/v1/createOrder"


def paper_settings(**overrides: Any) -> PaperSettings:
    """A stepped world that accepts `KEY` and never rate-limits a test; `overrides` win."""
    values: dict[str, Any] = {
        "clock": "stepped",
        "api_keys": [KEY],
        "rate_limit_per_second": 1e6,
        "rate_limit_burst": 1_000_000,
    }
    values.update(overrides)
    return PaperSettings(**values)


def client_for(app: Any, key: str | None = KEY) -> httpx.AsyncClient:
    """A client of the ASGI `app` (no socket), sending `key` as `x-api-key` unless None."""
    headers = {"x-api-key": key} if key is not None else {}
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://paper", headers=headers
    )


def assert_fail(response: httpx.Response, status: int, *words: str) -> str:
    """The spec's error shape with `status`; the message contains every word. Returns it."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"statusCode", "message", "status"}
    assert body["statusCode"] == status
    assert body["status"] == "fail"
    message = body["message"]
    assert isinstance(message, str)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    return message


def dca_body(value: str = "10") -> dict[str, Any]:
    """A createOrder body: `value` APT sold for USDC in four hourly slices by `WALLET`."""
    return {
        "chainId": "1",
        "toWalletAddress": WALLET,
        "fromTokenAddress": APT,
        "toTokenAddress": USDC,
        "fromTokenAmount": {"value": value, "type": "total"},
        "interval": {"value": "1", "timePeriod": "hour"},
        "numberOfOrders": 4,
    }
