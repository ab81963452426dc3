"""The systemd unit, the Dockerfile and the compose example say what the docs promise."""

from __future__ import annotations

import configparser
import re
import shlex
from pathlib import Path

import pytest

from bot.config import load_settings

ROOT = Path(__file__).resolve().parents[3]


def unit() -> configparser.ConfigParser:
    # systemd allows repeated keys (Environment=): with strict=False the last one wins,
    # so the repeated ones are checked on the raw text below.
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(ROOT / "deploy" / "bot.service")
    return parser


def environment_lines() -> dict[str, str]:
    values: dict[str, str] = {}
    for line in (ROOT / "deploy" / "bot.service").read_text().splitlines():
        if line.startswith("Environment="):
            for pair in shlex.split(line.removeprefix("Environment=")):
                key, _, value = pair.partition("=")
                values[key] = value
    return values


def test_the_unit_is_a_watched_notify_service_restarted_on_failure() -> None:
    service = unit()["Service"]
    assert service["Type"] == "notify"
    assert service["NotifyAccess"] == "main"
    assert int(service["WatchdogSec"]) >= 30
    assert service["Restart"] == "on-failure"
    assert service["ExecStart"].split()[0] == "/opt/bot/.venv/bin/bot"
    assert service["ExecStart"].split()[-1] == "run"
    assert service["ExecReload"] == "/bin/kill -HUP $MAINPID"
    assert unit()["Install"]["WantedBy"] == "multi-user.target"


def test_the_journal_lives_in_the_state_directory_set_through_the_environment() -> None:
    service = unit()["Service"]
    assert service["User"] == "bot" and service["StateDirectory"] == "bot"
    url = environment_lines()["BOT_JOURNAL__URL"]
    assert url == "sqlite:////var/lib/bot/bot.db"
    assert url.removeprefix("sqlite:///").startswith(f"/var/lib/{service['StateDirectory']}/")
    assert service["EnvironmentFile"] == "-/etc/bot/bot.env"


def test_the_unit_is_hardened_but_can_still_notify_and_reach_the_network() -> None:
    service = unit()["Service"]
    for key, value in {
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "PrivateDevices": "yes",
        "RestrictNamespaces": "yes",
        "UMask": "0077",
    }.items():
        assert service[key] == value, key
    families = set(service["RestrictAddressFamilies"].split())
    assert families == {"AF_UNIX", "AF_INET", "AF_INET6"}  # AF_UNIX: $NOTIFY_SOCKET
    assert service["CapabilityBoundingSet"] == ""


def test_the_env_example_holds_no_value() -> None:
    text = (ROOT / "deploy" / "bot.env.example").read_text()
    assigned = [line for line in text.splitlines() if re.match(r"^[A-Z_]+=", line)]
    assert assigned == []  # every secret line is a commented placeholder


def test_the_dockerfile_runs_the_daemon_as_non_root_with_the_journal_on_a_volume() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert text.startswith("#") and re.search(r"^FROM python:3\.11-slim$", text, re.M)
    user = re.findall(r"^USER (\S+)$", text, re.M)
    assert user and user[-1].split(":")[0] not in ("root", "0")
    assert 'VOLUME ["/data"]' in text
    assert "BOT_JOURNAL__URL=sqlite:////data/bot.db" in text
    assert re.search(r'^\s+CMD \["bot", "status"\]$', text, re.M)  # the HEALTHCHECK
    assert 'ENTRYPOINT ["bot"]' in text and text.rstrip().endswith('CMD ["run"]')
    # Dependencies are installed before the code is copied in (a cached layer).
    assert text.index("-r /tmp/requirements.txt") < text.index("COPY bot ./bot")


def test_the_dockerignore_keeps_secrets_and_state_out_of_the_image() -> None:
    ignored = set((ROOT / ".dockerignore").read_text().split())
    assert {".git", ".venv", "data", "config.toml", "*.key", "*.db", "*.env"} <= ignored


def test_the_compose_example_points_the_bot_at_the_paper_service() -> None:
    text = (ROOT / "docker-compose.example.yml").read_text()
    assert re.search(r"^  paper:$", text, re.M) and re.search(r"^  bot:$", text, re.M)
    assert '"paper", "serve", "--host", "0.0.0.0", "--port", "8080"' in text
    assert "BOT_PAPER__URL: http://paper:8080" in text
    assert "bot-data:/data" in text
    assert "ports:" not in text  # the paper world stays on the compose network


def test_the_example_config_is_valid_with_the_units_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for key, value in environment_lines().items():
        if key.startswith("BOT_") and key != "BOT_CONFIG":
            monkeypatch.setenv(key, value)
    settings = load_settings(ROOT / "config.example.toml")
    assert settings.journal.url == "sqlite:////var/lib/bot/bot.db"
