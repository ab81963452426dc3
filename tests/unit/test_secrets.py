from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.secrets import SecretFileError, read_secret_file, resolve_api_key

CONTENT = "super-secret-api-key-123456"


def secret_file(tmp_path: Path, mode: int, content: str = CONTENT + "\n") -> Path:
    path = tmp_path / "api-key"
    path.write_text(content, encoding="utf-8")
    path.chmod(mode)
    return path


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o602])
def test_open_file_refused_without_echoing_content(tmp_path: Path, mode: int) -> None:
    path = secret_file(tmp_path, mode)
    with pytest.raises(SecretFileError) as info:
        read_secret_file(path, what="API key")
    message = str(info.value)
    assert "chmod 600" in message
    assert str(path) in message
    assert f"{mode:04o}" in message
    assert CONTENT not in message


@pytest.mark.parametrize("mode", [0o600, 0o400])
def test_owner_only_file_accepted(tmp_path: Path, mode: int) -> None:
    secret = read_secret_file(secret_file(tmp_path, mode))
    assert isinstance(secret, SecretStr)
    assert secret.get_secret_value() == CONTENT
    assert CONTENT not in repr(secret)


def test_empty_file_refused(tmp_path: Path) -> None:
    path = secret_file(tmp_path, 0o600, " \n\n")
    with pytest.raises(SecretFileError, match="is empty") as info:
        read_secret_file(path)
    assert str(path) in str(info.value)


def test_missing_file_refused(tmp_path: Path) -> None:
    with pytest.raises(SecretFileError, match="does not exist"):
        read_secret_file(tmp_path / "absent")


def test_directory_refused(tmp_path: Path) -> None:
    directory = tmp_path / "dir"
    directory.mkdir(mode=0o700)
    with pytest.raises(SecretFileError, match="not a regular file"):
        read_secret_file(directory)


def test_resolve_api_key_value_wins_over_file(tmp_path: Path) -> None:
    path = secret_file(tmp_path, 0o600)
    key = resolve_api_key(SecretStr("from-env"), path)
    assert key is not None and key.get_secret_value() == "from-env"


def test_resolve_api_key_falls_back_to_file(tmp_path: Path) -> None:
    path = secret_file(tmp_path, 0o600)
    for value in (None, SecretStr("")):
        key = resolve_api_key(value, path)
        assert key is not None and key.get_secret_value() == CONTENT


def test_resolve_api_key_none_when_neither() -> None:
    assert resolve_api_key(None, None) is None


def test_resolve_api_key_checks_file_mode(tmp_path: Path) -> None:
    with pytest.raises(SecretFileError, match="chmod 600"):
        resolve_api_key(None, secret_file(tmp_path, 0o644))
