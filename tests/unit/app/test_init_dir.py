"""`bot init`: the folder it makes, what it refuses, and its questions.

The folder is made in `tmp_path` for real (the key by the project's key writer, the config
read back by the project's settings loader and its strategies built by the plugin loader);
the command line through typer's runner, answers typed on its stdin.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.app.errors import SetupError
from bot.app.init_dir import KEY_FILE, InitChoices, init_folder, next_commands
from bot.chain import account_address, load_private_key
from bot.cli import app
from bot.config import load_settings
from bot.engine.plugins import build_strategies

runner = CliRunner()


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.upper().startswith("BOT_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    yield


def test_the_folder_has_a_config_the_loader_accepts_a_0600_key_and_a_gitignore(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "bot-home"
    result = init_folder(folder, InitChoices.parse())
    assert result.key_created
    key = folder / KEY_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert result.wallet == str(account_address(load_private_key(key, None)))
    assert (folder / "data").is_dir() and (folder / "strategies").is_dir()
    os.chdir(folder)  # the config's paths are the folder's
    settings = load_settings(Path("config.toml"))
    assert settings.mode == "paper"
    assert settings.wallet.key_file == KEY_FILE
    assert settings.scheduler.strategy_dirs == [Path("strategies")]
    (strategy,) = build_strategies(settings.strategies, settings.scheduler.strategy_dirs)
    assert (strategy.instance, type(strategy).name) == ("my-dca", "recurring_dca")
    funded = {(f.wallet, f.token) for f in settings.paper.funding}
    assert funded == {(result.wallet, "USDC"), (result.wallet, "APT")}
    assert result.wallet not in (folder / ".gitignore").read_text()
    key_text = key.read_text().strip()
    assert key_text not in (folder / "config.toml").read_text()


def test_git_ignores_the_key_the_journal_and_the_data(tmp_path: Path) -> None:
    folder = tmp_path / "repo"
    init_folder(folder, InitChoices.parse())
    (folder / "data" / "bot.db").write_text("journal")
    (folder / "other.key").write_text("key")
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    status = subprocess.run(
        ["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "config.toml" in status and ".gitignore" in status
    assert ".key" not in status and "data/" not in status and ".db" not in status


def test_a_ladder_from_choices() -> None:
    choices = InitChoices.parse(
        strategy="limit_ladder", from_token="USDC", to_token="APT", amount="40", every="6h"
    )
    entry = choices.entry()
    assert (entry.name, entry.plugin) == ("my-ladder", "limit_ladder")
    assert entry.schedule.interval_seconds == 6 * 3600
    assert entry.params["amount_per_rung"] == "40"


@pytest.mark.parametrize(
    ("choices", "message"),
    [
        ({"strategy": "grid"}, "--strategy: 'grid' is not one of recurring_dca, limit_ladder"),
        ({"amount": "abc"}, "--amount: not a number: 'abc'"),
        ({"amount": "0"}, "--amount: must be above 0, got '0'"),
        ({"every": "soon"}, "--every: 'soon' is not a duration"),
        ({"to_token": "usdc"}, "--to-token: 'usdc' is also the token spent"),
        ({"from_token": "US$DC"}, "--from-token: 'US$DC' is not a token symbol or address"),
        ({"name": "my dca"}, "--name: 'my dca': use letters"),
    ],
)
def test_a_bad_choice_is_one_line_naming_the_option(choices: dict[str, str], message: str) -> None:
    with pytest.raises(SetupError) as raised:
        InitChoices.parse(**choices)
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)


def test_an_existing_config_is_kept_unless_forced_and_the_key_always(tmp_path: Path) -> None:
    folder = tmp_path / "home"
    first = init_folder(folder, InitChoices.parse())
    config = folder / "config.toml"
    config.write_text("# mine\n")
    with pytest.raises(SetupError, match="exists; refusing to overwrite it"):
        init_folder(folder, InitChoices.parse())
    assert config.read_text() == "# mine\n"
    again = init_folder(folder, InitChoices.parse(amount="30"), force=True)
    assert not again.key_created and again.wallet == first.wallet
    assert 'amount_per_order = "30"' in config.read_text()


def test_next_commands_go_into_the_folder_first(tmp_path: Path) -> None:
    result = init_folder(tmp_path / "my bot", InitChoices.parse())
    assert next_commands(result, tmp_path) == [
        f"cd '{tmp_path / 'my bot'}'",
        "bot strategies check my-dca",
        "bot once --dry-run --paper",
        "bot run --paper",
    ]
    assert next_commands(result, tmp_path / "my bot")[0] == "bot strategies check my-dca"


def test_the_command_asks_what_the_flags_leave_open(tmp_path: Path) -> None:
    answers = "limit_ladder\n\nWBTC\n0\n50\n12h\n"  # 0: refused and asked again
    result = runner.invoke(
        app, ["init", "asked", "--interactive", "--name", "ladder"], input=answers
    )
    assert result.exit_code == 0, result.output
    assert "--amount: must be above 0" in result.output
    settings_text = (tmp_path / "asked" / "config.toml").read_text()
    assert 'plugin = "limit_ladder"' in settings_text
    assert 'sell_token = "USDC", buy_token = "WBTC"' in settings_text
    assert "interval_seconds = 43200" in settings_text
    assert "bot strategies check ladder" in result.output
    key_text = (tmp_path / "asked" / KEY_FILE).read_text().strip()
    assert key_text not in result.output


def test_the_command_without_questions_and_its_refusals(tmp_path: Path) -> None:
    made = runner.invoke(app, ["init", "quiet", "--non-interactive", "--amount", "10"])
    assert made.exit_code == 0, made.output
    assert "data/wallet.key (made now, mode 0600)" in made.output
    again = runner.invoke(app, ["init", "quiet", "--non-interactive"])
    assert again.exit_code == 2
    bad = runner.invoke(app, ["init", "other", "--non-interactive", "--every", "1 hr"])
    assert bad.exit_code == 2
    assert not (tmp_path / "other" / "config.toml").exists()


def test_an_existing_gitignore_gets_the_lines_it_lacks(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("node_modules", encoding="utf-8")
    init_folder(tmp_path, InitChoices.parse())
    lines = (tmp_path / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "node_modules" and {"*.key", "data/", "*.db"} <= set(lines)
    init_folder(tmp_path, InitChoices.parse(), force=True)  # nothing added twice
    assert (tmp_path / ".gitignore").read_text(encoding="utf-8").splitlines() == lines


@pytest.mark.parametrize(
    ("amount", "said"),
    [("1e999999", "--amount: too large"), ("0.0000000001", "below the smallest unit of USDC")],
)
def test_an_amount_no_token_can_send_writes_nothing(tmp_path: Path, amount: str, said: str) -> None:
    folder = tmp_path / "bot"
    with pytest.raises(SetupError, match=said):
        init_folder(folder, InitChoices.parse(amount=amount))
    assert not folder.exists()


def test_an_unknown_token_is_refused_with_suggestions(tmp_path: Path) -> None:
    with pytest.raises(SetupError, match="'APTT' is not a known token"):
        init_folder(tmp_path / "bot", InitChoices.parse(to_token="APTT"))
