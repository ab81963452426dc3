"""Issue 21, item 6: every option of every verb says its default in `--help`.

An option with a default value shows it (`[default: …]`, typer's `show_default`); one
whose default is None has a computed default, so its help text must say it (`Default:
…`), or that it is required. The walk goes through the real command tree, every verb
and sub-verb loaded as `bot` loads them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer

from bot.cli import app
from tests.support.cli import run_bot

_SAID = re.compile(r"default|required|give --", re.IGNORECASE)


def _options(command: Any, path: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    if hasattr(command, "list_commands"):
        ctx = typer.Context(command)
        for name in command.list_commands(ctx):
            yield from _options(command.get_command(ctx, name), (*path, name))
        return
    for param in command.params:
        if param.param_type_name == "option" and param.name != "help":
            yield " ".join(path), param


def test_every_option_says_its_default_or_that_it_is_required() -> None:
    silent = []
    for verb, option in _options(typer.main.get_command(app), ("bot",)):
        if option.required or (option.is_flag and option.default in (False, None)):
            continue  # typer says [required]; an off flag's default is "off"
        if option.default is not None and option.show_default is not False:
            continue  # typer prints [default: …]
        if not _SAID.search(option.help or ""):
            silent.append(f"{verb} {'/'.join(option.opts)}")
    assert silent == []


def test_backtest_help_says_the_default_schedule_and_the_shown_defaults() -> None:
    result = run_bot("backtest", "--help", env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "Default: the configured strategy's own schedule; for a plugin name, once a day." in text
    assert "[default: return]" in text
    assert "Start, ISO-8601 (UTC if no offset). Required." in text
