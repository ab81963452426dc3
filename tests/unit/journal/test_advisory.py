"""One daemon per wallet anywhere: the PostgreSQL advisory lock beside the file lock."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from bot.engine.wallet_lock import WalletLock, WalletLockError
from bot.journal.advisory import AdvisoryLock, advisory_key

from .conftest import WALLET

OTHER_WALLET = "0x" + "cd" * 32


def test_two_holders_of_one_name_one_wins_until_it_lets_go(pg_database_url: str) -> None:
    first, second = AdvisoryLock(pg_database_url, "w"), AdvisoryLock(pg_database_url, "w")
    other = AdvisoryLock(pg_database_url, "another")
    try:
        assert first.try_acquire() and first.held and first.still_held()
        assert not second.try_acquire() and not second.held
        assert other.try_acquire()  # another name is another lock
        first.release()
        assert not first.still_held()
        assert second.try_acquire() and second.still_held()
    finally:
        for lock in (first, second, other):
            lock.release()


def test_a_dropped_connection_loses_the_lock_and_says_so(pg_database_url: str) -> None:
    holder, rival = AdvisoryLock(pg_database_url, "w"), AdvisoryLock(pg_database_url, "w")
    admin = create_engine(pg_database_url, isolation_level="AUTOCOMMIT")
    try:
        assert holder.try_acquire()
        with admin.connect() as conn:
            ended = conn.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
                    "AND ((classid::bigint << 32) | objid::bigint) = :key"
                ),
                {"key": advisory_key("w")},
            ).scalar()
        assert ended is True
        assert rival.try_acquire()  # the server let it go with the session
        assert not holder.still_held() and not holder.held
    finally:
        holder.release()
        rival.release()
        admin.dispose()


def test_a_second_daemon_of_the_wallet_on_another_machine_is_refused(
    tmp_path: Path, pg_database_url: str
) -> None:
    # Two machines: two lock folders (the file locks do not meet), one shared journal.
    here = WalletLock(tmp_path / "a", WALLET, database=pg_database_url)
    there = WalletLock(tmp_path / "b", WALLET, database=pg_database_url)
    other = WalletLock(tmp_path / "b", OTHER_WALLET, database=pg_database_url)
    try:
        assert here.try_acquire() and here.still_held()
        assert not there.try_acquire() and not there.held
        assert there.blocked_by.startswith("advisory lock 'wallet:0xabab")
        assert "127.0.0.1" in there.blocked_by
        assert other.try_acquire()  # another wallet on the same database
        here.release()
        assert there.try_acquire()
    finally:
        for lock in (here, there, other):
            lock.release()


def test_an_unreachable_database_is_one_line_and_keeps_no_file_lock(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql+psycopg://u:secret@127.0.0.1:{port}/db"
    lock = WalletLock(tmp_path, WALLET, database=url)
    with pytest.raises(WalletLockError, match="cannot take it") as caught:
        lock.try_acquire()
    assert "secret" not in str(caught.value) and "\n" not in str(caught.value)
    assert not lock.held and WalletLock(tmp_path, WALLET).try_acquire()


def test_a_sqlite_journal_needs_the_file_lock_only(tmp_path: Path) -> None:
    lock = WalletLock(tmp_path, WALLET, database=f"sqlite:///{tmp_path / 'bot.db'}")
    assert lock.try_acquire() and lock.still_held()
    lock.release()
    assert not lock.still_held()


def test_take_wallet_lock_refuses_the_second_daemon_in_one_line(
    tmp_path: Path, pg_database_url: str
) -> None:
    from bot.app.errors import SetupError
    from bot.app.opening import take_wallet_lock
    from bot.config import Settings

    def settings(folder: str) -> Settings:
        return Settings.model_validate(
            {"journal": {"url": pg_database_url}, "daemon": {"lock_dir": tmp_path / folder}}
        )

    first = take_wallet_lock(settings("machine-a"), WALLET)
    try:
        with pytest.raises(SetupError, match="another process trades") as caught:
            take_wallet_lock(settings("machine-b"), WALLET)
        assert "advisory lock 'wallet:" in str(caught.value) and "\n" not in str(caught.value)
    finally:
        first.release()
    take_wallet_lock(settings("machine-b"), WALLET).release()


def test_a_daemon_that_lost_its_database_lock_regains_it_only_when_free(
    tmp_path: Path, pg_database_url: str
) -> None:
    lock = WalletLock(tmp_path / "a", WALLET, database=pg_database_url)
    rival = AdvisoryLock(pg_database_url, f"wallet:{WALLET}")
    admin = create_engine(pg_database_url, isolation_level="AUTOCOMMIT")
    try:
        assert lock.try_acquire() and lock.regain()
        with admin.connect() as conn:  # the server ends the daemon's lock connection
            conn.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
                    "AND ((classid::bigint << 32) | objid::bigint) = :key"
                ),
                {"key": advisory_key(f"wallet:{WALLET}")},
            )
        assert rival.try_acquire()  # another daemon took the wallet meanwhile
        assert not lock.still_held() and not lock.regain()
        rival.release()
        assert lock.regain() and lock.still_held()
    finally:
        lock.release()
        rival.release()
        admin.dispose()
    with pytest.raises(WalletLockError, match="not held"):
        lock.regain()
