"""Quotes and swaps on the wire: which endpoint, the query, and an answer without a route.

Real evidence (docs/wire-decisions.md, rows from 28 on): Panora's current docs and SDK
1.3.1 (`dist/index.es.js`, `Quote.getQuote`) quote through `POST /swap`, query parameters
and an empty body, with `toWalletAddress` optional; `GET /swap/quote` belongs to the older
docs (SDK 1.0.8) and is used only with `[api].swap_variant = "legacy"`. A swap to sign is
always `POST /swap` with the wallet.

An answer with `quotes: []` is the provider saying "no route" (SDK 1.3.1 `Swap.swap`:
"No routes present"): `NoRoute`, a real answer, never retried and never "malformed".
"""

from __future__ import annotations

from typing import Any

from bot.api.errors import NoRoute
from bot.api.params import SwapRequest, SwapVariant
from bot.money import format_decimal

__all__ = ["no_route", "swap_endpoint", "swap_query"]


def swap_endpoint(variant: SwapVariant, *, to_sign: bool) -> tuple[str, str]:
    """(method, path): `POST /swap`, except a legacy-variant quote (`GET /swap/quote`)."""
    if to_sign or variant != "legacy":
        return "POST", "/swap"
    return "GET", "/swap/quote"


def swap_query(
    request: SwapRequest,
    variant: SwapVariant,
    chain_id: int,
    *,
    to_sign: bool,
    skipped_pools: list[str],
) -> list[tuple[str, str]]:
    """The query of a quote or swap, after every rule of `SwapRequest.to_query`.

    `chainId` is the client's unless the request names one; `skipped_pools` receives the
    pools left out (their address contains a comma).

    Raises:
        RequestRuleError: naming the field that breaks a rule; nothing is sent.
    """
    params = [("chainId", str(chain_id))] if request.chain_id is None else []
    return params + request.to_query(variant, with_tx_data=to_sign, skipped_pools=skipped_pools)


def no_route(data: Any, request: SwapRequest, endpoint: str) -> NoRoute | None:
    """`NoRoute` for an answer whose `quotes` is an empty list, else None.

    Checked before the answer is parsed: a no-route answer may lack the amounts a quote
    has, and must still read as "no route", not as a malformed body.
    """
    if not isinstance(data, dict) or data.get("quotes") != []:
        return None
    amount = request.from_amount if request.exact_in else request.to_amount
    return NoRoute(
        request.from_token,
        request.to_token,
        format_decimal(amount) if amount is not None else "?",
        exact_in=request.exact_in,
        endpoint=endpoint,
    )
