"""Dip buyer: swap into a token when its price falls past a threshold, then cool down.

Two triggers, either of which fires a buy:

* 24 h change: the buy token's `priceChange24H` (percent) is at or below −`drop_percent`;
* moving average: its USD price is `drop_percent` or more below the average of the last
  `ma_ticks` prices this strategy recorded (one per tick, kept in state; 0 turns it off).

A buy is an exact-in `Swap` of `amount` of `sell_token`. After one, no other buy happens
for `cooldown`. The key is `<instance>:dip:<bucket>`, the bucket being the tick's time in
whole cooldowns since the epoch, so a repeated tick in one window never buys twice even if
the state of the first was not saved.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, ClassVar

from pydantic import Field, model_validator

from bot.engine.strategy import (
    Action,
    Context,
    Period,
    Slippage,
    Strategy,
    StrategyParams,
    Swap,
    period_length,
    window,
)

__all__ = ["DipBuyer", "DipBuyerParams"]


class DipBuyerParams(StrategyParams):
    """Parameters of `dip_buyer`.

    Attributes:
        sell_token: what a buy pays with (symbol or address), e.g. `USDC`.
        buy_token: what it buys, e.g. `APT`; its price is watched.
        amount: how much of `sell_token` one buy spends (> 0).
        drop_percent: the fall that triggers a buy, in percent (0–100, exclusive).
        use_change_24h: trigger on the 24 h change (default true).
        ma_ticks: trigger on a fall below the average of this many recorded prices
            (0, the default, turns it off; otherwise ≥ 2).
        cooldown: the least time between two buys, e.g. `"12 hour"` (default `"1 day"`).
        slippage: optional slippage percent (0–100) or `"auto"`.
    """

    sell_token: str = Field(min_length=1)
    buy_token: str = Field(min_length=1)
    amount: Decimal = Field(gt=0)
    drop_percent: Decimal = Field(gt=0, lt=100)
    use_change_24h: bool = True
    ma_ticks: int = Field(default=0, ge=0, le=10_000)
    cooldown: Period = "1 day"
    slippage: Slippage | None = None

    @model_validator(mode="after")
    def _consistent(self) -> DipBuyerParams:
        if self.sell_token.lower() == self.buy_token.lower():
            raise ValueError("sell_token and buy_token must differ")
        if self.ma_ticks == 1:
            raise ValueError("ma_ticks must be 0 (off) or at least 2")
        if not self.use_change_24h and self.ma_ticks == 0:
            raise ValueError("turn on a trigger: use_change_24h or ma_ticks")
        return self


class DipBuyer(Strategy[DipBuyerParams]):
    """Swap when `priceChange24H` or a moving average falls past a threshold, with cooldown.

    State: `prices` (the last `ma_ticks` [time, USD price] pairs) and `last_buy` (when).
    """

    name: ClassVar[str] = "dip_buyer"

    def tokens(self) -> list[str]:
        """The tokens it pays with and watches."""
        return [self.params.sell_token, self.params.buy_token]

    async def on_tick(self, ctx: Context) -> list[Action]:
        """Record the price; buy when a trigger fires outside the cooldown."""
        info = ctx.price(self.params.buy_token)
        if info is None or info.usd is None or info.usd <= 0:
            ctx.log.warning("dip_buyer.no_price", token=self.params.buy_token)
            return []
        average = self._record(ctx, info.usd)
        drop = self.params.drop_percent
        reason = None
        if self.params.use_change_24h and info.change_24h is not None and info.change_24h <= -drop:
            reason = f"24h change {info.change_24h}%"
        elif average is not None and info.usd <= average * (1 - drop / 100):
            reason = f"price {info.usd} below the {self.params.ma_ticks}-tick average {average}"
        if reason is None:
            return []
        cooldown = period_length(self.params.cooldown)
        last = ctx.state.get("last_buy")
        if isinstance(last, datetime) and ctx.now < last + cooldown:
            ctx.log.info("dip_buyer.cooling_down", reason=reason, last_buy=last.isoformat())
            return []
        bucket = window(ctx.now, cooldown)
        ctx.save("last_buy", ctx.now)
        ctx.log.info("dip_buyer.buy", reason=reason, amount=str(self.params.amount))
        return [
            Swap(
                key=f"{self.instance}:dip:{bucket}",
                sell=self.params.sell_token,
                buy=self.params.buy_token,
                sell_amount=self.params.amount,
                slippage=self.params.slippage,
            )
        ]

    def _record(self, ctx: Context, usd: Decimal) -> Decimal | None:
        """Keep this tick's price; return the average of the earlier ones (if enough)."""
        if self.params.ma_ticks == 0:
            return None
        earlier = [p for p in _history(ctx.state.get("prices")) if p[0] != ctx.now]
        earlier = earlier[-self.params.ma_ticks :]
        kept = [*earlier, (ctx.now, usd)][-self.params.ma_ticks :]
        ctx.save("prices", [[at, price] for at, price in kept])
        if len(earlier) < self.params.ma_ticks:
            return None
        return sum((price for _, price in earlier), Decimal(0)) / len(earlier)


def _history(value: Any) -> list[tuple[datetime, Decimal]]:
    """The stored [time, price] pairs, skipping anything malformed."""
    pairs: list[tuple[datetime, Decimal]] = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, list | tuple) and len(item) == 2 and isinstance(item[0], datetime):
            pairs.append((item[0], Decimal(str(item[1]))))
    return pairs
