from __future__ import annotations

import stat
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from bot.cli import keys_cmd
from tests.unit.chain.test_keys import KNOWN_ADDRESS, SEED_HEX

root = typer.Typer()
root.add_typer(keys_cmd.app, name="keys")


@root.callback()
def _root() -> None:
    """Test root."""


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    for name in ("BOT_CONFIG", "BOT_WALLET__PRIVATE_KEY", "BOT_WALLET__KEY_FILE"):
        monkeypatch.delenv(name, raising=False)
    return CliRunner()


def test_new_writes_0600_and_prints_only_the_address(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "k.key"
    result = runner.invoke(root, ["keys", "new", "--out", str(out)])
    assert result.exit_code == 0, result.output
    address = result.stdout.strip()
    assert address.startswith("0x") and len(address) == 66
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    secret = out.read_text().strip()
    assert secret not in result.output
    again = runner.invoke(root, ["keys", "new", "--out", str(out)])
    assert again.exit_code == 2 and "already exists" in again.stderr
    shown = runner.invoke(root, ["keys", "address", "--key-file", str(out)])
    assert shown.stdout.strip() == address


def test_address_from_file_and_environment(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "w.key"
    path.write_text(SEED_HEX)  # plain hex: aptos-sdk would print a warning; we must not
    path.chmod(0o600)
    result = runner.invoke(root, ["keys", "address", "--key-file", str(path)])
    assert result.exit_code == 0
    assert result.stdout == KNOWN_ADDRESS + "\n"
    env = runner.invoke(root, ["keys", "address"], env={"BOT_WALLET__PRIVATE_KEY": "0x" + SEED_HEX})
    assert env.exit_code == 0, env.output
    assert env.stdout == KNOWN_ADDRESS + "\n"
    assert SEED_HEX not in env.output


def test_open_key_file_refused(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "w.key"
    path.write_text(SEED_HEX)
    path.chmod(0o644)
    result = runner.invoke(root, ["keys", "address", "--key-file", str(path)])
    assert result.exit_code == 2
    assert f"chmod 600 {path}" in result.stderr
    assert SEED_HEX not in result.output


def test_no_key_configured(runner: CliRunner) -> None:
    result = runner.invoke(root, ["keys", "address"])
    assert result.exit_code == 2 and "bot keys new" in result.stderr
