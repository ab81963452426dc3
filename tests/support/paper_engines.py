"""Test support for the order engines: a hand-made oracle, tokens, a world and a driver."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal, localcontext

from bot.aptos.tokens import Token
from bot.paper.core.dca import DCA_SLICE, DcaEngine
from bot.paper.core.events import EventQueue
from bot.paper.core.ledger import Ledger
from bot.paper.core.limit import LIMIT_EXPIRY, LimitEngine
from bot.paper.core.orders import OrderIds
from bot.paper.core.pools import PoolBook, PoolSettings
from bot.paper.core.swaps import FeeSettings

T0 = datetime(2025, 1, 1, tzinfo=UTC)
APT = Token(decimals=8, symbol="APT", coin_type="0x1::aptos_coin::AptosCoin")
USDC = Token(decimals=6, symbol="USDC", fa_address="0x" + "ab" * 32)
ALICE = "0x" + "a1" * 32
BOB = "0x" + "b0" * 32
KEEPER = "fees:keeper"


class StepOracle:
    """Piecewise-constant USD prices: `{token: [(since, price), ...]}`."""

    def __init__(self, points: dict[str, list[tuple[datetime, Decimal]]]) -> None:
        self._times: dict[str, list[datetime]] = {}
        self._prices: dict[str, list[Decimal]] = {}
        for token, series in points.items():
            ordered = sorted(series)
            self._times[token] = [t for t, _ in ordered]
            self._prices[token] = [p for _, p in ordered]

    def _index(self, token: str, at: datetime) -> int:
        index = bisect_right(self._times[token], at) - 1
        if index < 0:
            raise LookupError(f"no price for {token} at {at}")
        return index

    def usd(self, token: str, at: datetime) -> Decimal:
        return self._prices[token][self._index(token, at)]

    def step_start(self, token: str, at: datetime) -> datetime | None:
        index = bisect_right(self._times[token], at) - 1
        return self._times[token][index] if index >= 0 else None

    def change_points(self) -> list[datetime]:
        return sorted({t for times in self._times.values() for t in times})

    def first_ratio_at_least(
        self, num: str, den: str, threshold: Decimal, after: datetime, until: datetime
    ) -> datetime | None:
        points = sorted({t for t in self._times[num] + self._times[den] if after < t <= until})
        for t in points:
            with localcontext() as ctx:
                ctx.prec = 80
                if self.usd(num, t) >= threshold * self.usd(den, t):
                    return t
        return None


def minutes(n: int) -> timedelta:
    return timedelta(minutes=n)


def apt(amount: str) -> int:
    return int(Decimal(amount).scaleb(APT.decimals))


def usdc(amount: str) -> int:
    return int(Decimal(amount).scaleb(USDC.decimals))


@dataclass
class World:
    """Ledger, pools, queue and both engines over one oracle, plus a time driver."""

    oracle: StepOracle
    depth_usd: Decimal = Decimal("2000000")
    keeper_bps: int = 5
    platform_bps: int = 10
    now: datetime = T0
    ledger: Ledger = field(default_factory=Ledger)
    events: EventQueue = field(default_factory=EventQueue)

    def __post_init__(self) -> None:
        self.pools = PoolBook(self.oracle, PoolSettings(depth_usd=self.depth_usd))
        self.fees = FeeSettings(platform_fee_bps=self.platform_bps)
        ids = OrderIds("test")
        args = (self.ledger, self.pools, self.fees, self.events, self.oracle, ids)
        self.dca = DcaEngine(*args, keeper_fee_bps=self.keeper_bps, keeper_account=KEEPER)
        self.limit = LimitEngine(*args, keeper_fee_bps=self.keeper_bps, keeper_account=KEEPER)

    def advance(self, until: datetime) -> None:
        """Jump from event to event and limit crossing to crossing up to `until`.

        Mirrors the market facade's `advance_to`.
        """
        while True:
            times = [self.events.peek_time(), self.limit.next_crossing(self.now, until)]
            due = [t for t in times if t is not None and t <= until]
            if not due:
                break
            self._step(max(self.now, min(due)))
        self.now = until
        self.limit.fill_due(until)

    def advance_by_minute(self, until: datetime) -> None:
        """`advance` one minute at a time (the slow reference driver)."""
        while self.now < until:
            self.advance(min(self.now + minutes(1), until))

    def _step(self, t: datetime) -> None:
        while (event := self.events.pop_due(t)) is not None:
            if event.kind == DCA_SLICE:
                self.dca.process(event, t)
            elif event.kind == LIMIT_EXPIRY:
                self.limit.process(event, t)
            else:
                raise AssertionError(event.kind)
        self.limit.fill_due(t)
        self.now = t

    def check_money(self, wallets: list[str]) -> None:
        """Conservation, per account kind, and every order's escrow equals its balance."""
        self.ledger.check_conservation()
        orders = [o for w in wallets for o in self.dca.orders_of(w)] + [
            o for w in wallets for o in self.limit.orders_of(w)
        ]
        escrows = {o.escrow for o in orders}
        for token in (APT, USDC):
            key = token.address
            parts = [self.ledger.balance(w, key) for w in wallets]
            parts += [self.ledger.balance(e, key) for e in escrows]
            parts += [self.ledger.balance(a, key) for a in (KEEPER, self.fees.platform_account)]
            parts.append(self.ledger.balance("market", key))
            assert sum(parts) == self.ledger.minted(key)
        for order in orders:
            assert order.balance >= 0
            assert self.ledger.balance(order.escrow, order.sell.address) == order.balance
            assert self.ledger.balance(order.escrow, order.buy.address) == 0
