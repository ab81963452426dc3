"""rebalancer: quiet inside the band; outside, one swap the right way and size."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest
from pydantic import ValidationError

from bot.engine.strategy import Swap
from strategies.rebalancer import Rebalancer
from tests.unit.strategies.support import APT, NOW, USDC, WETH, Ticker, build, market

PARAMS = {"weights": {"APT": "0.5", "USDC": "0.5"}, "band_percent": "5", "min_trade": "10"}
WINDOW = int(NOW.timestamp() // 3600)


def ticker(**extra: object) -> Ticker:
    return Ticker(build(Rebalancer, "mix", **{**PARAMS, **extra}))


async def test_nothing_inside_the_band() -> None:
    # APT 100 USD, USDC 105 USD: 48.8 % / 51.2 %.
    assert await ticker().tick(balances={APT: "10", USDC: "105"}) == []


async def test_sells_the_overweight_token() -> None:
    actions = await ticker().tick(balances={APT: "15", USDC: "50"})
    # 150 + 50 = 200 USD; APT is 25 points over: sell 50 USD of APT = 5 APT.
    assert actions == [
        Swap(key=f"mix:rebalance:{WINDOW}", sell="APT", buy="USDC", sell_amount=Decimal(5))
    ]


async def test_buys_the_underweight_token() -> None:
    (swap,) = await ticker().tick(balances={APT: "5", USDC: "150"})
    assert isinstance(swap, Swap)
    assert (swap.sell, swap.buy, swap.sell_amount) == ("USDC", "APT", Decimal(50))


async def test_never_more_than_the_underweight_token_lacks() -> None:
    weights = {"APT": "0.4", "USDC": "0.3", "WETH": "0.3"}
    t = ticker(weights=weights)
    # APT 60 %, USDC 25 %, WETH 15 % of 200 USD: APT 40 USD over, WETH 30 USD under.
    balances = {APT: "12", USDC: "50", WETH: "0.01"}
    (swap,) = await t.tick(prices=market(weth="3000"), balances=balances)
    assert isinstance(swap, Swap)
    assert (swap.sell, swap.buy, swap.sell_amount) == ("APT", "WETH", Decimal(3))


async def test_skips_trades_below_the_minimum() -> None:
    t = ticker(min_trade="100")
    assert await t.tick(balances={APT: "15", USDC: "50"}) == []
    assert t.log().events() == ["rebalancer.too_small"]


async def test_values_an_unpriced_token_through_the_hub() -> None:
    async def quote(sell: str, buy: str, amount: Decimal) -> Decimal | None:
        assert (sell, buy) == ("APT", "USDC")
        return amount * 10

    t = ticker()
    (swap,) = await t.tick(prices=market(apt=None), balances={APT: "15", USDC: "50"}, quote=quote)
    assert isinstance(swap, Swap)
    assert swap.sell_amount == Decimal(5)


def test_weights_must_add_up_to_one() -> None:
    with pytest.raises(ValidationError, match="add up to 1"):
        Rebalancer.Params.model_validate({**PARAMS, "weights": {"APT": "0.5", "USDC": "0.4"}})


async def test_an_unknown_balance_is_not_zero() -> None:
    t = ticker()
    assert await t.tick(balances={APT: "15"}) == []
    assert t.log().events("warning") == ["rebalancer.no_balance"]


async def test_finds_balances_under_any_key_of_the_token() -> None:
    # The engine keys prices by coin type and FA address; balances by one of them.
    coin = "0x1::aptos_coin::AptosCoin"
    prices = market()
    prices[coin] = prices[APT] = replace(prices[APT], token=coin)
    (swap,) = await ticker().tick(prices=prices, balances={coin: "15", USDC: "50"})
    assert isinstance(swap, Swap)
    assert (swap.sell, swap.sell_amount) == ("APT", Decimal(5))
