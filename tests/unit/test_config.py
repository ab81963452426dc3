from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path

import pytest

from bot.config import ConfigError, Settings, load_settings

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "config.example.toml"
API_KEY = "k3y-Very-Secret-0987654321"

STRATEGY = """
[[strategies]]
name = "{name}"
plugin = "recurring_dca"
schedule = {schedule}
"""


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.upper().startswith("BOT_"):
            monkeypatch.delenv(name)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    assert str(info.value) == "\n".join(info.value.problems)
    return info.value.problems


def test_example_config_loads() -> None:
    assert EXAMPLE.is_file(), f"missing {EXAMPLE}"
    settings = load_settings(EXAMPLE)
    assert settings.api.base_url == "https://api.panora.exchange"
    assert settings.api.provider_prefix == "panora"
    assert settings.risk.per_transaction_caps == {"USDC": Decimal(500), "APT": Decimal(50)}
    assert [s.name for s in settings.strategies] == ["weekly-apt"]


def test_no_file_means_defaults() -> None:
    assert load_settings(None).api.chain_id == 1


def test_one_line_per_problem_naming_the_dotted_key(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
[api]
chain_id = "abc"
chian_id = 1
max_attempts = 0
base_url = "ftp://x"
[chain]
chain_id = 300
[log]
level = "loud"
""",
    )
    found = problems(path)
    assert len(found) == 6
    by_key = {line.split(":", 1)[0]: line for line in found}
    assert set(by_key) == {
        "api.chain_id",
        "api.chian_id",
        "api.max_attempts",
        "api.base_url",
        "chain.chain_id",
        "log.level",
    }
    assert "unknown key" in by_key["api.chian_id"]
    assert "'abc'" in by_key["api.chain_id"]
    assert "300" in by_key["chain.chain_id"]


def test_unknown_section_rejected(tmp_path: Path) -> None:
    assert problems(write(tmp_path, "[apii]\nbase_url = 'https://x'\n")) == [
        "apii: unknown key (check the spelling; see config.example.toml)"
    ]


def test_invalid_secret_value_hidden(tmp_path: Path) -> None:
    found = problems(write(tmp_path, "[api]\napi_key = 987654321123\n[wallet]\nprivate_key = 55\n"))
    joined = "\n".join(found)
    # A secret in the file is refused whatever its value (or type), and never echoed.
    assert len(found) == 2
    assert "[api].api_key: secrets may not" in joined
    assert "[wallet].private_key: secrets may not" in joined
    assert "987654321123" not in joined
    assert "55" not in joined


def test_env_secret_never_echoed_with_bad_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOT_API__API_KEY", API_KEY)
    monkeypatch.setenv("BOT_WALLET__PRIVATE_KEY", "ed25519-priv-0x" + "ab" * 32)
    path = write(tmp_path, "[api]\nchain_id = -1\nbogus = 1\n[wallet]\naddress = 'zz'\n")
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    text = str(info.value)
    assert "api.chain_id" in text
    assert API_KEY not in text
    assert "ab" * 32 not in text


def test_env_overrides_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(
        tmp_path,
        "[api]\nbase_url = 'https://file.example'\nchain_id = 2\n"
        "[journal]\nurl = 'sqlite:///file.db'\n",
    )
    monkeypatch.setenv("BOT_API__BASE_URL", "https://env.example/")
    monkeypatch.setenv("BOT_JOURNAL__URL", "postgresql://env/db")
    settings = load_settings(path)
    assert settings.api.base_url == "https://env.example"
    assert settings.journal.url == "postgresql://env/db"
    assert settings.api.chain_id == 2  # untouched keys of the same section kept


def test_env_api_key_is_secret_and_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOT_API__API_KEY", API_KEY)
    settings = load_settings(EXAMPLE)
    assert settings.api.api_key is not None
    assert settings.api.api_key.get_secret_value() == API_KEY
    assert API_KEY not in repr(settings)
    masked = settings.masked()
    assert masked["api"]["api_key"] == "********"
    assert masked["wallet"]["private_key"] is None
    assert API_KEY not in str(masked)


def test_toml_floats_are_exact_decimals(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "[risk]\nmax_slippage_percent = 0.1\nper_transaction_caps = { APT = 0.3, USDC = 2.675 }\n",
    )
    risk = load_settings(path).risk
    assert type(risk.max_slippage_percent) is Decimal
    assert risk.max_slippage_percent == Decimal("0.1")
    assert risk.per_transaction_caps == {"APT": Decimal("0.3"), "USDC": Decimal("2.675")}


def test_negative_cap_rejected(tmp_path: Path) -> None:
    found = problems(write(tmp_path, "[risk]\ndaily_spend_caps = { APT = -1 }\n"))
    assert len(found) == 1 and found[0].startswith("risk.daily_spend_caps")


def test_duplicate_strategy_names_rejected(tmp_path: Path) -> None:
    text = STRATEGY.format(name="a", schedule="{ interval_seconds = 60 }") * 2
    found = problems(write(tmp_path, text))
    assert len(found) == 1
    assert "'a' is used twice" in found[0]


@pytest.mark.parametrize("schedule", ["{ interval_seconds = 60, cron = '0 * * * *' }", "{ }"])
def test_schedule_needs_exactly_one(tmp_path: Path, schedule: str) -> None:
    found = problems(write(tmp_path, STRATEGY.format(name="a", schedule=schedule)))
    assert len(found) == 1
    assert found[0].startswith("strategies.0.schedule")
    assert "exactly one of interval_seconds and cron" in found[0]


def test_cron_schedule_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, STRATEGY.format(name="a", schedule="{ cron = '0 * * * *' }"))
    assert load_settings(path).strategies[0].schedule.cron == "0 * * * *"


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "[api\nbase_url = ")
    found = problems(path)
    assert len(found) == 1
    assert found[0].startswith(f"{path}: invalid TOML")


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.toml"
    assert problems(path) == [f"{path}: no such config file"]


def test_settings_frozen() -> None:
    settings = load_settings(None)
    with pytest.raises(ValueError):
        settings.api = settings.api  # type: ignore[misc]
    assert isinstance(settings, Settings)


@pytest.mark.parametrize(
    ("alerts", "expected"),
    [
        (
            'events = ["order_filled", "order_fill"]',
            "alerts.events: Value error, unknown alert kind 'order_fill'",
        ),
        ('telegram_chat_id = "42"', "alerts: Value error, telegram needs telegram_bot_token"),
    ],
)
def test_alert_settings_are_checked_with_the_config(
    tmp_path: Path, alerts: str, expected: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"[alerts]\n{alerts}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert caught.value.problems[0].startswith(expected)
    assert len(caught.value.problems) == 1


def test_a_huge_number_is_refused_naming_its_key(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[chain]\nexpiration_seconds = 1000000000000000000000000000000\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    [problem] = caught.value.problems
    assert problem.startswith("chain.expiration_seconds: Value error, must be at most")


def test_a_refused_url_is_shown_without_its_password(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        '[[console.remotes]]\nname = "b"\nurl = "https://user:s3cretPW@host.example"\n'
        'token_file = "t"\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    said = "\n".join(caught.value.problems)
    assert "console.remotes" in said and "host.example" in said
    assert "s3cretPW" not in said and "user:" not in said
