"""Alert sources: which daemon observations become alerts, and which repeats are held back."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from bot.aptos.tokens import Token, TokenBook
from bot.config import AlertSettings, RiskSettings
from bot.engine.actions import CreateDca, Swap
from bot.engine.brokers import ActionOutcome
from bot.engine.engine import TickReport
from bot.engine.events import (
    FillsRecorded,
    OrderCancelled,
    OrderCreated,
    OrderExpired,
    OrderFilled,
    OrderPartiallyFilled,
    event_for_change,
)
from bot.engine.risk import RiskChecker, RiskRefusal
from bot.journal import Journal, OrderSnapshot
from bot.ops.alert_sources import AlertSources
from tests.support.alerts import START, FakeAlerter

WALLET = "0x" + "ab" * 32
APT = Token(8, "APT", coin_type="0x1::aptos_coin::AptosCoin")
USDC = Token(6, "USDC", fa_address="0x" + "bae" + "0" * 61)
ORDER_ID = "0xab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12"


@pytest.fixture
def alerter() -> FakeAlerter:
    return FakeAlerter()


@pytest.fixture
def sources(alerter: FakeAlerter) -> AlertSources:
    return AlertSources(alerter, AlertSettings(low_apt_for_gas=Decimal("0.2"), no_poll_minutes=15))


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal.open(f"sqlite:///{tmp_path / 'journal.db'}") as j:
        yield j


def swap(amount: str = "10") -> Swap:
    return Swap(key="k1", sell="USDC", buy="APT", sell_amount=Decimal(amount))


def dca() -> CreateDca:
    return CreateDca(
        key="d1",
        sell="USDC",
        buy="APT",
        amount=Decimal(100),
        orders=10,
        interval_value=1,
        interval_period="day",
    )


# --- order events -------------------------------------------------------------------------


def test_filled_expired_and_cancelled_orders_alert_with_a_short_id(
    sources: AlertSources, alerter: FakeAlerter
) -> None:
    sources.on_order_event(OrderFilled("dca", ORDER_ID, "active", "filled"))
    sources.on_order_event(OrderExpired("limit", ORDER_ID, "active", "expired"))
    sources.on_order_event(OrderCancelled("dca", "42", "active", "cancelled"))
    assert alerter.kinds() == ["order_filled", "order_expired", "order_cancelled"]
    filled, expired, cancelled = alerter.emitted
    assert filled.text == "DCA order 0xab12cd34… filled"
    assert filled.fields == {"order_kind": "dca", "order_id": ORDER_ID}
    assert expired.text == "Limit order 0xab12cd34… expired"
    assert cancelled.text == "DCA order 42 cancelled"


def test_other_order_events_are_not_alerts(sources: AlertSources, alerter: FakeAlerter) -> None:
    sources.on_order_event(OrderCreated("dca", ORDER_ID, None, "active"))
    sources.on_order_event(OrderPartiallyFilled("dca", ORDER_ID, "active", "partially_filled"))
    sources.on_order_event(FillsRecorded("dca", ORDER_ID, 2))
    assert alerter.emitted == []


def test_an_order_alert_names_the_strategy_and_amounts_from_the_journal(
    alerter: FakeAlerter, journal: Journal
) -> None:
    snapshot = OrderSnapshot(
        kind="dca",
        order_id=ORDER_ID,
        wallet=WALLET,
        from_token=USDC.address,
        to_token=APT.address,
        status="active",
        amount_total=Decimal("100.50"),
        strategy="weekly-apt",
    )
    journal.upsert_order(snapshot, observed_at=START, source="poll")
    filled = OrderSnapshot(
        **{
            **snapshot.__dict__,
            "status": "filled",
            "amount_spent": Decimal("100.50"),
            "to_amount_received": Decimal("12.3400"),
        }
    )
    change = journal.upsert_order(filled, observed_at=START + timedelta(hours=1), source="poll")
    sources = AlertSources(alerter, AlertSettings(), orders=journal)
    for event in event_for_change("dca", change):
        sources.on_order_event(event)
    [alert] = alerter.emitted
    assert alert.text == "DCA order 0xab12cd34… of weekly-apt filled"
    assert alert.fields["strategy"] == "weekly-apt"
    assert alert.fields["amount_spent"] == Decimal("100.50")
    assert alert.fields["to_amount_received"] == Decimal("12.3400")


def test_no_lookup_and_no_alert_for_a_kind_the_user_did_not_choose(journal: Journal) -> None:
    alerter = FakeAlerter(wanted={"order_expired"})
    sources = AlertSources(alerter, AlertSettings(), orders=journal)
    sources.on_order_event(OrderFilled("dca", ORDER_ID, "active", "filled"))
    assert alerter.emitted == []


# --- tick reports -------------------------------------------------------------------------


def test_a_failing_strategy_alerts_once_until_it_recovers_or_an_hour_passes(
    sources: AlertSources, alerter: FakeAlerter
) -> None:
    failing = TickReport("dca-1", ok=False, error="RuntimeError: boom")
    sources.on_tick_report(failing)
    alerter.clock.advance(timedelta(minutes=1))
    sources.on_tick_report(failing)  # same error, a minute later: held back
    assert alerter.kinds() == ["strategy_error"]
    assert alerter.emitted[0].text == "Strategy dca-1 failed: RuntimeError: boom"
    assert alerter.emitted[0].fields == {"strategy": "dca-1", "error": "RuntimeError: boom"}

    sources.on_tick_report(TickReport("dca-1", ok=False, error="timed out"))  # a new error
    assert len(alerter.emitted) == 2
    alerter.clock.advance(timedelta(hours=1))
    sources.on_tick_report(TickReport("dca-1", ok=False, error="timed out"))  # an hour on
    assert len(alerter.emitted) == 3
    sources.on_tick_report(TickReport("dca-1", ok=True))
    sources.on_tick_report(TickReport("dca-1", ok=False, error="timed out"))  # after recovery
    assert len(alerter.emitted) == 4
    sources.on_tick_report(TickReport("other", ok=False, error="timed out"))  # per strategy
    assert len(alerter.emitted) == 5


def test_a_failed_transaction_alerts_with_its_detail(
    sources: AlertSources, alerter: FakeAlerter
) -> None:
    report = TickReport(
        "dip",
        ok=True,
        outcomes=[
            (swap(), ActionOutcome("failed", tx_hash="0xfeed", detail="simulation: E_SLIPPAGE")),
            (swap("20"), ActionOutcome("confirmed", tx_hash="0xbeef")),
            (dca(), ActionOutcome("dry-run")),
        ],
    )
    sources.on_tick_report(report)
    [alert] = alerter.emitted
    assert alert.kind == "transaction_failed"
    assert alert.text == "dip: swap: sell 10 (USDC → APT) failed: simulation: E_SLIPPAGE"
    assert alert.fields["tx_hash"] == "0xfeed"
    assert alert.fields["detail"] == "simulation: E_SLIPPAGE"


@pytest.fixture
def tokens() -> TokenBook:
    return TokenBook([APT, USDC])


@pytest.mark.parametrize(
    ("risk", "budgets", "action", "rule"),
    [
        (
            RiskSettings(per_transaction_caps={"USDC": Decimal(5)}),
            None,
            swap(),
            "per-transaction cap",
        ),
        (RiskSettings(daily_spend_caps={"USDC": Decimal(5)}), None, swap(), "daily spend cap"),
        (RiskSettings(), {"s": {"USDC": Decimal(5)}}, swap(), "strategy budget"),
        (RiskSettings(max_open_orders=0), None, dca(), "max open orders"),
    ],
)
def test_every_cap_refusal_of_the_real_risk_checker_is_a_risk_cap_alert(
    sources: AlertSources,
    alerter: FakeAlerter,
    journal: Journal,
    tokens: TokenBook,
    risk: RiskSettings,
    budgets: dict[str, dict[str, Decimal]] | None,
    action: Swap | CreateDca,
    rule: str,
) -> None:
    checker = RiskChecker(risk, journal, tokens, budgets=budgets)
    refusal = checker.check("s", WALLET, action, START)
    assert refusal is not None
    sources.on_tick_report(TickReport("s", ok=True, refusals=[(action, refusal)]))
    [alert] = alerter.emitted
    assert alert.kind == "risk_cap_hit"
    assert alert.fields["rule"] == rule
    assert rule in alert.text and str(refusal) in alert.text
    other = AlertSources(alerter, AlertSettings())
    other.on_tick_report(TickReport("s", ok=True, refusals=[(action, refusal)]))
    assert [e.fields["rule"] for e in alerter.emitted] == [rule, rule]


def test_refusals_that_are_not_caps_do_not_alert(
    sources: AlertSources, alerter: FakeAlerter, journal: Journal, tokens: TokenBook
) -> None:
    checker = RiskChecker(RiskSettings(allowed_tokens=["APT"]), journal, tokens)
    refusal = checker.check("s", WALLET, swap(), START)
    assert refusal is not None and refusal.rule == "allowed tokens"
    sources.on_tick_report(TickReport("s", ok=True, refusals=[(swap(), refusal)]))
    slippage = RiskRefusal("max slippage", "5% is above 1%")
    sources.on_tick_report(TickReport("s", ok=True, refusals=[(swap(), slippage)]))
    assert alerter.emitted == []


def test_a_cap_hit_every_tick_alerts_once_an_hour(
    sources: AlertSources, alerter: FakeAlerter
) -> None:
    refusal = RiskRefusal("daily spend cap", "500 USDC spent today + 10 would exceed 500")
    for _ in range(30):  # a strategy ticking every minute into its cap
        sources.on_tick_report(TickReport("s", ok=True, refusals=[(swap(), refusal)]))
        alerter.clock.advance(timedelta(minutes=1))
    assert alerter.kinds() == ["risk_cap_hit"]
    alerter.clock.advance(timedelta(minutes=31))
    sources.on_tick_report(TickReport("s", ok=True, refusals=[(swap(), refusal)]))
    sources.on_tick_report(TickReport("t", ok=True, refusals=[(swap(), refusal)]))
    assert alerter.kinds() == ["risk_cap_hit"] * 3


# --- heartbeat ----------------------------------------------------------------------------


def test_low_apt_alerts_once_then_after_six_hours_or_after_recovering(
    sources: AlertSources, alerter: FakeAlerter
) -> None:
    def beat(after: timedelta, balance: Decimal | None) -> None:
        moment = START + after
        sources.on_heartbeat(moment, moment, balance)  # polls fine: only the balance matters

    beat(timedelta(0), Decimal("0.15"))
    [alert] = alerter.emitted
    assert alert.kind == "low_apt_for_gas"
    assert alert.text == "Low APT for gas: 0.15 APT left (alert below 0.2 APT)"
    assert alert.fields == {"apt_balance": Decimal("0.15"), "threshold": Decimal("0.2")}
    for minutes in range(1, 60):  # still low, heartbeat every minute: no spam
        beat(timedelta(minutes=minutes), Decimal("0.14"))
    assert len(alerter.emitted) == 1
    beat(timedelta(hours=6), Decimal("0.1"))
    assert len(alerter.emitted) == 2
    beat(timedelta(hours=7), Decimal("0.2"))  # topped up
    beat(timedelta(hours=8), None)  # balance unknown
    assert len(alerter.emitted) == 2
    beat(timedelta(hours=9), Decimal("0.19"))  # low again
    assert alerter.kinds() == ["low_apt_for_gas"] * 3


def test_no_poll_alerts_once_per_outage(sources: AlertSources, alerter: FakeAlerter) -> None:
    last_ok = START
    for minutes in range(0, 15):
        sources.on_heartbeat(START + timedelta(minutes=minutes), last_ok, None)
    assert alerter.emitted == []
    for minutes in range(15, 40):
        sources.on_heartbeat(START + timedelta(minutes=minutes), last_ok, None)
    [alert] = alerter.emitted
    assert alert.kind == "no_poll"
    assert alert.text == (
        "No successful order poll for 15 minutes (last success 2026-03-01T12:00:00Z)"
    )
    recovered = START + timedelta(minutes=40)
    sources.on_heartbeat(recovered, recovered, None)
    sources.on_heartbeat(recovered + timedelta(minutes=16), recovered, None)  # a new outage
    assert alerter.kinds() == ["no_poll", "no_poll"]


def test_no_poll_counts_from_the_first_heartbeat_when_no_poll_ever_succeeded(
    sources: AlertSources, alerter: FakeAlerter
) -> None:
    sources.on_heartbeat(START, None, None)
    sources.on_heartbeat(START + timedelta(minutes=14), None, None)
    assert alerter.emitted == []
    sources.on_heartbeat(START + timedelta(minutes=15), None, None)
    [alert] = alerter.emitted
    assert alert.text == "No successful order poll for 15 minutes (none since start)"


def test_without_an_order_tracker_there_is_no_poll_to_miss(alerter: FakeAlerter) -> None:
    sources = AlertSources(alerter, AlertSettings(), expect_polls=False)  # a dry run
    sources.on_heartbeat(START, None, Decimal(5))
    sources.on_heartbeat(START + timedelta(hours=2), None, Decimal(5))
    assert alerter.emitted == []


# --- daemon and robustness ----------------------------------------------------------------


def test_daemon_start_and_stop_alert_and_other_states_do_not(
    sources: AlertSources, alerter: FakeAlerter
) -> None:
    sources.on_daemon("started", "paper mode, 3 strategies")
    sources.on_daemon("stopping")
    sources.on_daemon("stopped")
    assert alerter.kinds() == ["daemon_started", "daemon_stopped"]
    assert alerter.emitted[0].text == "Daemon started: paper mode, 3 strategies"
    assert alerter.emitted[1].text == "Daemon stopped"


def test_no_hook_raises_even_when_the_alerter_or_its_input_is_broken() -> None:
    class Broken(FakeAlerter):
        def emit(self, kind: str, text: str, **fields: object) -> None:
            raise RuntimeError("broken alerter")

    broken = AlertSources(Broken(), AlertSettings())
    broken.on_order_event(OrderFilled("dca", ORDER_ID, "active", "filled"))
    broken.on_tick_report(TickReport("s", ok=False, error="x"))
    broken.on_daemon("started")
    broken.on_heartbeat(START, START, Decimal("0.01"))


def test_a_bad_poll_time_does_not_stop_the_low_apt_check(
    sources: AlertSources, alerter: FakeAlerter
) -> None:
    naive = datetime(2026, 3, 1, 12, 0)  # naive: the point of the test
    sources.on_heartbeat(START, naive, Decimal("0.01"))
    assert alerter.kinds() == ["low_apt_for_gas"]
    later = START + timedelta(hours=7)
    sources.on_heartbeat(later, START, "junk")  # type: ignore[arg-type]
    assert alerter.kinds() == ["low_apt_for_gas", "no_poll"]  # the poll check still ran


def test_a_stuck_strategy_alerts_once_per_spell(
    sources: AlertSources, alerter: FakeAlerter
) -> None:
    why = "no progress for 3 ticks in a row (refused: daily spend cap: …)"
    sources.on_stuck({"dca": why})
    sources.on_stuck({"dca": why})
    sources.on_stuck({"dca": why, "ladder": "key 'r1' held by an intent still unknown"})
    assert alerter.kinds() == ["strategy_stuck", "strategy_stuck"]
    assert alerter.emitted[0].text == f"Strategy dca is stuck: {why}"
    assert alerter.emitted[0].fields == {"strategy": "dca", "reason": why}
    sources.on_stuck({})  # both made progress
    sources.on_stuck({"dca": why})  # a new spell: a new alert
    assert alerter.kinds() == ["strategy_stuck"] * 3
