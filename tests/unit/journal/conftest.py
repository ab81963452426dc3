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


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The journal's URL, once per engine: a SQLite file, and a fresh PostgreSQL database
    on the session's throwaway cluster (skipped, one line, where PostgreSQL cannot run)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'journal' / 'bot.db'}"
    return str(request.getfixturevalue("pg_database_url"))


@pytest.fixture
def journal(url: str) -> Iterator[Journal]:
    with Journal.open(url) as opened:
        yield opened
