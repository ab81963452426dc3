"""The `bot` command as a user runs it: a real subprocess, exit codes, stdout and stderr."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.secrets import PUBLIC_API_KEY
from tests.support.cli import ROOT
from tests.support.cli import run_bot as run_any_bot
from tests.support.loopback import serve
from tests.support.provider_stub import APT, ProviderStub, Reply

API_KEY = "cli-test-key-7d2a41b9"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"


def run_bot(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    return run_any_bot(*args, env=env, cwd=cwd, timeout=60)


@pytest.fixture(scope="module")
def provider() -> Iterator[tuple[str, ProviderStub]]:
    stub = ProviderStub()
    with serve(stub) as url:
        yield url, stub


def test_version_and_help() -> None:
    result = run_bot("--version")
    assert result.returncode == 0 and result.stdout.startswith("bot ")
    for verb in (["prices"], ["quote"], ["config", "check"], ["config", "show"]):
        help_result = run_bot(*verb, "--help")
        assert help_result.returncode == 0, help_result.stderr
        assert "Usage" in help_result.stdout


def test_help_never_shows_secrets_from_the_environment() -> None:
    env = {"BOT_API__API_KEY": API_KEY, "BOT_WALLET__PRIVATE_KEY": "ed25519-priv-0x" + "11" * 32}
    for verb in ([], ["prices"], ["quote"], ["config", "show"]):
        result = run_bot(*verb, "--help", env=env)
        assert API_KEY not in result.stdout + result.stderr
        assert "11" * 32 not in result.stdout + result.stderr


def test_config_check_accepts_the_example() -> None:
    result = run_bot("config", "check", "config.example.toml")
    assert result.returncode == 0, result.stderr
    assert "config OK" in result.stdout


def test_config_check_reports_each_problem_on_one_line_with_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[api]\nchain_id = "x"\nbase_urll = "http://a"\n[risk]\nmax_gas_amount = -1\n')
    result = run_bot("config", "check", str(bad), env={"BOT_API__API_KEY": API_KEY})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 3
    assert any("api.chain_id" in line and "'x'" in line for line in lines)
    assert any("api.base_urll" in line and "unknown key" in line for line in lines)
    assert any("risk.max_gas_amount" in line for line in lines)
    assert API_KEY not in result.stderr


def test_config_show_masks_secrets() -> None:
    result = run_bot(
        "-c", "config.example.toml", "config", "show", env={"BOT_API__API_KEY": API_KEY}
    )
    assert result.returncode == 0
    assert API_KEY not in result.stdout
    assert '"api_key": "********"' in result.stdout


def test_a_missing_config_file_is_a_usage_error() -> None:
    result = run_bot("-c", "/nonexistent/bot.toml", "config", "check")
    assert result.returncode == 2
    assert "no such config file" in result.stderr


def test_prices_shows_a_table_and_the_credit_line(provider: tuple[str, ProviderStub]) -> None:
    url, stub = provider
    result = run_bot(
        "prices",
        "APT",
        env={"BOT_MODE": "live", "BOT_API__BASE_URL": url, "BOT_API__API_KEY": API_KEY},
    )
    assert result.returncode == 0, result.stderr
    assert "APT" in result.stdout and "5.12345678" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "Prices by Panora"
    # "APT" is a symbol: resolved through the full list, then asked for by address.
    assert stub.requests[-1].param("tokenAddress") == APT
    assert API_KEY not in result.stdout + result.stderr


def test_quote_needs_exactly_one_of_sell_and_buy() -> None:
    for args in (["APT", "USDC"], ["APT", "USDC", "--sell", "1", "--buy", "2"]):
        result = run_bot("quote", *args)
        assert result.returncode == 2
        assert "exactly one of --sell" in result.stderr
    result = run_bot("quote", "APT", "USDC", "--sell", "ten")
    assert result.returncode == 2 and "--sell" in result.stderr


def test_quote_prints_amounts_and_credit(provider: tuple[str, ProviderStub]) -> None:
    url, stub = provider
    result = run_bot(
        "quote",
        APT,
        "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b",
        "--sell",
        "10",
        env={"BOT_MODE": "live", "BOT_API__BASE_URL": url},
    )
    assert result.returncode == 0, result.stderr
    assert "receive 51.123456" in result.stdout
    assert "at least 50.867838" in result.stdout
    assert "fee 0.01 APT" in result.stdout  # the fee names its token
    # Quoted as the current docs and SDK 1.3.1 do: POST /swap, no wallet needed.
    seen = stub.requests[-1]
    assert (seen.method, seen.path) == ("POST", "/swap")
    assert seen.param("toWalletAddress") is None
    # No key configured, live: the SDK's public key is sent (never shown).
    assert seen.headers["x-api-key"] == PUBLIC_API_KEY
    assert PUBLIC_API_KEY not in result.stdout + result.stderr


def test_quote_without_a_route_is_one_clear_line(provider: tuple[str, ProviderStub]) -> None:
    url, stub = provider
    # The real "no route" answer: `quotes: []` (SDK 1.3.1 Swap.swap: "No routes present").
    no_route = {
        "fromToken": {"address": APT, "decimals": 8, "current_price": "5.12"},
        "toToken": {"address": USDC, "decimals": 6, "current_price": "0.9998"},
        "fromTokenAmount": "10",
        "quotes": [],
    }
    stub.script("POST", "/swap", Reply(body=no_route))
    before = len(stub.requests)
    result = run_bot(
        "quote", APT, USDC, "--sell", "10", env={"BOT_MODE": "live", "BOT_API__BASE_URL": url}
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.splitlines() == [f"bot: error: no route for 10 {APT} → {USDC}"]
    assert len(stub.requests) == before + 1  # a real answer: not retried


def test_an_empty_api_key_cannot_start_live() -> None:
    env = {"BOT_MODE": "live", "BOT_API__API_KEY": ""}
    result = run_bot("quote", APT, USDC, "--sell", "1", env=env)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "bot: error: api.api_key: is empty; unset BOT_API__API_KEY to use the public shared "
        "key, or set your own (value hidden)"
    ]


def test_an_unreachable_provider_fails_with_one_line_and_exit_1() -> None:
    from tests.support.loopback import closed_port

    env = {
        "BOT_MODE": "live",
        "BOT_API__BASE_URL": f"http://127.0.0.1:{closed_port()}",
        "BOT_API__MAX_ATTEMPTS": "1",
    }
    result = run_bot("prices", "--all", env=env)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("bot: error: GET /prices: not sent")


def test_out_of_the_box_prices_come_from_the_embedded_paper_world(tmp_path: Path) -> None:
    result = run_bot("prices", "APT", "USDC", cwd=tmp_path)  # no config anywhere
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].split() == ["SYMBOL", "USD", "24H", "%", "ADDRESS"]
    assert any(line.startswith("APT") for line in lines)
    assert lines[-1] == "Simulated prices (paper world)"  # never the provider's credit
    assert "Panora" not in result.stdout


def test_paper_fund_and_status_against_a_served_world(tmp_path: Path) -> None:
    from tests.support.paper_server import paper_serve, write_config

    config = write_config(tmp_path / "bot.toml")
    wallet = "0x" + "7c" * 32
    with paper_serve(config) as (url, _process):
        env = {"BOT_PAPER__URL": url}
        funded = run_bot("-c", str(config), "paper", "fund", wallet, "USDC", "250.5", env=env)
        assert funded.returncode == 0, funded.stderr
        assert funded.stdout.strip() == f"{wallet}: 250.5 USDC"
        status = run_bot("-c", str(config), "paper", "status", "--wallet", wallet, env=env)
        assert status.returncode == 0, status.stderr
        assert "USDC" in status.stdout and "250.5" in status.stdout
        unknown = run_bot("-c", str(config), "paper", "fund", wallet, "NOPE", "1", env=env)
        assert unknown.returncode == 2 and "unknown token" in unknown.stderr


def test_paper_fund_needs_a_served_world() -> None:
    result = run_bot("paper", "fund", "0x1", "APT", "1")
    assert result.returncode == 2
    assert "[paper].url" in result.stderr
