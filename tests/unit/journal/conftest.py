from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.journal import Journal

T0 = datetime(2026, 1, 1, tzinfo=UTC)
WALLET = "0x" + "ab" * 32
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'journal' / 'bot.db'}"


@pytest.fixture
def journal(url: str) -> Iterator[Journal]:
    with Journal.open(url) as opened:
        yield opened
