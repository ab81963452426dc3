"""The API key default (issue #16): Panora's public key live, the paper world's keys paper.

The key is `PANORA_API_KEY` of `@panoraexchange/swap-sdk` 1.3.1
(`dist/types/constants/index.d.ts`), which the SDK sends as `x-api-key` when given none.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.config import ConfigError, Settings, load_settings
from bot.ops.doctor import PASS, WARN
from bot.ops.doctor_key import check_api_key_source
from bot.secrets import PUBLIC_API_KEY, is_public_api_key, resolve_api_key

SDK_131_KEY = "a4^KV_EaTf4MW#ZdvgGKX#HUD^3IFEAOV_kzpIE^3BQGA8pDnrkT7JcIy#HNlLGi"


def test_the_public_key_is_the_sdks() -> None:
    assert PUBLIC_API_KEY == SDK_131_KEY


def test_live_defaults_to_the_public_key_paper_to_none(tmp_path: Path) -> None:
    assert resolve_api_key(None, None, live=True) == SecretStr(PUBLIC_API_KEY)
    assert resolve_api_key(None, None) is None  # paper: [paper].api_keys
    own = SecretStr("my-own-key")
    assert resolve_api_key(own, None, live=True) is own
    key_file = tmp_path / "api-key"
    key_file.write_text("file-key\n")
    key_file.chmod(0o600)
    assert resolve_api_key(None, key_file, live=True) == SecretStr("file-key")


def test_an_empty_key_cannot_start_live(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOT_MODE", "live")
    monkeypatch.setenv("BOT_API__API_KEY", " ")
    with pytest.raises(ConfigError) as info:
        load_settings(None)
    assert info.value.problems == [
        "api.api_key: is empty; unset BOT_API__API_KEY to use the public shared key, "
        "or set your own (value hidden)"
    ]
    monkeypatch.setenv("BOT_MODE", "paper")  # paper mode uses its own keys
    assert load_settings(None).mode == "paper"


def test_doctor_warns_about_the_shared_key_and_passes_an_own_one(tmp_path: Path) -> None:
    live = Settings(mode="live")
    shared = check_api_key_source(live)
    assert shared.outcome == WARN
    assert "shared and rate-limited: get your own key" in shared.detail
    assert PUBLIC_API_KEY not in shared.line()
    own = Settings(mode="live", api={"api_key": "mine-123"})
    assert check_api_key_source(own).outcome == PASS
    assert "mine-123" not in check_api_key_source(own).line()
    explicit_public = Settings(mode="live", api={"api_key": PUBLIC_API_KEY})
    assert check_api_key_source(explicit_public).outcome == WARN
    assert check_api_key_source(Settings(mode="paper")).outcome == PASS
    assert is_public_api_key(SecretStr(PUBLIC_API_KEY)) and not is_public_api_key(None)


def test_config_show_never_shows_the_key() -> None:
    masked = Settings(mode="live", api={"api_key": PUBLIC_API_KEY}).masked()
    assert masked["api"]["api_key"] == "********"
