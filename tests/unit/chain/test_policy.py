from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from bot.aptos.address import Address, FunctionId
from bot.aptos.tokens import Token, TokenBook
from bot.chain.errors import ConfigurationError, PolicyRefused
from bot.chain.policy import ROUTER_FUNCTION, Intent, IntentKind, SignerPolicy
from bot.chain.records import BalanceChange, SimulationResult
from bot.config import ChainSettings, RiskSettings
from harness.paper_chain import (
    APT,
    APT_TOKEN,
    BUY,
    OTHER,
    SELL,
    SENDER,
    default_policy,
    router_txdata,
    swap_intent,
)

ESCROW = Address.parse("0x" + "e5" * 32)
POOL = Address.parse("0x" + "99" * 32)

S, B = SELL.fa_address or "", BUY.fa_address or ""
GAS = 1_000 * 100


def sim(
    *changes: tuple[Address, str, int], gas_used: int = 1_000, price: int = 100
) -> SimulationResult:
    return SimulationResult(
        success=True,
        vm_status="Executed successfully",
        gas_used=gas_used,
        gas_unit_price=price,
        events=(),
        changes=(),
        balance_changes=tuple(BalanceChange(a, t, d) for a, t, d in changes),
    )


def good_swap(out: int = 18_500, to: Address = SENDER) -> SimulationResult:
    return sim(
        (SENDER, S, -1_000),
        (POOL, S, 1_000),
        (POOL, B, -out),
        (to, B, out),
    )


def refused(call: Any, *args: Any, **kwargs: Any) -> PolicyRefused:
    with pytest.raises(PolicyRefused) as info:
        call(*args, **kwargs)
    text = str(info.value)
    assert "\n" not in text
    return info.value


# --- before signing ---------------------------------------------------------------------


def test_router_call_passes() -> None:
    assert default_policy().check_call(router_txdata(), swap_intent()) == ROUTER_FUNCTION


@pytest.mark.parametrize(
    "function",
    [
        "0x1::aptos_account::transfer",
        "0x1::coin::transfer",
        f"{ROUTER_FUNCTION.address}::panora_swap::swap_exact_in_entry",
        f"{ROUTER_FUNCTION.address}::other_module::router_entry",
        "0x2::panora_swap::router_entry",
    ],
)
def test_allowlist_refusal_names_function_and_fix(function: str) -> None:
    data = {**router_txdata(), "function": function}
    error = refused(default_policy().check_call, data, swap_intent())
    canonical = str(FunctionId.parse(function))
    assert error.function == canonical
    assert canonical in str(error)
    assert f'add "{canonical}" to [chain].allowed_functions' in str(error)


def test_function_id_spellings_compare_canonically() -> None:
    long_form = "0x" + "0" * 63 + "1::aptos_account::transfer"
    policy = default_policy(
        allowed_functions=frozenset({FunctionId.parse("0x1::aptos_account::transfer")})
    )
    intent = Intent(kind=IntentKind.WITHDRAW, sender=SENDER)
    assert policy.check_call({"function": long_form}, intent) == FunctionId.parse(long_form)


def test_malformed_function_refused() -> None:
    refused(default_policy().check_call, {"function": "transfer"}, swap_intent())
    refused(default_policy().check_call, {}, swap_intent())


def test_per_transaction_cap_counts_fees() -> None:
    policy = default_policy(per_tx_caps={S: 1_050})
    policy.check_call(router_txdata(), swap_intent(fee_amount=50))
    error = refused(policy.check_call, router_txdata(), swap_intent(fee_amount=51))
    assert "1051" in str(error) and "1050" in str(error)
    assert "[risk].per_transaction_caps" in str(error)


@pytest.mark.parametrize(
    ("kwargs", "ok"),
    [
        ({"slippage_percent": Decimal("5")}, True),
        ({"slippage_percent": Decimal("5.1")}, False),
        ({"expected_out": 19_268}, True),  # 18305 is 4.998% below
        ({"expected_out": 19_300}, False),  # 5.16% below
    ],
)
def test_max_slippage(kwargs: dict[str, Any], ok: bool) -> None:
    policy = default_policy()
    if ok:
        policy.check_call(router_txdata(), swap_intent(**kwargs))
    else:
        assert "[risk].max_slippage_percent" in str(
            refused(policy.check_call, router_txdata(), swap_intent(**kwargs))
        )


def test_swap_needs_a_minimum_and_two_tokens() -> None:
    policy = default_policy()
    refused(policy.check_call, router_txdata(), swap_intent(min_out=0))
    refused(policy.check_call, router_txdata(), swap_intent(buy=SELL))


def test_allowed_tokens() -> None:
    policy = default_policy(allowed_tokens=frozenset({S}))
    error = refused(policy.check_call, router_txdata(), swap_intent())
    assert "CELL" in str(error) and "[risk].allowed_tokens" in str(error)


def test_from_settings_resolves_caps_in_human_units() -> None:
    book = TokenBook([SELL, BUY, APT_TOKEN])
    risk = RiskSettings(
        per_transaction_caps={"USDt": Decimal("2.5"), "APT": Decimal("0.000000019")},
        max_slippage_percent=Decimal("0.5"),
        max_gas_amount=50_000,
        allowed_tokens=["USDt", "CELL"],
    )
    policy = SignerPolicy.from_settings(
        ChainSettings(chain_id=4), risk, book, extra_functions=["0x1::aptos_account::transfer"]
    )
    assert policy.chain_id == 4
    assert policy.per_tx_caps[S] == 2_500_000
    assert policy.per_tx_caps[APT] == policy.per_tx_caps["0xa"] == 1  # floor: 1.9 → 1
    assert policy.max_gas_amount == 50_000
    assert policy.max_slippage_percent == Decimal("0.5")
    assert policy.allowed_functions == {
        ROUTER_FUNCTION,
        FunctionId.parse("0x1::aptos_account::transfer"),
    }
    assert policy.allowed_tokens == {S, B}
    with pytest.raises(ConfigurationError, match="per_transaction_caps"):
        SignerPolicy.from_settings(
            ChainSettings(), RiskSettings(per_transaction_caps={"NOPE": Decimal(1)}), book
        )


# --- on the simulation ------------------------------------------------------------------


def test_good_swap_effects_pass() -> None:
    default_policy().check_effects(good_swap(), swap_intent())


def test_recipient_other_than_sender() -> None:
    intent = swap_intent(recipient=OTHER)
    default_policy().check_effects(good_swap(to=OTHER), intent)


def test_pays_someone_else() -> None:
    error = refused(default_policy().check_effects, good_swap(to=OTHER), swap_intent())
    assert str(OTHER) in str(error) and "not to the recipient" in str(error)


def test_sells_more_than_intended() -> None:
    effects = good_swap()
    changes = (BalanceChange(SENDER, S, -1_001), *effects.balance_changes[1:])  # type: ignore[index]
    bad = SimulationResult(True, "ok", 1_000, 100, (), (), changes)
    error = refused(default_policy().check_effects, bad, swap_intent())
    assert "1001" in str(error)
    # …unless the quoted fee covers it.
    default_policy().check_effects(bad, swap_intent(fee_amount=1))


def test_gains_less_than_minimum() -> None:
    error = refused(default_policy().check_effects, good_swap(out=18_304), swap_intent())
    assert "18304" in str(error) and "18305" in str(error)


def test_touches_a_third_token() -> None:
    third = "0x" + "77" * 32
    bad = sim(
        *[(c.account, c.asset, c.delta) for c in good_swap().balance_changes or ()],
        (SENDER, third, -5),
    )
    assert third in str(refused(default_policy().check_effects, bad, swap_intent()))
    gained = sim(
        *[(c.account, c.asset, c.delta) for c in good_swap().balance_changes or ()],
        (SENDER, third, 5),
    )
    refused(default_policy().check_effects, gained, swap_intent())


GAS_INCLUDED = default_policy(gas_in_balance_changes=True)


def test_apt_may_not_fall_when_gas_is_reported_apart() -> None:
    default_policy().check_effects(good_swap(), swap_intent())
    bad = sim((SENDER, S, -1_000), (SENDER, B, 18_500), (SENDER, APT, -1))
    assert "beyond gas" in str(refused(default_policy().check_effects, bad, swap_intent()))


def test_gas_folded_into_the_apt_delta_when_the_node_does_so() -> None:
    ok = sim((SENDER, S, -1_000), (SENDER, B, 18_500), (SENDER, APT, -GAS))
    GAS_INCLUDED.check_effects(ok, swap_intent())
    refused(default_policy().check_effects, ok, swap_intent())
    bad = sim((SENDER, S, -1_000), (SENDER, B, 18_500), (SENDER, APT, -GAS - 1))
    refused(GAS_INCLUDED.check_effects, bad, swap_intent())


def test_selling_apt() -> None:
    intent = swap_intent(sell=APT_TOKEN, amount_in=10_000)
    default_policy().check_effects(sim((SENDER, "0xa", -10_000), (SENDER, B, 18_500)), intent)
    refused(
        default_policy().check_effects, sim((SENDER, "0xa", -10_001), (SENDER, B, 18_500)), intent
    )
    GAS_INCLUDED.check_effects(sim((SENDER, APT, -10_000 - GAS), (SENDER, B, 18_500)), intent)
    refused(GAS_INCLUDED.check_effects, sim((SENDER, APT, -10_001 - GAS), (SENDER, B, 1)), intent)


def test_buying_apt() -> None:
    intent = swap_intent(buy=APT_TOKEN, min_out=18_305)
    default_policy().check_effects(sim((SENDER, S, -1_000), (SENDER, APT, 18_305)), intent)
    refused(default_policy().check_effects, sim((SENDER, S, -1_000), (SENDER, APT, 18_304)), intent)
    GAS_INCLUDED.check_effects(sim((SENDER, S, -1_000), (SENDER, APT, 18_305 - GAS)), intent)
    refused(
        GAS_INCLUDED.check_effects, sim((SENDER, S, -1_000), (SENDER, APT, 18_304 - GAS)), intent
    )


def test_a_small_transfer_is_not_mistaken_for_gas() -> None:
    # Regression: an APT transfer smaller than the gas fee, judged as a swap buying APT.
    intent = swap_intent(buy=APT_TOKEN, min_out=1)
    transfer = sim((SENDER, APT, -1_000), (OTHER, APT, 1_000), gas_used=24)
    refused(default_policy().check_effects, transfer, intent)


def test_deposit_only_into_escrow() -> None:
    intent = Intent(
        kind=IntentKind.DEPOSIT, sender=SENDER, sell=SELL, sell_amount=500, escrow=ESCROW
    )
    default_policy().check_effects(sim((SENDER, S, -500), (ESCROW, S, 500)), intent)
    error = refused(
        default_policy().check_effects,
        sim((SENDER, S, -500), (OTHER, S, 500)),
        intent,
    )
    assert str(ESCROW) in str(error)
    refused(default_policy().check_effects, sim((SENDER, S, -501), (ESCROW, S, 501)), intent)


def test_withdraw_may_only_gain() -> None:
    intent = Intent(kind=IntentKind.WITHDRAW, sender=SENDER)
    default_policy().check_effects(sim((SENDER, S, 400), (SENDER, B, 3)), intent)
    refused(default_policy().check_effects, sim((SENDER, S, -1)), intent)
    refused(default_policy().check_effects, sim((SENDER, APT, -1)), intent)


def test_intent_validates_amounts() -> None:
    with pytest.raises(ValueError, match="base units"):
        Intent(kind=IntentKind.SWAP, sender=SENDER, sell_amount=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Intent(kind=IntentKind.SWAP, sender=SENDER, min_out=-1)
    assert swap_intent().summary()["sell_amount"] == "1000"
    assert Token(decimals=0, symbol="X", fa_address="0x5").keys == ("0x5",)
