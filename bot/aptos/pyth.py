"""Pyth's price feeds on Aptos, as the node's `POST /v1/view` serves them. Pure, no I/O.

Pyth's Aptos contract exposes `#[view]` functions that read a cached price by feed id
(pyth-network/pyth-crosschain, `target_chains/aptos/contracts/sources/pyth.move`, added in
December 2024):

* `get_price_no_older_than_by_feed_id(feed_id: vector<u8>, max_age_secs: u64): Price` —
  aborts when the cached price is older than `max_age_secs` by the chain's own clock.

`Price { price: I64, conf: u64, expo: I64, timestamp: u64 }`, `I64 { negative: bool,
magnitude: u64 }`; the view answers `[{"price": {"negative": false, "magnitude": "…"},
"conf": "…", "expo": {"negative": true, "magnitude": "8"}, "timestamp": "…"}]`. The USD
price is `price × 10^expo`, its uncertainty `conf × 10^expo`.

Pyth's documentation announces the end of Pyth Core on Aptos after 2026-08-18: pushed
prices may stop, which the `no_older_than` view turns into an abort (never a stale price).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from bot.aptos.codec import json_u64

__all__ = [
    "PYTH_FEEDS",
    "PYTH_MAINNET",
    "PythPrice",
    "PythPriceError",
    "parse_pyth_price",
    "price_json",
    "price_view_function",
]

PYTH_MAINNET: Final = "0x7e783b349d3e89cf5931af376ebeadbfab855b3fa239b7ada8f5a92fbea6b387"
"""Pyth's contract on Aptos mainnet."""

PYTH_FEEDS: Final[Mapping[str, str]] = {
    "APT": "0x03ae4db29ed4ae33d323568895aa00337e658e348b37509f5372ae51f0af00d5",
    "USDC": "0xeaa020c61cc479712813461ce153894a96a6c00b21ed0cfc2798d1f9a9e9c94a",
    "USDT": "0x2b89b9dc8fdf9f34709a5b106b472f0f39bb6ca9ce04b0fd7f2e971688e2e53b",
}
"""USD feed ids by token symbol (Pyth's published ids: APT/USD, USDC/USD, USDT/USD)."""


class PythPriceError(ValueError):
    """A view answer that is not a Pyth `Price`."""


def price_view_function(contract: str) -> str:
    """The view function id that reads a price no older than a bound."""
    return f"{contract}::pyth::get_price_no_older_than_by_feed_id"


@dataclass(frozen=True)
class PythPrice:
    """One feed's price in USD, exact."""

    usd: Decimal
    confidence: Decimal
    """Pyth's uncertainty of `usd`, in USD."""
    timestamp: int
    """When the price was published (Unix seconds, by Pyth's publishers)."""


def _u64(value: object, name: str) -> int:
    return json_u64(value, name, PythPriceError)


def _i64(value: object, name: str) -> int:
    if not isinstance(value, Mapping) or not isinstance(value.get("negative"), bool):
        raise PythPriceError(f"{name} is not an I64 {{negative, magnitude}}")
    magnitude = _u64(value.get("magnitude"), f"{name}.magnitude")
    return -magnitude if value["negative"] else magnitude


def parse_pyth_price(answer: Any) -> PythPrice:
    """Read the view's answer (a one-element list holding a `Price`).

    Raises:
        PythPriceError: anything else, or a price that is not above zero.
    """
    if isinstance(answer, list) and len(answer) == 1:
        answer = answer[0]
    if not isinstance(answer, Mapping):
        raise PythPriceError("the view answer is not a Price object")
    price = _i64(answer.get("price"), "price")
    expo = _i64(answer.get("expo"), "expo")
    if not -30 <= expo <= 30:
        raise PythPriceError(f"expo {expo} is out of range")
    conf = _u64(answer.get("conf"), "conf")
    timestamp = _u64(answer.get("timestamp"), "timestamp")
    if price <= 0:
        raise PythPriceError(f"price {price} is not above zero")
    return PythPrice(
        usd=Decimal(price).scaleb(expo),
        confidence=Decimal(conf).scaleb(expo),
        timestamp=timestamp,
    )


def price_json(usd: Decimal, confidence: Decimal, timestamp: int, expo: int = -8) -> dict[str, Any]:
    """A `Price` as the view answers it (the paper node serves its prices this way)."""
    scale = Decimal(10) ** -expo
    magnitude = int((usd * scale).to_integral_value())
    return {
        "price": {"negative": magnitude < 0, "magnitude": str(abs(magnitude))},
        "conf": str(int((confidence * scale).to_integral_value())),
        "expo": {"negative": expo < 0, "magnitude": str(abs(expo))},
        "timestamp": str(timestamp),
    }
