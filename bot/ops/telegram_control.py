"""Commanding the daemon from Telegram: a long-polling bot that answers configured chats only.

The same bot as the Telegram alert channel (`[alerts].telegram_bot_token`), enabled by
`[alerts].control_enabled`. It polls `getUpdates` (long polling, `offset` past every update
seen, so an update is handled once), answers read commands at once from what the daemon
knows (`ControlDesk`), and for a control (`/pause`, `/resume`, `/stopentry`, `/cancel`,
`/reconcile`) first sends a question with an inline keyboard. Only a tap on its Confirm
button, from the chat that asked, within `control_confirm_seconds` (the injected clock),
queues the command in the journal (`enqueue_command`, with who asked: chat id, user id and
username — never the token); the daemon's command job runs it (`bot.engine.commands`) and
its result line is sent back. A nonce serves once.

Chats not configured get no answer; each is logged once. Telegram down, slow or refusing
never reaches trading: the poller is its own task with request timeouts and back-off
(`bot.retry.Backoff`), every failure is logged with the token masked, and `run_forever`
restarts the loop after any crash. Answers are plain text (no parse mode: nothing the
journal holds can be read as markup) split under Telegram's 4096-unit limit. The Bot API
calls are `bot.ops.telegram_api`'s, the pending confirmations `bot.ops.telegram_confirm`'s,
the texts `bot.ops.telegram_answers`'.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final, Protocol

import httpx
from pydantic import SecretStr

from bot.accounting import BucketPeriod
from bot.clock import Clock
from bot.engine.commands import CommandQueue, wait_for_command
from bot.logging import get_logger, redact
from bot.ops.telegram_answers import HELP
from bot.ops.telegram_api import BotApi, TelegramApiError
from bot.ops.telegram_confirm import Confirmations, Pending, Sender, TapRefused
from bot.retry import Backoff

__all__ = [
    "ControlDesk",
    "ControlJournal",
    "ControlTuning",
    "TelegramControl",
]

PERIODS: Final = {
    "daily": (BucketPeriod.DAY, 7, 90),
    "weekly": (BucketPeriod.WEEK, 8, 52),
    "monthly": (BucketPeriod.MONTH, 6, 36),
}
"""Command → (bucket, default count, largest count)."""
CONTROLS: Final = ("pause", "resume", "stopentry", "cancel", "reconcile")
_MAX_IGNORED_LOGGED: Final = 1000
_USERNAME_CHARS: Final = 64
_QUICK_EMPTY_POLL: Final = 0.5
"""An empty poll answered sooner than this (seconds) is followed by this pause."""


class ControlDesk(Protocol):
    """What the daemon answers from (`bot.app.telegram_desk` is the daemon's)."""

    def status(self) -> str:
        """`/status`."""
        ...

    async def orders(self) -> str:
        """`/orders`: the open orders."""
        ...

    async def profit(self) -> str:
        """`/profit`: per strategy, from the accounting."""
        ...

    async def period(self, period: BucketPeriod, count: int) -> str:
        """`/daily n`, `/weekly n`, `/monthly n`."""
        ...

    async def balance(self) -> str:
        """`/balance`: the wallet's balances."""
        ...

    def strategies(self) -> Collection[str]:
        """The strategy names `/pause` and `/resume` take (running or paused)."""
        ...

    async def find_order(self, text: str) -> tuple[str, str] | str:
        """The open order `text` names: (kind, order id), or a one-line refusal."""
        ...


class ControlJournal(CommandQueue, Protocol):
    """The daemon's command queue, as far as the control writes to it."""

    def enqueue_command(self, kind: str, payload: Mapping[str, Any], *, at: datetime) -> int:
        """Queue a command for the daemon; its id."""
        ...


@dataclass(frozen=True)
class ControlTuning:
    """Timings of the poller (seconds); tests shorten them."""

    backoff_base: float = 1.0
    backoff_cap: float = 60.0
    request_timeout: float = 15.0
    """One `sendMessage`/`answerCallbackQuery` request (a poll: its wait + this)."""
    result_wait: float = 120.0
    """How long a confirmed command's result is waited for before saying it is queued."""
    result_every: float = 0.5


@dataclass
class _State:
    offset: int = 0
    ignored: set[str] = field(default_factory=set)
    waiters: set[asyncio.Task[None]] = field(default_factory=set)


class TelegramControl:
    """The command bot: poll, authorise, answer, confirm, queue."""

    def __init__(
        self,
        *,
        api_url: str,
        token: SecretStr,
        chat_ids: Collection[str],
        user_ids: Collection[int] = (),
        desk: ControlDesk,
        journal: ControlJournal,
        clock: Clock,
        poll_seconds: int = 30,
        confirm_seconds: int = 60,
        tuning: ControlTuning | None = None,
    ) -> None:
        self.tuning = tuning or ControlTuning()
        self.api = BotApi(api_url, token, request_timeout=self.tuning.request_timeout)
        self.chat_ids = frozenset(str(c) for c in chat_ids)
        self.user_ids = frozenset(user_ids)
        """Who may command the bot in those chats; empty: every member."""
        self.desk = desk
        self.journal = journal
        self.clock = clock
        self.poll_seconds = poll_seconds
        self.confirmations = Confirmations(timedelta(seconds=confirm_seconds))
        self.state = _State()
        self._backoff = Backoff(self.tuning.backoff_base, self.tuning.backoff_cap)
        self._log = get_logger("telegram")

    # --- the poll loop -------------------------------------------------------------------

    async def run_forever(self) -> None:
        """Poll until cancelled; a crash is logged and the loop restarted after a pause."""
        crashes = 0
        while True:
            try:
                await self.run()
            except Exception as exc:  # isolated: the daemon goes on, the poller restarts
                crashes += 1
                error = self.api.safe(f"{type(exc).__name__}: {exc}")
                self._log.error("telegram.crashed", error=error, restarts=crashes)
                await asyncio.sleep(self._backoff.delay(crashes))

    async def run(self) -> None:
        """Poll and handle updates until cancelled (transport failures back off)."""
        failures = 0
        try:
            async with httpx.AsyncClient(headers={"user-agent": "aptos-dca-bot control"}) as client:
                loop = asyncio.get_running_loop()
                while True:
                    started = loop.time()
                    try:
                        updates = await self.poll(client)
                    except TelegramApiError as exc:
                        failures += 1
                        delay = self._backoff.delay(failures, exc.retry_after)
                        self._log.warning(
                            "telegram.poll_failed", error=str(exc), retry_in=round(delay, 1)
                        )
                        await asyncio.sleep(delay)
                        continue
                    failures = 0
                    for update in updates:
                        await self.handle(client, update)
                    if not updates and loop.time() - started < _QUICK_EMPTY_POLL:
                        await asyncio.sleep(_QUICK_EMPTY_POLL)  # a server ignoring `timeout`
        finally:
            for task in list(self.state.waiters):
                task.cancel()
            await asyncio.gather(*self.state.waiters, return_exceptions=True)

    async def poll(self, client: httpx.AsyncClient) -> list[dict[str, Any]]:
        """One `getUpdates` long poll; the updates, the offset moved past them."""
        body = {
            "offset": self.state.offset,
            "timeout": self.poll_seconds,
            "allowed_updates": ["message", "callback_query"],
        }
        result = await self.api.call(
            client, "getUpdates", body, self.poll_seconds + self.tuning.request_timeout
        )
        if not isinstance(result, list):
            raise TelegramApiError("getUpdates: the result is not a list")
        updates = []
        for update in result:
            update_id = update.get("update_id") if isinstance(update, dict) else None
            if not isinstance(update_id, int) or isinstance(update_id, bool):
                continue
            self.state.offset = max(self.state.offset, update_id + 1)
            updates.append(update)
        return updates

    async def handle(self, client: httpx.AsyncClient, update: Mapping[str, Any]) -> None:
        """One update: a message or a button tap; failures are logged, never raised."""
        try:
            if isinstance(update.get("message"), dict):
                await self._message(client, update["message"])
            elif isinstance(update.get("callback_query"), dict):
                await self._tap(client, update["callback_query"])
        except Exception as exc:  # one bad update must not stop the poller
            error = self.api.safe(f"{type(exc).__name__}: {exc}")
            self._log.error("telegram.update_failed", error=error)

    # --- who may speak -------------------------------------------------------------------

    def _sender(self, chat: object, user: object) -> Sender | None:
        """The sender if their chat (and user, when listed) is allowed, else None.

        An unknown chat or user is logged once, and gets no answer.
        """
        chat_id = chat.get("id") if isinstance(chat, dict) else None
        if not isinstance(chat_id, int) or isinstance(chat_id, bool):
            return None
        key = str(chat_id)
        if key not in self.chat_ids:
            if key not in self.state.ignored and len(self.state.ignored) < _MAX_IGNORED_LOGGED:
                self.state.ignored.add(key)
                self._log.warning("telegram.unknown_chat", chat_id=key, answered=False)
            return None
        user_id = user.get("id") if isinstance(user, dict) else None
        if self.user_ids and user_id not in self.user_ids:
            who = f"{key}/{user_id}"
            if who not in self.state.ignored and len(self.state.ignored) < _MAX_IGNORED_LOGGED:
                self.state.ignored.add(who)
                self._log.warning("telegram.unknown_user", chat_id=key, user_id=user_id)
            return None
        username = user.get("username") if isinstance(user, dict) else None
        return Sender(
            chat_id=key,
            user_id=user_id if isinstance(user_id, int) else None,
            username=username[:_USERNAME_CHARS] if isinstance(username, str) else None,
        )

    # --- messages --------------------------------------------------------------------------

    async def _message(self, client: httpx.AsyncClient, message: Mapping[str, Any]) -> None:
        sender = self._sender(message.get("chat"), message.get("from"))
        text = message.get("text")
        if sender is None or not isinstance(text, str):
            return
        words = text.strip().split()
        if not words or not words[0].startswith("/"):
            chat = message.get("chat")
            if isinstance(chat, dict) and chat.get("type") == "private":  # a group: chatter
                await self.api.send(client, sender.chat_id, "commands start with /; see /help")
            return
        command = words[0][1:].split("@", 1)[0].lower()
        self._log.info("telegram.command", command=command[:32], chat_id=sender.chat_id)
        if command in CONTROLS:
            await self._ask(client, sender, command, words[1:])
            return
        await self.api.send(client, sender.chat_id, await self.read(command, words[1:]))

    async def read(self, command: str, args: list[str]) -> str:
        """The answer to a read command (or a one-line refusal)."""
        desk = self.desk
        if command in ("help", "start"):
            return HELP
        if command == "status":
            return desk.status()
        if command == "orders":
            return await desk.orders()
        if command == "profit":
            return await desk.profit()
        if command == "balance":
            return await desk.balance()
        if command in PERIODS:
            period, default, most = PERIODS[command]
            if not args:
                return await desk.period(period, default)
            if not (args[0].isascii() and args[0].isdigit()) or not 1 <= int(args[0]) <= most:
                return f"/{command} takes a count from 1 to {most}, got {args[0][:20]!r}"
            return await desk.period(period, int(args[0]))
        return f"unknown command /{command[:32]}; see /help"

    # --- controls: ask, then act on the tap --------------------------------------------------

    async def _ask(
        self, client: httpx.AsyncClient, sender: Sender, command: str, args: list[str]
    ) -> None:
        planned = await self.plan(command, args)
        if isinstance(planned, str):
            await self.api.send(client, sender.chat_id, planned)
            return
        kind, payload, question = planned
        nonce = self.confirmations.remember(kind, payload, question, sender, self.clock.now())
        keyboard = {
            "inline_keyboard": [
                [
                    {"text": "Confirm", "callback_data": f"ok:{nonce}"},
                    {"text": "Abort", "callback_data": f"no:{nonce}"},
                ]
            ]
        }
        seconds = int(self.confirmations.window.total_seconds())
        text = f"{question}? Tap Confirm within {seconds} s."
        await self.api.send(client, sender.chat_id, text, keyboard)

    async def plan(self, command: str, args: list[str]) -> tuple[str, dict[str, Any], str] | str:
        """A control's (kind, payload, question), or a one-line refusal."""
        if command in ("pause", "resume"):
            if len(args) != 1:
                return f"usage: /{command} STRATEGY"
            known = sorted(self.desk.strategies())
            if args[0] not in known:
                listed = ", ".join(known) or "none"
                return f"unknown strategy {args[0][:64]!r} (known: {listed})"
            return command, {"strategy": args[0]}, f"{command.capitalize()} strategy {args[0]}"
        if command == "cancel":
            if len(args) != 1:
                return "usage: /cancel ORDER (its id, or the start of it)"
            found = await self.desk.find_order(args[0])
            if isinstance(found, str):
                return found
            kind, order_id = found
            return "cancel", {"kind": kind, "order_id": order_id}, f"Cancel {kind} order {order_id}"
        if args:
            return f"/{command} takes no argument"
        if command == "stopentry":
            return "stopentry", {}, "Stop entries: pause every strategy"
        return "reconcile", {}, "Reconcile the journal now"

    async def _tap(self, client: httpx.AsyncClient, tap: Mapping[str, Any]) -> None:
        message = tap.get("message")
        chat = message.get("chat") if isinstance(message, dict) else None
        sender = self._sender(chat, tap.get("from"))
        tap_id, data = tap.get("id"), tap.get("data")
        if sender is None or not isinstance(tap_id, str) or not isinstance(data, str):
            return
        verdict, _, nonce = data.partition(":")
        try:
            if verdict not in ("ok", "no"):
                raise TapRefused("expired or already used: send it again")
            pending = self.confirmations.take(nonce, sender, self.clock.now())
        except TapRefused as refused:
            self._log.info("telegram.tap_refused", chat_id=sender.chat_id, why=refused.toast)
            await self.api.answer_tap(client, tap_id, refused.toast)
            if refused.message is not None:
                await self.api.send(client, sender.chat_id, refused.message)
            return
        if verdict == "no":
            await self.api.answer_tap(client, tap_id, "aborted")
            await self.api.send(client, sender.chat_id, f"aborted: {pending.question}")
            return
        payload = {**pending.payload, "by": sender.journal_entry()}
        if pending.asked_by.user_id != sender.user_id:
            payload["asked_by"] = pending.asked_by.journal_entry()
        command_id = self.journal.enqueue_command(pending.kind, payload, at=self.clock.now())
        self._log.info(
            "telegram.queued",
            command=pending.kind,
            command_id=command_id,
            chat_id=sender.chat_id,
            user_id=sender.user_id,
        )
        await self.api.answer_tap(client, tap_id, f"queued (command {command_id})")
        task = asyncio.create_task(self._report(client, sender.chat_id, command_id, pending))
        self.state.waiters.add(task)
        task.add_done_callback(self.state.waiters.discard)

    async def _report(
        self, client: httpx.AsyncClient, chat_id: str, command_id: int, pending: Pending
    ) -> None:
        """Send the command's result once the daemon ran it (or say it is still queued)."""
        await self.api.send(client, chat_id, f"{pending.question}: queued as command {command_id}")
        done = await wait_for_command(
            self.journal, command_id, self.tuning.result_wait, every=self.tuning.result_every
        )
        if done is None:
            text = f"command {command_id} not run yet; it stays queued"
        else:
            verdict = "done" if done.state == "done" else "FAILED"
            text = redact(f"command {command_id} {verdict}: {done.result or ''}".rstrip(": "))
        await self.api.send(client, chat_id, text)
