"""Reading secrets (API keys, private keys) from files that only their owner may read.

A secret file readable or writable by group or others is refused with a message that
names the file and the fix (`chmod 600 FILE`), never the content.
"""

from __future__ import annotations

import stat
from pathlib import Path

from pydantic import SecretStr

__all__ = ["SecretFileError", "read_secret_file", "resolve_api_key"]


class SecretFileError(Exception):
    """A secret file that is missing, empty or too open."""


def read_secret_file(path: Path, *, what: str = "secret") -> SecretStr:
    """Read a one-line secret from `path`, refusing files open to group or others.

    Raises:
        SecretFileError: naming the path and the problem, never the content.
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise SecretFileError(f"{what} file {path} does not exist") from None
    except PermissionError:
        raise SecretFileError(f"{what} file {path}: permission denied") from None
    if not stat.S_ISREG(mode):
        raise SecretFileError(f"{what} file {path} is not a regular file")
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SecretFileError(
            f"{what} file {path} is readable by group or others "
            f"(mode {stat.S_IMODE(mode):04o}); run: chmod 600 {path}"
        )
    text = path.read_text(encoding="utf-8").strip()
    if not text:
        raise SecretFileError(f"{what} file {path} is empty")
    return SecretStr(text)


def resolve_api_key(api_key: SecretStr | None, api_key_file: Path | None) -> SecretStr | None:
    """The API key from the environment/config value, else from its file, else None."""
    if api_key is not None and api_key.get_secret_value():
        return api_key
    if api_key_file is not None:
        return read_secret_file(api_key_file, what="API key")
    return None
