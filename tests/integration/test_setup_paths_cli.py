"""A new user's set-up, as the README tells it, in a fresh folder (issue 22, small things).

- A `[wallet].key_file` that does not exist is a configuration error: one line naming the
  file and how to create it, exit 2, no traceback, from `bot once` and `bot run` alike.
- A `[risk]` cap on a token the list does not know stops `bot run` the same way.
- `python3 dev.py bot …` runs in the caller's folder: a relative `-c config.toml` and a
  relative key file mean what the user typed, and a folder of the user's own named
  `strategies` does not hide the built-in plugins.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import ROOT, clean_env, run_bot

EXAMPLE = ROOT / "config.example.toml"


def user_config(folder: Path, *edits: tuple[str, str]) -> None:
    """config.example.toml as `folder/config.toml`, with `key_file = "wallet.key"` set."""
    text = EXAMPLE.read_text(encoding="utf-8")
    for old, new in (('# key_file = "/etc/bot/wallet.key"', 'key_file = "wallet.key"'), *edits):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (folder / "config.toml").write_text(text, encoding="utf-8")


@pytest.mark.parametrize("verb", [["once"], ["once", "--dry-run"], ["run"]])
def test_a_missing_key_file_is_a_configuration_error(tmp_path: Path, verb: list[str]) -> None:
    user_config(tmp_path)
    result = run_bot(*verb, cwd=tmp_path, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [
        f"bot: error: key file wallet.key does not exist (relative to {tmp_path}); "
        "create one with: bot keys new --out wallet.key"
    ]


def test_a_cap_on_an_unknown_token_stops_the_daemon_with_one_line(tmp_path: Path) -> None:
    user_config(
        tmp_path,
        ('per_transaction_caps = { USDC = "500"', 'per_transaction_caps = { USDCC = "500"'),
    )
    made = run_bot("keys", "new", "--out", "wallet.key", cwd=tmp_path, timeout=60)
    assert made.returncode == 0, made.stderr
    result = run_bot("run", cwd=tmp_path, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [
        "bot: error: [risk].per_transaction_caps: unknown token 'USDCC'"
    ]


def _venv_is_current() -> bool:
    """dev.py would reuse `.venv` as it is (it reinstalls when pyproject.toml changed)."""
    stamp = ROOT / ".venv" / ".installed-from"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    return stamp.exists() and stamp.read_text().strip() == wanted


@pytest.mark.skipif(not _venv_is_current(), reason="dev.py would (re)install .venv first")
def test_dev_py_bot_runs_in_the_callers_folder(tmp_path: Path) -> None:
    user_config(tmp_path)
    (tmp_path / "strategies").mkdir()  # the user's own plugins folder, a package even
    (tmp_path / "strategies" / "__init__.py").write_text("")

    def dev_bot(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(ROOT / "dev.py"), "bot", "-c", "config.toml", *args],
            capture_output=True,
            text=True,
            env=clean_env(),
            cwd=tmp_path,
            timeout=120,
            check=False,
        )

    checked = dev_bot("config", "check")
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout == "config OK: config.toml (mode paper, 1 strategy)\n"
    missing = dev_bot("keys", "address")
    assert missing.returncode == 2
    assert f"key file wallet.key does not exist (relative to {tmp_path})" in missing.stderr
    shutil.move(run_key(tmp_path), tmp_path / "wallet.key")
    address = dev_bot("keys", "address")
    assert address.returncode == 0, address.stderr
    assert address.stdout.startswith("0x")
    listed = dev_bot("strategies", "list")
    assert listed.returncode == 0, listed.stderr
    assert "  recurring_dca " in listed.stdout  # the built-in plugins, not the local folder


def run_key(folder: Path) -> Path:
    """A fresh key file made by `bot keys new` in a side folder of `folder`."""
    side = folder / "keys"
    side.mkdir()
    made = run_bot("keys", "new", "--out", "new.key", cwd=side, timeout=60)
    assert made.returncode == 0, made.stderr
    return side / "new.key"
