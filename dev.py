#!/usr/bin/env python3
"""Set-up and entry point for a fresh clone: `python3 dev.py demo` and `python3 dev.py test`.

`demo` and `test` run in the clone's folder; `bot …` runs in the caller's own directory.

Each command creates `.venv/` on first use (or when `pyproject.toml` changes), installs the
project with its dev extras into it, and then runs. Nothing has to be installed by hand
beyond Python 3.11+ itself. Uses only the standard library.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".installed-from"


def _venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _ensure_venv() -> Path:
    """Create the virtual environment and install the project when needed."""
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    python = _venv_python()
    if python.exists() and STAMP.exists() and STAMP.read_text().strip() == wanted:
        return python
    if not python.exists():
        print(f"dev.py: creating {VENV.relative_to(ROOT)}/", file=sys.stderr)
        venv.EnvBuilder(with_pip=True, clear=False).create(VENV)
    print("dev.py: installing the project and its dev extras", file=sys.stderr)
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", "-e", f"{ROOT}[dev]"], check=True)
    STAMP.write_text(wanted)
    return python


def _has_postgresql() -> bool:
    return bool(shutil.which("initdb")) or any(Path("/usr/lib/postgresql").glob("*/bin/initdb"))


SYSTEM_PACKAGES = (
    ("postgresql", "the journal's PostgreSQL tests", _has_postgresql),
    ("chromium", "the console's browser tests", lambda: bool(shutil.which("chromium"))),
)
"""Debian packages some tests use: (package, whose tests, whether it is installed)."""


def _ensure_system_packages() -> None:
    """Install the system packages tests use (`SYSTEM_PACKAGES`) when missing.

    Only as root with apt-get (a CI container, a fresh VM); otherwise, or when the install
    fails, those tests skip with one line naming what is missing.
    """
    missing = [(package, whose) for package, whose, present in SYSTEM_PACKAGES if not present()]
    if not missing:
        return
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("apt-get"):
        for package, whose in missing:
            print(f"dev.py: {package} not installed: {whose} will skip", file=sys.stderr)
        return
    names = [package for package, _ in missing]
    print(f"dev.py: installing {', '.join(names)} for the tests", file=sys.stderr)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    codes = [
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=False).returncode
        for command in (
            ["apt-get", "update", "-q"],
            ["apt-get", "install", "-y", "-q", "--no-install-recommends", *names],
        )
    ]
    if codes[-1] != 0:
        for package, whose in missing:
            print(f"dev.py: installing {package} failed: {whose} will skip", file=sys.stderr)


def _run(args: list[str], cwd: Path | None = ROOT) -> int:
    """Run `args` in `cwd` (None: the caller's own directory) until it ends."""
    process = subprocess.Popen(args, cwd=cwd)
    while True:
        try:
            return process.wait()
        except KeyboardInterrupt:
            # Ctrl-C: the child stops cleanly on SIGINT (it may already have had it from the
            # terminal; a second one is harmless). Wait for it instead of a traceback.
            process.send_signal(signal.SIGINT)


def main(argv: list[str]) -> int:
    """Dispatch `demo`, `test` or `bot …` after making sure the environment is ready."""
    if not argv or argv[0] not in {"demo", "test", "bot"}:
        print("usage: python3 dev.py demo | test [pytest args] | bot [args]", file=sys.stderr)
        return 2
    python = str(_ensure_venv())
    command, rest = argv[0], argv[1:]
    if command == "bot":
        # In the caller's directory, so relative paths (`-c config.toml`, key files, the
        # journal) mean what they say. `-P`: that directory is not put on sys.path, so a
        # folder of its own named `strategies` or `bot` cannot hide the installed packages.
        return _run([python, "-P", "-m", "bot", *rest], cwd=None)
    if command == "demo":
        # The main job on the embedded paper world: `bot run --paper` with no config file
        # (two strategies on an accelerated clock, state kept in ./data). Ctrl-C stops it.
        return _run([python, "-m", "bot", "run", "--paper", *rest])
    # test: static checks first (fast, and they name the file and line), then the suite.
    _ensure_system_packages()
    for check in (
        [python, "-m", "ruff", "check", "bot", "strategies", "harness", "tests", "bench", "dev.py"],
        [python, "-m", "mypy"],
        # The import rules of docs/ARCHITECTURE.md (pyproject's [tool.importlinter]).
        [python, "-c", "from importlinter.cli import lint_imports_command as c; c()", "--no-cache"],
    ):
        code = _run(check)
        if code:
            return code
    return _run([python, "-m", "pytest", *rest])


if __name__ == "__main__":
    if sys.version_info < (3, 11):  # noqa: UP036 - a clear message on an old interpreter
        sys.exit(f"Python 3.11 or newer is required (this is {sys.version.split()[0]}).")
    sys.exit(main(sys.argv[1:]))
