"""The wallet lock: one per wallet address in one folder per user, whatever the journal.

The status file (per daemon) still lives beside the journal; the lock does not.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from bot.config import ConfigError, Settings, load_settings
from bot.engine.wallet_lock import (
    LOCK_SUBDIR,
    WalletLock,
    WalletLockError,
    default_lock_dir,
    lock_dir,
)
from bot.ops.status_file import status_path

WALLET = "0x" + "0" * 62 + "ab"


def test_the_default_folder_is_the_users_own_whatever_the_environment_says(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = Path(pwd.getpwuid(os.geteuid()).pw_dir)
    assert default_lock_dir() == home / LOCK_SUBDIR
    # A daemon under systemd or cron and a shell see other environments: same folder.
    for name in ("HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name))
    assert default_lock_dir() == home / LOCK_SUBDIR
    assert lock_dir(None) == home / LOCK_SUBDIR


def test_the_folder_does_not_depend_on_the_journal(tmp_path: Path) -> None:
    one = Settings(journal={"url": f"sqlite:///{tmp_path / 'a' / 'bot.db'}"})  # type: ignore[arg-type]
    two = Settings(journal={"url": f"sqlite:///{tmp_path / 'b' / 'bot.db'}"})  # type: ignore[arg-type]
    assert lock_dir(one.daemon.lock_dir) == lock_dir(two.daemon.lock_dir) == default_lock_dir()
    assert status_path(one.journal.url) != status_path(two.journal.url)


def test_a_configured_folder_is_used_and_must_be_absolute(tmp_path: Path) -> None:
    config = tmp_path / "bot.toml"
    config.write_text(f'[daemon]\nlock_dir = "{tmp_path / "locks"}"\n')
    assert lock_dir(load_settings(config).daemon.lock_dir) == tmp_path / "locks"
    config.write_text('[daemon]\nlock_dir = "~/locks"\n')
    assert load_settings(config).daemon.lock_dir == Path.home() / "locks"
    config.write_text('[daemon]\nlock_dir = "locks"\n')
    with pytest.raises(ConfigError, match=r"daemon\.lock_dir.*absolute"):
        load_settings(config)


def test_one_wallet_one_holder_however_its_address_is_spelled(tmp_path: Path) -> None:
    first = WalletLock(tmp_path, WALLET)
    second = WalletLock(tmp_path, "0xAB")  # the same address, short and upper case
    other = WalletLock(tmp_path, "0x" + "cd" * 32)
    assert first.path == second.path == tmp_path / f"wallet-{WALLET[2:]}.lock"
    assert first.try_acquire()
    try:
        assert not second.try_acquire()  # flock: a second open file is refused
        assert other.try_acquire()  # another wallet is not in the way
        other.release()
    finally:
        first.release()
    assert second.try_acquire()
    second.release()


def test_an_unusable_folder_is_one_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    lock = WalletLock(blocker / "locks", WALLET)
    with pytest.raises(WalletLockError) as caught:
        lock.try_acquire()
    text = str(caught.value)
    assert "\n" not in text and str(lock.path) in text and "[daemon].lock_dir" in text
    assert not lock.held


@pytest.mark.parametrize(
    ("url", "folder"),
    [
        ("sqlite:///data/bot.db", "data"),
        ("sqlite:////var/lib/bot/bot.db", "/var/lib/bot"),
        ("sqlite+pysqlite:///x/bot.db", "x"),
        ("sqlite:///state/bot.db?timeout=5", "state"),
        ("sqlite://", "data"),
        ("sqlite:///:memory:", "data"),
        ("postgresql://host/db", "data"),
    ],
)
def test_the_status_file_stays_beside_the_journal_file(url: str, folder: str) -> None:
    assert status_path(url) == Path(folder) / "status.json"
