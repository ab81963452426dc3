"""`bot strategies new`: the plugin and test it writes pass ruff, the loader and pytest.

The generated files are checked as a user's folder sees them: ruff with the project's
rules (`bot` a third-party package there), the plugin loader on the printed config entry,
and the generated test run by pytest in a subprocess; a plugin broken on purpose makes
that test fail, so it tests something.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from bot.app.errors import SetupError
from bot.app.strategy_template import config_entry, write_strategy
from bot.config import StrategyEntry
from bot.engine.plugins import build_strategy
from tests.support.cli import ROOT, clean_env


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=clean_env(),
        timeout=300,
        check=False,
    )


def test_the_generated_plugin_and_test_pass_ruff_the_loader_and_pytest(tmp_path: Path) -> None:
    made = write_strategy(
        "weekly_buyer", directory=tmp_path / "strategies", tests=tmp_path / "tests"
    )
    files = [str(made.plugin), str(made.test)]
    ruff = [
        "ruff",
        "--config",
        str(ROOT / "pyproject.toml"),
        "--config",
        "lint.isort.known-third-party = ['bot']",
    ]
    linted = _run(ruff[0], "check", *ruff[1:], *files, cwd=tmp_path)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    formatted = _run(ruff[0], "format", "--check", *ruff[1:], *files, cwd=tmp_path)
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr
    entry = StrategyEntry(**tomllib.loads(config_entry("weekly_buyer"))["strategies"][0])
    strategy = build_strategy(entry, [tmp_path / "strategies"])
    assert type(strategy).name == "weekly_buyer" and type(strategy).__name__ == "WeeklyBuyer"
    assert list(strategy.tokens()) == ["USDC", "APT"]
    tested = _run(
        "pytest", "-q", "-p", "no:cacheprovider", "tests/test_weekly_buyer.py", cwd=tmp_path
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "2 passed" in tested.stdout


def test_the_generated_test_fails_for_a_plugin_that_never_buys(tmp_path: Path) -> None:
    made = write_strategy("idle", directory=tmp_path / "strategies", tests=tmp_path / "tests")
    text = made.plugin.read_text()
    broken = text.replace('if ctx.live_orders("dca"):', "if True:")
    assert broken != text
    made.plugin.write_text(broken)
    tested = _run("pytest", "-q", "-p", "no:cacheprovider", "tests/test_idle.py", cwd=tmp_path)
    assert tested.returncode == 1, tested.stdout + tested.stderr
    assert "1 failed, 1 passed" in tested.stdout


def test_refusals(tmp_path: Path) -> None:
    where = {"directory": tmp_path / "s", "tests": tmp_path / "t"}
    for name in ("9lives", "my-plugin", "class", "_hidden"):
        with pytest.raises(SetupError, match=r"^NAME: .* is not a Python identifier"):
            write_strategy(name, **where)
    with pytest.raises(SetupError, match="--from: 'grid' is not one of recurring_dca"):
        write_strategy("grid_one", template="grid", **where)
    made = write_strategy("twice", **where)
    made.plugin.write_text("# mine\n")
    with pytest.raises(SetupError, match=r"twice\.py exists; refusing to overwrite it"):
        write_strategy("twice", **where)
    assert made.plugin.read_text() == "# mine\n"
    write_strategy("twice", force=True, **where)
    assert "class Twice(Strategy[TwiceParams])" in made.plugin.read_text()


def test_a_test_that_cannot_be_written_leaves_no_plugin_behind(tmp_path: Path) -> None:
    (tmp_path / "t").write_text("a file where the tests folder should be\n")
    with pytest.raises(SetupError, match=r"^.*test_lonely\.py: "):
        write_strategy("lonely", directory=tmp_path / "s", tests=tmp_path / "t" / "sub")
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == []  # no plugin, no temp file
