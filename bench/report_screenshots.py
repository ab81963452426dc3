"""Regenerate the backtest report screenshots of docs/backtesting.md (docs/images/).

What a user would do, step by step, in a temporary folder:

1. `bot series synth`: two months of APT prices every 15 minutes (seed 42, 90 % a year);
2. `bot backtest --strategy limit_ladder … --report ladder/`: a 4-rung ladder, hourly;
3. `bot backtest --strategy recurring_dca … --sweep … --report sweep/`: a 2 × 3 grid;
4. Debian's headless Chromium takes a picture of each page (or of a copy starting at
   one of its sections), and the picture is reduced to 256 colours so that each PNG
   stays well under 300 KB.

The figures in the pictures are therefore the code's own, on a seeded series: run this
after changing the report, and commit the PNGs with the change.

Run: `.venv/bin/python bench/report_screenshots.py [--out docs/images]`. Needs
`chromium` (`apt-get install chromium`) and matplotlib (the `report` extra).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
WIDTH = 1200
LADDER = (
    "sell_token=USDC,buy_token=APT,rungs=4,spacing_percent=2,amount_per_rung=100,"
    "redrift_percent=5,expiry=3 days"
)
DCA = "from_token=USDC,to_token=APT,amount_per_order=20,orders=60,interval=1 day"
MAX_BYTES = 300_000
SHOTS = (  # (file name, page inside the work folder, anchor, height in CSS pixels)
    ("backtest-report.png", "ladder/report.html", "", 1160),
    ("backtest-report-value.png", "ladder/report.html", "value", 1250),
    ("backtest-sweep.png", "sweep/sweep.html", "", 940),
)


def bot(work: Path, *args: str) -> float:
    """Run `python -m bot ARGS` in `work` as a user would; returns its wall time."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
    began = time.perf_counter()
    done = subprocess.run(
        [PYTHON, "-m", "bot", *args], cwd=work, env=env, capture_output=True, text=True
    )
    took = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"bot {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    for line in done.stderr.splitlines():
        print(f"  {line}")
    return took


def make_reports(work: Path) -> None:
    """The series, the ladder's report and the sweep's report, in `work`."""
    bot(
        work, "series", "synth", "--out", "apt.csv", "--tokens", "APT",
        "--from", "2026-01-01T00:00:00Z", "--to", "2026-03-01T00:00:00Z", "--step", "15m",
        "--volatility", "APT=0.9",
    )  # fmt: skip
    window = ["--from", "2026-01-01", "--to", "2026-02-01", "--prices", "apt.csv"]
    took = bot(
        work, "backtest", "--strategy", "limit_ladder", "--params", LADDER,
        "--schedule", "1h", *window, "--report", "ladder",
    )  # fmt: skip
    print(f"ladder backtest with its report: {took:.2f} s")
    took = bot(
        work, "backtest", "--strategy", "recurring_dca", "--params", DCA, "--schedule", "1d",
        "--from", "2026-01-01", "--to", "2026-03-01", "--prices", "apt.csv",
        "--sweep", "amount_per_order=10,20", "--sweep", "interval=12 hours,1 day,3 days",
        "--report", "sweep",
    )  # fmt: skip
    print(f"sweep of 6 with its report: {took:.2f} s")


def from_section(page: Path, anchor: str) -> Path:
    """A copy of `page` starting at the heading `#anchor` (what comes before it hidden).

    Headless Chromium's screenshot of a page scrolled to a fragment is not reliable (the
    part scrolled past can come out blank), so the section is moved to the top instead.
    """
    hide = f"<style>body > :not(#{anchor}):not(#{anchor} ~ *) {{ display: none; }}</style>"
    view = page.with_name(f"{page.stem}-{anchor}.html")
    view.write_text(page.read_text(encoding="utf-8").replace("</head>", hide + "</head>"))
    return view


def screenshot(chromium: str, page: Path, anchor: str, height: int, out: Path) -> None:
    """One picture of `page` (from the heading `#anchor`, if given), in 256 colours."""
    url = (from_section(page, anchor) if anchor else page).as_uri()
    raw = out.with_suffix(".raw.png")
    subprocess.run(
        [
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--force-device-scale-factor=1", f"--window-size={WIDTH},{height}",
            f"--screenshot={raw}", url,
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    from PIL import Image  # matplotlib's own dependency

    with Image.open(raw) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
        small.save(out, optimize=True)
    raw.unlink()
    size = out.stat().st_size
    print(f"{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: {size:,} bytes")
    if size > MAX_BYTES:
        sys.exit(f"{out} is {size:,} bytes, over {MAX_BYTES:,}: make the picture smaller")


def main() -> int:
    """Make the reports and the pictures; exit 2 without Chromium."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("chromium not found: apt-get install chromium", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="bot-report-shots-"))
    try:
        make_reports(work)
        args.out.mkdir(parents=True, exist_ok=True)
        for name, page, anchor, height in SHOTS:
            screenshot(chromium, work / page, anchor, height, args.out / name)
    finally:
        if args.keep:
            print(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
