"""Regenerate the dashboard screenshots of docs/console.md (docs/images/console-*.png).

The pictures are the browser tests' own (`tests/integration/test_console_browser.py`): a
stepped paper run (two 3-slice DCAs of USDC into APT, one day of fills, hourly prices) served
by the console on 127.0.0.1, the system chromium logged in with the token, each page
photographed at desktop (1200 px) and phone (390 px) width. This runs those tests with
`CONSOLE_SCREENSHOTS` set to a temporary folder, then reduces the chosen pictures to 256
colours so that each PNG stays well under 300 KB.

Run: `.venv/bin/python bench/console_screenshots.py [--out docs/images]`. Needs the
`playwright` package (the dev extra) and `/usr/bin/chromium`; no browser is downloaded.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST = "tests/integration/test_console_browser.py"
MAX_BYTES = 300_000
SHOTS = (
    "console-overview.png",
    "console-overview-phone.png",
    "console-strategy.png",
    "console-order.png",
    "console-order-phone.png",
    "console-remotes.png",
    "console-reports.png",
)


def shrink(raw: Path, out: Path) -> None:
    """`raw` in 256 colours at `out`; exits when the picture is still too big."""
    from PIL import Image  # matplotlib's own dependency (the `report` extra)

    with Image.open(raw) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
        small.save(out, optimize=True)
    size = out.stat().st_size
    print(f"{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: {size:,} bytes")
    if size > MAX_BYTES:
        sys.exit(f"{out} is {size:,} bytes, over {MAX_BYTES:,}: make the picture smaller")


def main() -> int:
    """Run the browser tests into a temporary folder and keep the chosen pictures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bot-console-shots-"))
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
        env["CONSOLE_SCREENSHOTS"] = str(work)
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", TEST, "-rs"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            print(done.stdout[-3000:], file=sys.stderr)
            return 1
        missing = [name for name in SHOTS if not (work / name).exists()]
        if missing:
            print(done.stdout[-1000:], file=sys.stderr)
            print(f"the tests made no {', '.join(missing)} (skipped?)", file=sys.stderr)
            return 2
        args.out.mkdir(parents=True, exist_ok=True)
        for name in SHOTS:
            shrink(work / name, args.out / name)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
