"""Verbs imported when they are used, not when `bot` starts.

Every verb module pulls in its own dependencies (the HTTP client, the journal and its
migrations, the signer, NumPy…); importing them all costs more than half a second on each
start of `bot`, which a Docker health check or a backtest pays every time. `LazyGroup` is
the root command group: it knows each verb's module and attribute and imports the module
only when the verb runs (or when `--help` lists them).
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

import typer
from typer.core import TyperGroup

__all__ = ["LazyGroup", "LazyVerb"]


class LazyVerb:
    """Where a verb lives: a command function or a Typer sub-app, as `module:attribute`."""

    def __init__(self, target: str, **typer_options: Any) -> None:
        self.module, self.attribute = target.split(":")
        self.options = typer_options

    # Commands and contexts are typed Any: newer typer vendors its own click, older ones
    # use the click package; both are supported.
    def load(self, name: str) -> Any:
        """Import the module and turn the function or sub-app into a click command."""
        obj = getattr(importlib.import_module(self.module), self.attribute)
        command: Any
        if isinstance(obj, typer.Typer):
            for option, value in self.options.items():  # plain help, as the root's
                if hasattr(obj, option):
                    setattr(obj, option, value)
            command = typer.main.get_group(obj)
        else:
            single = typer.Typer(**self.options)
            single.command(name)(obj)
            command = typer.main.get_command(single)
        command.name = name
        return command


class LazyGroup(TyperGroup):
    """The root group: its verbs are `LazyVerb`s, loaded on first use."""

    verbs: ClassVar[dict[str, LazyVerb]] = {}

    def list_commands(self, ctx: Any) -> list[str]:
        """The eager commands, then the lazy verbs in registration order."""
        return [*super().list_commands(ctx), *(n for n in self.verbs if n not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The verb `cmd_name`, imported now if it has not been."""
        if cmd_name not in self.commands and cmd_name in self.verbs:
            self.commands[cmd_name] = self.verbs[cmd_name].load(cmd_name)
        return super().get_command(ctx, cmd_name)
