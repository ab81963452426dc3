"""`iter_orders`: the pages of `getOrders`, first to last — the one pager of the bot.

The order tracker, the reconciler and `bot doctor` read the provider's order lists through
it. The provider is untrusted: the paging ends after the page its `totalPages` calls the
last, after a page with no record at all (not even a malformed one), after `max_pages`
pages (`OrderPages.cut_off` then says more were announced), and — when asked
(`stop_when_repeated`) — after a page that lists only orders already listed (a provider
repeating its pages). Each page is yielded before the paging decides whether to go on, so a
reader may stop earlier (`break`) with what it has seen.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from bot.api.client import PanoraClient
from bot.api.models import DcaOrder, LimitOrder, OrderFilter, OrdersPage
from bot.api.params import GetOrdersRequest
from bot.domain import OrderKind

__all__ = ["OrderPages", "Page", "iter_orders"]

Page = OrdersPage[DcaOrder] | OrdersPage[LimitOrder]
"""One answer of `getOrders`."""


class OrderPages:
    """The pages of the `status` list of `wallet`'s `kind` orders (async iterable).

    `order_id`: only that order (the provider's id filter; an untrusted provider may
    ignore it, so a reader still checks the ids). See the module docstring for the end.
    """

    def __init__(
        self,
        client: PanoraClient,
        kind: OrderKind,
        wallet: str,
        status: OrderFilter,
        *,
        max_pages: int,
        page_size: int = 50,
        tx_details: bool = True,
        order_id: str | None = None,
        stop_when_repeated: bool = False,
    ) -> None:
        self.client = client
        self.kind: OrderKind = kind
        self.wallet = wallet
        self.status = status
        self.max_pages = max_pages
        self.page_size = page_size
        self.tx_details = tx_details
        self.order_id = order_id
        self.stop_when_repeated = stop_when_repeated
        self.cut_off = False
        """Set when `max_pages` ended the paging though the last page said more follow."""

    def __aiter__(self) -> AsyncIterator[Page]:
        return self._pages()

    async def _pages(self) -> AsyncIterator[Page]:
        listed: set[str] = set()
        for number in range(1, self.max_pages + 1):
            request = GetOrdersRequest(
                chain_id=self.client.chain_id,
                wallet=self.wallet,
                status=self.status,
                page_number=number,
                limit=self.page_size,
                tx_details=self.tx_details,
                order_id=self.order_id,
            )
            page = await self.client.get_orders(self.kind, request)
            new = {o.order_id for o in page.orders} - listed
            listed |= new
            yield page
            if number >= page.total_pages or not (page.orders or page.rejected):
                return
            if self.stop_when_repeated and page.orders and not new:
                return  # the same orders again: the provider repeats its pages
        self.cut_off = True


iter_orders = OrderPages
"""`iter_orders(client, kind, wallet, status, max_pages=…)`: the pages (`async for`)."""
