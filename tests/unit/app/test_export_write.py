"""`bot.app.export.write_atomically`: all or nothing, never over a file it was not told to
replace, never through a link, no temporary file left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.app.export import symbol_names, write_atomically


def test_a_new_file_is_written_whole_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    write_atomically(path, b"a,b\r\n", replace=False)
    assert path.read_bytes() == b"a,b\r\n"
    assert (path.stat().st_mode & 0o777) == 0o600
    assert os.listdir(tmp_path) == ["t.csv"]


def test_an_existing_file_is_not_replaced_unless_told(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(b"old")
    with pytest.raises(FileExistsError):
        write_atomically(path, b"new", replace=False)
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["t.csv"]
    write_atomically(path, b"new", replace=True)
    assert path.read_bytes() == b"new" and os.listdir(tmp_path) == ["t.csv"]


def test_a_link_is_replaced_not_written_through(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_bytes(b"keep")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    with pytest.raises(FileExistsError):
        write_atomically(link, b"new", replace=False)
    write_atomically(link, b"new", replace=True)
    assert target.read_bytes() == b"keep"
    assert not link.is_symlink() and link.read_bytes() == b"new"


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "d.csv").mkdir()  # a directory where the file should go
    with pytest.raises(OSError):
        write_atomically(tmp_path / "d.csv", b"x", replace=True)
    assert os.listdir(tmp_path) == ["d.csv"]


def test_symbols_shared_by_two_tokens_are_not_used() -> None:
    symbols = {"0x1::a::A": "USDC", "0x2::b::B": "USDC", "0x3::c::C": "APT", "0x4::d::D": None}
    assert symbol_names(symbols, symbols.get) == {"0x3::c::C": "APT"}
