"""`iter_orders`: the one getOrders pager (tracker, reconciler, doctor) against a scripted API.

The client is the real HTTP stack over ASGI; the provider's pages say whatever each test
makes them say, truthful or not.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from pydantic import SecretStr

from bot.api import OrderFilter, PanoraClient
from bot.api.paging import iter_orders
from tests.support.json_strategies import WALLET, ScriptedApi
from tests.support.tracker_rig import limit_page, record


def client_for(pages: list[str]) -> tuple[PanoraClient, list[dict[str, Any]]]:
    """A client whose n-th getOrders answer is `pages[n]` (the last one repeats)."""
    asked: list[dict[str, Any]] = []

    def handler(method: str, path: str, body: Any) -> tuple[int, str]:
        asked.append(body)
        return 200, pages[min(len(asked), len(pages)) - 1]

    app = ScriptedApi()
    app.handler = handler
    client = PanoraClient(
        base_url="http://paging",
        api_key=SecretStr("paging-key-0123"),
        transport=httpx.ASGITransport(app=app),
        max_attempts=1,
        rate_limit_per_second=1e6,
        rate_limit_burst=10**6,
    )
    return client, asked


def read(client: PanoraClient, max_pages: int, **options: Any) -> tuple[list[list[str]], bool]:
    """The ids of every page read, and whether the pager was cut off by `max_pages`."""

    async def go() -> tuple[list[list[str]], bool]:
        pages = iter_orders(
            client, "limit", WALLET, OrderFilter.ACTIVE, max_pages=max_pages, **options
        )
        ids = [[o.order_id for o in page.orders] async for page in pages]
        await client.aclose()
        return ids, pages.cut_off

    return asyncio.run(go())


def test_pages_are_read_up_to_the_last_one_the_provider_announces() -> None:
    pages = [limit_page([record(f"0x{n}")], total=3) for n in (1, 2, 3)]
    client, asked = client_for([*pages, limit_page([record("0x4")], total=3)])
    assert read(client, 10) == ([["0x1"], ["0x2"], ["0x3"]], False)
    assert [body["pageNumber"] for body in asked] == [1, 2, 3]
    assert all(body["status"] == "active" and body["limit"] == 50 for body in asked)


def test_an_empty_page_ends_the_paging_whatever_the_total_says() -> None:
    client, asked = client_for([limit_page([record("0x1")], total=99), limit_page([], total=99)])
    assert read(client, 10) == ([["0x1"], []], False)
    assert len(asked) == 2


def test_the_page_bound_ends_a_provider_announcing_more_forever() -> None:
    client, asked = client_for([limit_page([record(f"0x{n}")], total=10**9) for n in range(9)])
    assert read(client, 4) == ([["0x0"], ["0x1"], ["0x2"], ["0x3"]], True)
    assert len(asked) == 4


def test_a_repeated_page_ends_the_paging_only_when_asked() -> None:
    same = limit_page([record("0x1")], total=10**9)
    client, _asked = client_for([same])
    assert read(client, 5, stop_when_repeated=True) == ([["0x1"], ["0x1"]], False)
    client, _asked = client_for([same])
    assert read(client, 5) == ([["0x1"]] * 5, True)


def test_a_reader_stopping_early_reads_no_further_page() -> None:
    client, asked = client_for([limit_page([record(f"0x{n}")], total=5) for n in range(5)])

    async def first() -> list[str]:
        pages = iter_orders(client, "limit", WALLET, OrderFilter.COMPLETED, max_pages=5)
        async for page in pages:
            return [o.order_id for o in page.orders]
        return []

    assert asyncio.run(first()) == ["0x0"]
    assert len(asked) == 1 and asked[0]["status"] == "completed"


def test_the_id_filter_and_the_details_flag_reach_the_request() -> None:
    client, asked = client_for([limit_page([record("0x7")])])
    assert read(client, 1, order_id="0x7", tx_details=False, page_size=7) == ([["0x7"]], False)
    assert asked[0]["txDetails"] is False and asked[0]["limit"] == 7
    assert "0x7" in asked[0].values()
