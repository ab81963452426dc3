"""DCA and limit orders of the paper core → the provider's wire records (spec 2.3–2.5).

`panoraTxId` (prefix by setting), tokens as spec 2.2 objects, amounts as human decimal
text (or base units by setting, with rates then in base units too: toToken base units per
fromToken base unit, as the client's switch reads them, wire decision #3), times in the
provider's ISO form, rates bounds absent shown as `0` (minimum) and `Infinity`
(maximum), tx details with USD values at their time.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal, localcontext
from typing import Any, TypeVar

from bot.aptos.tokens import Token
from bot.domain import OrderKind
from bot.money import format_decimal
from bot.paper.core.dca import DcaOrder
from bot.paper.core.limit import LimitOrder
from bot.paper.core.market import PaperMarket
from bot.paper.core.modules import order_function
from bot.paper.core.orders import OrderState, TxDetailRecord
from bot.paper.render import Renderer, iso

__all__ = ["OrderRenderer", "page_of"]

T = TypeVar("T")
PLATFORM_ID = "paper"


def page_of(items: Sequence[T], page: int, limit: int) -> tuple[list[T], int]:
    """One page (pages count from 1) and the number of pages (at least 1)."""
    total_pages = max(1, -(-len(items) // limit))
    start = (page - 1) * limit
    return list(items[start : start + limit]), total_pages


class OrderRenderer:
    """Renders orders with the market's prices (for USD values) and the wire settings."""

    def __init__(self, market: PaperMarket, *, prefix: str, base_units: bool) -> None:
        self.market = market
        self.render = Renderer(prefix=prefix, usd=self._usd, base_units=base_units)
        self._base_units = base_units

    def _usd(self, token: Token, at: datetime) -> Decimal | None:
        return self.market.prices.usd_visible(token.address, at)

    def _rate(self, rate: Decimal | None, num: Token, den: Token) -> str | None:
        """A human rate (`num` per `den`) as text; in base units of each when so set."""
        if rate is None:
            return None
        if self._base_units and rate.is_finite():
            with localcontext() as ctx:
                ctx.prec = 80  # exact: scaleb rounds to the context's precision
                rate = rate.scaleb(num.decimals - den.decimals)
        return format_decimal(rate)

    def order(self, kind: OrderKind, order: OrderState, *, with_details: bool) -> dict[str, Any]:
        """The wire record of one order."""
        if isinstance(order, DcaOrder):
            record = self._dca(order)
        elif isinstance(order, LimitOrder):
            record = self._limit(order)
        else:  # pragma: no cover - only two engines exist
            raise TypeError(f"not an order: {type(order).__name__}")
        if with_details:
            keeper = kind == "limit"
            record["txDetails"] = [self._detail(order, d, keeper) for d in order.details]
        return record

    def _common(self, order: OrderState) -> dict[str, Any]:
        r = self.render
        sell, buy = order.sell, order.buy
        return {
            r.key("svcTxId"): order.order_id,
            "fromToken": r.order_token(sell),
            "toToken": r.order_token(buy),
            "feeToken": r.order_token(sell),
            "createdAtTime": iso(order.created_at),
            "status": order.status,
            "fromTokenAmountSpent": r.order_amount(order.spent, sell),
            "fromTokenAmountBalance": r.order_amount(order.balance, sell),
            "fromTokenAmountWithdrawn": r.order_amount(order.withdrawn, sell),
            "toTokenAmountWithdrawn": r.order_amount(order.received, buy),
            "avgPriceFromTokenPerToToken": self._rate(order.avg_price_sell_per_buy, sell, buy)
            or "0",
            "avgPriceToTokenPerFromToken": self._rate(order.avg_price_buy_per_sell, buy, sell)
            or "0",
            "slippagePercentage": format_decimal(order.slippage),
        }

    def _dca(self, order: DcaOrder) -> dict[str, Any]:
        r = self.render
        record = self._common(order)
        value, period = order.interval
        record |= {
            "fromTokenAmountTotal": r.order_amount(order.total, order.sell),
            "numberOfOrdersTotal": order.orders_total,
            "fromTokenAmountPerOrder": r.order_amount(order.per_order, order.sell),
            "numberOfOrdersRemaining": order.remaining_orders,
            "numberOfOrdersCompleted": order.orders_done,
            "interval": {"value": str(value), "timePeriod": period},
            "nextOrderTime": iso(order.next_at),
            "estimatedCompletionTime": iso(order.estimated_completion),
            "minRateToTokenPerFromToken": self._rate(order.min_rate, order.buy, order.sell) or "0",
            "maxRateToTokenPerFromToken": self._rate(order.max_rate, order.buy, order.sell)
            or "Infinity",
            "platformId": PLATFORM_ID,
        }
        if order.delay is not None:
            record["delay"] = {"value": str(order.delay[0]), "timePeriod": order.delay[1]}
        return record

    def _limit(self, order: LimitOrder) -> dict[str, Any]:
        record = self._common(order)
        record |= {
            "expireAtTime": iso(order.expire_at),
            "fromTokenAmount": self.render.order_amount(order.amount, order.sell),
            "rateToTokenPerFromToken": self._rate(order.rate, order.buy, order.sell),
            "numberOfOrdersCompleted": order.fills,
        }
        return record

    def _detail(self, order: OrderState, detail: TxDetailRecord, keeper: bool) -> dict[str, Any]:
        r = self.render
        sell, buy, at = order.sell, order.buy, detail.time
        record: dict[str, Any] = {
            "txId": detail.tx_id,
            "txNumber": detail.tx_number,
            "type": detail.type,
            "attemptNumber": detail.attempt_number,
            "fromTokenAmount": r.order_amount(detail.from_amount, sell),
            "fromTokenAmountUSD": r.usd_value(detail.from_amount, sell, at),
            "toTokenAmount": r.order_amount(detail.to_amount, buy),
            "toTokenAmountUSD": r.usd_value(detail.to_amount, buy, at),
            "feeTokenAmount": r.order_amount(detail.fee_amount, sell),
            "feeTokenAmountUSD": r.usd_value(detail.fee_amount, sell, at),
            "time": iso(at),
        }
        if detail.price_to_per_from is not None and detail.price_to_per_from > 0:
            record["priceToTokenPerFromToken"] = self._rate(detail.price_to_per_from, buy, sell)
            record["priceFromTokenPerToToken"] = self._rate(
                (Decimal(1) / detail.price_to_per_from).quantize(Decimal("1e-18")), sell, buy
            )
        if keeper and detail.keeper:
            record["keeperWalletAddress"] = detail.keeper
        return record

    @staticmethod
    def deposit_tx_data(kind: str, order: OrderState) -> dict[str, Any]:
        """The transaction funding an on-chain-style order: `deposit(order_id, amount)`."""
        return {
            "function": order_function(kind, "deposit"),
            "type_arguments": [],
            "arguments": [order.order_id, str(order.funded)],
        }

    @staticmethod
    def withdraw_tx_data(kind: str, order: OrderState) -> dict[str, Any]:
        """The transaction cancelling an on-chain-style order: `withdraw(order_id)`."""
        return {
            "function": order_function(kind, "withdraw"),
            "type_arguments": [],
            "arguments": [order.order_id],
        }
