"""`bot config check` refuses what cannot run, as a user meets it (issue 22, item 4).

Each case starts from `config.example.toml` copied into a fresh folder as `config.toml`,
edited the way a user would, and checked with the command the README gives, run in that
folder: a real subprocess, its exit code and its stderr.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.cli import ROOT, run_bot
from tests.support.paper_server import PAPER_KEY, paper_serve, write_config

EXAMPLE = ROOT / "config.example.toml"
DCA_PARAMS = (
    'params = { from_token = "USDC", to_token = "APT", amount_per_order = "25", '
    'interval = "1 day", orders = 7 }'
)


def user_config(folder: Path, *edits: tuple[str, str], extra: str = "") -> Path:
    """config.example.toml copied to `folder/config.toml`, each (old, new) edit applied once."""
    path = folder / "config.toml"
    shutil.copy(EXAMPLE, path)
    text = path.read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path.write_text(text + extra, encoding="utf-8")
    return path


def errors(stderr: str) -> list[str]:
    """The `bot: error:` lines, prefix removed; every stderr line must be one."""
    lines = stderr.splitlines()
    assert all(line.startswith("bot: error: ") for line in lines), stderr
    return [line.removeprefix("bot: error: ") for line in lines]


CASES = {
    "parameter typo": (
        ("amount_per_order = ", "amount_per_ordr = "),
        "strategy 'weekly-apt' (recurring_dca): params.amount_per_ordr: unknown parameter "
        "(check the spelling; see docs/strategies.md)",
    ),
    "negative amount": (
        ('amount_per_order = "25"', 'amount_per_order = "-5"'),
        "strategy 'weekly-apt' (recurring_dca): params.amount_per_order: "
        "Input should be greater than 0 (got '-5')",
    ),
    "plugin typo": (
        ('plugin = "recurring_dca"', 'plugin = "limit_ladderr"'),
        "strategy 'weekly-apt': unknown strategy plugin 'limit_ladderr' (closest: limit_ladder; "
        "available: dip_buyer, limit_ladder, rebalancer, recurring_dca, take_profit)",
    ),
    "bad period": (
        ('interval = "1 day"', 'interval = "1 hr"'),
        "strategy 'weekly-apt' (recurring_dca): params.interval: '1 hr' is not a duration: use "
        "a whole number ≥ 1 and a unit (s, m, h, d, w, or second, minute, hour, day, week, "
        "month), e.g. '6h' or '1 day' (got '1 hr')",
    ),
    "cap on an unknown token": (
        ('per_transaction_caps = { USDC = "500"', 'per_transaction_caps = { USDCC = "500"'),
        "risk.per_transaction_caps.USDCC: unknown token 'USDCC' (closest: USDC, whUSDC, USDCso)",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_config_that_cannot_run_is_refused_with_one_line(tmp_path: Path, case: str) -> None:
    edit, expected = CASES[case]
    user_config(tmp_path, edit)
    result = run_bot("config", "check", "config.toml", cwd=tmp_path, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert expected in errors(result.stderr)
    assert "Traceback" not in result.stderr and "config OK" not in result.stdout


def test_every_problem_of_one_file_is_its_own_line(tmp_path: Path) -> None:
    """The five mistakes in one file: five lines (and the typo's missing field), exit 2."""
    entries = ""
    for number, (old, new) in enumerate(edit for edit, _ in list(CASES.values())[:4]):
        entry = (
            f'\n[[strategies]]\nname = "s{number}"\nplugin = "recurring_dca"\n'
            f"schedule = {{ interval_seconds = 3600 }}\n{DCA_PARAMS}\n"
        )
        entries += entry.replace(old, new).replace("'weekly-apt'", f"'s{number}'")
    user_config(tmp_path, CASES["cap on an unknown token"][0], extra=entries)
    result = run_bot("-c", "config.toml", "config", "check", cwd=tmp_path, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    found = errors(result.stderr)
    expected = [
        text.replace("'weekly-apt'", f"'s{n}'") for n, (_, text) in enumerate(CASES.values())
    ]
    expected[-1] = CASES["cap on an unknown token"][1]
    assert [line for line in found if "Field required" not in line] == expected
    assert (
        found.count("strategy 's0' (recurring_dca): params.amount_per_order: Field required") == 1
    )
    assert len(found) == 6


def test_the_example_is_still_ok(tmp_path: Path) -> None:
    user_config(tmp_path)
    result = run_bot("config", "check", "config.toml", cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "config OK: config.toml (mode paper, 1 strategy)\n"
    assert result.stderr == ""


def test_live_mode_warns_for_names_the_packaged_list_does_not_know(tmp_path: Path) -> None:
    """Live: the provider's list may know more; a name is checked offline, and said so."""
    user_config(
        tmp_path,
        ('mode = "paper"', 'mode = "live"'),
        ("allowed_tokens = []", 'allowed_tokens = ["APT", "USDC", "QQXZ"]'),
    )
    result = run_bot("config", "check", "config.toml", "--offline", cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        "bot: warning: risk.allowed_tokens: 'QQXZ' is not in the packaged token list; "
        "not checked against the live list"
    ]
    assert result.stdout == "config OK: config.toml (mode live, 1 strategy, 1 warning)\n"


def test_a_budget_on_an_unknown_token_is_refused_in_paper_mode(tmp_path: Path) -> None:
    user_config(tmp_path, ("enabled = true\n", 'enabled = true\nbudget = { USDCC = "50" }\n'))
    result = run_bot("config", "check", "config.toml", cwd=tmp_path, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert errors(result.stderr) == [
        "strategy 'weekly-apt' (recurring_dca): budget.USDCC: unknown token 'USDCC' "
        "(closest: USDC, whUSDC, USDCso)"
    ]


def test_a_strategy_token_that_does_not_exist_is_refused_with_suggestions(tmp_path: Path) -> None:
    """Issue 21: `to_token = "APTT"` was OK until a tick refused it; now both checks say so."""
    user_config(tmp_path, ('to_token = "APT"', 'to_token = "APTT"'))
    expected = "weekly-apt: to_token 'APTT' is not a known token (did you mean APT, ZAPT, tAPT?)"
    for verb in (("config", "check"), ("strategies", "check", "weekly-apt")):
        result = run_bot(*verb, cwd=tmp_path, timeout=60)
        assert result.returncode == 2, result.stdout + result.stderr
        assert errors(result.stderr) == [expected]
        assert "OK" not in result.stdout


def test_an_amount_finer_than_its_token_is_refused(tmp_path: Path) -> None:
    user_config(tmp_path, ('amount_per_order = "25"', 'amount_per_order = "25.0000001"'))
    result = run_bot("strategies", "check", "weekly-apt", cwd=tmp_path, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert errors(result.stderr) == [
        "weekly-apt: amount_per_order: amount 25.0000001 USDC has more than 6 decimals"
    ]


def test_a_slice_shorter_than_the_ticks_is_a_warning_not_a_refusal(tmp_path: Path) -> None:
    user_config(
        tmp_path,
        ('interval = "1 day"', 'interval = "30 min"'),
        ("interval_seconds = 3600", "interval_seconds = 86400"),
    )
    result = run_bot("config", "check", cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("bot: warning: weekly-apt: interval '30 minute' (each DCA ")
    assert len(result.stderr.splitlines()) == 1
    assert result.stdout == "config OK: config.toml (mode paper, 1 strategy, 1 warning)\n"


def test_live_mode_without_the_provider_says_so_and_does_not_claim_ok(tmp_path: Path) -> None:
    """The provider on a closed loopback port: one line, exit 1, no `config OK`."""
    user_config(
        tmp_path,
        ('mode = "paper"', 'mode = "live"'),
        ('base_url = "https://api.panora.exchange"', 'base_url = "http://127.0.0.1:9"'),
    )
    result = run_bot("config", "check", cwd=tmp_path, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = errors(result.stderr)
    assert len(lines) == 1
    assert lines[0].startswith("the provider's token list cannot be had: ")
    assert lines[0].endswith("checked against the packaged list only (--offline to accept that)")
    assert "config OK" not in result.stdout


def test_live_mode_checks_the_provider_list_and_caches_it(tmp_path: Path) -> None:
    """A real provider on loopback (a served paper world): asked once, then its cache."""
    user_config(
        tmp_path,
        ('mode = "paper"', 'mode = "live"'),
        ("allowed_tokens = []", 'allowed_tokens = ["APT", "QQXZ"]'),
    )
    with paper_serve(write_config(tmp_path / "server.toml")) as (url, _):
        text = (tmp_path / "config.toml").read_text(encoding="utf-8")
        text = text.replace('base_url = "https://api.panora.exchange"', f'base_url = "{url}"')
        (tmp_path / "config.toml").write_text(text, encoding="utf-8")
        env = {"BOT_API__API_KEY": PAPER_KEY}
        result = run_bot("config", "check", cwd=tmp_path, env=env, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert errors(result.stderr) == ["risk.allowed_tokens: unknown token 'QQXZ'"]
    assert (tmp_path / "data" / "provider-tokens.json").is_file()
    # The server is gone: the fresh cache answers.
    result = run_bot("config", "check", cwd=tmp_path, env=env, timeout=60)
    assert errors(result.stderr) == ["risk.allowed_tokens: unknown token 'QQXZ'"]
