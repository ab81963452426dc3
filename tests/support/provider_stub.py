"""A scripted stand-in for the provider's HTTP API, for client tests over loopback.

It records every request (method, path, query, headers, JSON body) and answers each
endpoint with spec-shaped canned bodies (`CANNED`), or with replies a test queues:
an error status and body, a delay (to cause a client timeout), a dropped connection
after the request was read (`drop=True`), or a non-JSON body.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from tests.support.fixtures import FIXTURES as SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES
ROUTER_TXDATA = json.loads((FIXTURES / "aptos" / "panora_router_entry_txdata.json").read_text())

WALLET = "0x" + "ab" * 32
APT = "0x1::aptos_coin::AptosCoin"
USDC_FA = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"


def _token(address: str, symbol: str, decimals: int) -> dict[str, Any]:
    return {"address": address, "symbol": symbol, "decimals": decimals, "name": symbol}


PRICES = [
    {  # strings, provider-prefixed names
        "chainId": 1,
        "panoraId": 1,
        "tokenAddress": APT,
        "faAddress": "0xa",
        "name": "Aptos Coin",
        "symbol": "APT",
        "decimals": 8,
        "panoraSymbol": "APT",
        "usdPrice": "5.12345678",
        "nativePrice": "1",
        "priceChange24H": "-2.5",
        "panoraUI": True,
        "panoraTags": ["Native", "Verified"],
    },
    {  # numbers, a null USD price, an unknown field
        "chainId": 1,
        "panoraId": 4,
        "tokenAddress": None,
        "faAddress": USDC_FA,
        "name": "USDC",
        "symbol": "USDC",
        "decimals": 6,
        "panoraSymbol": "USDC",
        "usdPrice": 0.9998,
        "nativePrice": None,
        "priceChange24H": 0.01,
        "panoraUI": "true",
        "panoraTags": ["Native", "Verified"],
        "brandNewField": {"x": 1},
    },
]

SWAP_EXACT_IN = {
    "fromToken": {"address": APT, "decimals": 8, "current_price": "5.12"},
    "toToken": {"address": USDC_FA, "decimals": 6, "current_price": "0.9998"},
    "fromTokenAmount": "10",
    "fromTokenAmountUSD": "51.2",
    "quotes": [
        {
            "toTokenAmount": "51.123456",
            "priceImpact": "0.02",
            "slippagePercentage": "0.5",
            "feeAmount": "0.01",
            "feeAmountUSD": "0.0512",
            "feeToken": {"tokenType": APT, "name": "Aptos Coin", "symbol": "APT", "decimals": 8},
            "minToTokenAmount": "50.867838",
            "toTokenAmountUSD": "51.11",
            "txData": ROUTER_TXDATA,
        }
    ],
}

SWAP_EXACT_OUT = {  # numbers where the spec's examples show numbers; legacy-style route
    "fromToken": {"address": APT, "current_price": "5.12"},
    "toToken": {"address": USDC_FA, "current_price": None},
    "toTokenAmount": "50",
    "toTokenAmountUSD": None,
    "quotes": [
        {
            "fromTokenAmount": 9.8,
            "maxFromTokenAmount": 9.849,
            "slippagePercentage": 0.5,
            "feeAmount": 0.0098,
            "feeToken": {"tokenType": APT, "name": "Aptos Coin", "symbol": "APT", "decimals": 8},
            "priceImpact": None,
            "fromTokenAmountUSD": "50.17",
            "route": [
                {
                    "percentage": 100,
                    "routeTokens": [{"tokenType": APT, "symbol": "APT", "decimals": 8}],
                    "routeTaken": [
                        [
                            {
                                "percentage": 100,
                                "fromToken": {"tokenType": APT, "symbol": "APT", "decimals": 8},
                                "toToken": {"tokenType": USDC_FA, "symbol": "USDC", "decimals": 6},
                                "dexName": "Thala",
                                "aggregatorName": "panora",
                            }
                        ]
                    ],
                }
            ],
        }
    ],
}

DCA_ORDER = {
    "panoraTxId": "0xdca1",
    "fromToken": _token(USDC_FA, "USDC", 6),
    "toToken": _token(APT, "APT", 8),
    "feeToken": _token(USDC_FA, "USDC", 6),
    "fromTokenAmountTotal": "100",
    "fromTokenAmountSpent": "50",
    "fromTokenAmountBalance": "50",
    "fromTokenAmountWithdrawn": "0",
    "toTokenAmountWithdrawn": "9.75",
    "numberOfOrdersTotal": 4,
    "fromTokenAmountPerOrder": "25",
    "numberOfOrdersRemaining": 2,
    "numberOfOrdersCompleted": 2,
    "interval": {"value": "1", "timePeriod": "day"},
    "createdAtTime": "2026-11-01T00:00:00.000Z",
    "nextOrderTime": "2026-11-03T00:00:00.000Z",
    "avgPriceFromTokenPerToToken": "5.128205",
    "avgPriceToTokenPerFromToken": "0.195",
    "minRateToTokenPerFromToken": "0",
    "maxRateToTokenPerFromToken": "Infinity",
    "status": "active",
    "platformId": "panora",
    "slippagePercentage": "1",
    "txDetails": [
        {
            "txId": "0xf1",
            "txNumber": 1,
            "type": "filled",
            "attemptNumber": 1,
            "fromTokenAmount": "25",
            "fromTokenAmountUSD": "25",
            "toTokenAmount": "4.9",
            "toTokenAmountUSD": "25.1",
            "feeTokenAmount": "0.025",
            "feeTokenAmountUSD": "0.025",
            "time": "1761955200",
            "priceFromTokenPerToToken": "5.102040",
            "priceToTokenPerFromToken": "0.196",
        }
    ],
}

LIMIT_ORDER = {
    "panoraTxId": "0xlim1",
    "fromToken": _token(APT, "APT", 8),
    "toToken": _token(USDC_FA, "USDC", 6),
    "feeToken": _token(APT, "APT", 8),
    "createdAtTime": "2026-11-01T00:00:00Z",
    "status": "partially_filled",
    "expireAtTime": "2026-11-08T00:00:00Z",
    "fromTokenAmount": 10,
    "rateToTokenPerFromToken": "6.5",
    "fromTokenAmountSpent": "4",
    "fromTokenAmountBalance": "6",
    "fromTokenAmountWithdrawn": "0",
    "toTokenAmountWithdrawn": "26",
    "numberOfOrdersCompleted": 1,
    "avgPriceFromTokenPerToToken": "0.153846",
    "avgPriceToTokenPerFromToken": "6.5",
    "slippagePercentage": "0.5",
    "txDetails": [
        {
            "txId": "0xf2",
            "txNumber": 1,
            "type": "filled",
            "fromTokenAmount": "4",
            "toTokenAmount": "26",
            "time": "2026-11-02T10:00:00Z",
            "keeperWalletAddress": "0x" + "cd" * 32,
        }
    ],
}


def _page(orders: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "chainId": 1,
        "toWalletAddress": WALLET,
        "pageNumber": 1,
        "totalPages": 1,
        "orders": orders,
    }


CANNED: dict[tuple[str, str], Any] = {
    ("GET", "/prices"): PRICES,
    ("GET", "/swap/quote"): SWAP_EXACT_IN,
    ("POST", "/swap"): SWAP_EXACT_IN,
    ("POST", "/dca/v1/createOrder"): {"panoraTxId": "0xdca-new"},
    ("POST", "/dca/v1/cancelOrder"): {"status": "success"},
    ("POST", "/dca/v1/getOrders"): _page([DCA_ORDER]),
    ("POST", "/limit/v1/createOrder"): {"panoraTxId": "0xlim-new"},
    ("POST", "/limit/v1/cancelOrder"): {"status": "success"},
    ("POST", "/limit/v1/getOrders"): _page([LIMIT_ORDER]),
}


@dataclass
class Reply:
    """One scripted answer. `body` may be JSON data, or `str`/`bytes` sent as is."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False


@dataclass
class Recorded:
    """One request as the stub received it."""

    method: str
    path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: Any

    def param(self, name: str) -> str | None:
        """The first value of a query parameter."""
        return next((v for k, v in self.query if k == name), None)


class ProviderStub:
    """The ASGI app. Queue replies with `script`; read requests from `requests`."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._queued: dict[tuple[str, str], deque[Reply]] = defaultdict(deque)

    def script(self, method: str, path: str, *replies: Reply) -> None:
        """Answer the next requests to this endpoint with `replies`, in order."""
        self._queued[(method, path)].extend(replies)

    def calls(self, method: str, path: str) -> list[Recorded]:
        """The requests received by one endpoint."""
        return [r for r in self.requests if (r.method, r.path) == (method, path)]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        key = (scope["method"], scope["path"])
        self.requests.append(
            Recorded(
                method=scope["method"],
                path=scope["path"],
                query=parse_qsl(scope["query_string"].decode(), keep_blank_values=True),
                headers={k.decode().lower(): v.decode() for k, v in scope["headers"]},
                body=json.loads(raw) if raw else None,
            )
        )
        queue = self._queued.get(key)
        if queue:
            reply = queue.popleft()
        elif key in CANNED:
            reply = Reply(body=CANNED[key])
        else:
            reply = Reply(404, {"statusCode": 404, "message": "not found", "status": "fail"})
        if reply.delay:
            await asyncio.sleep(reply.delay)
        payload = reply.body
        data = (
            payload
            if isinstance(payload, bytes)
            else (payload.encode() if isinstance(payload, str) else json.dumps(payload).encode())
        )
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(data)).encode()),
        ]
        headers += [(k.encode(), v.encode()) for k, v in reply.headers.items()]
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        if reply.drop:
            # Headers promised a body that never comes: the server closes the connection.
            raise ConnectionAbortedError("stub: dropping the connection on purpose")
        await send({"type": "http.response.body", "body": data})
