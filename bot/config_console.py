"""`[[console.remotes]]`: other bots whose console this bot's dashboard shows, read-only.

Each remote is a name, the base URL of its console and a 0600 file holding its bearer
token (never the token itself in the config). The URL is checked here: http or https,
a host, no user info, no query; plain http only to a loopback host (the token would
travel in clear text otherwise).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from bot.config_base import Section

__all__ = ["MAX_REMOTES", "RemoteConsoleSettings", "check_remote_names"]

MAX_REMOTES: Final = 16
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")


class RemoteConsoleSettings(Section):
    """One remote bot: `name`, `url` (its console, `https://bot-b.example.org`), `token_file`."""

    name: str
    """How the dashboard names it (letters, digits, `_.-`; at most 40)."""
    url: str = Field(max_length=300)
    """The base URL of its console (without `/api/v1`)."""
    token_file: Path
    """A file only its owner may read (0600) holding the remote console's token."""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.fullmatch(value):
            raise ValueError(f"{value[:60]!r}: letters, digits and _.- only, at most 40")
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        from bot.console.hosts import is_loopback

        text = value.strip().rstrip("/")
        try:
            parts = urlsplit(text)
            host = parts.hostname or ""
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError:
            raise ValueError("not a URL") from None
        if parts.scheme not in ("http", "https") or not host:
            raise ValueError("must be an http:// or https:// URL with a host")
        if parts.username is not None or parts.password is not None:
            raise ValueError("must not hold a user or password (the token goes in token_file)")
        if parts.query or parts.fragment:
            raise ValueError("must not have a query or fragment")
        if parts.scheme == "http" and not is_loopback(host):
            raise ValueError(f"plain http to {host!r} would send the token in clear: use https")
        return text


def check_remote_names(remotes: list[RemoteConsoleSettings]) -> list[RemoteConsoleSettings]:
    """The remotes, refused when two share a name or there are more than `MAX_REMOTES`."""
    if len(remotes) > MAX_REMOTES:
        raise ValueError(f"at most {MAX_REMOTES} remotes")
    seen: set[str] = set()
    for remote in remotes:
        if remote.name in seen:
            raise ValueError(f"two remotes are named {remote.name!r}")
        seen.add(remote.name)
    return remotes
