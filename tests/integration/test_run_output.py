"""`bot run --paper` as a new user sees it: numbers in words, one output format at a time.

Real subprocesses of the demo (embedded paper world on its accelerated clock, 600x: a
DCA slice every 6 s) in `tmp_path`. The console format prints what happened on stdout
and keeps info-level structured logs off stderr; the JSON format prints JSON only.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.cli import clean_env

FILL = re.compile(
    r"^demo-dca bought [\d.]+ APT for 25 USDC at [\d.]+ USDC per APT "
    r"\(avg entry [\d.]+, [1-6] of 6 done\)$"
)


def run_demo(folder: Path, seconds: float, *options: str) -> tuple[str, str]:
    """Run the demo in `folder` for `seconds`, stop it with SIGTERM; (stdout, stderr)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", *options, "run", "--paper"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(BOT_DAEMON__LOCK_DIR=str(folder / "locks")),
        cwd=folder,
    )
    time.sleep(seconds)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    return out, err


def test_console_format_prints_fills_in_numbers_and_no_structured_info_lines(
    tmp_path: Path,
) -> None:
    out, err = run_demo(tmp_path, 9)
    lines = out.splitlines()
    assert lines[0].startswith("bot running: 2 strategies")
    assert any(FILL.match(line) for line in lines), out
    assert "FillsRecorded" not in out and "OrderFilled" not in out
    # Structured logs only for warnings and errors: no info line (the action, the fill)
    # is said twice.
    assert "[info" not in err and "action" not in err, err
    assert lines[-1] == "bot stopped"


def test_json_format_is_json_only(tmp_path: Path) -> None:
    out, err = run_demo(tmp_path, 9, "--log-format", "json")
    assert out == ""
    records = [json.loads(line) for line in err.splitlines()]  # every line is JSON
    fills = [r for r in records if r["event"] == "order.fill"]
    assert fills, err
    first = fills[0]
    assert (first["strategy"], first["sold"], first["sold_token"]) == ("demo-dca", "25", "USDC")
    assert first["average_entry"].endswith(" USDC per APT")
    assert any(r["event"] == "action" and r["strategy"] == "demo-dca" for r in records)
    said = [r["text"] for r in records if r["event"] == "console"]
    assert said[0].startswith("bot running: 2 strategies") and said[-1] == "bot stopped"
    assert any(FILL.match(text) for text in said), said
