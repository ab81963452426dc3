"""`bot orders [--status …] [--strategy S] [--json]`, `bot orders show ID` and `bot cancel ID`.

Listing reads the journal (read-only). Cancelling goes through the executor of whichever
process holds the wallet's lock: this one when the daemon is not running, else the daemon,
through the journal's command queue (`bot cancel` then waits for its answer).
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from decimal import Decimal
from functools import cache
from typing import Annotated, Any

import typer

from bot.aptos.tokens import TokenBook
from bot.cli.common import EXIT_USAGE, fail, load_or_exit
from bot.config import Settings
from bot.engine.commands import CLI_STRATEGY, cancel_action
from bot.engine.tracker import CLOSED
from bot.engine.wallet_lock import WalletLock, WalletLockError, lock_dir
from bot.journal import Journal, JournalError, OrderView
from bot.money import format_decimal

app = typer.Typer(help="Orders recorded in the journal.", invoke_without_command=True)
_ACTIVE = frozenset({"active", "partially_filled"})
_WAIT_SECONDS = 60.0


@cache
def _symbols() -> TokenBook:
    """The provider's token list, to show symbols instead of addresses."""
    from bot.paper.core.registry import PaperTokens

    return PaperTokens.from_token_list().book


def _symbol(key: str) -> str:
    token = _symbols().get(key)
    return token.symbol if token is not None else key[:10] + "…"


def _open(settings: Settings) -> Journal:
    try:
        return Journal.open(settings.journal.url, readonly=True)
    except JournalError as exc:  # the message names the journal (never its password)
        fail(str(exc), EXIT_USAGE)


def _progress(order: OrderView) -> str:
    if order.kind == "dca" and order.orders_total:
        return f"{order.orders_completed or 0}/{order.orders_total}"
    spent = order.amount_spent or Decimal(0)
    return f"{format_decimal(spent)}/{format_decimal(order.amount_total)}"


def _average(order: OrderView) -> str:
    received = order.to_amount_received or Decimal(0)
    if not received:
        return "-"
    return format_decimal(((order.amount_spent or Decimal(0)) / received).quantize(Decimal("1e-8")))


def _age(order: OrderView, now: datetime) -> str:
    seconds = int((now - order.created_at).total_seconds())
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _row(order: OrderView) -> dict[str, Any]:
    return {
        "id": order.order_id,
        "kind": order.kind,
        "strategy": order.strategy,
        "pair": f"{_symbol(order.from_token)}→{_symbol(order.to_token)}",
        "progress": _progress(order),
        "average_price": _average(order),
        "status": order.status,
        "created_at": order.created_at.isoformat(),
    }


@app.callback()
def orders(
    ctx: typer.Context,
    status: Annotated[str, typer.Option(help="active, completed or all.")] = "all",
    strategy: Annotated[str | None, typer.Option(help="Only this strategy's orders.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the orders the journal knows (id, kind, pair, progress, average price, status, age)."""
    if ctx.invoked_subcommand is not None:
        return
    if status not in ("active", "completed", "all"):
        fail("--status must be active, completed or all", EXIT_USAGE)
    settings = load_or_exit(ctx)
    with _open(settings) as journal:
        found = journal.orders(strategy=strategy)
    wanted = {"active": _ACTIVE, "completed": CLOSED}.get(status)
    rows = [o for o in found if wanted is None or o.status in wanted]
    if as_json:
        typer.echo(json.dumps([_row(o) for o in rows], indent=2))
        return
    if not rows:
        typer.echo("no orders")
        return
    now = max(o.last_seen_at for o in rows)
    table = [["ID", "KIND", "PAIR", "PROGRESS", "AVG PRICE", "STATUS", "AGE"]]
    for order in rows:
        r = _row(order)
        table.append(
            [
                order.order_id[:12],
                order.kind,
                r["pair"],
                r["progress"],
                r["average_price"],
                order.status,
                _age(order, now),
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        typer.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _find(journal: Journal, order_id: str, kind: str | None) -> OrderView:
    kinds = [kind] if kind else ["dca", "limit"]
    matches = [o for k in kinds if (o := journal.order(k, order_id)) is not None]
    if not matches:
        prefix = [
            o
            for o in journal.orders()
            if o.order_id.startswith(order_id) and (kind is None or o.kind == kind)
        ]
        matches = prefix if len(prefix) == 1 else []
    if len(matches) != 1:
        fail(
            f"no single order {order_id!r} in the journal (give the full id, or --kind)", EXIT_USAGE
        )
    return matches[0]


@app.command("show")
def show(
    ctx: typer.Context,
    order_id: Annotated[str, typer.Argument(metavar="ID", help="Order id (or a unique prefix).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """One order with its status transitions and fills."""
    settings = load_or_exit(ctx)
    with _open(settings) as journal:
        order = _find(journal, order_id, None)
        transitions = journal.transitions(order.kind, order.order_id)
        fills = journal.fills(order.kind, order.order_id)
    data = {
        **_row(order),
        "transitions": [
            {
                "from": t.from_status,
                "to": t.to_status,
                "observed_at": t.observed_at.isoformat(),
                "source": t.source,
            }
            for t in transitions
        ],
        "fills": [
            {
                "tx_id": f.tx_id,
                "tx_number": f.tx_number,
                "type": f.type,
                "from_amount": format_decimal(f.from_amount) if f.from_amount else None,
                "to_amount": format_decimal(f.to_amount) if f.to_amount else None,
                "time": f.time.isoformat() if f.time else None,
            }
            for f in fills
        ],
    }
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    for key in ("id", "kind", "strategy", "pair", "progress", "average_price", "status"):
        typer.echo(f"{key:<14} {data[key]}")
    typer.echo("transitions:")
    for t in data["transitions"]:
        typer.echo(f"  {t['observed_at']}  {t['from'] or '-'} → {t['to']}  ({t['source']})")
    typer.echo(f"fills: {len(fills)}")
    for f in data["fills"]:
        typer.echo(f"  #{f['tx_number']} {f['type']:<9} {f['from_amount']} → {f['to_amount']}")


def cancel(
    ctx: typer.Context,
    order_id: Annotated[str, typer.Argument(metavar="ID", help="Order id (or a unique prefix).")],
    kind: Annotated[
        str | None, typer.Option(help="dca or limit (default: from the journal).")
    ] = None,
) -> None:
    """Cancel an order: here if the daemon is not running, else through the daemon."""
    if kind not in (None, "dca", "limit"):
        fail("--kind must be dca or limit", EXIT_USAGE)
    settings = load_or_exit(ctx)
    with _open(settings) as journal:
        order = _find(journal, order_id, kind)
    wallet = settings.wallet.address or order.wallet
    lock = WalletLock(lock_dir(settings.daemon.lock_dir), wallet)
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
    from bot.cli.runtime import Runtime

    runtime = await Runtime.open(settings)
    async with runtime:
        if runtime.executor is None:
            fail(
                "no wallet configured: set [wallet].key_file or BOT_WALLET__PRIVATE_KEY", EXIT_USAGE
            )
        result = await runtime.executor.execute(
            CLI_STRATEGY, cancel_action(order.kind, order.order_id, runtime.clock)
        )
        runtime.save_world()  # an embedded paper world keeps the cancel (we hold the lock)
    if result.state != "confirmed":
        fail(f"cancel of {order.order_id}: {result.state}: {result.detail}")
    return f"cancelled {order.kind} order {order.order_id}"


async def _cancel_through_daemon(settings: Settings, order: OrderView) -> str:
    from bot.clock import RealClock

    clock = RealClock()
    with Journal.open(settings.journal.url, readonly=True) as journal:
        command_id = journal.enqueue_command(
            "cancel", {"kind": order.kind, "order_id": order.order_id}, at=clock.now()
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _WAIT_SECONDS
        while loop.time() < deadline:
            command = journal.command(command_id)
            if command is not None and command.state in ("done", "failed"):
                if command.state == "failed":
                    fail(f"the daemon could not cancel {order.order_id}: {command.result}")
                return f"cancelled {order.kind} order {order.order_id} (through the daemon)"
            await asyncio.sleep(0.5)
    fail(
        f"the daemon holds the wallet but did not answer within {_WAIT_SECONDS:.0f} s; "
        f"the request stays queued (command {command_id})"
    )


def reconcile(
    ctx: typer.Context,
    grace_minutes: Annotated[int, typer.Option(help="Fail what nothing matched after this.")] = 15,
) -> None:
    """Settle intents left in flight (after a crash or an unknown outcome), then poll orders."""
    settings = load_or_exit(ctx)
    if grace_minutes < 0:
        fail("--grace-minutes must not be negative", EXIT_USAGE)
    lines = asyncio.run(_reconcile(settings, grace_minutes))
    for line in lines:
        typer.echo(line)


async def _reconcile(settings: Settings, grace_minutes: int) -> list[str]:
    from datetime import timedelta

    from bot.cli.runtime import Runtime
    from bot.engine.reconcile import Reconciler
    from bot.engine.tracker import OrderTracker

    runtime = await Runtime.open(settings, with_signer=False)
    async with runtime:
        if runtime.wallet is None:
            fail("no wallet configured: set [wallet].address or a key", EXIT_USAGE)
        lock = WalletLock(lock_dir(settings.daemon.lock_dir), runtime.wallet)
        if not _take(lock):
            fail("the daemon holds this wallet and reconciles by itself", EXIT_USAGE)
        try:
            settled = await Reconciler(
                journal=runtime.journal,
                client=runtime.client,
                clock=runtime.clock,
                wallet=runtime.wallet,
                tokens=runtime.tokens,
                node=runtime.node,
                grace=timedelta(minutes=grace_minutes),
            ).run()
            report = await OrderTracker(
                runtime.client, runtime.journal, runtime.clock, runtime.wallet
            ).poll()
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
