"""A user's folder for the paper-mode CLI tests: a key from `bot keys new`, a config.

The user-path tests (dry run then live, a restarted paper daemon, health, doctor, settling
by hand) all start the same way: a fresh folder, `bot keys new --out wallet.key`, a paper
config funding that wallet, the journal under `data/` and the wallet lock in the folder.
They differ only in the paper clock and the strategies, which the caller gives.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path

from tests.support.cli import run_bot

HOURLY_DCA = """
[[strategies]]
name = "dca"
plugin = "recurring_dca"
schedule = { interval_seconds = 3600 }
[strategies.params]
from_token = "USDC"
to_token = "APT"
amount_per_order = "25"
orders = 2
interval = "1 hour"
"""
"""One recurring DCA of two hourly 25 USDC slices, ticking hourly."""


def new_user_folder(
    folder: Path,
    *,
    paper: str = "",
    daemon: str = "",
    strategies: str = HOURLY_DCA,
    funds: Mapping[str, str] | None = None,
) -> str:
    """Make the key and write `config.toml` in `folder`; the wallet's address.

    `paper` and `daemon`: extra lines of those sections; `funds`: token → amount given to
    the wallet by the paper world (default 10000 USDC and 100 APT).
    """
    wallet = run_bot("keys", "new", "--out", "wallet.key", cwd=folder).stdout.strip()
    assert wallet.startswith("0x"), wallet
    funding = ",\n".join(
        f'  {{ wallet = "{wallet}", token = "{token}", amount = "{amount}" }}'
        for token, amount in (funds or {"USDC": "10000", "APT": "100"}).items()
    )
    (folder / "config.toml").write_text(
        f"""mode = "paper"

[wallet]
key_file = "wallet.key"

[journal]
url = "sqlite:///data/journal.db"

[daemon]
lock_dir = "{folder / "locks"}"
{daemon}
[paper]
{paper}
funding = [
{funding},
]
{strategies}"""
    )
    return wallet


def wait_for(done: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Poll `done` until it holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)
