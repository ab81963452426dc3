"""The console's access rules: loopback, the token's sources, the failed-auth limit."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.config import ConfigError, Settings, load_settings
from bot.console.access import (
    GENERATED_TOKEN_FILE,
    ConsoleSetupError,
    FailedAuthLimit,
    console_token,
    is_loopback,
    require_safe_bind,
)
from bot.logging import redact


@dataclass
class Monotonic:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "bot.example", ""])
def test_other_hosts(host: str) -> None:
    assert not is_loopback(host)


def test_beyond_loopback_needs_a_token() -> None:
    require_safe_bind("127.0.0.1", None)
    require_safe_bind("0.0.0.0", SecretStr("t"))
    with pytest.raises(ConsoleSetupError) as caught:
        require_safe_bind("0.0.0.0", None)
    assert str(caught.value) == (
        "[console].host '0.0.0.0' is not loopback: set [console].token_file or "
        "BOT_CONSOLE__TOKEN (or keep 127.0.0.1 behind a reverse proxy)"
    )


def _settings(tmp_path: Path, **console: object) -> Settings:
    return Settings(journal={"url": f"sqlite:///{tmp_path / 'data' / 'bot.db'}"}, console=console)


def test_the_environments_token_first_and_it_is_redacted(tmp_path: Path) -> None:
    token = console_token(_settings(tmp_path, token=SecretStr("env-token-abcdef123456")))
    assert token.get_secret_value() == "env-token-abcdef123456"
    assert "env-token-abcdef123456" not in redact("auth Bearer env-token-abcdef123456")
    assert not (tmp_path / "data" / GENERATED_TOKEN_FILE).exists()


def test_a_token_file_must_be_private(tmp_path: Path) -> None:
    path = tmp_path / "console.token"
    path.write_text("file-token-0123456789\n")
    path.chmod(0o644)
    with pytest.raises(ConsoleSetupError, match=r"^\[console\].token_file: .*chmod 600"):
        console_token(_settings(tmp_path, token_file=path))
    path.chmod(0o600)
    assert console_token(_settings(tmp_path, token_file=path)).get_secret_value() == (
        "file-token-0123456789"
    )


def test_no_token_on_loopback_makes_a_private_one_per_start(tmp_path: Path) -> None:
    first = console_token(_settings(tmp_path))
    path = tmp_path / "data" / GENERATED_TOKEN_FILE
    assert path.read_text().strip() == first.get_secret_value()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(first.get_secret_value()) >= 40
    second = console_token(_settings(tmp_path))
    assert second.get_secret_value() != first.get_secret_value()
    assert path.read_text().strip() == second.get_secret_value()


def test_no_token_beyond_loopback_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConsoleSetupError, match="is not loopback"):
        console_token(_settings(tmp_path, host="0.0.0.0"))
    assert not (tmp_path / "data" / GENERATED_TOKEN_FILE).exists()


def test_failed_auth_limit_per_client_and_window() -> None:
    clock = Monotonic()
    limit = FailedAuthLimit(clock, failures=3, window=60.0)
    for _ in range(3):
        assert limit.blocked_for("10.0.0.1") == 0
        limit.failed("10.0.0.1")
    assert limit.blocked_for("10.0.0.1") == 60.0
    assert limit.blocked_for("10.0.0.2") == 0  # another client is not held
    clock.now = 59.5
    assert limit.blocked_for("10.0.0.1") == pytest.approx(0.5)
    clock.now = 60.0
    assert limit.blocked_for("10.0.0.1") == 0


def test_failed_auth_limit_forgets_the_oldest_clients() -> None:
    limit = FailedAuthLimit(Monotonic(), failures=1, max_clients=2)
    for client in ("a", "b", "c"):
        limit.failed(client)
    assert limit.blocked_for("a") == 0
    assert limit.blocked_for("b") > 0 and limit.blocked_for("c") > 0


def test_the_config_refuses_an_open_host_without_a_token(tmp_path: Path) -> None:
    path = tmp_path / "bot.toml"
    path.write_text('[console]\nenabled = true\nhost = "0.0.0.0"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert caught.value.problems == [
        "console: Value error, host '0.0.0.0' is not loopback: set token_file or "
        "BOT_CONSOLE__TOKEN (got dict)"
    ]
    path.write_text('[console]\nenabled = true\nhost = "0.0.0.0"\ntoken_file = "/t"\n')
    assert load_settings(path).console.host == "0.0.0.0"
    path.write_text("[console]\nenabled = true\n")
    assert load_settings(path).console.port == 8787


def test_a_token_in_the_config_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bot.toml"
    path.write_text('[console]\ntoken = "written-in-the-file-123"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    (problem,) = caught.value.problems
    assert "[console].token: secrets may not be written in the config file" in problem
    assert "written-in-the-file-123" not in problem


def test_a_short_token_is_refused_naming_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConsoleSetupError) as caught:
        console_token(_settings(tmp_path, token=SecretStr("hunter2-hunter2")))  # 15
    assert str(caught.value).startswith("[console] token: shorter than 16 characters")
    assert "hunter2" not in str(caught.value)
    assert console_token(_settings(tmp_path, token=SecretStr("hunter2-hunter22"))) is not None


def test_the_made_token_never_writes_through_a_planted_link(tmp_path: Path) -> None:
    first = console_token(_settings(tmp_path))
    made = next(tmp_path.rglob(GENERATED_TOKEN_FILE))
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    # The name a predictable temporary file would take (the process id), planted first.
    made.with_name(f".{made.name}.{os.getpid()}.tmp").symlink_to(victim)
    second = console_token(_settings(tmp_path))
    assert victim.read_text() == "keep me\n"
    assert made.read_text().strip() == second.get_secret_value() != first.get_secret_value()
    assert stat.S_IMODE(made.stat().st_mode) == 0o600 and not made.is_symlink()
