"""`bot report --html DIR` through the real CLI over a real journal file.

The journal holds the 4-slice DCA of `test_report_cli` (figures by hand there) under a
strategy name full of HTML, and a second strategy. The page is parsed with
`html.parser`: the console's figures are in it, the name is escaped (text, never
markup), the charts are inline SVG and nothing is fetched. With Debian's Chromium
installed, the page is also rendered headless and the picture checked for ink.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.support.cli import run_bot
from tests.support.trade_journal import write_trades

NAME = '<script>alert("x")</script>&dca'
# Each slice sells 25 USDC (0.05 of it the keeper's) at noon, APT at 5, 4, 5, 6.25 USDC.
SLICES = [(Decimal("5"), Decimal("4.99")), (Decimal("4"), Decimal("6.2375"))]
SLICES += [(Decimal("5"), Decimal("4.99")), (Decimal("6.25"), Decimal("3.992"))]


def _fill_journal(path: Path) -> None:
    write_trades(path, SLICES, strategy=NAME, last_price=Decimal("6"))


class _Page(HTMLParser):
    """The page's text, its tags, and every attribute that could fetch something."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.tags: list[str] = []
        self.fetches: list[str] = []
        self.svg_titles: list[str] = []
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._in.append(tag)
        for name, value in attrs:
            if name in {"src", "href", "xlink:href"} and value and not value.startswith("#"):
                self.fetches.append(value)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._in:
            while self._in.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in[-2:] == ["svg", "title"]:
            self.svg_titles.append(data)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    _fill_journal(tmp_path / "bot.db")
    path = tmp_path / "bot.toml"
    path.write_text(
        'mode = "paper"\n'
        f'[journal]\nurl = "sqlite:///{tmp_path / "bot.db"}"\n'
        '[accounting]\ntime_zone = "UTC"\ncost_basis = "fifo"\n'
    )
    return path


def _page(folder: Path) -> _Page:
    parsed = _Page()
    parsed.feed((folder / "index.html").read_text(encoding="utf-8"))
    parsed.close()
    return parsed


def test_the_page_has_the_console_figures_and_three_charts_per_strategy(
    config: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "out" / "report"  # created, parents too
    done = run_bot("-c", str(config), "report", "--html", str(folder))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"report written to {folder / 'index.html'}"
    page = _page(folder)
    text = " ".join(" ".join(page.text).split())
    # The figures of the console table (test_report_cli checks them by hand).
    for shown in (
        "100 USDC",
        "20.2095 APT",
        "4.94817 USDC per APT",
        "4.66667 USDC per APT (entry +6.03 %)",
        "121.26 USD (20.2095 APT)",
        "21.26 USD",
        "keeper 0.2 USDC (0.20 USD)",
    ):
        assert shown in text, shown
    # A 4-day window is bucketed by day (no --by): one bar per day, first to last record.
    for day in ("2026-05-01", "2026-05-02", "2026-05-03", "2026-05-04", "2026-05-05"):
        assert day in text
    assert page.tags.count("svg") == 6  # value, entry vs market, P&L per strategy
    assert "Value over time (USD)" in page.svg_titles
    assert "Average entry vs market (USDC per APT)" in page.svg_titles
    assert "P&L per day (change of total P&L, USD)" in page.svg_titles
    assert "script" not in page.tags and "img" not in page.tags
    assert page.fetches == []  # self-contained: no file, no network
    assert "tp-apt" in text


def test_a_strategy_name_is_text_never_markup(config: Path, tmp_path: Path) -> None:
    folder = tmp_path / "report"
    assert run_bot("-c", str(config), "report", "--html", str(folder)).returncode == 0
    raw = (folder / "index.html").read_text(encoding="utf-8")
    assert NAME not in raw and "<script" not in raw
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;dca" in raw
    page = _page(folder)
    assert f"strategy {NAME} (cost basis FIFO" in "".join(page.text)


def test_the_pnl_bars_add_up_to_the_total(config: Path, tmp_path: Path) -> None:
    folder = tmp_path / "report"
    done = run_bot("-c", str(config), "report", "--strategy", NAME, "--html", str(folder))
    assert done.returncode == 0, done.stderr
    raw = (folder / "index.html").read_text(encoding="utf-8")
    section = raw.split("P&amp;L change (day)")[1].split("</table>")[0]
    changes = [Decimal(v) for v in re.findall(r'<td class="num">(-?[0-9.]+) USD</td>', section)]
    # Day 1: 25 USD bought 4.99 APT worth 24.95 (the keeper's fee), ... day 5: APT 6.25 → 6.
    assert changes == [Decimal(v) for v in ("-0.05", "-5.04", "11.18", "20.22", "-5.05")]
    # Nothing held before the window: the days add up to the total P&L, 21.257 USD.
    assert sum(changes) == Decimal("21.26")


def test_an_existing_page_is_replaced_only_with_force(config: Path, tmp_path: Path) -> None:
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "index.html").write_text("mine")
    done = run_bot("-c", str(config), "report", "--html", str(folder))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "exists (--force replaces it)" in done.stderr
    assert (folder / "index.html").read_text() == "mine"
    done = run_bot("-c", str(config), "report", "--html", str(folder), "--force")
    assert done.returncode == 0, done.stderr
    assert "Accounting report" in (folder / "index.html").read_text()
    assert [p.name for p in folder.iterdir()] == ["index.html"]  # no partial file left


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--json"], "--html and --json: choose one"),
        (["--by", "year"], "--by must be day, week or month"),
    ],
)
def test_bad_combinations_are_one_line_exit_2(
    config: Path, tmp_path: Path, extra: list[str], says: str
) -> None:
    done = run_bot("-c", str(config), "report", "--html", str(tmp_path / "r"), *extra)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and says in done.stderr
    assert not (tmp_path / "r").exists()


def test_a_file_is_no_folder(config: Path, tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file")
    done = run_bot("-c", str(config), "report", "--html", str(tmp_path / "taken"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "not a folder" in done.stderr


def test_force_without_html_is_refused(config: Path) -> None:
    done = run_bot("-c", str(config), "report", "--force")
    assert done.returncode == 2 and "--force applies to --html only" in done.stderr


def test_a_window_without_trades_still_writes_a_page(config: Path, tmp_path: Path) -> None:
    folder = tmp_path / "report"
    done = run_bot("-c", str(config), "report", "--from", "2027-01-01", "--html", str(folder))
    assert done.returncode == 0, done.stderr
    assert "no trades from 2027-01-01" in done.stdout
    assert "No trades in the window." in " ".join(_page(folder).text)


def test_chromium_renders_the_page(config: Path, tmp_path: Path) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("chromium is not installed: the page is not rendered")
    from PIL import Image

    folder = tmp_path / "report"
    assert run_bot("-c", str(config), "report", "--html", str(folder)).returncode == 0
    shot = tmp_path / "page.png"
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1000,1400",
            f"--screenshot={shot}",
            (folder / "index.html").as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert shot.is_file()
    with Image.open(shot) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
    assert colours is not None and len(colours) > 20  # text and lines, not a blank page
    blue = sum(count for count, rgb in colours if rgb == (9, 105, 218))  # the value line
    assert blue > 0
