"""Reading secrets (API keys, private keys) from files that only their owner may read.

A secret file readable or writable by group or others is refused with a message that
names the file and the fix (`chmod 600 FILE`), never the content.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Final

from pydantic import SecretStr

__all__ = [
    "PUBLIC_API_KEY",
    "SecretFileError",
    "is_public_api_key",
    "read_secret_file",
    "resolve_api_key",
]

PUBLIC_API_KEY: Final = "a4^KV_EaTf4MW#ZdvgGKX#HUD^3IFEAOV_kzpIE^3BQGA8pDnrkT7JcIy#HNlLGi"
"""Panora's published public API key: `PANORA_API_KEY` of `@panoraexchange/swap-sdk`
1.3.1 (`dist/index.es.js`, `dist/types/constants/index.d.ts`), which the SDK sends as
`x-api-key` when given none. Shared by everyone and rate-limited: the live default only
until the user sets a key of their own (`bot doctor` warns). Public, yet handled like any
key: never logged, never shown."""


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


def resolve_api_key(
    api_key: SecretStr | None, api_key_file: Path | None, *, live: bool = False
) -> SecretStr | None:
    """The API key from the environment/config value, else from its file, else a default.

    The default is `PUBLIC_API_KEY` when `live` (a live bot never goes without a key),
    None otherwise (the paper world has keys of its own: `[paper].api_keys`).
    """
    if api_key is not None and api_key.get_secret_value():
        return api_key
    if api_key_file is not None:
        return read_secret_file(api_key_file, what="API key")
    return SecretStr(PUBLIC_API_KEY) if live else None


def is_public_api_key(key: SecretStr | None) -> bool:
    """True when `key` is the SDK's shared public key (whoever configured it)."""
    return key is not None and key.get_secret_value().strip() == PUBLIC_API_KEY
