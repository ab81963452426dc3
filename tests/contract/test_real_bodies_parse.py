"""(a) The client's models read every real body of `fixtures/`, with exact numbers.

Real bodies: Panora's published examples, token-list records, a txData a wallet received,
a mainnet transaction's payload. Forms (`*.form.json`, rebuilt from the SDK 1.3.1 types)
are read too, and marked as forms. Provenance: tests/contract/PROVENANCE.md.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from bot.api import MalformedResponse, SwapRequest
from bot.api.models import (
    PriceRecord,
    SwapResponseExactIn,
    SwapResponseExactOut,
    TxData,
)
from bot.chain.policy import ROUTER_FUNCTION
from tests.support.client_capture import capturing_client, unknown_fields
from tests.support.evidence import fixture, fixture_exact

APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
WALLET = "0x" + "5a" * 32


def _decimals_only(values: list[Any]) -> None:
    for value in values:
        assert isinstance(value, Decimal), f"{value!r} is not an exact Decimal"


async def test_the_client_reads_panoras_published_prices_example_exactly() -> None:
    client, captured = capturing_client(fixture("prices/docs_example_usdc.json"))
    async with client:
        prices = await client.get_prices([USDC])
    [usdc] = prices.records
    assert not prices.rejected and len(captured.requests) == 1
    assert (usdc.fa_address, usdc.token_address, usdc.decimals) == (USDC, None, 6)
    assert usdc.usd_price == Decimal("0.99995") and usdc.native_price == Decimal("0.18077031")
    _decimals_only([usdc.usd_price, usdc.native_price])
    assert unknown_fields(usdc) == []


@pytest.mark.parametrize(
    "name", ["tokenlist/aptos_tokens_records.json", "tokenlist/docs_example_usdc.json"]
)
def test_every_real_token_list_record_reads_as_a_token_record(name: str) -> None:
    body = fixture_exact(name)
    records = body if isinstance(body, list) else [body]
    parsed = [PriceRecord.model_validate(r, context={"prefix": "panora"}) for r in records]
    for raw, record in zip(records, parsed, strict=True):
        assert record.decimals == raw["decimals"] and isinstance(record.decimals, int)
        assert record.fa_address == raw["faAddress"]
        assert record.token_address == raw.get("tokenAddress")
        assert record.svc_ui is raw["panoraUI"]
        assert record.svc_tags == raw["panoraTags"]
        assert record.display_symbol == (raw.get("panoraSymbol") or raw["symbol"])
        if raw.get("usdPrice") is not None:
            assert record.usd_price == Decimal(raw["usdPrice"])
    assert [r.symbol for r in parsed][:1] == [records[0]["symbol"]]


def test_the_token_list_records_have_apt_and_usdc_with_their_real_decimals() -> None:
    parsed = [
        PriceRecord.model_validate(r, context={"prefix": "panora"})
        for r in fixture_exact("tokenlist/aptos_tokens_records.json")
    ]
    by_fa = {r.fa_address: r for r in parsed}
    assert (by_fa["0xa"].token_address, by_fa["0xa"].decimals) == (APT, 8)
    assert (by_fa[USDC].symbol, by_fa[USDC].decimals) == ("USDC", 6)


@pytest.mark.parametrize(
    "name",
    ["swap/okx_router_entry_txdata.json", "swap/gemwallet_mainnet_router_entry_payload.json"],
)
def test_a_real_router_entry_call_reads_as_txdata_unchanged(name: str) -> None:
    body = fixture_exact(name)
    raw = body.get("payload", body)
    tx = TxData.model_validate(raw)
    assert tx.function == str(ROUTER_FUNCTION)
    assert tx.as_json() == {k: raw[k] for k in ("function", "type_arguments", "arguments")}
    assert len(tx.arguments) == 20 and len(tx.type_arguments) == 32


async def test_the_client_reads_the_sdk_exact_in_form_with_exact_amounts() -> None:
    body = fixture("swap/sdk_1_3_1_exact_in.form.json")  # a FORM, see PROVENANCE.md
    client, _ = capturing_client(body)
    async with client:
        answer = await client.swap(SwapRequest(APT, USDC, from_amount=Decimal(1), to_wallet=WALLET))
    assert isinstance(answer, SwapResponseExactIn)
    best = answer.best
    assert (best.to_token_amount, best.min_to_token_amount) == (
        Decimal("4.990000"),
        Decimal("4.965050"),
    )
    _decimals_only([best.to_token_amount, best.min_to_token_amount, answer.from_token_amount])
    assert best.tx_data is not None and best.tx_data.as_json() == body["quotes"][0]["txData"]
    assert best.fee == Decimal("0.005000") and isinstance(best.fee, Decimal)
    fee_token = answer.fee_token_of(best)
    assert fee_token is not None and fee_token.identity == USDC  # top-level feeToken


async def test_the_client_reads_the_sdk_exact_out_form_with_exact_amounts() -> None:
    body = fixture("swap/sdk_1_3_1_exact_out.form.json")  # a FORM, see PROVENANCE.md
    client, _ = capturing_client(body)
    async with client:
        answer = await client.swap(SwapRequest(APT, USDC, to_amount=Decimal(5), to_wallet=WALLET))
    assert isinstance(answer, SwapResponseExactOut)
    assert (answer.best.from_token_amount, answer.best.max_from_token_amount) == (
        Decimal("1.00200000"),
        Decimal("1.00701000"),
    )


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("swap/sdk_1_3_1_exact_in.form.json", SwapResponseExactIn),
        ("swap/sdk_1_3_1_exact_out.form.json", SwapResponseExactOut),
    ],
)
def test_the_swap_models_know_every_field_of_the_current_sdk_form(
    name: str, model: type[SwapResponseExactIn] | type[SwapResponseExactOut]
) -> None:
    """Issue #16 item 3: top-level feeToken, token name/symbol, quotes[].feeTokenAmount(USD)."""
    parsed = model.model_validate(fixture_exact(name), context={"prefix": "panora"})
    assert unknown_fields(parsed) == []


async def test_an_empty_quotes_list_is_no_route_not_a_malformed_body() -> None:
    """Issue #16 item 5: SDK 1.3.1 reads `quotes: []` as "No routes present"."""
    body = dict(fixture("swap/sdk_1_3_1_exact_in.form.json"), quotes=[])
    client, captured = capturing_client(body)
    outcome: BaseException | None = None
    async with client:
        try:
            await client.swap(SwapRequest(APT, USDC, from_amount=Decimal(1), to_wallet=WALLET))
        except Exception as exc:  # which error it is, is the test
            outcome = exc
    assert not isinstance(outcome, MalformedResponse), f"read as malformed: {outcome}"
    assert len(captured.requests) == 1, "a no-route answer must not be retried"
