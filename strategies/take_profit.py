"""Take profit: limit sells of a held token at targets above its average entry price.

The entry price (`quote_token` per `token`) is `entry_price` when configured, else the
average over the filled buys (`quote_token` → `token`) in `ctx.orders`. Target i sells
`fraction` of the holding (the balance plus what live sells still hold) at
`entry × (1 + percent_above / 100)`.

Targets are placed once per entry *generation* (keys `<instance>:tp:<generation>:<i>`).
When the entry moves by more than `reprice_band_percent`, the live sells are cancelled
(`<instance>:cancel:<order id>`) and the targets placed again under the next generation.

A target the user cancelled (`bot cancel`, or outside the bot) is not placed again within
its generation: the strategy says so once in its log. With `replace_cancelled = true` such
a cancel makes it place its targets again at the next tick, as after an entry move.
"""

from __future__ import annotations

from datetime import datetime
from decimal import ROUND_DOWN, Decimal, localcontext
from typing import Any, ClassVar, Final

from pydantic import Field, model_validator

from bot.engine.strategy import (
    Action,
    CancelLimit,
    Context,
    CreateLimit,
    OrderInfo,
    Period,
    Slippage,
    Strategy,
    StrategyParams,
    new_user_cancels,
    note_user_cancels,
    parse_period,
)

__all__ = ["TakeProfit", "TakeProfitParams", "Target"]

_KEPT_EMPTY: Final = "not placed again before the entry moves"
_REPLACING: Final = "placing the targets again (replace_cancelled = true)"


class Target(StrategyParams):
    """One target: sell `fraction` (0–1] of the holding `percent_above` (> 0) the entry."""

    percent_above: Decimal = Field(gt=0)
    fraction: Decimal = Field(gt=0, le=1)


class TakeProfitParams(StrategyParams):
    """Parameters of `take_profit`.

    Attributes:
        token: the held token that is sold (symbol or address), e.g. `APT`.
        quote_token: what it is sold for, e.g. `USDC`.
        targets: one or more `{percent_above, fraction}`; fractions add up to ≤ 1.
        entry_price: a fixed entry price in `quote_token` per `token` (else averaged
            from the filled buys in `ctx.orders`).
        entry_from: other strategy instances whose filled buys count as entries (the
            engine passes their orders in `ctx.orders`; see docs/strategies.md).
        reprice_band_percent: re-place the targets when the entry moves more than this.
        expiry: optional lifetime of each sell, e.g. `"30 day"`.
        amount_places: decimals kept in sell amounts (rounded down; ≤ the token's).
        slippage: optional slippage percent (0–100) or `"auto"`.
        replace_cancelled: place the targets again at the next tick when the user
            cancelled one (default false: it stays empty until the entry moves).
    """

    token: str = Field(min_length=1)
    quote_token: str = Field(min_length=1)
    targets: list[Target] = Field(min_length=1, max_length=20)
    entry_price: Decimal | None = Field(default=None, gt=0)
    entry_from: list[str] = Field(default_factory=list)
    reprice_band_percent: Decimal = Field(default=Decimal(1), gt=0)
    expiry: Period | None = None
    amount_places: int = Field(default=6, ge=0, le=18)
    slippage: Slippage | None = None
    replace_cancelled: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> TakeProfitParams:
        if self.token.lower() == self.quote_token.lower():
            raise ValueError("token and quote_token must differ")
        if sum((t.fraction for t in self.targets), Decimal(0)) > 1:
            raise ValueError("the targets' fractions add up to more than 1")
        return self


class TakeProfit(Strategy[TakeProfitParams]):
    """Limit sells at targets above the average entry, re-placed when the entry moves.

    State: the `entry`, `generation`, `holding` and `placed_at` the live targets were
    placed for, and `user_cancelled` (cancels already logged).
    """

    name: ClassVar[str] = "take_profit"

    def tokens(self) -> list[str]:
        """The held token (its balance) and what it is sold for."""
        return [self.params.token, self.params.quote_token]

    def order_sources(self) -> list[str]:
        """The strategy instances whose orders this one reads (itself and `entry_from`)."""
        return [self.instance, *self.params.entry_from]

    def entry(self, ctx: Context) -> Decimal | None:
        """The entry price: configured, or averaged from filled buys; None when unknown."""
        if self.params.entry_price is not None:
            return self.params.entry_price
        spent = received = Decimal(0)
        for order in ctx.orders:
            buys = _pair(ctx, order, self.params.quote_token, self.params.token)
            if buys and order.amount_spent and order.received:
                spent += order.amount_spent
                received += order.received
        return spent / received if received > 0 else None

    async def on_tick(self, ctx: Context) -> list[Action]:
        """Place the targets for the current entry; re-place past the band; else nothing."""
        entry = self.entry(ctx)
        if entry is None:
            ctx.log.warning("take_profit.no_entry", sources=self.order_sources())
            return []
        stored = ctx.state.get("entry")  # a Decimal once placed
        moved = abs(entry / stored - 1) * 100 if isinstance(stored, Decimal) and stored else None
        cancelled = self._user_cancelled(ctx, ctx.state.get("placed_at"))
        by_user = bool(cancelled) and self.params.replace_cancelled
        if not by_user:  # else noted once the targets are placed again
            note_user_cancels(ctx, cancelled, "take_profit.user_cancelled", hint=_KEPT_EMPTY)
        if moved is not None and moved <= self.params.reprice_band_percent and not by_user:
            return []
        live = [
            o
            for o in ctx.live_orders("limit")
            if o.strategy in (None, self.instance)  # only its own sells, never another's
            and _pair(ctx, o, self.params.token, self.params.quote_token)
        ]
        locked = sum((o.amount_total - (o.amount_spent or 0) for o in live), Decimal(0))
        balance = _balance(ctx, self.params.token)
        if balance is None:
            ctx.log.warning("take_profit.no_balance", token=self.params.token)
            return []
        holding = balance + locked
        if holding <= 0:
            ctx.log.info("take_profit.nothing_held", token=self.params.token)
            return []
        generation = int(ctx.state.get("generation") or 0)
        actions: list[Action] = []
        if isinstance(stored, Decimal):
            generation += 1
            actions += [
                CancelLimit(key=f"{self.instance}:cancel:{o.order_id}", order_id=o.order_id)
                for o in live
            ]
        ctx.save("entry", entry)
        ctx.save("generation", generation)
        ctx.save("holding", holding)
        ctx.save("placed_at", ctx.now)
        if by_user:
            note_user_cancels(ctx, cancelled, "take_profit.user_cancelled", hint=_REPLACING)
        ctx.log.info("take_profit.place", entry=str(entry), holding=str(holding))
        quantum = Decimal(1).scaleb(-self.params.amount_places)
        expiry = parse_period(self.params.expiry) if self.params.expiry is not None else None
        for i, target in enumerate(self.params.targets):
            amount = (holding * target.fraction).quantize(quantum, rounding=ROUND_DOWN)
            if amount <= 0:
                continue
            with localcontext() as decimal_ctx:
                decimal_ctx.prec = 12
                rate = entry * (1 + target.percent_above / 100)
            actions.append(
                CreateLimit(
                    key=f"{self.instance}:tp:{generation}:{i}",
                    sell=self.params.token,
                    buy=self.params.quote_token,
                    amount=amount,
                    rate=rate,
                    expiry_value=expiry[0] if expiry else None,
                    expiry_period=expiry[1] if expiry else None,
                    slippage=self.params.slippage,
                )
            )
        return actions

    def _user_cancelled(self, ctx: Context, placed_at: Any) -> list[OrderInfo]:
        """The current generation's sells the user cancelled, not noted before."""
        if not isinstance(placed_at, datetime):
            return []
        sells = [
            o
            for o in ctx.orders
            if o.kind == "limit"
            and o.strategy in (None, self.instance)
            and o.created_at >= placed_at  # placed for this generation, not an earlier one
            and _pair(ctx, o, self.params.token, self.params.quote_token)
        ]
        return new_user_cancels(ctx, self.instance, sells)


def _same(ctx: Context, a: str, b: str) -> bool:
    """Whether two token names (keys or symbols) are the same token."""
    info_a, info_b = ctx.price(a), ctx.price(b)
    if info_a is not None and info_b is not None:
        return info_a.token == info_b.token
    return a.lower() == b.lower()


def _pair(ctx: Context, order: OrderInfo, sell: str, buy: str) -> bool:
    """Whether `order` sells `sell` for `buy`."""
    return _same(ctx, order.sell, sell) and _same(ctx, order.buy, buy)


def _balance(ctx: Context, name: str) -> Decimal | None:
    """The wallet's balance of a token given by key or symbol; None when not known."""
    info = ctx.price(name)
    keys = [name, *(k for k, v in ctx.prices.items() if info is not None and v.token == info.token)]
    return next((ctx.balances[k] for k in keys if k in ctx.balances), None)
