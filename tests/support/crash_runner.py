"""One bot process against a served paper world: run one action, or reconcile, then exit.

The crash-window tests (tests/integration/test_crash_windows.py) start this module as a
real subprocess, with `BOT_FAILPOINT` set when it must SIGKILL itself at a failpoint
(bot/engine/failpoints.py), and again without it to reconcile:

    python -m tests.support.crash_runner --journal URL --paper URL --key-label LABEL \
        --action create_dca|create_limit|swap --key IDEMPOTENCY_KEY \
        --mode execute|reconcile|poll [--grace-seconds S] [--warm-up | --throttle]

* `execute`: `Executor.execute` of one action under the idempotency key;
* `reconcile`: `Reconciler.run()` (intents left planned, sent or unknown), then one
  `OrderTracker.poll()`;
* `poll`: one `OrderTracker.poll()`.

Killed at `after_send` (5 ms after the request was handed to the client), the request of a
fresh process has usually not left yet: connecting takes longer. Two switches pick the
branch of that window (execute):
* `--warm-up`: one getOrders first, so the action's request goes out at once on an open
  connection and the provider applies it;
* `--throttle`: the same getOrders uses up the client's one token (one request per 5 s), so
  the action's request waits in the rate limiter and never leaves the process.

`BOT_FAILPOINT=after_order` (execute) kills the process right after the executor journals
the order it created, before the intent is confirmed (the executor's own failpoint).

Stdout carries exactly one line of JSON (the result); logs go to stderr. The wallet is
`address_of(fixed_key(LABEL))`; times come from the wall clock (`RealClock`), while the
paper world runs on its own accelerated clock.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import timedelta
from decimal import Decimal
from typing import Any

from pydantic import SecretStr

from bot.api import GetOrdersRequest, OrderFilter, PanoraClient
from bot.aptos.address import FunctionId
from bot.chain import NodeClient, Signer, SignerPolicy
from bot.chain.policy import ROUTER_FUNCTION
from bot.chain.settings import SignerSettings
from bot.clock import RealClock
from bot.engine.actions import Action, CreateDca, CreateLimit, Swap
from bot.engine.executor import Executor
from bot.engine.reconcile import Reconciler
from bot.engine.recorder import JournalRecorder
from bot.engine.tracker import OrderTracker, PollReport
from bot.journal import Journal
from bot.logging import configure_logging
from bot.paper.core.modules import order_function
from bot.paper.core.registry import PaperTokens
from harness.paper_signing import address_of, fixed_key
from tests.support.paper_server import PAPER_KEY

STRATEGY = "crash"
USDC, APT = "USDC", "APT"
FAST = SignerSettings(
    expiration_seconds=60,
    poll_interval_seconds=0.02,
    first_poll_delay_seconds=0.01,
    wait_timeout_seconds=20,
)


def action_for(name: str, key: str) -> Action:
    """The action each test scenario runs (the same under a key, so a rerun is a duplicate)."""
    if name == "create_dca":
        return CreateDca(
            key=key,
            sell=USDC,
            buy=APT,
            amount=Decimal(30),
            orders=3,
            interval_value=1,
            interval_period="hour",
        )
    if name == "create_limit":  # far above the market: it waits, never fills
        return CreateLimit(key=key, sell=APT, buy=USDC, amount=Decimal(1), rate=Decimal(1000))
    if name == "swap":
        return Swap(key=key, sell=APT, buy=USDC, sell_amount=Decimal(1), slippage=Decimal(1))
    raise SystemExit(f"unknown action {name!r}")


def _policy() -> SignerPolicy:
    allowed = {
        ROUTER_FUNCTION,
        *(
            FunctionId.parse(order_function(kind, name))
            for kind in ("dca", "limit")
            for name in ("deposit", "withdraw")
        ),
    }
    return SignerPolicy(
        chain_id=4, allowed_functions=frozenset(allowed), max_slippage_percent=Decimal(5)
    )


def _report(report: PollReport) -> dict[str, Any]:
    return {
        "pages": report.pages,
        "orders_seen": report.orders_seen,
        "transitions": report.transitions,
        "fills": report.fills,
        "events": [type(e).__name__ for e in report.events],
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Wire client, node, signer, journal and engine; do what `--mode` says."""
    key = fixed_key(args.key_label)
    wallet = address_of(key)
    clock = RealClock()
    tokens = PaperTokens.from_token_list().book
    client = PanoraClient(
        base_url=args.paper,
        api_key=SecretStr(PAPER_KEY),
        rate_limit_per_second=0.2 if args.throttle else 1000.0,
        rate_limit_burst=1 if args.throttle else 1000,
        max_attempts=1,
    )
    node = NodeClient(args.paper.rstrip("/") + "/v1", expected_chain_id=4)
    journal = Journal.open(args.journal)
    try:
        if args.mode == "execute":
            recorder = JournalRecorder(journal, clock)
            signer = Signer(node, key, _policy(), recorder, settings=FAST)
            executor = Executor(
                journal=journal,
                client=client,
                clock=clock,
                wallet=wallet,
                tokens=tokens,
                signer=signer,
            )
            if args.warm_up or args.throttle:  # open the connection (and use up the token)
                await client.get_orders(
                    "dca",
                    GetOrdersRequest(
                        chain_id=client.chain_id, wallet=wallet, status=OrderFilter.ACTIVE
                    ),
                )
            result = await executor.execute(STRATEGY, action_for(args.action, args.key))
            return {
                "mode": "execute",
                "intent_id": result.intent_id,
                "state": result.state,
                "order_id": result.order_id,
                "tx_hash": result.tx_hash,
                "duplicate": result.duplicate,
                "detail": result.detail,
            }
        tracker = OrderTracker(client, journal, clock, wallet)
        out: dict[str, Any] = {"mode": args.mode}
        if args.mode == "reconcile":
            reconciler = Reconciler(
                journal=journal,
                client=client,
                clock=clock,
                wallet=wallet,
                tokens=tokens,
                node=node,
                grace=timedelta(seconds=args.grace_seconds),
            )
            out["resolutions"] = [
                {
                    "intent_id": r.intent_id,
                    "state": r.state,
                    "order_id": r.order_id,
                    "detail": r.detail,
                }
                for r in await reconciler.run()
            ]
        out["poll"] = _report(await tracker.poll())
        return out
    finally:
        journal.close()
        await client.aclose()
        await node.aclose()


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, run, print one line of JSON."""
    parser = argparse.ArgumentParser(prog="crash_runner")
    parser.add_argument("--journal", required=True, help="journal URL (sqlite:///…)")
    parser.add_argument("--paper", required=True, help="served paper world URL")
    parser.add_argument("--key-label", required=True)
    parser.add_argument("--action", choices=("create_dca", "create_limit", "swap"))
    parser.add_argument("--key", default="k-1", help="idempotency key")
    parser.add_argument("--mode", choices=("execute", "reconcile", "poll"), required=True)
    parser.add_argument("--grace-seconds", type=float, default=3600.0)
    parser.add_argument("--warm-up", action="store_true")
    parser.add_argument("--throttle", action="store_true")
    args = parser.parse_args(argv)
    if args.mode == "execute" and args.action is None:
        parser.error("--mode execute needs --action")
    configure_logging(fmt="json", level="info", stream=sys.stderr)
    result = asyncio.run(run(args))
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
