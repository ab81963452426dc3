"""Paper mode says it is paper: the provider's credit only under the provider's prices.

`bot prices` and `bot quote` as a user runs them (real subprocesses): in paper mode the
line under the prices says they are simulated and never credits the provider; in live
mode (a scripted provider on loopback) it is the provider's credit line.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import run_bot
from tests.support.loopback import serve
from tests.support.provider_stub import APT, ProviderStub

CREDIT = "Prices by Panora"
SIMULATED = "Simulated prices (paper world)"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    with serve(ProviderStub()) as url:
        yield url


def bot(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    result: subprocess.CompletedProcess[str] = run_bot(*args, cwd=cwd, env=env, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_paper_prices_and_quotes_say_they_are_simulated(tmp_path: Path) -> None:
    # No config anywhere: the embedded paper world, as a new user first meets the bot.
    prices = bot("prices", "APT", cwd=tmp_path)
    assert prices.strip().splitlines()[-1] == SIMULATED
    quote = bot("quote", "APT", "USDC", "--sell", "1", cwd=tmp_path)
    assert quote.strip().splitlines()[-1] == SIMULATED
    assert "Panora" not in prices + quote
    payload = json.loads(bot("prices", "APT", "--json", cwd=tmp_path))
    assert (payload["credit"], payload["simulated"]) == (None, True)
    assert payload["prices"]


def test_live_prices_and_quotes_carry_the_providers_credit(provider: str, tmp_path: Path) -> None:
    env = {"BOT_MODE": "live", "BOT_API__BASE_URL": provider, "BOT_API__API_KEY": "k-1"}
    quote = bot("quote", APT, USDC, "--sell", "10", cwd=tmp_path, env=env)
    assert quote.strip().splitlines()[-1] == CREDIT
    payload = json.loads(bot("prices", APT, "--json", cwd=tmp_path, env=env))
    assert (payload["credit"], payload["simulated"]) == (CREDIT, False)
    assert SIMULATED not in quote
