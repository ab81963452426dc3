"""`bot orders [--status …] [--strategy S] [--json]`, `bot orders show ID` and `bot cancel ID`.

Listing reads the journal (read-only; `bot.cli.orders_view` draws it). Cancelling goes
through the executor of whichever process holds the wallet's lock: this one when the
daemon is not running, else the daemon, through the journal's command queue (`bot cancel`
then waits for its answer). An order already closed is answered in one line, without a
cancel request: exit 0 when it is already cancelled (or refunded), 2 when it ended
otherwise (filled, expired; lost, after a poll has not found it again).
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Annotated, Final

import typer

from bot.app.opening import wallet_lock
from bot.cli.common import (
    EXIT_USAGE,
    PAPER_READ_HELP,
    fail,
    load_or_exit,
    open_journal,
    own_wallet,
    reading_settings,
)
from bot.cli.orders_view import (
    convention,
    market_time,
    order_row,
    show_json,
    show_lines,
    table_lines,
)
from bot.clock import RealClock
from bot.config import Settings
from bot.domain import (
    CANCEL_DONE_STATUSES,
    CLOSED_STATUSES,
    FINAL_STATUSES,
    PROVIDER_LIVE_STATUSES,
    OrderKind,
)
from bot.engine.commands import CLI_STRATEGY, cancel_action, wait_for_command
from bot.engine.wallet_lock import WalletLock, WalletLockError
from bot.journal import Journal, OrderView
from bot.logging import get_logger

if TYPE_CHECKING:
    from bot.app.runtime import Runtime

app = typer.Typer(help="Orders recorded in the journal.", invoke_without_command=True)
_WAIT_SECONDS = 60.0
_SHOWN_MATCHES: Final = 5

KindOption = Annotated[
    str | None,
    typer.Option(help="dca or limit (when one id names both kinds). Default: either kind."),
]


_PAPER = "bot.orders.paper"
"""Where `bot orders --paper` leaves its flag for a subcommand (`ctx.meta`, shared)."""


def _open(settings: Settings) -> Journal:
    """The journal, read-only, opened for the configured wallet (`own_wallet`)."""
    return open_journal(settings.journal.url, readonly=True, wallet=own_wallet(settings))


@app.callback()
def orders(
    ctx: typer.Context,
    status: Annotated[str, typer.Option(help="active, completed or all.")] = "all",
    strategy: Annotated[str | None, typer.Option(help="Only this strategy's orders.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    paper: Annotated[bool, typer.Option("--paper", help=PAPER_READ_HELP)] = False,
) -> None:
    """List the orders the journal knows: id, kind, pair, progress, prices, status, age.

    Prices (limit and average) in the `[display].price_quote` convention.
    """
    if ctx.invoked_subcommand is not None:
        ctx.meta[_PAPER] = paper  # `bot orders --paper show ID`: the subcommand reads it
        return
    if status not in ("active", "completed", "all"):
        fail("--status must be active, completed or all", EXIT_USAGE)
    settings = reading_settings(ctx, paper=paper)
    with _open(settings) as journal:
        found = journal.orders(strategy=strategy)
        clock = market_time(settings, journal, RealClock())
    wanted = {"active": PROVIDER_LIVE_STATUSES, "completed": CLOSED_STATUSES}.get(status)
    rows = [o for o in found if wanted is None or o.status in wanted]
    prices = convention(settings)
    if as_json:
        typer.echo(json.dumps([order_row(o, prices, clock.now) for o in rows], indent=2))
        return
    if not rows:
        typer.echo("no orders")
        return
    for line in table_lines(rows, prices, clock.now):
        typer.echo(line)
    if (note := clock.note()) is not None:
        typer.echo(note)


def _find(journal: Journal, order_id: str, kind: str | None) -> OrderView:
    """The one order `order_id` (or a prefix of it) names; exit 2 with a hint otherwise."""
    if kind not in (None, "dca", "limit"):
        fail("--kind must be dca or limit", EXIT_USAGE)
    kinds = [kind] if kind else list(OrderKind)
    matches = [o for k in kinds if (o := journal.order(k, order_id)) is not None]
    if not matches:
        matches = [
            o
            for o in journal.orders()
            if o.order_id.startswith(order_id) and (kind is None or o.kind == kind)
        ]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        fail(f"no order {order_id!r} in the journal (bot orders lists them)", EXIT_USAGE)
    if len({o.order_id for o in matches}) == 1:
        fail(
            f"order {order_id!r} is both a DCA and a limit order: add --kind dca or --kind limit",
            EXIT_USAGE,
        )
    named = ", ".join(f"{o.kind} {o.order_id[:16]}" for o in matches[:_SHOWN_MATCHES])
    more = f" and {len(matches) - _SHOWN_MATCHES} more" if len(matches) > _SHOWN_MATCHES else ""
    fail(
        f"{order_id!r} names {len(matches)} orders ({named}{more}): give more of the id",
        EXIT_USAGE,
    )


@app.command("show")
def show(
    ctx: typer.Context,
    order_id: Annotated[str, typer.Argument(metavar="ID", help="Order id (or a unique prefix).")],
    kind: KindOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    paper: Annotated[bool, typer.Option("--paper", help=PAPER_READ_HELP)] = False,
) -> None:
    """One order: its limit price, expiry, status transitions and fills, with times."""
    settings = reading_settings(ctx, paper=paper or bool(ctx.meta.get(_PAPER)))
    with _open(settings) as journal:
        order = _find(journal, order_id, kind)
        transitions = journal.transitions(order.kind, order.order_id)
        fills = journal.fills(order.kind, order.order_id)
        clock = market_time(settings, journal, RealClock())
    prices = convention(settings)
    data = show_json(order, transitions, fills, prices, clock.now)
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    for line in show_lines(data, order, prices, clock.now):
        typer.echo(line)
    if (note := clock.note()) is not None:
        typer.echo(note)


def _closed_answer(order: OrderView) -> tuple[str, int] | None:
    """What `bot cancel` answers for an order already closed (None: it may be cancelled).

    Already cancelled (or refunded): exit 0, nothing to do. Ended another way (filled,
    expired, lost): it cannot be cancelled, exit 2.
    """
    name = f"{'DCA' if order.kind == 'dca' else 'limit'} order {order.order_id}"
    if order.status in CANCEL_DONE_STATUSES:
        return f"{name} is already {order.status}: nothing to cancel", 0
    if order.status in CLOSED_STATUSES:
        return f"{name} cannot be cancelled: it is already {order.status}", EXIT_USAGE
    return None


def _answer_closed(order: OrderView) -> None:
    """Print the closed order's answer and exit with its code (return when not closed)."""
    answer = _closed_answer(order)
    if answer is None:
        return
    message, code = answer
    if code:
        fail(message, code)
    typer.echo(message)
    raise typer.Exit(0)


def _reread(settings: Settings, order: OrderView) -> OrderView:
    """The order as the journal knows it now (the same view if it is gone)."""
    with _open(settings) as journal:
        return journal.order(order.kind, order.order_id) or order


def cancel(
    ctx: typer.Context,
    order_id: Annotated[str, typer.Argument(metavar="ID", help="Order id (or a unique prefix).")],
    kind: KindOption = None,
) -> None:
    """Cancel an order: here if the daemon is not running, else through the daemon.

    An order already cancelled answers so (exit 0); one that ended otherwise cannot be
    cancelled (exit 2).
    """
    settings = load_or_exit(ctx)
    with _open(settings) as journal:
        order = _find(journal, order_id, kind)
    if order.status in FINAL_STATUSES:  # the provider's last word: nothing can change it
        _answer_closed(order)
    wallet = settings.wallet.address or order.wallet
    lock = wallet_lock(settings, wallet)
    if _take(lock):
        try:
            message = asyncio.run(_cancel_here(settings, order))
        finally:
            lock.release()
    else:
        message = asyncio.run(_cancel_through_daemon(settings, order))
    typer.echo(message)


def _take(lock: WalletLock) -> bool:
    """Take the wallet lock (False: the daemon holds it); exit 2 when it cannot be opened."""
    try:
        return lock.try_acquire()
    except WalletLockError as exc:
        fail(str(exc), EXIT_USAGE)


async def _cancel_here(settings: Settings, order: OrderView) -> str:
    """Poll the wallet's orders, cancel with this process's executor, poll again.

    The first poll tells whether the order closed since the journal last saw it (then the
    answer needs no cancel request); the second records its new status at once (a second
    `bot cancel` answers from the journal) or, after a refusal, how it stands now.
    """
    from bot.app.runtime import Runtime

    runtime = await Runtime.open(settings)
    async with runtime:
        if runtime.executor is None or runtime.wallet is None:
            fail(
                "no wallet configured: set [wallet].key_file or BOT_WALLET__PRIVATE_KEY", EXIT_USAGE
            )
        try:
            await _poll(runtime)
            _answer_closed(runtime.journal.order(order.kind, order.order_id) or order)
            result = await runtime.executor.execute(
                CLI_STRATEGY, cancel_action(order.kind, order.order_id, runtime.clock)
            )
            if result.state in ("confirmed", "failed"):
                await _poll(runtime)
        finally:
            runtime.save_world()  # an embedded paper world keeps what changed (we hold the lock)
    if result.state == "confirmed":
        return f"cancelled {order.kind} order {order.order_id}"
    _answer_closed(_reread(settings, order))
    fail(_refusal(order, result.state, result.detail))


async def _poll(runtime: Runtime) -> None:
    """One poll of the wallet's orders into the journal (a failure is logged, not fatal)."""
    from bot.engine.tracker import OrderTracker

    if runtime.wallet is None:
        return
    try:
        await OrderTracker(runtime.client, runtime.journal, runtime.clock, runtime.wallet).poll()
    except Exception as exc:  # the cancel's own answer does not depend on it
        get_logger("cli").warning("cancel.poll_failed", error=type(exc).__name__)


async def _cancel_through_daemon(settings: Settings, order: OrderView) -> str:
    """Queue the cancel for the daemon and wait for its answer."""
    with Journal.open(settings.journal.url, readonly=True) as journal:
        command_id = journal.enqueue_command(
            "cancel",
            {"kind": order.kind, "order_id": order.order_id},
            at=RealClock().now(),
            wallet=order.wallet,  # the daemon of the order's wallet takes it, no other
        )
        command = await wait_for_command(journal, command_id, _WAIT_SECONDS)
    if command is None:
        fail(
            f"the daemon holds the wallet but did not answer within {_WAIT_SECONDS:.0f} s; "
            f"the request stays queued (command {command_id})"
        )
    if command.state == "done":
        return f"cancelled {order.kind} order {order.order_id} (through the daemon)"
    _answer_closed(_reread(settings, order))
    state, _, detail = (command.result or "failed").partition(": ")
    fail(_refusal(order, state, detail, through_daemon=True))


def _refusal(order: OrderView, state: str, detail: str, *, through_daemon: bool = False) -> str:
    """One line: the cancel did not happen, why, and what to do next."""
    who = "the daemon could not cancel" if through_daemon else "could not cancel"
    line = f"{who} {order.kind} order {order.order_id} ({state}"
    line += f": {detail})" if detail else ")"
    if state == "unknown":
        line += "; settle it with bot reconcile before trying again"
    return line


def reconcile(
    ctx: typer.Context,
    grace_minutes: Annotated[int, typer.Option(help="Fail what nothing matched after this.")] = 15,
    fail_intent: Annotated[
        int | None,
        typer.Option(
            "--fail",
            metavar="INTENT",
            help="By hand: nothing was placed; free its key. Default: none (settle automatically).",
        ),
    ] = None,
    link_intent: Annotated[
        int | None,
        typer.Option(
            "--link", metavar="INTENT", help="By hand: --order is this intent's. Default: none."
        ),
    ] = None,
    order_id: Annotated[
        str | None, typer.Option("--order", help="The order --link names (required with --link).")
    ] = None,
    reason: Annotated[
        str | None, typer.Option(help="Why (kept in the journal); required by hand, else unused.")
    ] = None,
) -> None:
    """Settle intents left in flight (after a crash or an unknown outcome), then poll orders.

    An intent the bot holds `unknown` for a person (its outcome cannot be told from the
    bot's own evidence) is settled by hand: `--fail INTENT` (nothing was placed: its key
    runs again) or `--link INTENT --order ID` (that order is its), with a `--reason`.
    """
    settings = load_or_exit(ctx)
    if grace_minutes < 0:
        fail("--grace-minutes must not be negative", EXIT_USAGE)
    by_hand = _by_hand(fail_intent, link_intent, order_id, reason)
    lines = asyncio.run(_reconcile(settings, grace_minutes, by_hand))
    for line in lines:
        typer.echo(line)


def _by_hand(
    fail_intent: int | None, link_intent: int | None, order_id: str | None, reason: str | None
) -> tuple[int, str | None, str] | None:
    """(intent, order or None, reason) of a settlement by hand, or None; exit 2 if muddled."""
    if fail_intent is None and link_intent is None:
        if order_id is not None or reason is not None:
            fail("--order and --reason go with --fail or --link", EXIT_USAGE)
        return None
    if fail_intent is not None and link_intent is not None:
        fail("choose one of --fail and --link", EXIT_USAGE)
    if not reason or not reason.strip():
        fail("settling by hand needs --reason (it is kept in the journal)", EXIT_USAGE)
    if link_intent is not None:
        if not order_id:
            fail("--link needs --order ID", EXIT_USAGE)
        return link_intent, order_id, reason.strip()
    if order_id is not None:
        fail("--order goes with --link, not --fail", EXIT_USAGE)
    assert fail_intent is not None
    return fail_intent, None, reason.strip()


async def _reconcile(
    settings: Settings, grace_minutes: int, by_hand: tuple[int, str | None, str] | None
) -> list[str]:
    from datetime import timedelta

    from bot.app.runtime import LOST_REASON, Runtime
    from bot.engine.reconcile import Reconciler, Resolution
    from bot.engine.tracker import OrderTracker

    runtime = await Runtime.open(settings, with_signer=False)
    async with runtime:
        if runtime.wallet is None:
            fail("no wallet configured: set [wallet].address or a key", EXIT_USAGE)
        lock = wallet_lock(settings, runtime.wallet)
        if not _take(lock):
            doing = "settle by hand: stop it first" if by_hand else "reconciles by itself"
            fail(f"the daemon holds this wallet and {doing}", EXIT_USAGE)
        try:
            reconciler = Reconciler(
                journal=runtime.journal,
                client=runtime.client,
                clock=runtime.clock,
                wallet=runtime.wallet,
                tokens=runtime.tokens,
                node=runtime.node,
                grace=timedelta(minutes=grace_minutes),
            )
            settled: list[Resolution] = []
            if by_hand is not None:
                intent_id, order, why = by_hand
                try:
                    settled.append(
                        await reconciler.settle_by_hand(intent_id, order_id=order, reason=why)
                    )
                except ValueError as exc:
                    fail(str(exc), EXIT_USAGE)
            else:
                settled = await reconciler.run()
            tracker = OrderTracker(runtime.client, runtime.journal, runtime.clock, runtime.wallet)
            if runtime.world is not None:  # the embedded world is the market: unknown is gone
                tracker.close_unknown = LOST_REASON
            report = await tracker.poll()
            runtime.save_world()
        finally:
            lock.release()
    lines = [
        f"intent {r.intent_id}: {r.state}"
        + (f" (order {r.order_id})" if r.order_id else "")
        + (f": {r.detail}" if r.detail else "")
        for r in settled
    ]
    lines.append(
        f"orders polled: {report.orders_seen} seen, {report.transitions} transitions, "
        f"{report.fills} fills"
    )
    return lines
