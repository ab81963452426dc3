"""The paper demo's wallet key: the one key paper mode uses when the config names none.

`bot run --paper` with no config makes this key in `data/` on its first run and funds it
in its paper world. A paper config without `[wallet]` (no key file, no
`BOT_WALLET__PRIVATE_KEY`, no address) trades with the same key, so `bot once --dry-run
--paper` and every verb that needs a wallet work in paper mode without a key of their
own. Live mode never falls back: a live wallet is always the user's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from bot.app.errors import SetupError
from bot.chain import KeyFileError, new_key_file
from bot.config import Settings

__all__ = ["DEMO_DIR", "DEMO_KEY_NAME", "demo_key_file", "paper_key_file"]

DEMO_DIR: Final = Path("data")
"""Where the demo keeps its key, journal and world (relative to the working folder)."""
DEMO_KEY_NAME: Final = "paper-demo.key"


def demo_key_file(directory: Path = DEMO_DIR, *, create: bool = True) -> Path | None:
    """The demo's key file in `directory`, made (mode 0600) on first use when `create`.

    None when it does not exist and `create` is false.

    Raises:
        SetupError: the key file cannot be written.
    """
    key_file = directory / DEMO_KEY_NAME
    if key_file.exists() or key_file.is_symlink():
        return key_file
    if not create:
        return None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        new_key_file(key_file)
    except KeyFileError as exc:
        raise SetupError(str(exc)) from exc
    except OSError as exc:
        raise SetupError(f"cannot create {directory}: {exc.strerror or exc}") from exc
    return key_file


def paper_key_file(settings: Settings, *, create: bool = True) -> Path | None:
    """The demo's key file when `settings` trade paper with no wallet of their own, else None.

    `create`: make the key when it does not exist yet (a verb that reads only passes
    false: no key then means no wallet).

    Raises:
        SetupError: the key file cannot be written.
    """
    wallet = settings.wallet
    if settings.mode != "paper" or wallet.key_file or wallet.private_key or wallet.address:
        return None
    return demo_key_file(create=create)
