"""`bot doctor`'s checks: each one's PASS and its FAIL line, against a real in-process world."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr

from bot.api import PanoraClient
from bot.api.client import ClientStats
from bot.chain import LedgerInfo, NodeClient, new_key_file
from bot.chain.keys import (
    account_address,
    aip80_text,
    load_private_key,
    parse_private_key,
)
from bot.clock import RealClock
from bot.config import PaperFunding, PaperSettings, Settings, WalletSettings
from bot.engine.strategy import Strategy
from bot.journal import Journal, head_revision, upgrade
from bot.journal.migrate import revisions
from bot.ops.doctor import (
    FAIL,
    PASS,
    SKIP,
    WARN,
    CheckResult,
    Doctor,
    check_clock_skew,
    check_journal,
    check_key,
    check_key_file,
    check_strategies,
    check_unknown_fields,
    exit_code,
    gas_per_transaction,
    public_url,
    summary,
)
from bot.paper.world import build_world
from tests.support.paper_rig import no_wait

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
DCA = {
    "name": "weekly-apt",
    "plugin": "recurring_dca",
    "schedule": {"interval_seconds": 3600},
    "params": {
        "from_token": "USDC",
        "to_token": "APT",
        "amount_per_order": "25",
        "interval": "1 day",
        "orders": 7,
    },
}


def outcome(results: list[CheckResult], name: str) -> tuple[str, str]:
    found = [r for r in results if r.name == name]
    assert len(found) == 1, [r.line() for r in results]
    return found[0].outcome, found[0].detail


# --- key ----------------------------------------------------------------------------------


def test_a_0600_key_file_passes_and_names_its_address(tmp_path: Path) -> None:
    key = tmp_path / "wallet.key"
    address = new_key_file(key)
    wallet = WalletSettings(key_file=key)
    file_check = check_key_file(wallet)
    assert (file_check.outcome, file_check.detail) == (PASS, f"{key} is 0600")
    loaded, found = check_key(wallet, file_check)
    assert (loaded.outcome, loaded.detail, found) == (PASS, f"address {address}", str(address))


def test_a_key_file_open_to_others_fails_naming_the_file_and_the_fix(tmp_path: Path) -> None:
    key = tmp_path / "wallet.key"
    new_key_file(key)
    secret = key.read_text().strip()
    key.chmod(0o644)
    wallet = WalletSettings(key_file=key)
    file_check = check_key_file(wallet)
    assert file_check.outcome == FAIL
    assert file_check.detail == f"{key} is 0644, open to group or others; run: chmod 600 {key}"
    loaded, _ = check_key(wallet, file_check)
    assert loaded.outcome == SKIP  # the key is never read from a file others can read
    key.chmod(0o640)
    assert check_key_file(wallet).outcome == FAIL  # the group alone is too many readers
    assert secret not in file_check.line() + loaded.line()


def test_missing_key_and_key_from_the_environment(tmp_path: Path) -> None:
    missing = check_key_file(WalletSettings(key_file=tmp_path / "nope.key"))
    assert (missing.outcome, missing.detail) == (FAIL, f"{tmp_path / 'nope.key'} does not exist")
    none = check_key_file(WalletSettings())
    assert none.outcome == FAIL and "no private key" in none.detail
    text = aip80_text(parse_private_key("11" * 32, source="test"))
    from_env = WalletSettings(private_key=SecretStr(text))
    assert check_key_file(from_env).outcome == SKIP
    loaded, address = check_key(from_env, check_key_file(from_env))
    assert loaded.outcome == PASS and address is not None and text not in loaded.line()


def test_a_key_for_another_address_than_the_configured_one_fails(tmp_path: Path) -> None:
    key = tmp_path / "wallet.key"
    address = new_key_file(key)
    wallet = WalletSettings(key_file=key, address="0x" + "cd" * 32)
    loaded, _ = check_key(wallet, check_key_file(wallet))
    assert loaded.outcome == FAIL
    assert loaded.detail == f"the key is for {address}, but [wallet].address is 0x{'cd' * 32}"


def test_a_malformed_key_fails_without_showing_its_content(tmp_path: Path) -> None:
    key = tmp_path / "wallet.key"
    key.write_text("not-a-key-but-secret-text\n")
    key.chmod(0o600)
    wallet = WalletSettings(key_file=key)
    loaded, _ = check_key(wallet, check_key_file(wallet))
    assert loaded.outcome == FAIL and str(key) in loaded.detail
    assert "secret-text" not in loaded.detail


# --- journal, gas, clock, wire, strategies ---------------------------------------------------


def test_journal_missing_behind_and_at_head(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'data' / 'bot.db'}"
    missing = check_journal(url)
    assert missing.outcome == PASS and "does not exist yet" in missing.detail
    assert not (tmp_path / "data").exists()  # checking never creates anything
    upgrade(url, revisions()[0])
    behind = check_journal(url)
    assert behind.outcome == FAIL
    assert f"is at revision {revisions()[0]}, this bot needs {head_revision()}" in behind.detail
    assert "bot journal migrate" in behind.detail
    upgrade(url)
    at_head = check_journal(url)
    assert at_head.outcome == PASS and f"at revision {head_revision()} (latest)" in at_head.detail


def test_gas_per_transaction_uses_history_times_margin_else_the_cap() -> None:
    settings = Settings(risk={"max_gas_amount": 50_000}, chain={"gas_margin": Decimal("1.5")})  # type: ignore[arg-type]
    assert gas_per_transaction(settings, []) == (
        50_000,
        "[risk].max_gas_amount, no transaction history yet",
    )
    gas, basis = gas_per_transaction(settings, [1000, 3001, 2000])
    assert gas == 4502 and basis.startswith("largest of the last 3 transactions")
    assert gas_per_transaction(settings, [40_000])[0] == 50_000  # never above the cap


def test_clock_skew_passes_within_30_s_fails_beyond_and_skips_a_paper_clock() -> None:
    def ledger(at: datetime) -> LedgerInfo:
        return LedgerInfo(4, 1, int(at.timestamp() * 1_000_000))

    close = check_clock_skew(ledger(NOW - timedelta(seconds=2)), NOW, paper_clock=None)
    assert (close.outcome, close.detail) == (
        PASS,
        "local clock 2.0 s ahead of the node's ledger time",
    )
    far = check_clock_skew(ledger(NOW + timedelta(seconds=45)), NOW, paper_clock=None)
    assert far.outcome == FAIL and far.detail.startswith("local clock 45.0 s behind")
    paper = check_clock_skew(ledger(NOW - timedelta(days=300)), NOW, paper_clock="stepped")
    assert (paper.outcome, paper.detail) == (SKIP, "skipped (paper clock: stepped)")


def test_unknown_fields_are_a_warning_not_a_failure() -> None:
    stats = ClientStats()
    assert check_unknown_fields(stats).outcome == PASS
    stats.unknown_fields["GET /prices newField"] += 3
    warned = check_unknown_fields(stats)
    assert warned.outcome == WARN and "GET /prices newField ×3" in warned.detail
    assert exit_code([warned]) == 0


def test_a_bad_strategy_parameter_is_a_configuration_failure() -> None:
    bad = {**DCA, "params": {**DCA["params"], "amount_per_order": "-5"}}  # type: ignore[dict-item]
    result, built = check_strategies(Settings(strategies=[bad]))  # type: ignore[list-item]
    assert result.outcome == FAIL and "params.amount_per_order" in result.detail
    assert built == [] and exit_code([result]) == 2


def test_urls_are_shown_without_credentials_query_or_path_tokens() -> None:
    assert public_url("https://user:pw@node.example:8443/v1/Tok3nTok3n?api-key=s3cret") == (
        "https://[REDACTED]@node.example:8443/v1/[REDACTED]?[REDACTED]"
    )


def test_summary_and_exit_codes() -> None:
    results = [
        CheckResult("a", PASS, ""),
        CheckResult("b", SKIP, ""),
        CheckResult("c", WARN, ""),
    ]
    assert summary(results) == "3 checks: 1 passed, 0 failed, 1 warning, 1 skipped"
    assert exit_code(results) == 0
    assert exit_code([*results, CheckResult("d", FAIL, "")]) == 1
    assert exit_code([CheckResult("d", FAIL, ""), CheckResult("e", FAIL, "", True)]) == 2


# --- the network checks against an in-process paper world ---------------------------------


@asynccontextmanager
async def doctor_for(
    tmp_path: Path,
    funds: dict[str, str],
    *,
    api_key: str = "k",
    chain_id: int = 4,
    **settings: Any,
) -> AsyncIterator[tuple[Doctor, list[Strategy]]]:
    key = tmp_path / "wallet.key"
    address = str(new_key_file(key))
    world = build_world(
        PaperSettings(
            clock="stepped",
            api_keys=["k"],
            rate_limit_per_second=1e6,
            rate_limit_burst=10**6,
            funding=[
                PaperFunding(wallet=address, token=t, amount=Decimal(a)) for t, a in funds.items()
            ],
        )
    )
    config = Settings(
        wallet={"key_file": key},  # type: ignore[arg-type]
        journal={"url": f"sqlite:///{tmp_path / 'bot.db'}"},  # type: ignore[arg-type]
        paper={"clock": "stepped"},  # type: ignore[arg-type]
        strategies=[DCA],  # type: ignore[list-item]
        **settings,
    )
    _, strategies = check_strategies(config)
    transport = httpx.ASGITransport(app=world.app)
    client = PanoraClient(
        base_url="http://paper",
        api_key=SecretStr(api_key),
        transport=transport,
        rate_limit_per_second=1e6,
        rate_limit_burst=10**6,
        sleep=no_wait,
        max_attempts=1,
    )
    node = NodeClient(
        "http://paper/v1", expected_chain_id=chain_id, transport=transport, sleep=no_wait
    )
    doctor = Doctor(
        settings=config,
        client=client,
        api_problem=None,
        node=node,
        api_url="http://paper",
        node_url="http://paper/v1",
        chain_id=chain_id,
        paper_clock="stepped",
        clock=RealClock(),
    )
    try:
        yield doctor, strategies
    finally:
        await client.aclose()
        await node.aclose()


async def test_a_funded_wallet_on_the_paper_world_passes_every_check(tmp_path: Path) -> None:
    async with doctor_for(tmp_path, {"APT": "10", "USDC": "500"}) as (doctor, strategies):
        Journal.open(doctor.settings.journal.url).close()
        results = await doctor.run(strategies)
    assert [r.line() for r in results if r.outcome not in (PASS, SKIP)] == []
    assert outcome(results, "token balances") == (PASS, "10 APT, 500 USDC")
    assert outcome(results, "order lists")[1].endswith(": 0 DCA, 0 limit")
    state, detail = outcome(results, "APT for gas")
    assert state == PASS and detail.startswith("10 APT covers 20 transactions (4 APT;")
    assert outcome(results, "clock skew")[0] == SKIP
    assert exit_code(results) == 0


async def test_too_little_apt_for_gas_fails_with_both_amounts(tmp_path: Path) -> None:
    async with doctor_for(
        tmp_path, {"APT": "1", "USDC": "500"}, daemon={"gas_reserve_transactions": 10}
    ) as (doctor, strategies):
        results = await doctor.run(strategies)
    state, detail = outcome(results, "APT for gas")
    assert state == FAIL
    assert detail.startswith("1 APT is less than 2 APT for 10 transactions (200000 gas × 100")
    assert "lower [daemon].gas_reserve_transactions" in detail


async def test_gas_is_sized_from_the_wallets_committed_transactions(tmp_path: Path) -> None:
    async with doctor_for(tmp_path, {"APT": "1", "USDC": "5"}) as (doctor, strategies):
        mine = str(account_address(load_private_key(tmp_path / "wallet.key", None)))
        with Journal.open(doctor.settings.journal.url) as journal:
            # Another wallet's transaction in the same journal: its gas is not this one's.
            for tx, sender, gas in (("1", mine, 2000), ("2", "0x" + "9" * 64, 90_000)):
                journal.record_transaction("0x" + tx * 64, sender, 0, "swap", at=NOW)
                journal.update_transaction("0x" + tx * 64, "committed", at=NOW, gas_used=gas)
        results = await doctor.run(strategies)
    state, detail = outcome(results, "APT for gas")
    assert state == PASS  # 20 × 3000 gas × 100 octas = 0.06 APT
    assert detail.startswith("1 APT covers 20 transactions (0.06 APT; 3000 gas × 100 octas")


async def test_an_unfunded_wallet_fails_the_balances_check(tmp_path: Path) -> None:
    async with doctor_for(tmp_path, {}) as (doctor, strategies):
        results = await doctor.run(strategies)
    state, detail = outcome(results, "token balances")
    assert state == FAIL and detail.endswith("holds none of its strategies' tokens (0 APT, 0 USDC)")


async def test_a_refused_api_key_fails_and_is_never_shown(tmp_path: Path) -> None:
    async with doctor_for(tmp_path, {"APT": "10"}, api_key="wrong-key-9f2e") as (doctor, s):
        results = await doctor.run(s)
    state, detail = outcome(results, "API key accepted")
    assert state == FAIL and "refused the API key (401)" in detail
    assert "wrong-key-9f2e" not in "\n".join(r.line() for r in results)
    assert outcome(results, "token balances")[0] == SKIP


async def test_another_chain_id_fails_with_both_ids_and_skips_what_depends_on_it(
    tmp_path: Path,
) -> None:
    async with doctor_for(tmp_path, {"APT": "10"}, chain_id=5) as (doctor, strategies):
        results = await doctor.run(strategies)
    assert outcome(results, "node reachable")[0] == PASS
    assert outcome(results, "node chain id") == (FAIL, "node says 4, config says 5")
    assert outcome(results, "APT for gas") == (SKIP, "node not usable")
    assert exit_code(results) == 1
