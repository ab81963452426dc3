from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from bot.api.models import DcaOrder, LimitOrder
from bot.api.units import order_record_to_human

USDC = {"address": "0xbae2", "symbol": "USDC", "decimals": 6}
APT = {"address": "0xa", "symbol": "APT", "decimals": 8}


def base_record() -> dict[str, Any]:
    # 100 USDC in 4 orders of 25; one order bought 3.125 APT (rate 0.125 APT per USDC).
    return {
        "panoraTxId": "dca-1",
        "fromToken": dict(USDC),
        "toToken": dict(APT),
        "feeToken": dict(USDC),
        "status": "active",
        "fromTokenAmountTotal": "100000000",
        "fromTokenAmountSpent": "25000000",
        "fromTokenAmountBalance": "75000000",
        "fromTokenAmountWithdrawn": "0",
        "fromTokenAmountPerOrder": "25000000",
        "toTokenAmountWithdrawn": "312500000",
        # base rate: 312500000 / 25000000 = 12.5 base APT per base USDC
        "avgPriceToTokenPerFromToken": "12.5",
        "avgPriceFromTokenPerToToken": "0.08",
        "minRateToTokenPerFromToken": "10",
        "maxRateToTokenPerFromToken": "Infinity",
        "slippagePercentage": "0.5",
        "txDetails": [
            {
                "txId": "0x1",
                "txNumber": 1,
                "type": "filled",
                "fromTokenAmount": "25000000",
                "fromTokenAmountUSD": "25",
                "toTokenAmount": "312500000",
                "feeTokenAmount": "10000",
                "priceToTokenPerFromToken": "12.5",
                "priceFromTokenPerToToken": "0.08",
            }
        ],
    }


def test_amounts_scaled_by_each_tokens_decimals() -> None:
    human = order_record_to_human(base_record())
    assert human["fromTokenAmountTotal"] == "100"
    assert human["fromTokenAmountSpent"] == "25"
    assert human["fromTokenAmountBalance"] == "75"
    assert human["fromTokenAmountWithdrawn"] == "0"
    assert human["fromTokenAmountPerOrder"] == "25"
    assert human["toTokenAmountWithdrawn"] == "3.125"


def test_rates_scaled_by_decimal_difference() -> None:
    human = order_record_to_human(base_record())
    # to-per-from: base x 10^(6 - 8); from-per-to: base x 10^(8 - 6)
    assert human["avgPriceToTokenPerFromToken"] == "0.125"
    assert human["minRateToTokenPerFromToken"] == "0.1"
    assert human["avgPriceFromTokenPerToToken"] == "8"


def test_non_amount_fields_untouched() -> None:
    human = order_record_to_human(base_record())
    assert human["maxRateToTokenPerFromToken"] == "Infinity"
    assert human["slippagePercentage"] == "0.5"
    assert human["txDetails"][0]["fromTokenAmountUSD"] == "25"


def test_tx_details_rescaled() -> None:
    detail = order_record_to_human(base_record())["txDetails"][0]
    assert detail["fromTokenAmount"] == "25"
    assert detail["toTokenAmount"] == "3.125"
    assert detail["feeTokenAmount"] == "0.01"
    assert detail["priceToTokenPerFromToken"] == "0.125"
    assert detail["priceFromTokenPerToToken"] == "8"


def test_input_record_not_mutated() -> None:
    record = base_record()
    before = copy.deepcopy(record)
    order_record_to_human(record)
    assert record == before


def test_rescaled_record_parses_to_exact_human_order() -> None:
    order = DcaOrder.model_validate(order_record_to_human(base_record()))
    assert order.from_token_amount_total == Decimal(100)
    assert order.to_token_amount_withdrawn == Decimal("3.125")
    assert order.avg_price_to_token_per_from_token == Decimal("0.125")
    max_rate = order.max_rate_to_token_per_from_token
    assert max_rate is not None and max_rate.is_infinite()


def test_limit_record_amount_and_rate() -> None:
    record = {
        "panoraTxId": "lim-1",
        "fromToken": dict(APT),
        "toToken": dict(USDC),
        "status": "active",
        "fromTokenAmount": "150000000",
        # 8 USDC per APT in base units: 8e6 / 1e8 = 0.08
        "rateToTokenPerFromToken": "0.08",
    }
    human = order_record_to_human(record)
    assert human["fromTokenAmount"] == "1.5"
    assert human["rateToTokenPerFromToken"] == "8"
    order = LimitOrder.model_validate(human)
    assert order.rate_to_token_per_from_token == Decimal(8)


def test_record_without_decimals_unchanged() -> None:
    record = base_record()
    del record["toToken"]["decimals"]
    assert order_record_to_human(record) == base_record() | {"toToken": record["toToken"]}
    record["fromToken"]["decimals"] = "6"  # text, not a number: unknown
    assert order_record_to_human(record)["fromTokenAmountTotal"] == "100000000"


def test_fee_without_decimals_left_as_is() -> None:
    record = base_record()
    del record["feeToken"]
    detail = order_record_to_human(record)["txDetails"][0]
    assert detail["feeTokenAmount"] == "10000"
    assert detail["fromTokenAmount"] == "25"
