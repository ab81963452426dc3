"""Run `bot paper serve` as a real subprocess on 127.0.0.1 and a free port."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAPER_KEY = "paper-test-key-0b3c"


def write_config(path: Path, extra: str = "") -> Path:
    """A config whose paper world runs on a stepped clock with a known API key."""
    path.write_text(
        "[paper]\n"
        'clock = "stepped"\n'
        'order_style = "escrow"\n'
        'start = "2026-03-01T00:00:00Z"\n'
        f'api_keys = ["{PAPER_KEY}"]\n'
        "rate_limit_per_second = 1000.0\n"
        "rate_limit_burst = 1000\n" + extra
    )
    return path


@contextmanager
def paper_serve(
    config: Path, *, timeout: float = 30.0
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Start `bot -c CONFIG paper serve --port 0`; yield its URL and process; stop it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "-c", str(config), "paper", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert process.stdout is not None
    url = None
    deadline = time.monotonic() + timeout
    while url is None and time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.2)
        if ready:
            line = process.stdout.readline()
            if line.startswith("paper world on "):
                url = line.split()[-1]
        if process.poll() is not None:
            break
    if url is None:
        process.kill()
        raise RuntimeError(f"bot paper serve did not start: {process.communicate()[1][-2000:]}")
    try:
        yield url, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
