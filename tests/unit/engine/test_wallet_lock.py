"""Wallet locks live beside the journal file, read from its URL as the journal reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.engine.wallet_lock import lock_dir_for


@pytest.mark.parametrize(
    ("url", "folder"),
    [
        ("sqlite:///data/bot.db", "data"),
        ("sqlite:////var/lib/bot/bot.db", "/var/lib/bot"),
        ("sqlite+pysqlite:///x/bot.db", "x"),  # was ./data: not where the journal is
        ("sqlite:///state/bot.db?timeout=5", "state"),
        ("sqlite://", "data"),
        ("sqlite:///:memory:", "data"),
        ("postgresql://host/db", "data"),
    ],
)
def test_the_lock_folder_is_the_journal_files_folder(url: str, folder: str) -> None:
    assert lock_dir_for(url) == Path(folder)
