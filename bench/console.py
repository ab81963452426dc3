"""Benchmark: the operator's console (issue #19) over a journal of 10,000 orders.

Run from the repository root: `python bench/console.py [--quick]`.

A real SQLite journal with 10,000 orders (5,000 DCA, 5,000 limit, one strategy each,
half open) is written once through the journal's own writer (cached under
`$TMPDIR/bot-bench-console`). The console is started as the daemon starts it
(`bot.console.serve_console`, uvicorn in the same event loop) on 127.0.0.1, and a
keep-alive `httpx` client in a separate thread asks, one request at a time:

* `GET /api/v1/status`, `GET /api/v1/orders` (the first page of 50, newest first,
  the total counted) and its second page by cursor, and the overview's recent fills
  (`/fills?type=filled&limit=20`, a fill per order): median and 95th percentile
  latency, and requests per second. Target: an orders page ≤ 50 ms median;
* the daemon's side: while a dashboard polls (status, orders and fills every 100 ms, ten times
  a real dashboard's pace), a job in the console's event loop that should wake every
  20 ms measures how late it wakes (the tick → request latency a trading job feels).
  Target ≤ 20 ms median.

The last line is a one-line summary for CI logs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bot.clock import RealClock  # noqa: E402
from bot.config import Settings  # noqa: E402
from bot.console import serve_console  # noqa: E402
from bot.journal import Journal  # noqa: E402
from bot.journal.views import FillRecord, OrderObservation, OrderSnapshot  # noqa: E402

T0 = datetime(2026, 1, 1, tzinfo=UTC)
WALLET = "0x" + "ab" * 32
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
TOKEN = "bench-console-token-0123456789"
ORDERS = 10_000
ORDERS_PAGE_TARGET_MS = 50.0
TICK_LAG_TARGET_MS = 20.0


def build_journal(path: Path, orders: int) -> None:
    """A journal of `orders` orders (half DCA, half limit; half open), once."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    with Journal.open(f"sqlite:///{partial}") as journal:
        batch: list[OrderObservation] = []
        for n in range(orders):
            kind = "dca" if n % 2 == 0 else "limit"
            at = T0 + timedelta(minutes=n)
            snapshot = OrderSnapshot(
                kind=kind,
                order_id=f"0x{n:064x}",
                wallet=WALLET,
                from_token=USDC,
                to_token=APT,
                status="active" if n % 4 < 2 else "filled",
                amount_total=Decimal("100"),
                strategy=f"{kind}-apt",
                amount_spent=Decimal("25"),
                rate=Decimal("4.8") if kind == "limit" else None,
            )
            fill = FillRecord(f"0x{n:064x}", "filled", 1, Decimal("25"), Decimal("5.01"), None, at)
            batch.append(OrderObservation(snapshot, fills=[fill]))
            if len(batch) == 500:
                journal.observe_orders(batch, observed_at=at, source="poll")
                batch = []
        if batch:
            journal.observe_orders(batch, observed_at=T0, source="poll")
    os.replace(partial, path)


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def timed(client: httpx.Client, url: str, runs: int) -> list[float]:
    """Milliseconds of `runs` sequential GETs of `url` (each answered 200)."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        answer = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        if answer.status_code != 200:
            raise SystemExit(f"{url}: {answer.status_code} {answer.text[:200]}")
    return times


def figures(name: str, times: list[float]) -> tuple[float, str]:
    """The median and a line: median, 95th percentile, requests per second."""
    median = statistics.median(times)
    p95 = sorted(times)[int(len(times) * 0.95) - 1]
    rps = 1000 / statistics.fmean(times)
    return median, f"{name}: median {median:.1f} ms, p95 {p95:.1f} ms, {rps:.0f} requests/s"


async def serve_and_measure(
    settings: Settings, orders: int, runs: int, seconds: float
) -> dict[str, float]:
    """Start the console in this loop; measure requests, then tick lag while polled."""
    server = await serve_console(
        settings, settings_now=lambda: settings, status=lambda: None, clock=RealClock()
    )
    base = f"{server.url}/api/v1"
    results: dict[str, float] = {}
    headers = {"Authorization": f"Bearer {TOKEN}"}

    def requests() -> None:
        with httpx.Client(headers=headers, timeout=30) as client:
            timed(client, f"{base}/orders", 3)  # warm up
            for name, url in (
                ("status", f"{base}/status"),
                ("orders page", f"{base}/orders?limit=50"),
                ("fills page", f"{base}/fills?type=filled&limit=20"),
            ):
                median, line = figures(name, timed(client, url, runs))
                results[name] = median
                print(line, flush=True)
            first = client.get(f"{base}/orders?limit=50").json()
            if first["total"] != orders or first["next_cursor"] is None:
                raise SystemExit(f"the console sees {first['total']} orders, not {orders}")
            cursor = first["next_cursor"]
            median, line = figures(
                "orders page 2", timed(client, f"{base}/orders?limit=50&cursor={cursor}", runs)
            )
            results["orders page 2"] = median
            print(line, flush=True)
            # The overview's chart, asked about once a minute: the accounting of every fill.
            median, line = figures("value series", timed(client, f"{base}/value", 10))
            results["value series"] = median
            print(line, flush=True)

    await asyncio.to_thread(requests)

    polling = threading.Event()

    def dashboard() -> None:
        with httpx.Client(headers=headers, timeout=30) as client:
            while not polling.is_set():
                client.get(f"{base}/status")
                client.get(f"{base}/orders?limit=50")
                client.get(f"{base}/fills?type=filled&limit=20")
                time.sleep(0.1)

    poller = threading.Thread(target=dashboard, daemon=True)
    poller.start()
    lags = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        planned = loop.time() + 0.02
        await asyncio.sleep(0.02)
        lags.append((loop.time() - planned) * 1000)
    polling.set()
    await asyncio.to_thread(poller.join, 10)
    await server.stop()
    results["tick lag"] = statistics.median(lags)
    p95 = sorted(lags)[int(len(lags) * 0.95) - 1]
    print(
        f"tick lag while a dashboard polls: median {results['tick lag']:.2f} ms, "
        f"p95 {p95:.2f} ms, max {max(lags):.1f} ms ({len(lags)} wake-ups)",
        flush=True,
    )
    return results


def main() -> None:
    """Build (or reuse) the journal, run the measurements, print the summary line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 orders, fewer requests")
    args = parser.parse_args()
    orders = 1_000 if args.quick else ORDERS
    folder = Path(tempfile.gettempdir()) / "bot-bench-console"
    path = folder / f"journal-v1-{orders}.db"
    started = time.perf_counter()
    build_journal(path, orders)
    print(f"journal: {orders} orders, {path} ({time.perf_counter() - started:.1f} s)")
    os.environ["BOT_CONSOLE__TOKEN"] = TOKEN
    settings = Settings(
        journal={"url": f"sqlite:///{path}"},
        console={"enabled": True, "port": free_port()},
        wallet={"address": WALLET},  # the console's journal is scoped to the daemon's wallet
        daemon={"status_file": str(folder / "status.json")},
    )
    runs, seconds = (50, 2.0) if args.quick else (300, 10.0)
    results = asyncio.run(serve_and_measure(settings, orders, runs, seconds))
    ok = (
        results["orders page"] <= ORDERS_PAGE_TARGET_MS
        and results["tick lag"] <= TICK_LAG_TARGET_MS
    )
    print(
        f"console: orders={orders} status_ms={results['status']:.1f} "
        f"orders_page_ms={results['orders page']:.1f} "
        f"orders_page2_ms={results['orders page 2']:.1f} "
        f"fills_page_ms={results['fills page']:.1f} "
        f"value_series_ms={results['value series']:.0f} "
        f"tick_lag_ms={results['tick lag']:.2f} target_page_ms={ORDERS_PAGE_TARGET_MS:.0f} "
        f"target_lag_ms={TICK_LAG_TARGET_MS:.0f} ok={'yes' if ok else 'no'}"
    )


if __name__ == "__main__":
    main()
