"""The router's judged arguments: read from the real txData, held to the bot's own intent."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from bot.aptos.abi import ModuleAbi
from bot.aptos.address import Address
from bot.aptos.codec import decode_entry_function, encode_entry_function
from bot.chain.errors import PolicyRefused
from bot.chain.intent import Intent
from bot.chain.policy import ROUTER_FUNCTION, IntentKind, SignerPolicy
from bot.chain.router_terms import RouterTerms, RouterTermsError
from harness.paper_chain import (
    SELL,
    SENDER,
    default_policy,
    load_fixture,
    router_txdata,
    swap_intent,
)

ABI = ModuleAbi.from_json(load_fixture("panora_swap_module_abi.json"))
THIRD = Address.parse("0x" + "7e" * 32)
PROVIDER_FEE_WALLET = "0xd0b17bea776bb87b70b2fb2ca631014f0ca94fc1acde4b8ff1a763f4172aa6c4"


def decoded(tx: dict[str, Any]) -> list[Any]:
    """What the signer judges: the arguments as the ABI decodes the encoded payload."""
    function = ABI.function("router_entry")
    payload = encode_entry_function(
        function, ROUTER_FUNCTION, tx["type_arguments"], tx["arguments"]
    )
    return list(decode_entry_function(payload, ABI)["arguments"])


def test_the_real_txdata_reads_as_its_terms() -> None:
    terms = RouterTerms.read(decoded(load_fixture("panora_router_entry_txdata.json")))
    assert terms.amount_in == 1_000
    assert terms.amount_out == 18_305
    assert terms.integrator_fee_word == 0
    assert terms.recipient == Address.parse(
        "0x53aed9413aa7a4aa64305191875df907b9fcf323cba8621a4fe48573dbd18a3e"
    )
    # No integrator: the provider puts its own fee wallet in argument 19.
    assert terms.integrator == Address.parse(PROVIDER_FEE_WALLET)


def test_a_real_fee_word_reads_as_percent_times_ten_thousand() -> None:
    tx = router_txdata()
    tx["arguments"][18] = "11000000000005000"  # a real 0.5% integrator fee (mainnet, 2026)
    assert RouterTerms.read(decoded(tx)).integrator_fee_e4 == 5_000


def test_split_amounts_in_are_summed() -> None:
    tx = router_txdata()
    tx["arguments"][16] = ["400", "600"]
    assert RouterTerms.read(decoded(tx)).amount_in == 1_000


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([None] * 19, "takes 20 arguments"),
        ([None] * 16 + [[], "1", "0", "0x0"], "argument 16"),
        ([None, "0x1", *[None] * 14, ["1"], "-1", "0", "0x0"], "argument 17"),
        ([None, "0x1", *[None] * 14, ["1"], str(2**64), "0", "0x0"], "argument 17"),
        ([None, "not an address", *[None] * 14, ["1"], "1", "0", "0x0"], "argument 1"),
    ],
)
def test_a_layout_it_cannot_judge_is_an_error(arguments: list[Any], message: str) -> None:
    with pytest.raises(RouterTermsError, match=message):
        RouterTerms.read(arguments)


def check(policy: SignerPolicy, tx: dict[str, Any], intent: Intent) -> None:
    policy.check_arguments(ROUTER_FUNCTION, decoded(tx), intent)


def refusal(policy: SignerPolicy, tx: dict[str, Any], intent: Intent) -> str:
    with pytest.raises(PolicyRefused) as info:
        check(policy, tx, intent)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_an_honest_exact_in_call_passes() -> None:
    check(default_policy(), router_txdata(min_out=18_400), swap_intent(min_out=18_305))


def test_exact_in_must_sell_exactly_the_intended_amount() -> None:
    for amount in (999, 1_001, 4_000):
        text = refusal(default_policy(), router_txdata(amount_in=amount), swap_intent())
        assert f"sells {amount} base units, not the intended 1000" in text


def test_the_on_chain_minimum_may_not_be_below_ours() -> None:
    text = refusal(default_policy(), router_txdata(min_out=18_304), swap_intent(min_out=18_305))
    assert "minimum out 18304 is below the bot's own minimum 18305" in text


def test_the_bought_token_goes_to_the_recipient_only() -> None:
    text = refusal(default_policy(), router_txdata(recipient=THIRD), swap_intent())
    assert f"pays {THIRD}, not the recipient {SENDER}" in text


def test_an_integrator_fee_nobody_configured_is_refused() -> None:
    tx = router_txdata()
    tx["arguments"][18], tx["arguments"][19] = "11000000000020000", str(THIRD)
    text = refusal(default_policy(), tx, swap_intent())
    assert f"integrator fee (word 11000000000020000) to {THIRD}; none is configured" in text


def test_a_configured_integrator_fee_passes_only_to_its_address_and_size() -> None:
    own = Address.parse("0x" + "0c" * 32)
    policy = default_policy(integrator=(own, 2_500))
    tx = router_txdata()
    tx["arguments"][18], tx["arguments"][19] = "11000000000002500", str(own)
    check(policy, tx, swap_intent())
    for fee, to in (("11000000000002501", own), ("11000000000002500", THIRD)):
        bad = copy.deepcopy(tx)
        bad["arguments"][18], bad["arguments"][19] = fee, str(to)
        assert "not at most 2500" in refusal(policy, bad, swap_intent())


def test_exact_out_may_sell_up_to_the_bots_maximum_and_must_buy_exactly() -> None:
    intent = swap_intent(amount_in=1_000, min_out=18_305, exact_out=True)
    check(default_policy(), router_txdata(amount_in=900, min_out=18_305), intent)
    text = refusal(default_policy(), router_txdata(amount_in=1_001, min_out=18_305), intent)
    assert "may sell 1001 base units, more than the bot's maximum 1000" in text
    text = refusal(default_policy(), router_txdata(amount_in=900, min_out=18_400), intent)
    assert "buys 18400 base units, not the intended 18305" in text


def test_the_cap_counts_the_signed_amount_of_an_exact_out_swap() -> None:

    policy = default_policy(per_tx_caps=dict.fromkeys(SELL.keys, 950))
    intent = swap_intent(amount_in=900, min_out=18_305, exact_out=True)
    check(policy, router_txdata(amount_in=900), intent)
    big = swap_intent(amount_in=1_000, min_out=18_305, exact_out=True)
    assert "over the per-transaction cap of 950" in refusal(
        policy, router_txdata(amount_in=960), big
    )


@pytest.mark.parametrize("form", ["text", "hex"])
def test_a_withdraw_must_name_the_order_it_cancels(form: str) -> None:
    order = "0x306840f85e"
    other = "0x99aa"
    policy = default_policy()
    intent = Intent(kind=IntentKind.WITHDRAW, sender=SENDER, order_id=order)
    function = ROUTER_FUNCTION  # any function: the order id is looked for in every argument
    named = order if form == "text" else "0x" + order.encode().hex()
    policy.check_arguments(function, [named], intent)
    with pytest.raises(PolicyRefused, match=f"does not name order {order}"):
        policy.check_arguments(function, [other], intent)
