"""A reload never removes every strategy by accident: emptied and truncated files are refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.config import ConfigError, Schedule, Settings, StrategyEntry, load_settings
from bot.ops.reload import ReloadRefused, plan_reload

EXAMPLE = Path(__file__).resolve().parents[3] / "config.example.toml"


def entry(name: str, *, enabled: bool = True) -> StrategyEntry:
    return StrategyEntry(
        name=name,
        plugin="recurring_dca",
        schedule=Schedule(interval_seconds=60),
        enabled=enabled,
    )


def with_scheduler(settings: Settings, **changes: object) -> Settings:
    return settings.model_copy(update={"scheduler": settings.scheduler.model_copy(update=changes)})


def test_a_file_without_strategies_is_refused_while_strategies_run() -> None:
    running = Settings(strategies=[entry("a"), entry("b")])
    with pytest.raises(ReloadRefused) as info:
        plan_reload(running, Settings())
    message = str(info.value)
    assert "\n" not in message
    assert "no [[strategies]]" in message and "2 running strategies kept" in message
    assert "[scheduler].allow_no_strategies = true" in message


def test_the_explicit_setting_lets_a_reload_remove_every_strategy() -> None:
    running = Settings(strategies=[entry("a"), entry("b")])
    plan = plan_reload(running, with_scheduler(Settings(), allow_no_strategies=True))
    assert plan.removed == ("a", "b") and plan.entries == {}
    assert plan.restart_needed == ()  # a live key, applied, not "restart needed"
    assert plan.applied == ("[scheduler].allow_no_strategies",)
    assert plan.settings.scheduler.allow_no_strategies


def test_disabling_every_strategy_is_explicit_and_allowed() -> None:
    running = Settings(strategies=[entry("a")])
    plan = plan_reload(running, Settings(strategies=[entry("a", enabled=False)]))
    assert plan.removed == ("a",)


def test_nothing_running_and_nothing_new_is_not_a_refusal() -> None:
    running = Settings(strategies=[entry("a", enabled=False)])
    assert plan_reload(running, Settings()).summary() == "0 unchanged"


@pytest.fixture
def no_bot_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own BOT_* variables must not change the files read here."""
    for name in [k for k in os.environ if k.startswith("BOT_")]:
        monkeypatch.delenv(name)


@pytest.mark.usefixtures("no_bot_env")
def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    running = load_settings(EXAMPLE)
    empty = tmp_path / "bot.toml"
    empty.write_text("")
    with pytest.raises(ReloadRefused):
        plan_reload(running, load_settings(empty))


def cuts(text: str) -> list[int]:
    """Every line end, and the middle of every line, of `text` (the whole text excluded)."""
    found: set[int] = set()
    start = 0
    for line in text.splitlines(keepends=True):
        found.add(start + len(line) // 2)
        start += len(line)
        found.add(start)
    return sorted(c for c in found if c < len(text.rstrip()))


@pytest.mark.usefixtures("no_bot_env")
def test_no_cut_of_the_example_stops_its_strategy(tmp_path: Path) -> None:
    """A copy of the example cut short anywhere: refused, or its strategy is still there."""
    running = load_settings(EXAMPLE)
    assert [e.name for e in running.strategies] == ["weekly-apt"]
    text = EXAMPLE.read_text(encoding="utf-8")
    path = tmp_path / "bot.toml"
    outcomes = {"unparsed": 0, "refused": 0, "kept": 0}
    for cut in cuts(text):
        path.write_text(text[:cut], encoding="utf-8")
        try:
            new = load_settings(path)
        except ConfigError as exc:
            assert all("\n" not in p for p in exc.problems)
            outcomes["unparsed"] += 1
            continue
        try:
            plan = plan_reload(running, new)
        except ReloadRefused:
            outcomes["refused"] += 1
            continue
        assert "weekly-apt" in plan.entries, (cut, text[cut - 40 : cut])
        assert plan.removed == ()
        outcomes["kept"] += 1
    # Each way of ending up safe is exercised: a syntax error (a cut inside a value), a
    # refusal (a cut before [[strategies]]) and a kept strategy (a cut inside its entry
    # after its required keys; the plugin then refuses the missing params on reload).
    assert all(count > 0 for count in outcomes.values()), outcomes
