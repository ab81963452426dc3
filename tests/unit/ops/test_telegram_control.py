"""The Telegram control against a fake Bot API on 127.0.0.1, with a real journal file.

A stand-in desk gives fixed answers (the daemon's own answers are tested in
tests/integration/test_telegram_control.py); here: who is answered, the commands and
their refusals, the confirmation flow (tap, second tap, expired tap, a tap from another
chat, abort), what the journal records of who asked, outages and crashes of the poller,
and long answers split under Telegram's limit.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator, Collection, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bot.accounting import BucketPeriod
from bot.clock import SteppedClock
from bot.journal import Journal
from bot.logging import configure_logging
from bot.ops.telegram_answers import utf16_length
from bot.ops.telegram_control import ControlTuning, TelegramControl
from tests.support.fake_telegram import TOKEN, FakeBotApi, fake_bot_api, until

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ME, FRIEND, STRANGER = 1001, -100200, 31337
FAST = ControlTuning(backoff_base=0.05, backoff_cap=0.2, request_timeout=5, result_every=0.05)


class Desk:
    """Fixed answers; `boom` makes `/status` raise."""

    def __init__(self) -> None:
        self.boom = False
        self.orders_answer = "ORDERS"

    def status(self) -> str:
        if self.boom:
            raise RuntimeError("desk exploded")
        return "STATUS ok"

    async def orders(self) -> str:
        return self.orders_answer

    async def profit(self) -> str:
        return "PROFIT"

    async def period(self, period: BucketPeriod, count: int) -> str:
        return f"PERIOD {period} {count}"

    async def balance(self) -> str:
        return "BALANCE"

    def strategies(self) -> Collection[str]:
        return {"dca-a", "dca-b"}

    async def find_order(self, text: str) -> tuple[str, str] | str:
        if "0xabcdef0123".startswith(text) and len(text) >= 6:
            return "dca", "0xabcdef0123"
        return f"no open order {text!r} (see /orders)"


@pytest.fixture
def api() -> Iterator[FakeBotApi]:
    with fake_bot_api() as running:
        yield running


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    opened = Journal.open(f"sqlite:///{tmp_path / 'bot.db'}")
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def logs() -> io.StringIO:
    stream = io.StringIO()
    configure_logging(fmt="json", level="debug", stream=stream)
    return stream


@pytest.fixture
def clock() -> SteppedClock:
    return SteppedClock(NOW)


@pytest.fixture
def desk() -> Desk:
    return Desk()


@pytest.fixture
async def control(
    api: FakeBotApi, journal: Journal, clock: SteppedClock, desk: Desk
) -> AsyncIterator[TelegramControl]:
    bot = TelegramControl(
        api_url=api.url,
        token=SecretStr(TOKEN),
        chat_ids=[str(ME), str(FRIEND)],
        desk=desk,
        journal=journal,
        clock=clock,
        poll_seconds=1,
        confirm_seconds=60,
        tuning=FAST,
    )
    task = asyncio.create_task(bot.run_forever())
    try:
        yield bot
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def answered(api: FakeBotApi, chat: int, count: int) -> list[str]:
    await until(lambda: len(api.texts(chat)) >= count)
    return api.texts(chat)


async def test_read_commands_answer_the_configured_chat(
    api: FakeBotApi, control: TelegramControl
) -> None:
    commands = ["/status", "/orders", "/profit", "/balance", "/daily", "/weekly 3"]
    commands += ["/monthly@my_dca_bot 12", "/monthly 40", "/daily x", "/help", "/nope", "hello"]
    api.say(FRIEND, "just chatting in the group", chat_type="group")  # no answer to chatter
    for text in commands:
        api.say(ME, text)
    texts = await answered(api, ME, len(commands))
    assert texts[:7] == [
        "STATUS ok",
        "ORDERS",
        "PROFIT",
        "BALANCE",
        "PERIOD day 7",
        "PERIOD week 3",
        "PERIOD month 12",
    ]
    assert texts[7] == "/monthly takes a count from 1 to 36, got '40'"
    assert texts[8] == "/daily takes a count from 1 to 90, got 'x'"
    assert texts[9].startswith("Read:") and "/stopentry" in texts[9]
    assert texts[10] == "unknown command /nope; see /help"
    assert texts[11] == "commands start with /; see /help"
    assert all(m.get("parse_mode") is None for m in api.sent)  # plain text, never markup
    api.say(FRIEND, "/status", chat_type="group")  # a command in the group is answered
    assert await answered(api, FRIEND, 1) == ["STATUS ok"]


async def test_an_unknown_chat_gets_no_answer_and_is_logged_once(
    logs: io.StringIO, api: FakeBotApi, control: TelegramControl, journal: Journal
) -> None:
    api.say(STRANGER, "/status")
    api.say(STRANGER, "/stopentry")
    api.tap(STRANGER, "ok:whatever")
    api.say(ME, "/status")  # handled after the stranger's: they were seen by then
    await answered(api, ME, 1)
    assert api.texts(STRANGER) == []
    assert api.answered == []
    assert journal.take_command(at=NOW) is None
    events = [json.loads(line) for line in logs.getvalue().splitlines() if line.startswith("{")]
    unknown = [e for e in events if e["event"] == "telegram.unknown_chat"]
    assert [e["chat_id"] for e in unknown] == [str(STRANGER)]


async def confirm_prompt(api: FakeBotApi, chat: int, text: str) -> str:
    before = len(api.buttons())
    api.say(chat, text)
    await until(lambda: len(api.buttons()) >= before + 2)
    ok = api.buttons()[-2]
    assert ok.startswith("ok:") and api.buttons()[-1] == "no:" + ok[3:]
    assert len(ok.encode()) <= 64  # Telegram's callback_data limit
    return ok


async def test_a_control_acts_only_after_the_tap_and_records_who(
    api: FakeBotApi, control: TelegramControl, journal: Journal
) -> None:
    ok = await confirm_prompt(api, ME, "/pause dca-a")
    assert api.texts(ME)[-1] == "Pause strategy dca-a? Tap Confirm within 60 s."
    await asyncio.sleep(0.3)
    assert journal.take_command(at=NOW) is None  # nothing queued before the tap

    api.tap(ME, ok, user_id=7, username="bob")
    await until(lambda: any("queued as command" in t for t in api.texts(ME)))
    command = journal.take_command(at=NOW)
    assert command is not None and command.kind == "pause"
    assert command.payload["strategy"] == "dca-a"
    assert command.payload["by"] == {
        "via": "telegram",
        "chat_id": str(ME),
        "user_id": 7,
        "username": "bob",
    }
    assert command.payload["asked_by"]["user_id"] == 42  # another member asked
    assert TOKEN not in json.dumps(dict(command.payload))
    assert api.tap_answers() == [f"queued (command {command.id})"]

    journal.finish_command(command.id, True, "dca-a paused", at=NOW)  # the daemon's job
    await until(lambda: api.texts(ME)[-1] == f"command {command.id} done: dca-a paused")

    api.tap(ME, ok)  # the same button again: nothing more
    await until(lambda: len(api.answered) == 2)
    assert api.tap_answers()[-1] == "expired or already used: send it again"
    assert journal.take_command(at=NOW) is None


async def test_a_failed_command_says_so(
    api: FakeBotApi, control: TelegramControl, journal: Journal
) -> None:
    ok = await confirm_prompt(api, ME, "/cancel 0xabcdef")
    assert "Cancel dca order 0xabcdef0123?" in api.texts(ME)[-1]
    api.tap(ME, ok)
    await until(lambda: any("queued as command" in t for t in api.texts(ME)))
    command = journal.take_command(at=NOW)
    assert command is not None and command.kind == "cancel"
    assert command.payload["kind"] == "dca" and command.payload["order_id"] == "0xabcdef0123"
    journal.finish_command(command.id, False, "failed: order is closed", at=NOW)
    await until(lambda: "FAILED: failed: order is closed" in api.texts(ME)[-1])


async def test_an_expired_tap_does_nothing(
    api: FakeBotApi, control: TelegramControl, journal: Journal, clock: SteppedClock
) -> None:
    ok = await confirm_prompt(api, ME, "/stopentry")
    assert api.texts(ME)[-1].startswith("Stop entries: pause every strategy?")
    clock.advance(timedelta(seconds=61))
    api.tap(ME, ok)
    await until(lambda: len(api.answered) == 1)
    assert api.tap_answers() == ["expired: send it again"]
    await until(lambda: api.texts(ME)[-1].startswith("expired, nothing done"))
    assert journal.take_command(at=NOW) is None


async def test_a_tap_from_another_chat_is_refused_and_the_asker_can_still_confirm(
    api: FakeBotApi, control: TelegramControl, journal: Journal
) -> None:
    ok = await confirm_prompt(api, ME, "/reconcile")
    api.tap(FRIEND, ok)  # allowed chat, but not the one that asked
    await until(lambda: len(api.answered) == 1)
    assert api.tap_answers() == ["this confirmation belongs to another chat"]
    api.tap(STRANGER, ok)  # not allowed at all: silence
    api.tap(ME, ok)
    await until(lambda: len(api.answered) == 2)
    command = journal.take_command(at=NOW)
    assert command is not None and command.kind == "reconcile"
    assert command.payload["by"]["chat_id"] == str(ME)
    assert journal.take_command(at=NOW) is None


async def test_abort_and_bad_arguments(
    api: FakeBotApi, control: TelegramControl, journal: Journal
) -> None:
    no = "no:" + (await confirm_prompt(api, ME, "/resume dca-b"))[3:]
    api.tap(ME, no)
    await until(lambda: api.texts(ME)[-1] == "aborted: Resume strategy dca-b")
    for text in ("/pause", "/pause ghost", "/cancel 0xzz", "/stopentry now", "/cancel"):
        api.say(ME, text)
    texts = (await answered(api, ME, 7))[-5:]
    assert texts == [
        "usage: /pause STRATEGY",
        "unknown strategy 'ghost' (known: dca-a, dca-b)",
        "no open order '0xzz' (see /orders)",
        "/stopentry takes no argument",
        "usage: /cancel ORDER (its id, or the start of it)",
    ]
    assert journal.take_command(at=NOW) is None


async def test_the_poller_survives_an_outage_and_a_crash_and_never_logs_the_token(
    logs: io.StringIO, api: FakeBotApi, control: TelegramControl, desk: Desk
) -> None:
    api.mode = "down"
    polls = api.polls
    await until(lambda: len(api.paths) >= 4)  # it keeps trying, backing off
    api.mode = "flood"
    await asyncio.sleep(0.3)
    api.mode = "ok"
    await until(lambda: api.polls > polls)
    desk.boom = True
    api.say(ME, "/status")  # the desk raises: logged, the poller goes on
    api.say(ME, "/profit")
    await answered(api, ME, 1)
    assert api.texts(ME) == ["PROFIT"]
    text = logs.getvalue()
    assert "telegram.poll_failed" in text and "telegram.update_failed" in text
    assert "desk exploded" in text
    assert TOKEN not in text and TOKEN.split(":")[1] not in text


async def test_a_crashed_loop_is_restarted(
    logs: io.StringIO, api: FakeBotApi, control: TelegramControl, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_poll = control.poll
    calls = {"n": 0}

    async def flaky(client: Any) -> list[dict[str, Any]]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError(f"bug with {TOKEN} inside")
        return await real_poll(client)

    monkeypatch.setattr(control, "poll", flaky)
    api.say(ME, "/balance")
    await answered(api, ME, 1)
    assert "telegram.crashed" in logs.getvalue()
    assert TOKEN not in logs.getvalue()


async def test_a_long_answer_is_split_on_line_boundaries(
    api: FakeBotApi, control: TelegramControl, desk: Desk
) -> None:
    rows = [f"order {n:04d} dca 0x{n:060x} active: 1 of 10 USDC -> APT ✓" for n in range(150)]
    desk.orders_answer = "\n".join(rows)
    api.say(ME, "/orders")
    await until(lambda: "\n".join(api.texts(ME)) == desk.orders_answer)
    parts = api.texts(ME)
    assert len(parts) >= 3
    assert all(utf16_length(p) <= 4096 for p in parts)
    assert all(p.split("\n")[0] in rows for p in parts)  # every part starts with a whole row


def test_a_chat_id_must_be_a_number() -> None:
    from bot.config import AlertSettings

    with pytest.raises(ValueError, match="chat id 'me' is not a number"):
        AlertSettings(control_chat_ids=["me"])
    with pytest.raises(ValueError, match="control_enabled needs telegram_bot_token"):
        AlertSettings(control_enabled=True)
    settings = AlertSettings(
        telegram_bot_token=SecretStr(TOKEN),
        telegram_chat_id="5",
        control_enabled=True,
        control_chat_ids=[" -100200 "],
    )
    assert settings.control_chat_ids == ["-100200"]


async def test_with_users_listed_only_they_may_command_or_confirm_in_a_group(
    api: FakeBotApi, journal: Journal, clock: SteppedClock, desk: Desk, logs: io.StringIO
) -> None:
    bot = TelegramControl(
        api_url=api.url,
        token=SecretStr(TOKEN),
        chat_ids=[str(FRIEND)],
        user_ids=[7],
        desk=desk,
        journal=journal,
        clock=clock,
        poll_seconds=1,
        confirm_seconds=60,
        tuning=FAST,
    )
    task = asyncio.create_task(bot.run_forever())
    try:
        api.say(FRIEND, "/balance", user_id=666, username="mallory", chat_type="group")
        api.say(FRIEND, "/status", user_id=7, username="me", chat_type="group")
        assert await answered(api, FRIEND, 1) == ["STATUS ok"]  # mallory heard nothing
        before = len(api.buttons())
        api.say(FRIEND, "/stopentry", user_id=7, username="me", chat_type="group")
        await until(lambda: len(api.buttons()) >= before + 2)
        ok = api.buttons()[-2]
        api.tap(FRIEND, ok, user_id=666, username="mallory")  # not listed: silence
        api.tap(FRIEND, ok, user_id=7, username="me")
        await until(lambda: len(api.answered) == 1)
        command = journal.take_command(at=NOW)
        assert command is not None and command.kind == "stopentry"
        assert command.payload["by"]["user_id"] == 7 and "asked_by" not in command.payload
        assert journal.take_command(at=NOW) is None
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    records = [json.loads(line) for line in logs.getvalue().splitlines() if line.startswith("{")]
    unknown = [r for r in records if r.get("event") == "telegram.unknown_user"]
    assert [(r["chat_id"], r["user_id"]) for r in unknown] == [(str(FRIEND), 666)]
