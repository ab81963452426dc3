"""The accounting of a paper run against the paper world's own ledger, to the base unit.

All five built-in strategies run for three simulated days through the bot's engine, the
live broker, the executor, the signer and the order tracker, against an in-process paper
world on a stepped clock (on-chain order style: createOrder, then a signed deposit; a
cancel is a signed withdraw; swaps are signed router calls). The price path is scripted
so that every strategy trades: a 40/60 start the rebalancer swaps out of, a 12 % drop
(the dip buyer swaps, the ladder's rungs fill and it re-places them, cancelling the
rest), then a rise past take-profit's first target; the DCA buys throughout.

The report's figures — `bot.accounting.from_journal.journal_records` and `by_strategy`,
what `bot report` accounts through — are then held against the world's side, which
the bot never reads: per strategy, each order's `spent` / `received` / `fees_paid` in
the paper engines, each committed router call's `SwapEvent` (`amount_in`, `amount_out`),
and every committed transaction's gas (`min(gas_used, max_gas_amount) × gas_unit_price`,
as the paper chain charges it). Invested and received per token, keeper fees and gas
must match to the base unit, and the wallet's ledger balance must be exactly its funding
− invested + received − what is still escrowed − gas: no flow is left out.
"""

from __future__ import annotations

import tomllib
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import partial
from pathlib import Path

from bot.accounting import FeeKind, by_strategy
from bot.accounting.from_journal import journal_records
from bot.accounting.prices import PriceBook, PricePoint
from bot.chain import Signer, TxOutcome
from bot.chain.settings import SignerSettings
from bot.config import RiskSettings, StrategyEntry
from bot.engine.actions import Swap
from bot.engine.brokers import LiveBroker
from bot.engine.executor import Executor
from bot.engine.live_ports import live_engine
from bot.engine.plugins import build_strategy
from bot.engine.reconcile import Reconciler
from bot.engine.recorder import JournalRecorder
from bot.engine.risk import RiskChecker
from bot.engine.scheduling import Driver, Job, make_trigger
from bot.engine.tracker import OrderTracker
from bot.journal import Journal
from bot.money import to_base_units
from bot.paper.world import PaperWorld
from harness.five_strategies import five_strategies_toml
from harness.paper_signing import fixed_key
from tests.support.paper_rig import no_wait, paper_rig

KEY = fixed_key("accounting-ledger")
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
START = datetime(2026, 5, 1, tzinfo=UTC)
DAYS = 3
STEP = timedelta(minutes=5)
FUNDS = {"USDC": Decimal(3000), "APT": Decimal(400)}
RISK = RiskSettings(max_slippage_percent=Decimal(5), max_open_orders=50)

Sums = dict[str, Counter[str]]
"""strategy → token → base units."""


def apt_price(moment: datetime) -> Decimal:
    """The scripted APT price (USD): flat, a 12 % drop, a hold, a rise past +20 %."""
    hours = Decimal((moment - START) // timedelta(minutes=5)) / 12
    wiggle = Decimal((int(hours * 12) * 7919) % 21 - 10) / 10_000  # ±0.1 %, deterministic
    if hours < 30:
        base = Decimal(5)
    elif hours < 33:
        base = Decimal(5) - Decimal("0.6") * (hours - 30) / 3
    elif hours < 40:
        base = Decimal("4.4")
    elif hours < 52:
        base = Decimal("4.4") + Decimal("1.9") * (hours - 40) / 12
    else:
        base = Decimal("6.3")
    return (base * (1 + wiggle)).quantize(Decimal("0.00000001"))


def write_prices(path: Path) -> Path:
    lines = ["timestamp,token,usdPrice"]
    moment = START
    while moment <= START + timedelta(days=DAYS):
        stamp = moment.isoformat().replace("+00:00", "Z")
        lines.append(f"{stamp},{APT},{apt_price(moment)}")
        if moment == START:
            lines.append(f"{stamp},{USDC},1")
        moment += STEP
    path.write_text("\n".join(lines) + "\n")
    return path


def strategy_entries() -> list[StrategyEntry]:
    """The five built-in strategies as the docs configure them (harness/five_strategies)."""
    text = five_strategies_toml(entry=Decimal(5), dca_orders=3, dca_interval="6 hour")
    return [StrategyEntry(**entry) for entry in tomllib.loads(text)["strategies"]]


async def test_the_report_matches_the_paper_ledger_to_the_base_unit(tmp_path: Path) -> None:
    prices = write_prices(tmp_path / "prices.csv")
    entries = strategy_entries()
    assert sorted(e.plugin for e in entries) == [
        "dip_buyer",
        "limit_ladder",
        "rebalancer",
        "recurring_dca",
        "take_profit",
    ]
    end = START + timedelta(days=DAYS)
    async with paper_rig(
        tmp_path, KEY, funds=FUNDS, prices_file=prices, start=START.isoformat()
    ) as rig:
        book = rig.world.market.tokens.book
        clock = rig.clock
        engine = live_engine(
            client=rig.client,
            journal=rig.journal,
            clock=clock,
            wallet=rig.wallet,
            tokens=book,
            broker=LiveBroker(rig.executor),
            risk=RiskChecker(RiskSettings(**RISK.model_dump()), rig.journal, book),
            strategies=[build_strategy(e) for e in entries],
            node=rig.node,
            tracker=OrderTracker(rig.client, rig.journal, clock, rig.wallet),
            timeout_seconds=30,
        )
        hourly = entries[0].schedule
        jobs = [Job("tracker", make_trigger(hourly, START), engine.poll_orders)] + [
            Job(e.name, make_trigger(e.schedule, START), partial(engine.tick, e.name))
            for e in entries
        ]
        await engine.start()
        await Driver(clock, jobs).run_until(end)
        rig.world.market.advance_to(end)
        await engine.poll_orders()  # every fill up to `end` journaled
        assert all(s.errors == 0 for s in engine.stats.values()), engine.stats
        decimals = {t.address: t.decimals for t in book}

        records = journal_records(rig.journal, book=_book(prices))
        assert records.gas_unknown == []
        summaries = by_strategy(records.trades, _book(prices), valued_at=end, gas=records.gas)
        ledger = world_ledger(rig.world, rig.journal, rig.wallet)

        traded = {name for name, s in summaries.items() if s.totals.trades}
        assert traded == {e.name for e in entries}, "every strategy must have traded"
        swaps = rig.journal.swap_fills()
        assert {s.strategy for s in swaps} == {"apt-dips", "apt-usdc-mix"}
        assert all(s.source == "chain" for s in swaps)
        confirmed_swaps = [
            i for i in rig.journal.intents() if i.kind == "swap" and i.state == "confirmed"
        ]
        assert sorted(s.intent_id for s in swaps) == sorted(i.id for i in confirmed_swaps)
        kinds = {c.label for c in records.gas}
        assert {"create_dca", "create_limit", "cancel_limit"} <= kinds  # create/cancel gas

        for name, summary in summaries.items():
            totals = summary.totals
            assert _units(totals.invested, decimals) == ledger.invested[name], name
            assert _units(totals.received, decimals) == ledger.received[name], name
            keeper = totals.fees.get(FeeKind.KEEPER, {})
            assert _units(keeper, decimals) == ledger.keeper_fees[name], name
            assert set(totals.fees) <= {FeeKind.KEEPER}, name
            assert totals.gas_octas == ledger.gas[name], name
        assert sum(s.totals.gas_octas for s in summaries.values()) == sum(ledger.gas.values())

        # The wallet's balance is the report's flows, the escrow and the gas: nothing else.
        funding = {
            book.find(symbol).address: to_base_units(amount, book.find(symbol).decimals)
            for symbol, amount in FUNDS.items()
        }
        invested = sum((_units(s.totals.invested, decimals) for s in summaries.values()), Counter())
        received = sum((_units(s.totals.received, decimals) for s in summaries.values()), Counter())
        gas = sum(s.totals.gas_octas for s in summaries.values())
        market = rig.world.market
        for token in sorted({*funding, *invested, *received}):
            expected = (
                funding.get(token, 0)
                - invested[token]
                + received[token]
                - ledger.escrowed[token]
                - (gas if token == APT else 0)
            )
            assert market.ledger.balance(rig.wallet, token) == expected, token


class Ledger:
    """The world's side, by strategy: what left and reached the wallet, fees, gas."""

    def __init__(self) -> None:
        self.invested: Sums = defaultdict(Counter)
        self.received: Sums = defaultdict(Counter)
        self.keeper_fees: Sums = defaultdict(Counter)
        self.gas: Counter[str] = Counter()
        self.escrowed: Counter[str] = Counter()


def world_ledger(world: PaperWorld, journal: Journal, wallet: str) -> Ledger:
    """Read the paper world's engines and chain; the journal only names the strategies."""
    ledger = Ledger()
    market = world.market
    for kind, engine in (("dca", market.dca), ("limit", market.limit)):
        for order in engine.orders_of(wallet):
            row = journal.order(kind, order.order_id)
            assert row is not None and row.strategy, order.order_id
            assert order.owner == order.recipient == wallet
            filled = [d for d in order.details if d.type == "filled"]
            assert order.spent == sum(d.from_amount for d in filled), order.order_id
            ledger.invested[row.strategy][order.sell.address] += order.spent
            ledger.received[row.strategy][order.buy.address] += order.received
            if order.fees_paid:
                ledger.keeper_fees[row.strategy][order.sell.address] += order.fees_paid
            ledger.escrowed[order.sell.address] += order.balance
    for record in world.chain.transactions():
        if record.sender != wallet or record.effects is None:
            continue
        tx = journal.transaction(record.hash)
        assert tx is not None and tx.intent_id is not None, record.hash
        intent = journal.intent(tx.intent_id)
        assert intent is not None
        raw = record.signed.transaction
        ledger.gas[intent.strategy] += (
            min(record.effects.gas_used, raw.max_gas_amount) * raw.gas_unit_price
        )
        for event in record.effects.events if record.effects.success else []:
            if str(event.get("type", "")).endswith("::SwapEvent"):
                data = event["data"]
                assert data["recipient"] == wallet
                ledger.invested[intent.strategy][data["from_token"]] += int(data["amount_in"])
                ledger.received[intent.strategy][data["to_token"]] += int(data["amount_out"])
    return ledger


def _units(amounts: dict[str, Decimal], decimals: dict[str, int]) -> Counter[str]:
    """Human amounts → base units (exact: a digit past the token's decimals fails)."""
    return Counter({t: to_base_units(a, decimals[t]) for t, a in amounts.items() if a})


def _book(prices: Path) -> PriceBook:
    """The scripted prices as a price book (values gas; no figure compared depends on it)."""
    points: dict[str, list[PricePoint]] = defaultdict(list)
    for line in prices.read_text().splitlines()[1:]:
        stamp, token, usd = line.split(",")
        points[token].append(PricePoint(datetime.fromisoformat(stamp), Decimal(usd)))
    return PriceBook.of_points(points)


class _DiesAfterSubmit(JournalRecorder):
    """The process dies once the bytes are out: the outcome is never journaled."""

    async def on_outcome(self, tx_hash: str, outcome: TxOutcome) -> None:
        raise RuntimeError("killed after submitting")


async def test_a_swap_confirmed_by_the_reconciler_gets_its_fill_from_the_chain(
    tmp_path: Path,
) -> None:
    async with paper_rig(tmp_path, KEY, funds=FUNDS) as rig:
        signer = Signer(
            rig.node,
            KEY,
            rig.signer.policy,
            _DiesAfterSubmit(rig.journal, rig.clock),
            sleep=no_wait,
            settings=SignerSettings(poll_interval_seconds=0, first_poll_delay_seconds=0),
        )
        executor = Executor(
            journal=rig.journal,
            client=rig.client,
            clock=rig.clock,
            wallet=rig.wallet,
            tokens=rig.world.market.tokens.book,
            signer=signer,
        )
        exact_out = await executor.execute(
            "s", Swap(key="out", sell="USDC", buy="APT", buy_amount=Decimal(3))
        )
        exact_in = await executor.execute(
            "s", Swap(key="in", sell="APT", buy="USDC", sell_amount=Decimal("2.5"))
        )
        assert (exact_out.state, exact_in.state) == ("unknown", "unknown")
        assert rig.journal.swap_fills() == []
        [pending_out] = rig.journal.transactions(intent_id=exact_out.intent_id)
        assert pending_out.gas_unit_price is None and pending_out.balance_changes is None

        settled = await Reconciler(
            journal=rig.journal,
            client=rig.client,
            clock=rig.clock,
            wallet=rig.wallet,
            tokens=rig.world.market.tokens.book,
            node=rig.node,
        ).run(in_flight=False)
        assert sorted(r.state for r in settled) == ["confirmed", "confirmed"]

        fills = {f.intent_id: f for f in rig.journal.swap_fills()}
        assert set(fills) == {exact_out.intent_id, exact_in.intent_id}
        for intent_id, fill in fills.items():
            assert fill.source == "chain"
            [tx] = rig.journal.transactions(intent_id=intent_id)
            record = rig.world.chain.transaction(tx.hash)
            assert record is not None and record.effects is not None
            [event] = [e for e in record.effects.events if e["type"].endswith("::SwapEvent")]
            sold = rig.world.market.tokens.book.get(fill.sold_token)
            bought = rig.world.market.tokens.book.get(fill.bought_token)
            assert sold is not None and bought is not None
            assert (event["data"]["from_token"], event["data"]["to_token"]) == (
                fill.sold_token,
                fill.bought_token,
            )
            assert to_base_units(fill.sold_amount, sold.decimals) == int(event["data"]["amount_in"])
            assert to_base_units(fill.bought_amount, bought.decimals) == int(
                event["data"]["amount_out"]
            )
            raw = record.signed.transaction
            assert tx.gas_unit_price == raw.gas_unit_price
            assert tx.gas_fee == min(record.effects.gas_used, raw.max_gas_amount) * (
                raw.gas_unit_price
            )
            assert tx.committed_at == record.committed_at
        assert fills[exact_out.intent_id].bought_amount == Decimal(3)  # ExactOut: exact
        assert fills[exact_in.intent_id].sold_amount == Decimal("2.5")  # ExactIn: exact
