"""Ed25519 keys: loaded from a 0600 file or an environment value, written as AIP-80 text.

Accepted forms: AIP-80 `ed25519-priv-0x` + 64 hex digits, or 64 hex digits with or without
`0x` (a 32-byte seed). The text is parsed here and the key built with
`ed25519.PrivateKey(nacl.signing.SigningKey(seed))`, so aptos-sdk's own parser (which prints
a warning to stdout for non-AIP-80 text in 0.11) never runs.

Every form of a loaded key is registered with the log redactor before anything else can
happen to it. Errors name the file (or variable) and the problem, never the content.

An Aptos single-Ed25519 account address is its authentication key:
`sha3_256(public key ‖ 0x00)`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from pathlib import Path
from typing import Final

from aptos_sdk import ed25519
from nacl.signing import SigningKey
from pydantic import SecretStr

from bot.aptos.address import Address
from bot.chain.errors import KeyFileError
from bot.logging import register_secret
from bot.secrets import SecretFileError, read_secret_file

__all__ = [
    "AIP80_PREFIX",
    "ENV_VARIABLE",
    "account_address",
    "aip80_text",
    "authentication_key",
    "load_private_key",
    "new_key_file",
    "parse_private_key",
]

AIP80_PREFIX: Final = "ed25519-priv-0x"
ENV_VARIABLE: Final = "BOT_WALLET__PRIVATE_KEY"
ED25519_SCHEME: Final = b"\x00"
_HEX_RE: Final = re.compile(r"[0-9a-fA-F]*")
_SEED_HEX_DIGITS: Final = 64


def parse_private_key(text: str, *, source: str) -> ed25519.PrivateKey:
    """Parse AIP-80 or plain hex text to a key, registering the text with the redactor first.

    Args:
        text: the key text (surrounding whitespace ignored).
        source: what to name in errors (`key file /x/y`, `BOT_WALLET__PRIVATE_KEY`).

    Raises:
        KeyFileError: naming `source` and the problem (never any part of the text).
    """
    stripped = text.strip()
    register_secret(stripped)
    if not stripped:
        raise KeyFileError(f"{source} is empty")
    lowered = stripped.lower()
    if lowered.startswith(AIP80_PREFIX):
        digits = stripped[len(AIP80_PREFIX) :]
    elif "-priv-" in lowered:
        scheme = lowered.split("-priv-", 1)[0]
        scheme = scheme if re.fullmatch(r"[a-z0-9]{1,16}", scheme) else "another"
        raise KeyFileError(f"{source} holds a {scheme} key; only Ed25519 keys are supported")
    elif lowered.startswith("0x"):
        digits = stripped[2:]
    else:
        digits = stripped
    if not _HEX_RE.fullmatch(digits):
        raise KeyFileError(
            f"{source} is not a private key: expected {AIP80_PREFIX}<64 hex digits> "
            "or 64 hex digits, found other characters"
        )
    if len(digits) != _SEED_HEX_DIGITS:
        raise KeyFileError(
            f"{source} is not an Ed25519 private key: expected 32 bytes "
            f"({_SEED_HEX_DIGITS} hex digits), found {len(digits)} hex digits"
        )
    register_secret(digits)
    try:
        key = ed25519.PrivateKey(SigningKey(bytes.fromhex(digits)))
    except Exception:  # nacl's messages never include the seed, but chain nothing anyway
        raise KeyFileError(f"{source} could not be used as an Ed25519 key") from None
    return key


def load_private_key(file: Path | None, env_value: SecretStr | None) -> ed25519.PrivateKey:
    """Load the wallet's key from a 0600 file or from the environment/config value.

    Exactly one source must be given: two would leave it ambiguous which account trades.

    Raises:
        KeyFileError: no source, both sources, a file open to group/others (the message
            says `chmod 600 FILE`), missing, empty or malformed.
    """
    value = env_value.get_secret_value() if env_value is not None else ""
    if value.strip():
        register_secret(value.strip())
    if file is not None and value.strip():
        raise KeyFileError(
            f"both [wallet].key_file ({file}) and [wallet].private_key ({ENV_VARIABLE}) are set; "
            "keep only one"
        )
    if file is not None:
        try:
            secret = read_secret_file(file, what="key")
        except SecretFileError as exc:
            raise KeyFileError(_missing(file) or str(exc)) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise KeyFileError(
                f"key file {file} could not be read ({type(exc).__name__})"
            ) from None
        return parse_private_key(secret.get_secret_value(), source=f"key file {file}")
    if value.strip():
        return parse_private_key(value, source=f"{ENV_VARIABLE} ([wallet].private_key)")
    raise KeyFileError(
        f"no private key: set [wallet].key_file to a 0600 key file, or {ENV_VARIABLE}; "
        "create one with: bot keys new --out FILE"
    )


def _missing(file: Path) -> str | None:
    """The message for a key file that does not exist (a relative path: where it looked)."""
    if file.exists() or file.is_symlink():
        return None
    where = "" if file.is_absolute() else f" (relative to {Path.cwd()})"
    return f"key file {file} does not exist{where}; create one with: bot keys new --out {file}"


def aip80_text(key: ed25519.PrivateKey) -> str:
    """The key as AIP-80 text (`ed25519-priv-0x…`). Treat the result as a secret."""
    return AIP80_PREFIX + bytes(key.key.encode()).hex()


def authentication_key(public_key: ed25519.PublicKey) -> bytes:
    """The single-Ed25519 authentication key: `sha3_256(public key ‖ 0x00)`."""
    return hashlib.sha3_256(bytes(public_key.key.encode()) + ED25519_SCHEME).digest()


def account_address(key: ed25519.PrivateKey | ed25519.PublicKey) -> Address:
    """The address of the account whose authentication key is this key's (no rotation)."""
    public = key.public_key() if isinstance(key, ed25519.PrivateKey) else key
    return Address.from_bytes(authentication_key(public))


def new_key_file(path: Path) -> Address:
    """Create a fresh Ed25519 key and write it as AIP-80 text to `path`, mode 0600.

    The file appears complete or not at all (written to a temporary file in the same
    directory, then hard-linked into place, which fails if `path` exists); an existing
    file is never overwritten.

    Returns:
        The new account's address.

    Raises:
        KeyFileError: when `path` exists or cannot be written.
    """
    if path.exists() or path.is_symlink():
        raise KeyFileError(f"key file {path} already exists; refusing to overwrite it")
    signing = SigningKey.generate()
    key = ed25519.PrivateKey(signing)
    text = aip80_text(key)
    register_secret(text)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, (text + "\n").encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temporary, path)
        except FileExistsError:
            raise KeyFileError(
                f"key file {path} already exists; refusing to overwrite it"
            ) from None
        except OSError:  # no hard links here: fall back to an exclusive create
            _write_exclusive(path, text)
    except KeyFileError:
        raise
    except OSError as exc:
        raise KeyFileError(f"cannot write key file {path}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
    return account_address(key)


def _write_exclusive(path: Path, text: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise KeyFileError(f"key file {path} already exists; refusing to overwrite it") from None
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (text + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
