from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli.journal_cmd import app
from bot.journal import Journal, head_revision
from bot.journal.migrate import upgrade

from .conftest import T0, WALLET

runner = CliRunner()


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.upper().startswith("BOT_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    yield


def test_migrate_uses_the_configured_url(tmp_path: Path) -> None:
    db = tmp_path / "state" / "j.db"
    (tmp_path / "config.toml").write_text(f'[journal]\nurl = "sqlite:///{db}"\n')
    result = runner.invoke(app, ["migrate"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"journal at {db}: empty → {head_revision()}"
    again = runner.invoke(app, ["migrate"])
    assert f"{head_revision()} → {head_revision()}" in again.output


def test_migrate_from_an_old_revision_with_url_option(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url, "0001_initial")
    result = runner.invoke(app, ["migrate", "--url", url])
    assert result.exit_code == 0, result.output
    assert f": 0001_initial → {head_revision()}" in result.output


def test_export_json_to_stdout_and_csv_to_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'j.db'}"
    with Journal.open(url) as journal:
        journal.record_intent("s", WALLET, "swap", "k", {}, at=T0)
    result = runner.invoke(app, ["export", "--format", "json", "--url", url])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["intents"][0]["idempotency_key"] == "k"
    out = tmp_path / "out.csv"
    result = runner.invoke(
        app, ["export", "--format", "csv", "--url", url, "--out", str(out), "-t", "intents"]
    )
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert text.startswith("# table intents\n") and "# table orders" not in text


def test_export_errors(tmp_path: Path) -> None:
    missing = f"sqlite:///{tmp_path / 'missing.db'}"
    result = runner.invoke(app, ["export", "--format", "csv", "--url", missing])
    # A journal that cannot be opened is exit 2 for every verb (as `bot orders`).
    assert result.exit_code == 2 and "no journal" in result.output
    assert not (tmp_path / "missing.db").exists()
    result = runner.invoke(app, ["export", "--format", "xml", "--url", missing])
    assert result.exit_code == 2
    result = runner.invoke(app, ["export", "--format", "csv", "--url", missing, "-t", "nope"])
    assert result.exit_code == 2 and "unknown table nope" in result.output


def test_export_tables_as_a_comma_separated_list_or_repeated(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'j.db'}"
    with Journal.open(url) as journal:
        journal.record_intent("s", WALLET, "swap", "k", {}, at=T0)
    for args in (
        ["-t", "intents,orders"],
        ["-t", "intents", "-t", " orders "],
        ["-t", "intents,orders,intents"],
    ):
        result = runner.invoke(app, ["export", "--format", "json", "--url", url, *args])
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        assert list(data) == ["intents", "orders"], args
        assert data["intents"][0]["idempotency_key"] == "k"
    result = runner.invoke(app, ["export", "--format", "csv", "--url", url, "-t", "intents,nope"])
    assert result.exit_code == 2 and "unknown table nope;" in result.output
    result = runner.invoke(
        app, ["export", "--format", "csv", "--url", url, "-t", "intents,,orders"]
    )
    assert result.exit_code == 2 and "unknown table ''" in result.output


def test_migrate_refuses_an_unknown_engine_or_an_unreachable_database_in_one_line() -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    for url, says in [
        ("mysql://u:secret@h/db", "engine 'mysql' is not supported"),
        (f"postgresql+psycopg://u:secret@127.0.0.1:{port}/db", "cannot open it"),
    ]:
        result = runner.invoke(app, ["migrate", "--url", url])
        assert result.exit_code == 2, result.output
        assert says in result.output and "secret" not in result.output
        assert len(result.output.strip().splitlines()) == 1


def test_migrate_and_a_newer_schema_on_postgresql(pg_database_url: str) -> None:
    from sqlalchemy import text

    result = runner.invoke(app, ["migrate", "--url", pg_database_url])
    assert result.exit_code == 0, result.output
    assert f"empty → {head_revision()}" in result.output
    with Journal.open(pg_database_url) as journal, journal.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999_future'"))
    again = runner.invoke(app, ["migrate", "--url", pg_database_url])
    assert again.exit_code == 2 and "'9999_future' is not one this bot knows" in again.output
    assert len(again.output.strip().splitlines()) == 1
