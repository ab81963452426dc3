"""The folder of recorded provider answers: its file names, its JSON, its rotation.

`[api].record_answers_dir` holds JSON-lines files named `answers-YYYYMMDD-NNNNNN.jsonl`
(the UTC day of the first answer, then a number that only grows), one answer a line
(`bot.api.recording` writes them, `bot.api.answer_check` reads them). Files are 0600 in a
0700 folder. A file is followed by a new one when the day changes or when it reaches its
share of the folder's budget (`max_bytes / max_files`); after every write the oldest files
are deleted while there are more than `max_files` or they hold more than `max_bytes`
together, so the folder stays within its bounds (give or take one answer) for months.
Several processes may record to one folder: each appends whole lines with one `write`.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections import deque
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

__all__ = ["FILE_PATTERN", "AnswerFiles", "answer_files", "dumps_exact"]

FILE_PATTERN: Final = re.compile(r"^answers-(\d{8})-(\d{6,})\.jsonl$")
"""A recording file's name: its first answer's UTC day and its sequence number."""
_MIN_FILE_BYTES: Final = 64 * 1024
_OPEN_FLAGS: Final = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)


def dumps_exact(value: Any) -> str:
    """Compact ASCII JSON of `value`, numbers exactly as read by `bot.money.loads_exact`.

    `Decimal` is written as its own digits (`1.50` stays `1.50`, never a float's
    rounding), so an answer reads back with the very numbers the provider sent.

    Raises:
        ValueError: a value JSON cannot hold (a non-finite `Decimal`, a float, an object).
    """
    if isinstance(value, dict):
        items = (f"{json.dumps(str(k))}:{dumps_exact(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(dumps_exact(v) for v in value) + "]"
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"not a JSON number: {value}")
        return str(value)
    if value is None or isinstance(value, str | int):  # bool is an int
        return json.dumps(value)
    raise ValueError(f"not a JSON value: {type(value).__name__}")


def answer_files(folder: Path) -> list[tuple[int, Path]]:
    """The recording files of `folder` as (sequence number, path), oldest first."""
    found: list[tuple[int, Path]] = []
    for entry in os.scandir(folder):
        match = FILE_PATTERN.match(entry.name)
        if match is not None and entry.is_file(follow_symlinks=False):
            found.append((int(match.group(2)), Path(entry.path)))
    return sorted(found)


class AnswerFiles:
    """Appends answer lines to the folder's newest file, rotating and pruning (see module).

    Every method raises `OSError` on a disk problem; the recorder then stops recording.
    """

    def __init__(self, folder: Path, *, max_bytes: int, max_files: int) -> None:
        self.folder = folder
        self._max_bytes = max_bytes
        self._max_files = max(2, max_files)
        self._per_file = max(max_bytes // self._max_files, _MIN_FILE_BYTES)
        self._fd: int | None = None
        self._day = ""
        self._seq = 0
        self._size = 0
        self._older: deque[tuple[Path, int]] = deque()
        self.opened_mode_warning: str | None = None
        self._prepare_folder()

    def _prepare_folder(self) -> None:
        """Create the folder 0700; note (for one warning) an existing one others may read."""
        if not self.folder.exists():
            self.folder.mkdir(parents=True, mode=0o700)
            os.chmod(self.folder, 0o700)  # mkdir's mode is narrowed by the umask only
        mode = os.stat(self.folder).st_mode
        if not stat.S_ISDIR(mode):
            raise NotADirectoryError(f"{self.folder} is not a folder")
        if mode & 0o077:
            self.opened_mode_warning = (
                f"{self.folder} can be read by others (mode {mode & 0o777:o})"
            )

    def write(self, line: bytes, day: str) -> None:
        """Append one line (with its newline) to the file of `day`, rotating as needed."""
        if self._fd is None or day != self._day or self._size >= self._per_file:
            self._rotate(day)
        assert self._fd is not None
        view = memoryview(line)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        self._size += len(line)
        self._prune()

    def _rotate(self, day: str) -> None:
        """Close the current file; continue today's newest one if it has room, else a new one."""
        self.close()
        existing = answer_files(self.folder)
        self._older = deque((path, _size(path)) for _seq, path in existing)
        newest_seq = existing[-1][0] if existing else 0
        if existing and not self._seq:  # a new process: today's newest file may go on
            path = existing[-1][1]
            match = FILE_PATTERN.match(path.name)
            if match and match.group(1) == day and self._older[-1][1] < self._per_file:
                self._older.pop()
                self._open(path, newest_seq, day, exclusive=False)
                return
        for seq in range(max(newest_seq, self._seq) + 1, max(newest_seq, self._seq) + 100):
            path = self.folder / f"answers-{day}-{seq:06d}.jsonl"
            try:
                self._open(path, seq, day, exclusive=True)
            except FileExistsError:  # another process took this number
                continue
            return
        raise FileExistsError(f"no free file name in {self.folder}")

    def _open(self, path: Path, seq: int, day: str, *, exclusive: bool) -> None:
        fd = os.open(path, _OPEN_FLAGS | (os.O_EXCL if exclusive else 0), 0o600)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OSError(f"{path} is not a regular file")
            os.fchmod(fd, 0o600)
        except OSError:
            os.close(fd)
            raise
        self._fd, self._seq, self._day, self._size = fd, seq, day, info.st_size

    def _prune(self) -> None:
        """Delete the oldest files while over `max_files` or `max_bytes` (never the current)."""
        total = self._size + sum(size for _path, size in self._older)
        while self._older and (len(self._older) + 1 > self._max_files or total > self._max_bytes):
            path, size = self._older.popleft()
            total -= size
            path.unlink(missing_ok=True)  # another process may have pruned it first

    def close(self) -> None:
        """Close the current file (the next write opens one again)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def _size(path: Path) -> int:
    try:
        return path.stat(follow_symlinks=False).st_size
    except FileNotFoundError:
        return 0
