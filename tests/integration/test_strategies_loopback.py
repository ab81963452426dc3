"""All five built-in strategies for three simulated days against a served paper world.

`bot paper serve` runs in a subprocess on a stepped clock with on-chain order style. The
bot side is `bot run`'s own engine and jobs (`bot.app.build.build_engine`,
`build.trading_jobs`: strategy ticks on their triggers, tracker polls, the command
queue), but on its own `SteppedClock`
started at the served world's time; the driver's `on_time` hook moves the served world to
the same moment (POST /paper/v1/advance) before the jobs due then run. Every decision a
strategy takes is recorded (context and actions) so that the checks can say whether it
acted as its parameters say.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_DOWN, Decimal, localcontext
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.app import build
from bot.app.runtime import Runtime
from bot.chain import new_key_file
from bot.clock import SteppedClock, parse_utc
from bot.config import load_settings
from bot.engine.executor import Executor
from bot.engine.reconcile import Reconciler
from bot.engine.scheduling import Driver
from bot.engine.strategy import Action, CancelLimit, Context, CreateLimit, Strategy, Swap
from bot.journal import Journal
from harness.five_strategies import five_strategies_toml
from tests.support.paper_server import PAPER_KEY, paper_serve

DAYS = 3
HEADERS = {"x-api-key": PAPER_KEY}
FINAL = {"filled", "cancelled", "expired", "refunded"}

# The docs' examples (docs/strategies.md), scaled to the funds and to a three-day run:
# DCA slices every 6 hours so that orders end and are renewed; every strategy hourly.


@dataclass
class Served:
    config: Path
    url: str
    wallet: str


@dataclass
class Seen:
    """One decision of a strategy: its context and what it returned."""

    ctx: Context
    actions: list[Action]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    key_file = tmp_path / "wallet.key"
    wallet = str(new_key_file(key_file))
    body = (
        f'[journal]\nurl = "sqlite:///{tmp_path / "bot.db"}"\n'
        f'[wallet]\nkey_file = "{key_file}"\n'
        # Loopback and a world that commits at once: no need to wait between polls.
        "[chain]\nfirst_poll_delay_seconds = 0\npoll_interval_seconds = 0.02\n"
        "[scheduler]\ntracker_interval_seconds = 600\ncommands_interval_seconds = 3600\n"
        "[paper]\n"
        'clock = "stepped"\norder_style = "onchain"\n'
        'start = "2026-03-01T00:00:00Z"\n'
        f'api_keys = ["{PAPER_KEY}"]\n'
        "rate_limit_per_second = 100000.0\nrate_limit_burst = 100000\n"
        f'funding = [{{ wallet = "{wallet}", token = "APT", amount = "400" }},'
        f' {{ wallet = "{wallet}", token = "USDC", amount = "3000" }}]\n'
    )
    config = tmp_path / "bot.toml"
    config.write_text(body)
    with paper_serve(config) as (url, _process):
        # take_profit's entry: the APT price where the run starts (the engine passes a
        # strategy only its own orders, so an averaged entry would never exist here).
        prices = httpx.get(url + "/prices", headers=HEADERS, timeout=10).json()
        apt = next(p for p in prices if p.get("symbol") == "APT")
        entry = Decimal(str(apt["usdPrice"]))
        config.write_text(
            body.replace("[paper]\n", f'[paper]\nurl = "{url}"\n')
            + five_strategies_toml(
                entry=entry,
                dca_orders=3,
                dca_interval="6 hour",
                rebalancer_schedule='{ cron = "0 * * * *" }',
            )
        )
        yield Served(config, url, wallet)


def record(strategy: Strategy, log: list[Seen]) -> None:
    """Wrap the instance's `on_tick` so every decision (and its context) is kept."""
    inner = strategy.on_tick

    async def on_tick(ctx: Context) -> list[Action]:
        actions = await inner(ctx)
        log.append(Seen(ctx, list(actions)))
        return actions

    strategy.on_tick = on_tick  # type: ignore[method-assign]


def paper_orders(url: str, wallet: str, chain_id: int) -> dict[tuple[str, str], dict[str, Any]]:
    """The paper world's orders of the wallet, over HTTP: (kind, id) → wire record."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for kind in ("dca", "limit"):
        for status in ("active", "completed"):
            response = httpx.post(
                f"{url}/{kind}/v1/getOrders",
                json={
                    "chainId": chain_id,
                    "toWalletAddress": wallet,
                    "status": status,
                    "limit": 1000,
                    "pageNumber": 1,
                },
                headers=HEADERS,
                timeout=10,
            )
            assert response.status_code == 200, response.text
            page = response.json()
            assert page["totalPages"] == 1
            for order in page["orders"]:
                found[(kind, order["panoraTxId"])] = order
    return found


def balance(ctx: Context, symbol: str) -> Decimal:
    info = ctx.price(symbol)
    assert info is not None
    return next(v for k, v in ctx.balances.items() if (p := ctx.price(k)) and p.token == info.token)


def usd(ctx: Context, symbol: str) -> Decimal:
    info = ctx.price(symbol)
    assert info is not None and info.usd is not None
    return info.usd


async def test_five_strategies_for_three_days(served: Served) -> None:
    settings = load_settings(served.config)
    status = httpx.get(served.url + "/paper/v1/status", headers=HEADERS, timeout=10).json()
    start = parse_utc(status["now"])
    end = start + timedelta(days=DAYS)
    clock = SteppedClock(start)
    seen: dict[str, list[Seen]] = {}
    live_dcas: list[int] = []

    opened = await Runtime.open(settings)
    async with opened, httpx.AsyncClient(base_url=served.url, headers=HEADERS) as admin:
        assert opened.wallet == served.wallet and opened.signer is not None
        executor = Executor(
            journal=opened.journal,
            client=opened.client,
            clock=clock,
            wallet=opened.wallet,
            tokens=opened.tokens,
            signer=opened.signer,
        )
        runtime = dataclasses.replace(opened, clock=clock, executor=executor)
        engine = build.build_engine(runtime, settings, dry_run=False)
        assert len(engine.strategies) == 5
        for name, strategy in engine.strategies.items():
            record(strategy, seen.setdefault(name, []))

        async def follow(now: datetime) -> None:
            """Move the served world to the bot's time; note its live DCAs on the way."""
            moved = await admin.post("/paper/v1/advance", json={"to": now.isoformat()})
            assert moved.status_code == 200, moved.text
            assert parse_utc(moved.json()["now"]) == now
            world = (await admin.get("/paper/v1/status")).json()
            live_dcas.append(world["liveDcaOrders"])

        await Reconciler(
            journal=runtime.journal,
            client=runtime.client,
            clock=clock,
            wallet=served.wallet,
            tokens=runtime.tokens,
            node=runtime.node,
        ).run()
        await engine.start()
        jobs = build.trading_jobs(engine, settings, runtime, dry_run=False)
        assert sorted(j.name for j in jobs) == sorted(
            [*(f"strategy:{n}" for n in engine.strategies), "tracker", "commands", "reconcile"]
        )
        runs = await Driver(clock, jobs, on_time=follow).run_until(end)
        await engine.poll_orders()  # what the last moment's actions did
        await engine.stop()
        assert runs >= DAYS * 24 * 6
        assert all(s.errors == 0 for s in engine.stats.values()), engine.stats
        chain_id = runtime.client.chain_id

    world = paper_orders(served.url, served.wallet, chain_id)
    with Journal.open(settings.journal.url, wallet=served.wallet) as journal:
        check_orders_match(journal, world)
        check_intents_settled(journal, world)
        check_recurring_dca(journal, world, seen["weekly-apt"], live_dcas)
        check_ladder(journal, world, seen["apt-ladder"])
        check_take_profit(journal, world, seen["apt-take-profit"])
        check_dip_buyer(journal, seen["apt-dips"])
        check_rebalancer(journal, seen["apt-usdc-mix"])


def check_orders_match(journal: Journal, world: dict[tuple[str, str], dict[str, Any]]) -> None:
    ours = {(o.kind, o.order_id, o.status) for o in journal.orders()}
    theirs = {(kind, order_id, o["status"]) for (kind, order_id), o in world.items()}
    assert ours == theirs
    assert {o.strategy for o in journal.orders()} >= {"weekly-apt", "apt-ladder", "apt-take-profit"}


def check_intents_settled(journal: Journal, world: dict[tuple[str, str], dict[str, Any]]) -> None:
    intents = journal.intents()
    assert intents
    for intent in intents:
        assert intent.state in ("confirmed", "failed"), (intent.idempotency_key, intent.state)
        if intent.state == "failed":
            assert intent.error, intent.idempotency_key
            # The only refusals of this run: the ladder, re-placed the moment its rungs
            # expire, cancels rungs the provider has just expired (or that filled) before
            # the tracker's next poll shows it.
            assert intent.kind == "cancel_limit", (intent.idempotency_key, intent.error)
            order = world[("limit", str(intent.action["order_id"]))]
            assert order["status"] in FINAL and "not active" in intent.error
        if intent.kind.startswith("create_") and intent.state == "confirmed":
            assert intent.order_id, intent.idempotency_key


def check_recurring_dca(
    journal: Journal,
    world: dict[tuple[str, str], dict[str, Any]],
    seen: list[Seen],
    live_dcas: list[int],
) -> None:
    name = "weekly-apt"
    assert max(live_dcas) == 1  # never two live DCAs on the paper side
    assert all(len(s.ctx.live_orders("dca")) <= 1 for s in seen)
    for s in seen:  # a DCA is asked for only when none is live
        assert not s.actions or not s.ctx.live_orders("dca")
    intents = journal.intents(strategy=name)
    keys = [i.idempotency_key for i in intents]
    assert keys == [f"{name}:dca:{g}" for g in range(len(keys))]  # one per generation
    assert len(intents) >= 4  # 3 slices 6 h apart: an order ends about twice a day
    orders = {o.order_id: o for o in journal.orders(strategy=name, kind="dca")}
    assert len(orders) == len(intents)
    for previous, current in pairwise(intents):
        assert previous.order_id is not None
        before = orders[previous.order_id]
        assert before.status in FINAL, before.status
        ended = [
            t.observed_at
            for t in journal.transitions("dca", before.order_id)
            if t.to_status in FINAL
        ]
        # Renewed only after the previous order was seen final, and promptly.
        assert ended and ended[0] <= current.created_at <= ended[0] + timedelta(hours=1)
    for intent in intents:
        assert intent.order_id is not None
        wire = world[("dca", intent.order_id)]
        assert Decimal(wire["fromTokenAmountPerOrder"]) == Decimal(25)
        assert wire["numberOfOrdersTotal"] == 3
        assert wire["interval"] == {"value": "6", "timePeriod": "hour"}
        assert Decimal(wire["minRateToTokenPerFromToken"]) == Decimal("0.08")
        assert Decimal(wire["maxRateToTokenPerFromToken"]) == Decimal("0.25")


def check_ladder(
    journal: Journal, world: dict[tuple[str, str], dict[str, Any]], seen: list[Seen]
) -> None:
    name = "apt-ladder"
    spacing, rungs = Decimal(2), 5
    anchors: dict[int, Decimal] = {}
    placed: dict[int, datetime] = {}
    previous: Seen | None = None
    for s in seen:
        creates = [a for a in s.actions if isinstance(a, CreateLimit)]
        if creates:
            generation = s.ctx.saved["generation"]
            anchors[generation] = s.ctx.saved["anchor"]
            placed[generation] = s.ctx.now
            assert len(creates) == rungs
            if previous is not None:  # re-placed: drift past the band, or expired
                anchor = previous.ctx.saved["anchor"]
                price = usd(s.ctx, "APT") / usd(s.ctx, "USDC")
                drift = abs(price - anchor) / anchor * 100
                assert drift > 5 or s.ctx.now >= placed[generation - 1] + timedelta(days=1)
                live = {o.order_id for o in s.ctx.live_orders("limit")}
                cancelled = {a.order_id for a in s.actions if isinstance(a, CancelLimit)}
                assert cancelled == live  # the old rungs go first
            previous = s
        else:
            assert not s.actions
    assert anchors and sorted(anchors) == list(range(len(anchors)))
    generation = journal.get_state(name, "generation")
    assert journal.get_state(name, "anchor") == anchors[generation]
    assert len(anchors) >= DAYS  # expiry alone re-places it every day
    for intent in journal.intents(strategy=name):
        if intent.kind != "create_limit":
            continue
        _, _, g, k = intent.idempotency_key.split(":")
        with localcontext() as decimal_ctx:  # docs: 1 / (anchor × (1 − k × spacing)), 12 digits
            decimal_ctx.prec = 12
            rate = Decimal(1) / (anchors[int(g)] * (1 - int(k) * spacing / 100))
        assert Decimal(str(intent.action["rate"])) == rate
        if intent.order_id is not None:
            wire = world[("limit", intent.order_id)]
            assert Decimal(wire["rateToTokenPerFromToken"]) == rate
            assert Decimal(wire["fromTokenAmount"]) == Decimal(40)
            assert wire["fromToken"]["symbol"] == "USDC" and wire["toToken"]["symbol"] == "APT"


def check_take_profit(
    journal: Journal, world: dict[tuple[str, str], dict[str, Any]], seen: list[Seen]
) -> None:
    name = "apt-take-profit"
    entry = journal.get_state(name, "entry")
    holding = journal.get_state(name, "holding")
    assert isinstance(entry, Decimal) and isinstance(holding, Decimal) and holding > 0
    placing = [s for s in seen if s.actions]
    assert len(placing) == 1  # a fixed entry: the targets are placed once
    creates = placing[0].actions
    assert all(isinstance(a, CreateLimit) for a in creates) and len(creates) == 2
    for (percent, fraction), intent in zip(
        [(Decimal(20), Decimal("0.5")), (Decimal(50), Decimal("0.25"))],
        journal.intents(strategy=name),
        strict=True,
    ):
        with localcontext() as decimal_ctx:
            decimal_ctx.prec = 12
            rate = entry * (1 + percent / 100)
        amount = (holding * fraction).quantize(Decimal("0.000001"), rounding=ROUND_DOWN)
        assert intent.state == "confirmed" and intent.order_id is not None
        wire = world[("limit", intent.order_id)]
        assert Decimal(wire["rateToTokenPerFromToken"]) == rate
        assert Decimal(wire["fromTokenAmount"]) == amount
        assert wire["fromToken"]["symbol"] == "APT" and wire["toToken"]["symbol"] == "USDC"


def check_dip_buyer(journal: Journal, seen: list[Seen]) -> None:
    """Swapped only after a qualifying drop, never twice within the cooldown."""
    drop, window = Decimal(8), 24
    history: list[Decimal] = []
    last_buy: datetime | None = None
    for s in seen:
        info = s.ctx.price("APT")
        assert info is not None and info.usd is not None
        earlier = history[-window:]
        average = sum(earlier, Decimal(0)) / len(earlier) if len(earlier) == window else None
        history.append(info.usd)
        change = info.change_24h
        dipped = (change is not None and change <= -drop) or (
            average is not None and info.usd <= average * (1 - drop / 100)
        )
        cooling = last_buy is not None and s.ctx.now < last_buy + timedelta(hours=12)
        if dipped and not cooling:
            assert [type(a) for a in s.actions] == [Swap]
            last_buy = s.ctx.now
        else:
            assert s.actions == []
    swaps = journal.intents(strategy="apt-dips")
    assert len(swaps) == sum(1 for s in seen if s.actions)


def check_rebalancer(journal: Journal, seen: list[Seen]) -> None:
    """A swap only outside the band, from the most over- into the most underweight token."""
    weights = {"APT": Decimal("0.6"), "USDC": Decimal("0.4")}
    windows = set()
    for s in seen:
        values = {t: balance(s.ctx, t) * usd(s.ctx, t) for t in weights}
        total = sum(values.values(), Decimal(0))
        drift = {t: values[t] / total - w for t, w in weights.items()}
        outside = max(abs(d) for d in drift.values()) * 100 > 5
        trade_usd = min(max(drift.values()), -min(drift.values())) * total
        if outside and trade_usd >= 20:
            [swap] = s.actions
            assert isinstance(swap, Swap)
            assert swap.sell == max(drift, key=drift.__getitem__)
            assert swap.buy == min(drift, key=drift.__getitem__)
            windows.add(swap.key)
        else:
            assert s.actions == []
    intents = journal.intents(strategy="apt-usdc-mix")
    assert intents, "60/40 from a 40/60 start: the first tick must swap"
    assert {i.idempotency_key for i in intents} == windows
    for intent in intents:  # one swap per cooldown window, in the window it names
        window = int(intent.created_at.timestamp() // timedelta(hours=6).total_seconds())
        assert intent.idempotency_key == f"apt-usdc-mix:rebalance:{window}"
