"""Hypothesis strategies for JSON shaped like the spec's records (section 2), then damaged.

Each record starts well-formed (a DCA or limit order with its `txDetails`, a price record, a
swap response) and takes a few blows: a field removed, a value of the wrong type, a huge or
negative number, the texts `Infinity`/`NaN`, an unknown status, an unknown field, text that is
not valid Unicode. Order ids come from a small pool, so records and pages repeat.

`RawJson` is text a hostile server writes verbatim (numbers such as `1e999999999`, `-0` or a
60-digit literal; whole broken bodies); `dumps` writes the JSON text of a generated value.
`ScriptedApi` is the ASGI app that serves them: a test sets its `handler`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from hypothesis import strategies as st

WALLET: Final = "0x" + "4d" * 32
APT: Final = "0x1::aptos_coin::AptosCoin"
USDC: Final = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
ORDER_IDS: Final = ("0xo1", "0xo2", "0xo3", "0xo4", "0xo5")
TX_IDS: Final = ("0xt1", "0xt2", "0xt3")


class RawJson(str):
    """JSON text written as is (not quoted) by `dumps`."""


def dumps(value: Any) -> str:
    """JSON text of `value`; `RawJson`s verbatim, strings with `\\uXXXX` escapes."""
    if isinstance(value, RawJson):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{dumps(str(k))}:{dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    return json.dumps(value)  # str (ASCII-escaped, lone surrogates too), int, bool, None


# --- values -----------------------------------------------------------------------------------

LONE_SURROGATE: Final = "bad\ud800text"
"""Valid JSON (`"bad\\ud800text"`), not valid Unicode."""

NUMBER_TEXTS: Final = (
    "1e999999999",
    "1E+400",
    "-0",
    "-1",
    "-0.000001",
    "1e-999999999",
    "123456789012345678901234567890123456789012345678901234567890",
    "0.1",
    "3.0e2",
)
NUMBER_STRINGS: Final = (
    "Infinity",
    "-Infinity",
    "NaN",
    "nan",
    "inf",
    "1e999999999",
    "-1",
    "-0.5",
    "",
    " ",
    "abc",
    "1,5",
    "5_000",
    "0x10",
    "²",
    "١٢",
    " 7 ",
    "99999999999999999999999999999999999999999999999999999999999999999999999999999999",
)

junk: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from([None, True, False, [], {}, {"value": 1}, [1, "2"], LONE_SURROGATE]),
    st.sampled_from(NUMBER_STRINGS),
    st.sampled_from(NUMBER_TEXTS).map(RawJson),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**63 - 1, 2**63, 2**64, 10**40, -(10**40)]),
    st.text(max_size=12),
)
"""A value of any JSON type, mostly wrong for whatever field it lands in."""

good_amounts: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from(["10", "0.5", "25", "0", "1e-6", "4.9", "1000000"]),
    st.integers(0, 10**9),
    st.sampled_from(["2.5", "0.000001"]).map(RawJson),
)
statuses: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from(["active", "partially_filled", "filled", "cancelled", "refunded", "expired"]),
    st.sampled_from(["paused", "settling", "ACTIVE", "", "filled\n", LONE_SURROGATE]),
    st.text(max_size=8),
)
times: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from(
        [
            "2026-11-01T00:00:00Z",
            "2026-11-01T00:00:00.000Z",
            "2026-11-01T00:00:00+05:00",
            "0001-01-01T00:00:00+01:00",
            "9999-12-31T23:59:59-01:00",
            "1761955200",
            "1761955200000",
            "99999999999999999999",
            "²",
            "yesterday",
            "",
        ]
    ),
    st.sampled_from([1761955200, 10**11 + 1, 253402300800000, 10**20, -5, 10**30]),
    st.sampled_from(["1e999999999", "1761955200.5"]).map(RawJson),
)
addresses: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from([APT, USDC, "0xa", "0x1", "0X1::APTOS_COIN::AptosCoin"]),
    st.sampled_from(["", "0x", "0xzz", "not an address", "0x" + "1" * 65, LONE_SURROGATE]),
)


def _token(address: str, symbol: str, decimals: int) -> dict[str, Any]:
    return {"address": address, "symbol": symbol, "decimals": decimals, "name": symbol}


def _mutations(keys: list[str]) -> st.SearchStrategy[list[tuple[str, str, Any]]]:
    """Up to four blows: (action, key, value) with action delete | replace | unknown."""
    if not keys:
        return st.just([])
    blow = st.tuples(
        st.sampled_from(["delete", "replace", "replace", "unknown"]),
        st.sampled_from(keys),
        junk,
    )
    return st.lists(blow, max_size=4)


def _damage(record: dict[str, Any], blows: list[tuple[str, str, Any]]) -> dict[str, Any]:
    out = dict(record)
    for action, key, value in blows:
        if action == "delete":
            out.pop(key, None)
        elif action == "replace":
            out[key] = value
        else:
            out[f"unknown_{key}"] = value
    return out


# --- records ----------------------------------------------------------------------------------


@st.composite
def tx_details(draw: st.DrawFn) -> dict[str, Any]:
    """One `txDetails` record (spec 2.5), maybe damaged; ids repeat across records."""
    record = {
        "txId": draw(st.sampled_from(TX_IDS)),
        "txNumber": draw(st.integers(1, 3)),
        "type": draw(st.sampled_from(["created", "filled", "attempted", "failed", "cancelled"])),
        "attemptNumber": 1,
        "fromTokenAmount": draw(good_amounts),
        "toTokenAmount": draw(good_amounts),
        "feeTokenAmount": "0.025",
        "fromTokenAmountUSD": "25",
        "time": draw(times),
        "priceToTokenPerFromToken": draw(good_amounts),
        "keeperWalletAddress": "0x" + "cd" * 32,
    }
    return _damage(record, draw(_mutations(list(record))))


@st.composite
def order_records(draw: st.DrawFn, kind: str, order_id: str | None = None) -> dict[str, Any]:
    """A DCA (spec 2.3) or limit (2.4) order record, maybe damaged."""
    prefix = draw(st.sampled_from(["panora", "svc"]))
    spent = draw(good_amounts)
    record: dict[str, Any] = {
        f"{prefix}TxId": order_id or draw(st.sampled_from(ORDER_IDS)),
        "fromToken": _token(USDC, "USDC", 6) if kind == "dca" else _token(APT, "APT", 8),
        "toToken": _token(APT, "APT", 8) if kind == "dca" else _token(USDC, "USDC", 6),
        "feeToken": _token(USDC, "USDC", 6),
        "status": draw(statuses),
        "createdAtTime": draw(times),
        "fromTokenAmountSpent": spent,
        "fromTokenAmountBalance": draw(good_amounts),
        "toTokenAmountWithdrawn": draw(good_amounts),
        "numberOfOrdersCompleted": draw(st.integers(0, 5)),
        "avgPriceToTokenPerFromToken": "0.195",
        "slippagePercentage": "0.5",
        "txDetails": draw(st.lists(tx_details(), max_size=3)),
    }
    if kind == "dca":
        record |= {
            "fromTokenAmountTotal": "100",
            "numberOfOrdersTotal": 4,
            "fromTokenAmountPerOrder": "25",
            "interval": {"value": draw(st.one_of(st.just("1"), junk)), "timePeriod": "day"},
            "nextOrderTime": draw(times),
            "minRateToTokenPerFromToken": draw(st.sampled_from(["0", "0.1", "Infinity"])),
            "maxRateToTokenPerFromToken": draw(st.sampled_from(["Infinity", "5", "NaN"])),
            "platformId": "panora",
        }
    else:
        record |= {
            "fromTokenAmount": draw(good_amounts),
            "rateToTokenPerFromToken": draw(st.sampled_from(["6.5", "Infinity", "0"])),
            "expireAtTime": draw(times),
        }
    damaged = _damage(record, draw(_mutations(list(record))))
    for token_key in ("fromToken", "toToken"):  # damage inside the token objects too
        token = damaged.get(token_key)
        if isinstance(token, dict) and draw(st.booleans()):
            damaged[token_key] = _damage(token, draw(_mutations(list(token))))
            if draw(st.booleans()):
                damaged[token_key]["address"] = draw(addresses)
    return damaged


def any_records(kind: str) -> st.SearchStrategy[Any]:
    """Mostly order records, sometimes a value that is not a record at all."""
    return st.one_of(
        order_records(kind), order_records(kind), order_records(kind), junk.filter(_not_dict)
    )


def _not_dict(value: Any) -> bool:
    return not isinstance(value, dict)


@st.composite
def price_records(draw: st.DrawFn) -> dict[str, Any]:
    """A price record (spec 2.1), maybe damaged."""
    record = {
        "chainId": 1,
        "panoraId": draw(st.integers(0, 9)),
        "tokenAddress": APT,
        "faAddress": "0xa",
        "name": "Aptos Coin",
        "symbol": "APT",
        "decimals": 8,
        "panoraSymbol": "APT",
        "usdPrice": draw(good_amounts),
        "nativePrice": "1",
        "priceChange24H": draw(st.sampled_from(["-2.5", "0", "3"])),
        "panoraUI": draw(st.sampled_from([True, "true", "false"])),
        "panoraTags": draw(st.sampled_from([["Native"], "Native,Verified", []])),
    }
    return _damage(record, draw(_mutations(list(record))))


@st.composite
def swap_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """An ExactIn swap response (spec 2.6 / 4.7), maybe damaged (also inside the quote)."""
    quote = {
        "toTokenAmount": draw(good_amounts),
        "minToTokenAmount": draw(good_amounts),
        "priceImpact": "0.02",
        "slippagePercentage": "0.5",
        "feeAmount": "0.01",
        "feeToken": {"tokenType": APT, "name": "Aptos Coin", "symbol": "APT", "decimals": 8},
        "txData": {"function": "0x1::m::f", "type_arguments": [], "arguments": ["1"]},
    }
    body = {
        "fromToken": {"address": APT, "decimals": 8, "current_price": "5.12"},
        "toToken": {"address": USDC, "decimals": 6, "current_price": "1"},
        "fromTokenAmount": "10",
        "quotes": [_damage(quote, draw(_mutations(list(quote))))],
    }
    return _damage(body, draw(_mutations(list(body))))


@st.composite
def order_pages(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    """One getOrders page body whose envelope is sound and whose records may be anything."""
    return {
        "chainId": 1,
        "toWalletAddress": WALLET,
        "pageNumber": 1,
        "totalPages": 1,
        "orders": draw(st.lists(any_records(kind), max_size=5)),
    }


broken_bodies: st.SearchStrategy[Any] = st.one_of(
    junk,
    st.sampled_from(
        [
            {"orders": "none"},
            {"orders": {"0": {}}},
            {"orders": None, "totalPages": "x"},
            RawJson('{"orders": [], "totalPages": NaN}'),
            RawJson('{"orders": [{"fromTokenAmount": Infinity}]}'),
            RawJson('{"orders": ['),
            RawJson(""),
        ]
    ),
)
"""Whole bodies that are not a getOrders page (or not JSON at all)."""


# --- the server that sends them ---------------------------------------------------------------

Handler = Callable[[str, str, Any], tuple[int, str]]
"""(method, path, JSON request body or None) → (status, response text)."""


class ScriptedApi:
    """ASGI app answering every request with whatever `handler` says (serve it on loopback).

    Counts requests; a request body that is not JSON reaches the handler as None.
    """

    def __init__(self) -> None:
        self.handler: Handler = lambda method, path, body: (404, "{}")
        self.requests = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.requests += 1
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        status, text = self.handler(scope["method"], scope["path"], body)
        data = text.encode("utf-8", "surrogatepass")
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": data})
