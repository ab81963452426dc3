"""The operator's console: a REST API over what the daemon already has (docs/console.md).

`serve_console(settings, …)` is the daemon's one call: it checks the token and the
address, opens a read-only journal, builds the app (`create_app(sources, token=…,
clock=…)`) and serves it in the daemon's own event loop (`start_console`: a uvicorn
server task that never installs signal handlers).

Reads go through the journal's read API in worker threads, so a slow query never
stalls trading; controls go through the daemon's command queue (`enqueue_command`),
journaled with when and from where. Every answer under `/api/v1` needs the bearer
token; none ever holds a secret.

Names are imported from their modules on first use (PEP 562): the config's loopback
check (`bot.console.hosts`) does not load FastAPI.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.console.access import ConsoleSetupError, console_token, require_safe_bind
    from bot.console.app import create_app
    from bot.console.hosts import is_loopback
    from bot.console.server import ConsoleServer, serve_console, start_console
    from bot.console.sources import ConsoleSources

_WHERE: dict[str, str] = {
    "ConsoleSetupError": "bot.console.access",
    "console_token": "bot.console.access",
    "require_safe_bind": "bot.console.access",
    "create_app": "bot.console.app",
    "is_loopback": "bot.console.hosts",
    "ConsoleServer": "bot.console.server",
    "serve_console": "bot.console.server",
    "start_console": "bot.console.server",
    "ConsoleSources": "bot.console.sources",
}

__all__ = [
    "ConsoleServer",
    "ConsoleSetupError",
    "ConsoleSources",
    "console_token",
    "create_app",
    "is_loopback",
    "require_safe_bind",
    "serve_console",
    "start_console",
]


def __getattr__(name: str) -> Any:
    """Import `name` from its module the first time it is asked for."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'bot.console' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
