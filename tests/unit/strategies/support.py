"""Hand-built `Context`s for strategy tests, and a ticker that carries state between ticks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from bot.engine.strategy import Action, Context, OrderInfo, PriceInfo, QuoteFn, Strategy

APT = "0xa"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
WETH = "0xweth"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
_SYMBOLS = {APT: "APT", USDC: "USDC", WETH: "WETH"}


class Log:
    """A logger stand-in recording `(level, event, fields)`."""

    def __init__(self) -> None:
        self.records: list[tuple[str, str, dict[str, Any]]] = []

    def __getattr__(self, level: str) -> Any:
        def record(event: str, **fields: Any) -> None:
            self.records.append((level, event, fields))

        return record

    def events(self, level: str | None = None) -> list[str]:
        return [e for lvl, e, _ in self.records if level is None or lvl == level]


def market(
    apt: str | None = "10",
    usdc: str | None = "1",
    *,
    apt_change: str | None = None,
    weth: str | None = None,
) -> dict[str, PriceInfo]:
    """Prices keyed by token address, as the engine builds them (symbols resolve too)."""
    table = {APT: (apt, apt_change), USDC: (usdc, None), WETH: (weth, None)}
    return {
        token: PriceInfo(
            token,
            _SYMBOLS[token],
            Decimal(usd) if usd is not None else None,
            Decimal(change) if change is not None else None,
        )
        for token, (usd, change) in table.items()
    }


def order(
    order_id: str = "o1",
    *,
    kind: str = "dca",
    status: str = "active",
    sell: str = USDC,
    buy: str = APT,
    total: str = "100",
    spent: str | None = None,
    received: str | None = None,
    rate: str | None = None,
    at: datetime = NOW,
) -> OrderInfo:
    """One of the strategy's orders as the journal would report it."""
    return OrderInfo(
        kind=kind,
        order_id=order_id,
        status=status,
        sell=sell,
        buy=buy,
        amount_total=Decimal(total),
        amount_spent=Decimal(spent) if spent is not None else None,
        received=Decimal(received) if received is not None else None,
        rate=Decimal(rate) if rate is not None else None,
        created_at=at,
    )


def context(
    strategy: str = "test",
    *,
    now: datetime = NOW,
    prices: Mapping[str, PriceInfo] | None = None,
    balances: Mapping[str, Decimal | str] | None = None,
    orders: Sequence[OrderInfo] = (),
    state: Mapping[str, Any] | None = None,
    quote: QuoteFn | None = None,
    intents: Mapping[str, str] | None = None,
) -> Context:
    """A frozen tick snapshot built by hand (`intents`: the strategy's key → state)."""
    return Context(
        strategy=strategy,
        now=now,
        prices=prices if prices is not None else market(),
        balances={k: Decimal(v) for k, v in (balances or {}).items()},
        orders=list(orders),
        state=dict(state or {}),
        log=Log(),
        quote=quote,
        intents=dict(intents or {}),
    )


@dataclass
class Ticker:
    """Runs a strategy tick after tick, carrying its saved state like the engine does.

    Each returned action is then an intent of its key, `confirmed` (as when the engine
    carried it out), unless the tick is given its own `intents`.
    """

    strategy: Strategy
    state: dict[str, Any] = field(default_factory=dict)
    last: Context | None = None
    intents: dict[str, str] = field(default_factory=dict)

    async def tick(self, **kwargs: Any) -> list[Action]:
        kwargs.setdefault("intents", dict(self.intents))
        ctx = context(self.strategy.instance, state=self.state, **kwargs)
        actions = await self.strategy.on_tick(ctx)
        self.state.update(ctx.saved)
        self.last = ctx
        for action in actions:
            self.intents.setdefault(action.key, "confirmed")
        return actions

    def log(self) -> Log:
        assert self.last is not None
        log: Log = self.last.log
        return log


def build(cls: type[Strategy], instance: str = "test", **params: Any) -> Strategy:
    """A strategy instance with params validated as from config."""
    return cls(instance, cls.Params.model_validate(params))
