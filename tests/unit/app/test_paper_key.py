"""Paper mode with no wallet configured trades with the demo's key; live never does."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.paper_key import DEMO_DIR, DEMO_KEY_NAME, paper_key_file
from bot.app.runtime import Runtime, configured_wallet
from bot.chain import account_address, load_private_key, new_key_file
from bot.config import JournalSettings, Settings, WalletSettings


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.upper().startswith("BOT_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    yield


def _paper(tmp_path: Path, **wallet: object) -> Settings:
    return Settings(
        mode="paper",
        wallet=WalletSettings(**wallet),  # type: ignore[arg-type]
        journal=JournalSettings(url=f"sqlite:///{tmp_path / 'bot.db'}"),
    )


async def test_a_paper_verb_without_a_wallet_uses_the_demo_key_made_once(tmp_path: Path) -> None:
    settings = _paper(tmp_path)
    assert configured_wallet(settings) is None  # a reader makes no key
    assert not (tmp_path / DEMO_DIR).exists()
    async with await Runtime.open(settings) as runtime:
        key_file = tmp_path / DEMO_DIR / DEMO_KEY_NAME
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        demo = str(account_address(load_private_key(key_file, None)))
        assert runtime.wallet == demo and runtime.signer is not None
    assert configured_wallet(settings) == demo  # the same key next time, not a new one
    async with await Runtime.open(settings) as again:
        assert again.wallet == demo


def test_a_configured_wallet_or_live_mode_never_falls_back(tmp_path: Path) -> None:
    own = tmp_path / "own.key"
    address = str(new_key_file(own))
    assert configured_wallet(_paper(tmp_path, key_file=own)) == address
    watched = "0x" + "ab" * 32
    assert paper_key_file(_paper(tmp_path, address=watched)) is None
    live = _paper(tmp_path).model_copy(update={"mode": "live"})
    assert paper_key_file(live) is None and configured_wallet(live) is None
    assert not (tmp_path / DEMO_DIR).exists()
