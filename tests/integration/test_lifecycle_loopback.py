"""The order lifecycle over loopback, in both order styles: executor + tracker + journal.

A served paper world on a stepped clock (moved with /paper/v1/advance); the bot's own
runtime (key file, signer, executor) and tracker against it, a journal file on disk, or
(the `postgresql` case) a fresh database of the session's throwaway PostgreSQL cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from bot.api import SwapRequest
from bot.app.runtime import Runtime
from bot.chain import new_key_file
from bot.config import load_settings
from bot.engine.actions import CancelLimit, CreateDca, CreateLimit
from bot.engine.tracker import OrderTracker
from bot.journal import Journal
from tests.support.paper_server import PAPER_KEY, paper_serve

APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"


@pytest.fixture(
    params=[("onchain", "sqlite"), ("escrow", "sqlite"), ("onchain", "postgresql")],
    ids=["onchain", "escrow", "onchain-postgresql"],
)
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    style, engine = request.param
    journal_url = (
        request.getfixturevalue("pg_database_url")
        if engine == "postgresql"
        else f"sqlite:///{tmp_path / 'bot.db'}"
    )
    key_file = tmp_path / "wallet.key"
    wallet = str(new_key_file(key_file))
    config = tmp_path / "bot.toml"
    body = (
        f'[journal]\nurl = "{journal_url}"\n'
        f'[wallet]\nkey_file = "{key_file}"\n'
        "[paper]\n"
        f'clock = "stepped"\norder_style = "{style}"\n'
        'pool_depth_usd = "20000"\n'
        f'api_keys = ["{PAPER_KEY}"]\n'
        "rate_limit_per_second = 1000.0\nrate_limit_burst = 1000\n"
        f'funding = [{{ wallet = "{wallet}", token = "APT", amount = "300" }},'
        f' {{ wallet = "{wallet}", token = "USDC", amount = "1000" }}]\n'
    )
    config.write_text(body)
    with paper_serve(config) as (url, _process):
        config.write_text(body.replace("[paper]\n", f'[paper]\nurl = "{url}"\n'))
        yield config, url


def advance(url: str, seconds: int) -> None:
    response = httpx.post(
        url + "/paper/v1/advance",
        json={"seconds": seconds},
        headers={"x-api-key": PAPER_KEY},
        timeout=10,
    )
    assert response.status_code == 200, response.text


async def test_the_whole_lifecycle(served: tuple[Path, str]) -> None:
    config, url = served
    settings = load_settings(config)
    runtime = await Runtime.open(settings)
    async with runtime:
        assert runtime.executor is not None and runtime.wallet is not None
        tracker = OrderTracker(runtime.client, runtime.journal, runtime.clock, runtime.wallet)
        journal, execute = runtime.journal, runtime.executor.execute

        # A limit order just under the market on a shallow pool: partial fills, then filled.
        quote = await runtime.client.quote(SwapRequest(APT, USDC, from_amount=Decimal(1)))
        rate = (quote.best.to_token_amount * Decimal("0.99")).quantize(Decimal("0.0001"))
        limit = await execute(
            "s", CreateLimit(key="lim", sell="APT", buy="USDC", amount=Decimal(200), rate=rate)
        )
        assert limit.state == "confirmed" and limit.order_id, limit
        for _ in range(120):
            await tracker.poll()
            stored = journal.order("limit", limit.order_id)
            if stored is not None and stored.status == "filled":
                break
            advance(url, 60)
        log = [(t.from_status, t.to_status) for t in journal.transitions("limit", limit.order_id)]
        assert log == [
            (None, "active"),
            ("active", "partially_filled"),
            ("partially_filled", "filled"),
        ]
        fills = [f for f in journal.fills("limit", limit.order_id) if f.type == "filled"]
        assert len(fills) >= 2 and sum(f.from_amount or 0 for f in fills) == Decimal(200)

        # A DCA of 3 slices: 3 fills whose amounts add up to the total.
        dca = await execute(
            "s",
            CreateDca(
                key="dca",
                sell="USDC",
                buy="APT",
                amount=Decimal(30),
                orders=3,
                interval_value=1,
                interval_period="hour",
            ),
        )
        assert dca.state == "confirmed" and dca.order_id
        advance(url, 3 * 3600)
        await tracker.poll()
        stored = journal.order("dca", dca.order_id)
        assert stored is not None and stored.status == "filled"
        slices = [f for f in journal.fills("dca", dca.order_id) if f.type == "filled"]
        assert len(slices) == 3 and sum(f.from_amount or 0 for f in slices) == Decimal(30)
        assert stored.to_amount_received == sum(f.to_amount or 0 for f in slices)

        # Cancel and expiry.
        far = await execute(
            "s",
            CreateLimit(key="far", sell="APT", buy="USDC", amount=Decimal(1), rate=Decimal(1000)),
        )
        short = await execute(
            "s",
            CreateLimit(
                key="short",
                sell="APT",
                buy="USDC",
                amount=Decimal(1),
                rate=Decimal(1000),
                expiry_value=1,
                expiry_period="hour",
            ),
        )
        assert far.order_id and short.order_id
        await tracker.poll()
        cancelled = await execute("s", CancelLimit(key="cancel-far", order_id=far.order_id))
        assert cancelled.state == "confirmed"
        advance(url, 2 * 3600)
        await tracker.poll()
        assert [t.to_status for t in journal.transitions("limit", far.order_id)] == [
            "active",
            "cancelled",
        ]
        assert [t.to_status for t in journal.transitions("limit", short.order_id)] == [
            "active",
            "expired",
        ]
        counts = (
            len(journal.orders()),
            sum(len(journal.transitions(o.kind, o.order_id)) for o in journal.orders()),
        )

    # After a restart, a poll adds nothing twice.
    with Journal.open(settings.journal.url) as reopened:
        again = await Runtime.open(settings, with_signer=False)
        async with again:
            assert runtime.wallet is not None
            report = await OrderTracker(again.client, reopened, again.clock, runtime.wallet).poll()
        assert (report.transitions, report.fills) == (0, 0)
        assert (
            len(reopened.orders()),
            sum(len(reopened.transitions(o.kind, o.order_id)) for o in reopened.orders()),
        ) == counts
    # The journal was the one configured: a file for SQLite, none beside it for PostgreSQL.
    assert (config.parent / "bot.db").exists() == settings.journal.url.startswith("sqlite")
