"""The reports the user made, read-only: `bot backtest --report DIR`, `bot report --html DIR`.

`[console].reports_dir` (default: `reports` beside the journal) is the one folder the
console reads. `list_reports` finds its HTML reports (a bounded walk: `MAX_DEPTH`
folders deep, `MAX_FILES` files, symbolic links never followed, a link to a file
outside the folder left out). `read_report` gives one file by its path relative to the
folder, or None — for anything that is not plainly a file inside it: an absolute path,
`..`, a hidden part, a backslash or NUL, a kind of file not served (`SERVED`), a
symbolic link that resolves outside the folder, something not a regular file, or a file
over `MAX_BYTES`. The page route serves an HTML report with a Content-Security-Policy
that lets no script run and nothing be fetched but inline images (`REPORT_CSP`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Final
from urllib.parse import quote

from bot.config import Settings
from bot.console.models import ReportFileModel, ReportsAnswer
from bot.ops.status_file import status_path

__all__ = [
    "FILES_PREFIX",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_FILES",
    "REPORT_CSP",
    "SERVED",
    "ReportFile",
    "list_reports",
    "read_report",
    "reports_root",
]

FILES_PREFIX: Final = "/reports/files/"
MAX_DEPTH: Final = 4
MAX_FILES: Final = 500
MAX_BYTES: Final = 64 * 1024 * 1024
SERVED: Final = {
    ".html": "text/html; charset=utf-8",
    ".json": "application/json",
    ".csv": "text/csv; charset=utf-8",
    ".png": "image/png",
}
"""The kinds of file a report folder holds that the console serves (by suffix)."""
REPORT_CSP: Final = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; form-action 'none'; "
    "frame-ancestors 'none'; base-uri 'none'; sandbox allow-same-origin"
)


def reports_root(settings: Settings) -> Path:
    """`[console].reports_dir`, or `reports` in the folder of the journal's status file."""
    configured = settings.console.reports_dir
    if configured is not None:
        return configured.expanduser()
    return status_path(settings.journal.url, settings.daemon.status_file).with_name("reports")


def _inside(path: str, root: str) -> bool:
    return path != root and os.path.commonpath([path, root]) == root


def list_reports(root: Path) -> ReportsAnswer:
    """The HTML reports under `root`, newest first (blocking: a worker thread)."""
    base = os.path.realpath(root)
    if not os.path.isdir(base):
        return ReportsAnswer(folder_exists=False, items=[], truncated=False)
    found: list[ReportFileModel] = []
    truncated = False
    for folder, subfolders, names in os.walk(base, followlinks=False):
        depth = len(Path(folder).relative_to(base).parts)
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        if depth >= MAX_DEPTH:
            subfolders.clear()
        for name in sorted(names):
            if name.startswith(".") or not name.endswith(".html"):
                continue
            if len(found) >= MAX_FILES:
                truncated = True
                break
            path = os.path.join(folder, name)
            if not _inside(os.path.realpath(path), base):
                continue
            with contextlib.suppress(OSError):
                info = os.stat(path)
                if stat.S_ISREG(info.st_mode):
                    relative = PurePosixPath(*Path(path).relative_to(base).parts).as_posix()
                    found.append(
                        ReportFileModel(
                            path=relative,
                            url=FILES_PREFIX + quote(relative),
                            size=info.st_size,
                            modified=datetime.fromtimestamp(info.st_mtime, UTC),
                        )
                    )
        if truncated:
            break
    found.sort(key=lambda r: (r.modified, r.path), reverse=True)
    return ReportsAnswer(folder_exists=True, items=found, truncated=truncated)


@dataclass(frozen=True)
class ReportFile:
    """One file read from the reports folder, and how it is served."""

    content: bytes
    media_type: str


def _plain_relative(relative: str) -> PurePosixPath | None:
    """`relative` as a path inside a folder, or None when it could point anywhere else."""
    if not relative or "\\" in relative or "\x00" in relative or relative.startswith("/"):
        return None
    path = PurePosixPath(relative)
    if path.is_absolute() or any(p in ("", ".", "..") or p.startswith(".") for p in path.parts):
        return None
    return path


def read_report(root: Path, relative: str) -> ReportFile | None:
    """The file at `relative` inside `root`, or None (see the module docstring)."""
    path = _plain_relative(relative)
    if path is None:
        return None
    media_type = SERVED.get(path.suffix.lower())
    if media_type is None:
        return None
    base = os.path.realpath(root)
    target = os.path.realpath(os.path.join(base, *path.parts))
    if not _inside(target, base):
        return None
    try:
        descriptor = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        return ReportFile(handle.read(MAX_BYTES + 1)[:MAX_BYTES], media_type)
