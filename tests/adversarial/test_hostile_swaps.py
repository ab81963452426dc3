"""A provider that lies cannot rob the wallet: each attack class, refused before signing.

The paper world answers honestly; a tampering proxy in front of it rewrites the answers the
way a hostile, hacked or buggy provider could — and keeps the quoted amounts consistent
with the forged transaction, so nothing in the answer itself gives the lie away. The bot's
own numbers (the action, its reference price, `[risk]`) must. Each refusal is journaled
with its reason, nothing is signed, and money is conserved for the wallet and every third
party (the paper ledger is the truth).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.config import RiskSettings
from bot.engine.actions import CancelLimit, CreateLimit, Swap
from bot.engine.executor import ExecutionResult
from tests.support.json_strategies import RawJson
from tests.support.tampering import THIEF, WALLET, HostileRig, hostile_rig

APT_CAP = Decimal(5)
RISK = RiskSettings(max_slippage_percent=Decimal(1), per_transaction_caps={"APT": APT_CAP})


def scaled(text: Any, factor: Decimal) -> str:
    """A human amount (decimal string or RawJson number) times `factor`, exact."""
    return str(Decimal(str(text)) * factor)


def scaled_units(text: Any, factor: Decimal) -> str:
    """A base-unit amount (decimal string) times `factor`, rounded down to a whole unit."""
    return str(int(Decimal(str(text)) * factor))


def quote_edit(change: Callable[[dict[str, Any], list[Any], dict[str, Any]], None]) -> Any:
    """An edit of `/swap`'s answer: `change(answer, txData arguments, best quote)`."""

    def edit(body: dict[str, Any]) -> dict[str, Any]:
        quote = body["quotes"][0]
        change(body, quote["txData"]["arguments"], quote)
        return body

    return edit


def integrator_fee_to_a_third_party(body: Any, args: list[Any], quote: Any) -> None:
    # 2% to a third address (router arguments 18-19), the quote scaled to agree with it.
    args[18], args[19] = "11000000000020000", THIEF
    args[17] = scaled_units(args[17], Decimal("0.98"))
    for name in ("toTokenAmount", "minToTokenAmount"):
        quote[name] = RawJson(scaled(quote[name], Decimal("0.98")))


def scaled_quote_amounts(body: Any, args: list[Any], quote: Any) -> None:
    # Sells 4 APT instead of 1, and every amount in the answer says so.
    body["fromTokenAmount"] = RawJson(scaled(body["fromTokenAmount"], Decimal(4)))
    args[16] = [scaled_units(a, Decimal(4)) for a in args[16]]
    args[17] = scaled_units(args[17], Decimal(4))
    for name in ("toTokenAmount", "minToTokenAmount"):
        quote[name] = RawJson(scaled(quote[name], Decimal(4)))


def sold_amount_times_four(body: Any, args: list[Any], quote: Any) -> None:
    args[16] = [scaled_units(a, Decimal(4)) for a in args[16]]


def fee_added_to_the_route(body: Any, args: list[Any], quote: Any) -> None:
    # A fee of 0.1 APT "on top": the route sells 1.1 APT and the answer shows the fee.
    quote["feeAmount"] = RawJson("0.1")
    args[16] = [str(int(args[16][0]) + 10_000_000)]


def no_minimum_on_chain(body: Any, args: list[Any], quote: Any) -> None:
    args[17] = "0"
    quote["minToTokenAmount"] = RawJson("0")


def a_worse_route_told_consistently(body: Any, args: list[Any], quote: Any) -> None:
    for name in ("toTokenAmount", "minToTokenAmount"):
        quote[name] = RawJson(scaled(quote[name], Decimal("0.9")))
    args[17] = scaled_units(args[17], Decimal("0.9"))


def pays_a_third_party(body: Any, args: list[Any], quote: Any) -> None:
    args[1] = THIEF


ATTACKS = [
    (integrator_fee_to_a_third_party, f"integrator fee (word 11000000000020000) to {THIEF}"),
    (scaled_quote_amounts, "the quote is +298.60% off the reference price"),
    (sold_amount_times_four, "sells 400000000 base units, not the intended 100000000"),
    (fee_added_to_the_route, "sells 110000000 base units, not the intended 100000000"),
    (no_minimum_on_chain, "minimum out 0 is below the bot's own minimum"),
    (a_worse_route_told_consistently, "off the reference price (provider /prices feed)"),
    (pays_a_third_party, f"pays {THIEF}, not the recipient {WALLET}"),
]


def assert_refused(r: HostileRig, result: ExecutionResult, reason: str) -> None:
    """Failed with `reason`, journaled so, nothing signed, nothing moved for anyone."""
    assert result.state == "failed", result
    intent = r.journal.intent(result.intent_id)
    assert intent is not None and intent.error is not None
    assert intent.error.startswith("refused before signing: "), intent.error
    assert reason in intent.error, intent.error
    assert [s.state for s in r.journal.intent_history(result.intent_id)] == [
        "planned",
        "sent",
        "failed",
    ]
    assert r.journal.transactions() == []
    assert r.world.chain.submitted == 0
    assert_conserved(r)


def assert_conserved(r: HostileRig) -> None:
    """The wallet and every third party hold what they held at the snapshot."""
    for account, before in r.start_balances.items():
        assert r.balances(account) == before, account


@pytest.mark.parametrize(("attack", "reason"), ATTACKS, ids=[a.__name__ for a, _ in ATTACKS])
async def test_a_lying_swap_answer_is_refused_and_nothing_moves(
    tmp_path: Path, attack: Any, reason: str
) -> None:
    async with hostile_rig(tmp_path, risk=RISK) as r:
        r.snapshot(WALLET, THIEF)
        r.proxy.edits["/swap"] = quote_edit(attack)
        result = await r.executor.execute(
            "s1", Swap(key="sw-1", sell="APT", buy="USDC", sell_amount=Decimal(1))
        )
        assert_refused(r, result, reason)


async def test_an_honest_answer_still_trades_within_the_bots_own_bounds(tmp_path: Path) -> None:
    async with hostile_rig(tmp_path, risk=RISK) as r:
        r.snapshot(WALLET)
        result = await r.executor.execute(
            "s1", Swap(key="sw-1", sell="APT", buy="USDC", sell_amount=Decimal(1))
        )
        assert result.state == "confirmed", result.detail
        apt, usdc = (r.world.market.tokens.find(s).address for s in ("APT", "USDC"))
        after, before = r.balances(WALLET), r.start_balances[WALLET]
        gas = before[apt] - after[apt] - r.units("APT")  # exactly the action's amount, and gas
        assert 0 < gas <= RISK.max_gas_amount * 100
        [tx] = r.journal.transactions(intent_id=result.intent_id)
        assert '"min_out"' in tx.payload_summary
        assert after[usdc] - before[usdc] > 0


async def usd_price(r: HostileRig, symbol: str) -> Decimal:
    listing = await r.client.get_prices([r.world.market.tokens.find(symbol).address])
    [record] = listing.records
    assert record.usd_price is not None
    return record.usd_price


async def test_exact_out_sells_at_most_the_bots_own_maximum(tmp_path: Path) -> None:
    async with hostile_rig(tmp_path, risk=RISK) as r:
        r.snapshot(WALLET)
        apt_usd = await usd_price(r, "APT")
        buy = (2 * apt_usd).quantize(Decimal("0.01"))  # about 2 APT of USDC: under the cap
        result = await r.executor.execute(
            "s1", Swap(key="out-1", sell="APT", buy="USDC", buy_amount=buy)
        )
        assert result.state == "confirmed", result.detail
        apt, usdc = (r.world.market.tokens.find(s).address for s in ("APT", "USDC"))
        after, before = r.balances(WALLET), r.start_balances[WALLET]
        assert after[usdc] - before[usdc] == int(buy * r.units("USDC"))
        sold = before[apt] - after[apt] - RISK.max_gas_amount * 100  # at least, gas aside
        assert sold <= Decimal("2.04") * r.units("APT")  # reference + 3% + 1% at most


async def test_exact_out_near_the_cap_is_refused_by_what_would_be_signed(tmp_path: Path) -> None:
    async with hostile_rig(tmp_path, risk=RISK) as r:
        r.snapshot(WALLET, THIEF)
        apt_usd = await usd_price(r, "APT")
        # 4.9 APT of USDC: the quote alone would pass a 5 APT cap, the bot's maximum
        # (reference + 4%) does not.
        buy = (Decimal("4.9") * apt_usd).quantize(Decimal("0.01"))
        result = await r.executor.execute(
            "s1", Swap(key="out-2", sell="APT", buy="USDC", buy_amount=buy)
        )
        assert_refused(r, result, "over the per-transaction cap of 500000000")


async def test_exact_out_selling_more_than_the_bots_maximum_is_refused(tmp_path: Path) -> None:
    async with hostile_rig(tmp_path, risk=RISK) as r:
        r.snapshot(WALLET, THIEF)
        r.proxy.edits["/swap"] = quote_edit(sold_amount_times_four)
        apt_usd = await usd_price(r, "APT")
        buy = apt_usd.quantize(Decimal("0.01"))
        result = await r.executor.execute(
            "s1", Swap(key="out-3", sell="APT", buy="USDC", buy_amount=buy)
        )
        assert_refused(r, result, "more than the bot's maximum")


async def test_a_cancel_that_withdraws_another_order_is_refused(tmp_path: Path) -> None:
    async with hostile_rig(tmp_path, risk=RISK) as r:
        orders = []
        for key in ("a", "b"):
            created = await r.executor.execute(
                "s1",
                CreateLimit(
                    key=f"l-{key}", sell="APT", buy="USDC", amount=Decimal(1), rate=Decimal(1000)
                ),
            )
            assert created.state == "confirmed" and created.order_id, created.detail
            orders.append(created.order_id)
        mine, other = orders
        r.snapshot(WALLET, THIEF)
        submitted = r.world.chain.submitted

        def withdraw_other(body: dict[str, Any]) -> dict[str, Any]:
            body["txData"]["arguments"][0] = other
            return body

        r.proxy.edits["/limit/v1/cancelOrder"] = withdraw_other
        result = await r.executor.execute("s1", CancelLimit(key="c-a", order_id=mine))
        assert result.state == "failed"
        intent = r.journal.intent(result.intent_id)
        assert intent is not None and intent.error is not None
        assert f"does not name order {mine}" in intent.error
        assert r.world.chain.submitted == submitted  # nothing signed
        assert {r.world.market.limit.get(o).status for o in orders} == {"active"}
        assert_conserved(r)


def prices_lie_about(symbol: str, factor: Decimal, r: HostileRig) -> Any:
    """An edit of `/prices`: one token's USD price times `factor`."""
    keys = set(r.world.market.tokens.find(symbol).keys)

    def edit(body: Any) -> Any:
        for record in body if isinstance(body, list) else []:
            if {record.get("tokenAddress"), record.get("faAddress")} & keys:
                record["usdPrice"] = RawJson(scaled(record["usdPrice"], factor))
        return body

    return edit


@pytest.mark.parametrize("reference", ["provider", "pyth"])
async def test_a_provider_lying_in_prices_and_quote_alike_is_caught_only_on_chain(
    tmp_path: Path, reference: str
) -> None:
    """USDC "worth" 10% more on /prices, and a route 9% short that agrees with it.

    The provider's own feed cannot see it (the trust model says so, and doctor warns); the
    independent on-chain reference refuses it.
    """
    risk = RISK.model_copy(update={"reference": reference})
    async with hostile_rig(tmp_path, risk=risk) as r:
        r.snapshot(WALLET, THIEF)
        r.proxy.edits["/prices"] = prices_lie_about("USDC", Decimal("1.1"), r)
        r.proxy.edits["/swap"] = quote_edit(a_worse_route_by(Decimal(1) / Decimal("1.1")))
        result = await r.executor.execute(
            "s1", Swap(key="sw-1", sell="APT", buy="USDC", sell_amount=Decimal(1))
        )
        if reference == "provider":
            assert result.state == "confirmed", result.detail  # the feed's blind spot
        else:
            assert_refused(r, result, "off the reference price (Pyth on-chain prices)")


def a_worse_route_by(factor: Decimal) -> Callable[[Any, list[Any], Any], None]:
    def change(body: Any, args: list[Any], quote: Any) -> None:
        for name in ("toTokenAmount", "minToTokenAmount"):
            quote[name] = RawJson(scaled(quote[name], factor))
        args[17] = scaled_units(args[17], factor)

    return change
