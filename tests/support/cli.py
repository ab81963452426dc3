"""Running `bot` as a user does: a real subprocess, in a clean environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without `BOT_*` variables (a developer's own would leak
    into the test), plus `extra`."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("BOT_")}, **extra}


def run_bot(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path = ROOT,
    timeout: float = 120.0,
) -> subprocess.CompletedProcess[str]:
    """`python -m bot ARGS` to completion (no exception on a non-zero exit)."""
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        capture_output=True,
        text=True,
        env=clean_env(**(env or {})),
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
