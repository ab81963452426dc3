"""The shared vocabulary (`bot.domain`) and the signer's view of `[chain]`."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import fields
from decimal import Decimal

import pytest

from bot.api.models import OrderFilter
from bot.chain.policy import ROUTER_FUNCTION as ROUTER_FUNCTION_ID
from bot.chain.settings import SignerSettings
from bot.config import ChainSettings
from bot.domain import (
    CANCEL_DONE_STATUSES,
    CAP_RULES,
    CLOSED_STATUSES,
    DCA_STATUSES,
    FINAL_STATUSES,
    LIMIT_STATUSES,
    LIVE_ORDER_STATUSES,
    PROVIDER_LIVE_STATUSES,
    ROUTER_FUNCTION,
    TIME_PERIODS,
    OrderKind,
    OrderStatus,
    RiskRule,
)
from bot.engine.risk import RiskRefusal
from bot.paper.core.router import ROUTER_FUNCTION as PAPER_ROUTER_FUNCTION


def test_members_are_their_wire_strings() -> None:
    """A member equals, hashes, formats, serialises and is stored as its wire string."""
    assert OrderKind.DCA == "dca" and {"dca": 1}[OrderKind.DCA] == 1
    assert f"/{OrderKind.LIMIT}/v1/getOrders" == "/limit/v1/getOrders"
    assert "filled" in FINAL_STATUSES and "lost" in CLOSED_STATUSES
    assert json.dumps([OrderStatus.PARTIALLY_FILLED]) == '["partially_filled"]'
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE o (status TEXT)")
    db.execute("INSERT INTO o VALUES (?)", (OrderStatus.MISSING,))
    assert db.execute("SELECT status, typeof(status) FROM o").fetchall() == [("missing", "text")]
    db.close()


def test_status_sets_partition_as_the_provider_defines_them() -> None:
    provider = DCA_STATUSES | LIMIT_STATUSES
    assert provider == PROVIDER_LIVE_STATUSES | FINAL_STATUSES
    assert not PROVIDER_LIVE_STATUSES & FINAL_STATUSES
    assert CANCEL_DONE_STATUSES <= FINAL_STATUSES
    assert FINAL_STATUSES | {OrderStatus.LOST} == CLOSED_STATUSES
    assert set(LIVE_ORDER_STATUSES) == PROVIDER_LIVE_STATUSES | {OrderStatus.MISSING}
    assert not set(LIVE_ORDER_STATUSES) & CLOSED_STATUSES
    assert OrderStatus.PENDING not in provider | CLOSED_STATUSES | set(LIVE_ORDER_STATUSES)
    assert not {f.value for f in OrderFilter} - {"active"} & provider


def test_time_periods_are_plain_strings() -> None:
    """Messages print the tuple: its members must read as they always did."""
    assert TIME_PERIODS == ("minute", "hour", "day", "week", "month")
    assert all(type(p) is str for p in TIME_PERIODS)


def test_risk_rules_read_as_before() -> None:
    refusal = RiskRefusal(RiskRule.DAILY_SPEND_CAP, "500 USDC spent today + 10 would exceed 500")
    assert str(refusal) == "daily spend cap: 500 USDC spent today + 10 would exceed 500"
    assert set(RiskRule) > CAP_RULES
    assert RiskRule.MAX_SLIPPAGE not in CAP_RULES


def test_one_router_function_everywhere() -> None:
    assert str(ROUTER_FUNCTION_ID) == ROUTER_FUNCTION
    assert ChainSettings().allowed_functions == [ROUTER_FUNCTION]
    assert PAPER_ROUTER_FUNCTION is ROUTER_FUNCTION


def test_signer_settings_defaults_are_the_chain_sections() -> None:
    chain = ChainSettings()
    built = SignerSettings()
    for field in fields(SignerSettings):
        assert getattr(built, field.name) == getattr(chain, field.name), field.name


def test_signer_settings_from_a_loaded_chain_section() -> None:
    chain = ChainSettings(
        gas_margin=Decimal("1.25"),
        expiration_seconds=90,
        poll_interval_seconds=2.0,
        max_submit_attempts=7,
        wait_timeout_seconds=120.0,
    )
    settings = SignerSettings.from_chain(chain)
    assert settings.gas_margin == Decimal("1.25") and settings.expiration_seconds == 90
    assert settings.poll_interval_seconds == 2.0 and settings.max_submit_attempts == 7
    assert settings.wait_timeout_seconds == 120.0
    assert settings.first_poll_delay_seconds == chain.first_poll_delay_seconds


def test_signer_settings_still_refuse_what_the_signer_cannot_use() -> None:
    with pytest.raises(ValueError, match="gas_margin"):
        SignerSettings(gas_margin=Decimal("0.9"))
    with pytest.raises(ValueError, match="expiration_seconds"):
        SignerSettings(expiration_seconds=0)
    assert SignerSettings(poll_interval_seconds=0, first_poll_delay_seconds=0)
