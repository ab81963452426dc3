"""Who may use whom outside the bot: `bench/` and `harness/` never reach into `tests/`.

`harness/` holds the rigs the tests and the benchmarks share; it is checked like the bot
(ruff, mypy) but is not shipped in the wheel. Import-linter sees packages only, so the
scripts in `bench/` are read here: their imports, and the module names they hand a child
process (`python -m …`).
"""

from __future__ import annotations

import ast
import fnmatch
import textwrap
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _uses_of_tests(path: Path) -> list[str]:
    """Each import of `tests…` in `path`, and each string naming a `tests.…` module."""
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value] if node.value.startswith("tests.") else []  # not a path part
        found += [
            f"{where}:{getattr(node, 'lineno', 0)}: {name}"
            for name in names
            if name == "tests" or name.startswith("tests.")
        ]
    return found


def test_bench_and_harness_import_nothing_from_tests() -> None:
    files = sorted([*(ROOT / "bench").glob("*.py"), *(ROOT / "harness").rglob("*.py")])
    assert len(files) > 5
    assert [use for path in files for use in _uses_of_tests(path)] == []


def test_the_check_finds_imports_and_module_names(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            """
            import tests.support.cli
            from tests.support import loopback
            from bot.clock import RealClock
            CHILD = ["python", "-m", "tests.support.bot_child"]
            NOTE = "testsuite, not a module of tests"
            DATA = ROOT / "tests" / "fixtures"
            """
        )
    )
    assert _uses_of_tests(script) == [
        "script.py:2: tests.support.cli",
        "script.py:3: tests.support",
        "script.py:5: tests.support.bot_child",
    ]


def test_the_harness_is_checked_but_not_shipped() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    assert not any(fnmatch.fnmatch("harness", pattern) for pattern in shipped), shipped
    assert "harness" in pyproject["tool"]["mypy"]["packages"]
    assert (ROOT / "harness" / "__init__.py").exists()
