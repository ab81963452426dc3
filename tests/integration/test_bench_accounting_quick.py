"""`bench/accounting.py --quick` runs end to end: the CI smoke run of the report benchmark.

The same script as the full benchmark (100,000 fills, issue 18's target), on a tenth of
the year's fills: a real journal written through the journal's API, the accounting, the
`bot report` command in-process and as a process. Times are not asserted (CI machines
vary); what is: every part ran, the journal holds the fills it should, and the report
process stayed far under the memory target.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_quick_benchmark_reports_every_figure(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "accounting.py"), "--quick", "--runs", "1"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.stdout.splitlines()[-1]
    figures = dict(re.findall(r"(\w+)=(\S+)", summary))
    assert figures["fills"] == "10000", summary
    for name in ("account_s", "report_s", "process_s", "peak_mb", "traced_mb"):
        assert float(figures[name]) > 0, summary
    assert float(figures["peak_mb"]) <= 200, summary
    assert "(b) report in-process (" in done.stdout and " 0 lines" not in done.stdout
    # The journal it built is cached for the next run (keyed by its format version).
    assert len(list((tmp_path / "bot-bench-accounting").glob("journal-v*-10000.db"))) == 1
