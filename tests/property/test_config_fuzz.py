"""Bad input: random edits of `config.example.toml` give a valid config or one-line problems.

An edit deletes a key, gives a value of another type, an out-of-range number or a wrong
choice, inserts an unknown key (a typo), uncomments an option, breaks the TOML syntax, or
puts a secret where a secret goes but in the wrong shape. `load_settings` (in process, for
the fuzzing) and `bot config check` (a real subprocess, for a handful) then either accept the
file or report problems that are one line each, start with the dotted key (or the file name
for a syntax error), name the edited key, and never show a secret.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config import ConfigError, Settings, load_settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "config.example.toml").read_text(encoding="utf-8").splitlines()
SECRET = "sEcReT-0f1e2d3c4b5a69788796a5b4c3d2e1f0"
KEY_HEX = "9f" * 32
SECRET_ENV = {
    "BOT_API__API_KEY": SECRET,
    "BOT_ALERTS__WEBHOOK_URL": f"https://hooks.example/{SECRET}",
    "BOT_ALERTS__TELEGRAM_BOT_TOKEN": f"123:{SECRET}",
    "BOT_ALERTS__TELEGRAM_CHAT_ID": "123456789",
    "BOT_WALLET__PRIVATE_KEY": f"ed25519-priv-0x{KEY_HEX}",
}
FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_HEADER = re.compile(r"^\[(\[?)([A-Za-z0-9_.]+)\]?\]\s*$")
_KEY = re.compile(r"^(#\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*: \S")


@dataclass(frozen=True)
class Entry:
    """One `key = value` line of the example (commented out or not)."""

    line: int
    section: str  # dotted: "", "api", "paper.faults", "strategies.0"
    key: str
    commented: bool

    @property
    def dotted(self) -> str:
        return f"{self.section}.{self.key}" if self.section else self.key


def _entries() -> list[Entry]:
    entries: list[Entry] = []
    section, tables = "", 0
    for number, text in enumerate(EXAMPLE):
        header = _HEADER.match(text)
        if header:
            section = header.group(2)
            if header.group(1):  # [[strategies]]: an array of tables
                section, tables = f"{section}.{tables}", tables + 1
            continue
        key = _KEY.match(text)
        if key and not text.startswith("#   "):
            entries.append(Entry(number, section, key.group(2), bool(key.group(1))))
    return entries


ENTRIES = _entries()
LIVE = [e for e in ENTRIES if not e.commented]
HEADERS = {e.section: e.line for e in reversed(ENTRIES)}  # first key line of each section

VALUES = [
    '"text"',
    '""',
    "5",
    "0",
    "-1",
    "-5.5",
    "1e400",
    "99999999999999999999999999999999",
    "nan",
    "true",
    "[]",
    '["a", 1]',
    "{ x = 1 }",
    '"LIVE"',
    '"json "',
    '"weekly"',
    '"0xzz"',
    '"2026-13-45T00:00:00Z"',
    "2026-01-01T00:00:00Z",
]
SECRET_SHAPES = [  # a secret where a secret goes, in a shape that is refused
    ("api", f'api_key = ["{SECRET}"]'),
    ("api", f'api_key = {{ value = "{SECRET}" }}'),
    ("wallet", f'private_key = ["ed25519-priv-0x{KEY_HEX}"]'),
    ("alerts", f'webhook_url = {{ url = "https://hooks.example/{SECRET}" }}'),
    ("alerts", f'telegram_bot_token = ["123:{SECRET}"]'),
    ("paper", f'api_keys = "{SECRET}"'),
    ("paper", f'api_keys = [["{SECRET}"]]'),
]
BREAKS = ["drop_equals", "open_quote", "duplicate", "bad_header"]


@dataclass(frozen=True)
class Edit:
    """One edit of the example and the dotted key it touches (None: syntax or no key)."""

    kind: str
    entry: Entry
    text: str = ""

    @property
    def names(self) -> str | None:
        """The dotted key a problem caused by this edit must start with."""
        if self.kind == "unknown":
            return f"{self.entry.section}.{self.text}".lstrip(".")
        if self.kind in ("delete", "replace", "secret"):
            return self.entry.dotted
        if self.kind == "repeat_strategy":  # the same name twice
            return "strategies"
        return None


edits = st.one_of(
    st.builds(Edit, st.just("delete"), st.sampled_from(LIVE)),
    st.builds(Edit, st.just("replace"), st.sampled_from(LIVE), st.sampled_from(VALUES)),
    st.builds(
        Edit, st.just("unknown"), st.sampled_from(LIVE), st.sampled_from(["colour", "api_kye"])
    ),
    st.builds(Edit, st.just("uncomment"), st.sampled_from([e for e in ENTRIES if e.commented])),
    st.builds(Edit, st.just("break"), st.sampled_from(LIVE), st.sampled_from(BREAKS)),
    st.sampled_from(SECRET_SHAPES).map(
        lambda shape: Edit("secret", _secret_entry(*shape), shape[1])
    ),
    st.just(Edit("repeat_strategy", next(e for e in LIVE if e.section == "strategies.0"))),
)


def _secret_entry(section: str, text: str) -> Entry:
    """The live line of that key (replaced), or where to insert it (marked commented)."""
    key = text.split(" =", 1)[0]
    live = [e for e in LIVE if (e.section, e.key) == (section, key)]
    return live[0] if live else Entry(HEADERS[section], section, key, True)


def apply(edits: list[Edit]) -> str:
    """The example with the edits applied (later edits win on the same line)."""
    lines = list(EXAMPLE)
    inserted: dict[int, list[str]] = {}
    for edit in edits:
        n, key = edit.entry.line, edit.entry.key
        if edit.kind == "delete":
            lines[n] = ""
        elif edit.kind == "replace":
            lines[n] = f"{key} = {edit.text}"
        elif edit.kind == "unknown":
            inserted.setdefault(n, []).append(f"{edit.text} = 1")
        elif edit.kind == "uncomment":
            lines[n] = lines[n].lstrip("#").lstrip()
        elif edit.kind == "secret" and edit.entry.commented:
            inserted.setdefault(n, []).append(edit.text)
        elif edit.kind == "secret":
            lines[n] = edit.text
        elif edit.kind != "break":
            continue  # repeat_strategy: appended below
        elif edit.text == "drop_equals":
            lines[n] = lines[n].replace("=", " ", 1)
        elif edit.text == "open_quote":
            lines[n] = f'{key} = "unterminated'
        elif edit.text == "duplicate":
            inserted.setdefault(n, []).append(lines[n])
        else:
            lines[n] = "[api"
    out = []
    for n, line in enumerate(lines):
        out += [*inserted.get(n, []), line]
    if any(e.kind == "repeat_strategy" for e in edits):
        out += EXAMPLE[EXAMPLE.index("[[strategies]]") :]
    return "\n".join(out) + "\n"


ENV_OF = {
    "api.api_key": "BOT_API__API_KEY",
    "alerts.webhook_url": "BOT_ALERTS__WEBHOOK_URL",
    "alerts.telegram_bot_token": "BOT_ALERTS__TELEGRAM_BOT_TOKEN",
    "wallet.private_key": "BOT_WALLET__PRIVATE_KEY",
}


def env_for(edits: list[Edit]) -> dict[str, str]:
    """The secrets in the environment, but not those an edit sets in the file.

    (The environment wins over the file: the file's value would not even be read.)
    """
    edited = {ENV_OF.get(e.entry.dotted) for e in edits if e.kind == "secret"}
    return {k: v for k, v in SECRET_ENV.items() if k not in edited}


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """Exactly these BOT_* variables for the block."""
    saved = {k: v for k, v in os.environ.items() if k.startswith("BOT_")}
    for name in saved:
        del os.environ[name]
    os.environ.update(values)
    try:
        yield
    finally:
        for name in values:
            os.environ.pop(name, None)
        os.environ.update(saved)


def check_problems(problems: list[str], path: Path, edits: list[Edit]) -> None:
    """One line each, starting with the file name or a dotted key; no secret anywhere."""
    top_level = set(Settings.model_fields)
    syntax = False
    for line in problems:
        assert "\n" not in line and line.strip() == line, line
        assert SECRET not in line and KEY_HEX not in line.lower(), line
        if line.startswith(f"{path}:"):
            syntax = True
            continue
        assert _DOTTED.match(line), line
        head = line.split(":", 1)[0].split(".", 1)[0]
        assert head in top_level or any(e.kind == "unknown" for e in edits), line
    named = [e.names for e in edits if e.names is not None]
    if not syntax and len(edits) == 1 and named:
        assert any(line.startswith(named[0]) for line in problems), (named, problems)


@FUZZ
@given(st.lists(edits, min_size=1, max_size=3))
def test_an_edited_example_is_valid_or_its_problems_name_their_keys(
    tmp_path_factory: pytest.TempPathFactory, changes: list[Edit]
) -> None:
    path = tmp_path_factory.mktemp("config") / "bot.toml"
    path.write_text(apply(changes), encoding="utf-8")
    try:
        with environment(env_for(changes)):
            load_settings(path)
    except ConfigError as exc:
        assert exc.problems and str(exc) == "\n".join(exc.problems)
        check_problems(exc.problems, path, changes)


@pytest.mark.parametrize(
    "line",
    ["speed = inf", "connect_timeout_seconds = inf", "rate_limit_per_second = 1e400"],
)
def test_an_infinite_number_is_out_of_range(tmp_path: Path, line: str) -> None:
    key = line.split(" ", 1)[0]
    section = "paper" if key == "speed" else "api"
    path = tmp_path / "bot.toml"
    path.write_text(f"[{section}]\n{line}\n", encoding="utf-8")
    with environment({}), pytest.raises(ConfigError) as info:
        load_settings(path)
    assert info.value.problems[0].startswith(f"{section}.{key}: ")


# --- the same through `bot config check`, as a user runs it -----------------------------------

CLI_CASES = [
    [Edit("delete", next(e for e in LIVE if e.dotted == "strategies.0.plugin"))],
    [Edit("replace", next(e for e in LIVE if e.dotted == "api.chain_id"), '"one"')],
    [Edit("replace", next(e for e in LIVE if e.dotted == "log.format"), '"xml"')],
    [Edit("replace", next(e for e in LIVE if e.dotted == "risk.max_slippage_percent"), "-1")],
    [Edit("unknown", next(e for e in LIVE if e.dotted == "api.base_url"), "api_kye")],
    [Edit("break", next(e for e in LIVE if e.dotted == "api.base_url"), "open_quote")],
    [Edit("secret", _secret_entry(*SECRET_SHAPES[0]), SECRET_SHAPES[0][1])],
    [Edit("secret", _secret_entry(*SECRET_SHAPES[5]), SECRET_SHAPES[5][1])],
    [],
]


@pytest.mark.parametrize("changes", CLI_CASES, ids=lambda c: c[0].kind if c else "none")
def test_config_check_exits_0_or_2_with_one_line_per_problem(
    tmp_path: Path, changes: list[Edit]
) -> None:
    path = tmp_path / "bot.toml"
    path.write_text(apply(changes), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")} | env_for(changes)
    result = subprocess.run(
        [sys.executable, "-m", "bot", "config", "check", str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert SECRET not in result.stdout + result.stderr
    assert KEY_HEX not in (result.stdout + result.stderr).lower()
    if not changes:
        assert result.returncode == 0 and result.stdout.startswith("config OK"), result.stderr
        return
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert lines and all(line.startswith("bot: error: ") for line in lines), lines
    check_problems([line.removeprefix("bot: error: ") for line in lines], path, changes)
