"""Typed records of every resource in the provider's spec (section 2).

Shared by the API client and the paper world.

Amounts and rates are `Decimal` whatever the wire sends (string or number); `"Infinity"`
rate bounds parse; USD values that are `null` stay `None`; fields the spec does not list
are kept (`model_extra`), never rejected. Status and time-period values are open strings:
the known values are listed as constants, and an unknown one parses (the tracker records
and warns about it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any, Final, Generic, TypeVar

from pydantic import Field, field_validator

from bot.api.errors import NoRoute
from bot.api.wire import (
    Amount,
    Count,
    Flag,
    OptAmount,
    OptSignedDecimal,
    Rate,
    WireModel,
)
from bot.clock import MICROS_PER_SECOND, from_micros
from bot.domain import DCA_STATUSES, FINAL_STATUSES, LIMIT_STATUSES, TIME_PERIODS

__all__ = [
    "DCA_STATUSES",
    "FINAL_STATUSES",
    "LIMIT_STATUSES",
    "TIME_PERIODS",
    "TX_DETAIL_TYPES",
    "DcaOrder",
    "FeeToken",
    "Interval",
    "LimitOrder",
    "OrderFilter",
    "OrderResult",
    "OrderToken",
    "OrdersPage",
    "PriceList",
    "PriceRecord",
    "RejectedRecord",
    "Route",
    "RouteHop",
    "SwapQuoteExactIn",
    "SwapQuoteExactOut",
    "SwapResponseExactIn",
    "SwapResponseExactOut",
    "SwapTokenInfo",
    "TokenRecord",
    "TxData",
    "TxDetail",
    "parse_wire_time",
]


class OrderFilter(StrEnum):
    """The list filter of getOrders. These are filter values, **not** order statuses."""

    ACTIVE = "active"
    COMPLETED = "completed"


TX_DETAIL_TYPES: Final = frozenset({"created", "filled", "attempted", "failed", "cancelled"})


OrderT = TypeVar("OrderT", "DcaOrder", "LimitOrder")


def parse_wire_time(value: object) -> datetime | None:
    """Parse an ISO timestamp (`Z` or offset) or epoch seconds/milliseconds to aware UTC.

    Returns None for null/empty/unparseable values, and for times a `datetime` cannot hold
    (year 10000, an epoch of 10^20): a time is informative, never fatal.
    """
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        return _wire_time(value)
    except (ArithmeticError, ValueError, OSError):  # out of any datetime's (or OS's) range
        return None


def _wire_time(value: object) -> datetime | None:
    if isinstance(value, int | Decimal) or (isinstance(value, str) and value.strip().isdigit()):
        number = Decimal(str(value).strip())
        if not number.is_finite() or number.adjusted() > _MAX_EPOCH_DIGITS:
            return None
        whole = int(number)
        micros = whole * 1000 if whole > 10**11 else whole * MICROS_PER_SECOND  # ms vs s
        return from_micros(micros)
    if isinstance(value, str):
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    return None


_MAX_EPOCH_DIGITS: Final = 20
"""An epoch with more digits is no time (and `int()` of `1e999999999` would never end)."""


# --- 2.1 price record -------------------------------------------------------------------


class TokenRecord(WireModel):
    """The fields a price record (spec 2.1) and a token-list record share.

    `PriceRecord` adds the native price; `bot.api.token_list.TokenListRecord` the token
    list's metadata. Field types are not shown in the spec: all tolerant.
    """

    _checks_text = True

    chain_id: Count | None = Field(default=None, alias="chainId")
    svc_id: Any = Field(default=None, alias="svcId")
    token_address: str | None = Field(default=None, alias="tokenAddress")
    fa_address: str | None = Field(default=None, alias="faAddress")
    name: str | None = None
    symbol: str | None = None
    decimals: Count
    svc_symbol: str | None = Field(default=None, alias="svcSymbol")
    usd_price: OptAmount = Field(default=None, alias="usdPrice")
    price_change_24h: OptSignedDecimal = Field(default=None, alias="priceChange24H")
    svc_ui: Flag | None = Field(default=None, alias="svcUI")
    svc_tags: list[str] | None = Field(default=None, alias="svcTags")

    @field_validator("svc_tags", mode="before")
    @classmethod
    def _tags_from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [t.strip() for t in value.split(",") if t.strip()]
        return value

    @property
    def display_symbol(self) -> str:
        """The provider's symbol (with bridge prefix) if given, else the on-chain symbol."""
        return self.svc_symbol or self.symbol or "?"


class PriceRecord(TokenRecord):
    """One token's price (spec 2.1): the shared token fields and the native price."""

    native_price: OptAmount = Field(default=None, alias="nativePrice")


# --- 2.2 / 2.5 order parts --------------------------------------------------------------


class OrderToken(WireModel):
    """A token inside a DCA or limit order (spec 2.2)."""

    address: str
    symbol: str | None = None
    decimals: Count | None = None
    name: str | None = None


class Interval(WireModel):
    """`interval`/`delay`: a value and a time period (open string; known: `TIME_PERIODS`)."""

    value: Count
    time_period: str = Field(alias="timePeriod")


class TxDetail(WireModel):
    """One transaction detail record of an order (spec 2.5)."""

    tx_id: str = Field(alias="txId")
    tx_number: Count | None = Field(default=None, alias="txNumber")
    type: str
    attempt_number: Count | None = Field(default=None, alias="attemptNumber")
    from_token_amount: OptAmount = Field(default=None, alias="fromTokenAmount")
    from_token_amount_usd: OptAmount = Field(default=None, alias="fromTokenAmountUSD")
    to_token_amount: OptAmount = Field(default=None, alias="toTokenAmount")
    to_token_amount_usd: OptAmount = Field(default=None, alias="toTokenAmountUSD")
    fee_token_amount: OptAmount = Field(default=None, alias="feeTokenAmount")
    fee_token_amount_usd: OptAmount = Field(default=None, alias="feeTokenAmountUSD")
    time: Any = None
    price_from_token_per_to_token: OptAmount = Field(default=None, alias="priceFromTokenPerToToken")
    price_to_token_per_from_token: OptAmount = Field(default=None, alias="priceToTokenPerFromToken")
    keeper_wallet_address: str | None = Field(default=None, alias="keeperWalletAddress")

    @property
    def time_utc(self) -> datetime | None:
        """The processing time as aware UTC, when it parses."""
        return parse_wire_time(self.time)

    @property
    def dedup_key(self) -> tuple[str, int | None]:
        """(txId, txNumber): one fill per key."""
        return (self.tx_id, self.tx_number)


# --- 2.3 DCA order / 2.4 limit order ----------------------------------------------------


class _OrderBase(WireModel):
    _checks_text = True
    svc_tx_id: str = Field(alias="svcTxId")
    from_token: OrderToken = Field(alias="fromToken")
    to_token: OrderToken = Field(alias="toToken")
    fee_token: OrderToken | None = Field(default=None, alias="feeToken")
    status: str
    created_at_time: Any = Field(default=None, alias="createdAtTime")
    from_token_amount_spent: OptAmount = Field(default=None, alias="fromTokenAmountSpent")
    from_token_amount_balance: OptAmount = Field(default=None, alias="fromTokenAmountBalance")
    from_token_amount_withdrawn: OptAmount = Field(default=None, alias="fromTokenAmountWithdrawn")
    to_token_amount_withdrawn: OptAmount = Field(default=None, alias="toTokenAmountWithdrawn")
    number_of_orders_completed: Count | None = Field(default=None, alias="numberOfOrdersCompleted")
    avg_price_from_token_per_to_token: OptAmount = Field(
        default=None, alias="avgPriceFromTokenPerToToken"
    )
    avg_price_to_token_per_from_token: OptAmount = Field(
        default=None, alias="avgPriceToTokenPerFromToken"
    )
    slippage_percentage: OptAmount = Field(default=None, alias="slippagePercentage")
    tx_details: list[TxDetail] | None = Field(default=None, alias="txDetails")

    @field_validator("svc_tx_id")
    @classmethod
    def _non_empty_id(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("order id is empty")
        return value

    @property
    def order_id(self) -> str:
        """The provider's order id (`…TxId`)."""
        return self.svc_tx_id

    @property
    def created_at(self) -> datetime | None:
        """Creation time as aware UTC, when it parses."""
        return parse_wire_time(self.created_at_time)

    @property
    def is_final(self) -> bool:
        """True when the status is one after which nothing changes."""
        return self.status in FINAL_STATUSES


class DcaOrder(_OrderBase):
    """A DCA order as listed by `/dca/v1/getOrders` (spec 2.3)."""

    from_token_amount_total: Amount = Field(alias="fromTokenAmountTotal")
    number_of_orders_total: Count | None = Field(default=None, alias="numberOfOrdersTotal")
    from_token_amount_per_order: OptAmount = Field(default=None, alias="fromTokenAmountPerOrder")
    number_of_orders_remaining: Count | None = Field(default=None, alias="numberOfOrdersRemaining")
    interval: Interval | None = None
    next_order_time: Any = Field(default=None, alias="nextOrderTime")
    estimated_completion_time: Any = Field(default=None, alias="estimatedCompletionTime")
    min_rate_to_token_per_from_token: Rate | None = Field(
        default=None, alias="minRateToTokenPerFromToken"
    )
    max_rate_to_token_per_from_token: Rate | None = Field(
        default=None, alias="maxRateToTokenPerFromToken"
    )
    platform_id: str | None = Field(default=None, alias="platformId")
    delay: Interval | None = None


class LimitOrder(_OrderBase):
    """A limit order as listed by `/limit/v1/getOrders` (spec 2.4)."""

    expire_at_time: Any = Field(default=None, alias="expireAtTime")
    from_token_amount: Amount = Field(alias="fromTokenAmount")
    rate_to_token_per_from_token: Rate = Field(alias="rateToTokenPerFromToken")

    @property
    def expire_at(self) -> datetime | None:
        """Expiry as aware UTC, when it parses."""
        return parse_wire_time(self.expire_at_time)


# --- 2.6 swap ---------------------------------------------------------------------------


class SwapTokenInfo(WireModel):
    """`fromToken`/`toToken` at the top of a swap response.

    SDK 1.3.1 (`resources/type.d.ts`, `Token`): `{address, name, symbol, decimals,
    current_price}`; older answers carry only address, decimals and price.
    """

    address: str
    name: str | None = None
    symbol: str | None = None
    decimals: Count | None = None
    current_price: OptAmount = None


class FeeToken(WireModel):
    """The token fees are paid in (also the token shape of route hops).

    Two real shapes: SDK 1.3.1's top-level `feeToken` `{address, name, symbol, decimals,
    current_price}`, and the older per-quote `feeToken` `{tokenType, name, symbol,
    decimals}` (SDK 1.0.8). Both parse; `identity` gives whichever address it has.
    """

    address: str | None = None
    token_type: str | None = Field(default=None, alias="tokenType")
    name: str | None = None
    symbol: str | None = None
    decimals: Count | None = None
    current_price: OptAmount = None

    @property
    def identity(self) -> str | None:
        """The token's address or coin type, whichever the answer gave."""
        return self.address or self.token_type


class RouteHop(WireModel):
    """One hop of a route: a DEX swap between two tokens."""

    percentage: OptAmount = None
    from_token: FeeToken | None = Field(default=None, alias="fromToken")
    to_token: FeeToken | None = Field(default=None, alias="toToken")
    dex_name: str | None = Field(default=None, alias="dexName")
    aggregator_name: str | None = Field(default=None, alias="aggregatorName")


class Route(WireModel):
    """A route: a share of the trade and its hops (`routeTaken`: list of hop lists)."""

    percentage: OptAmount = None
    route_tokens: list[FeeToken] | None = Field(default=None, alias="routeTokens")
    route_taken: list[list[RouteHop]] = Field(default_factory=list, alias="routeTaken")


class TxData(WireModel):
    """Transaction data to sign and submit: an entry-function call in the node's JSON form."""

    _checks_text = True

    function: str
    type_arguments: list[str] = Field(default_factory=list)
    arguments: list[Any] = Field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The three fields as plain JSON values, as the signer consumes them."""
        return {
            "function": self.function,
            "type_arguments": list(self.type_arguments),
            "arguments": list(self.arguments),
        }


class _QuoteBase(WireModel):
    """What ExactIn and ExactOut quotes share.

    The fee: SDK 1.3.1 names it `feeTokenAmount`/`feeTokenAmountUSD` (in the response's
    top-level `feeToken`); SDK 1.0.8 `feeAmount`/`feeAmountUSD` with a per-quote
    `feeToken`. Both are read; `fee` prefers the current name.
    """

    price_impact: OptSignedDecimal = Field(default=None, alias="priceImpact")
    slippage_percentage: OptAmount = Field(default=None, alias="slippagePercentage")
    fee_token_amount: OptAmount = Field(default=None, alias="feeTokenAmount")
    fee_token_amount_usd: OptAmount = Field(default=None, alias="feeTokenAmountUSD")
    fee_amount: OptAmount = Field(default=None, alias="feeAmount")
    fee_amount_usd: OptAmount = Field(default=None, alias="feeAmountUSD")
    fee_token: FeeToken | None = Field(default=None, alias="feeToken")
    tx_data: TxData | None = Field(default=None, alias="txData")
    route: list[Route] | None = None

    @property
    def fee(self) -> Decimal | None:
        """The fee amount (human units of the fee token), under either name; None if absent."""
        return self.fee_token_amount if self.fee_token_amount is not None else self.fee_amount

    @property
    def fee_usd(self) -> Decimal | None:
        """The fee's USD value under either name; None if absent or null."""
        if self.fee_token_amount_usd is not None:
            return self.fee_token_amount_usd
        return self.fee_amount_usd


class SwapQuoteExactIn(_QuoteBase):
    """A quote for an ExactIn swap: the most you receive, and the minimum after slippage."""

    to_token_amount: Amount = Field(alias="toTokenAmount")
    min_to_token_amount: Amount = Field(alias="minToTokenAmount")
    to_token_amount_usd: OptAmount = Field(default=None, alias="toTokenAmountUSD")


class SwapQuoteExactOut(_QuoteBase):
    """A quote for an ExactOut swap: the least you pay, and the maximum after slippage."""

    from_token_amount: Amount = Field(alias="fromTokenAmount")
    max_from_token_amount: Amount = Field(alias="maxFromTokenAmount")
    from_token_amount_usd: OptAmount = Field(default=None, alias="fromTokenAmountUSD")


class SwapResponseExactIn(WireModel):
    """`POST /swap` or `GET /swap/quote` with `fromTokenAmount` (ExactIn)."""

    _checks_text = True

    from_token: SwapTokenInfo = Field(alias="fromToken")
    to_token: SwapTokenInfo = Field(alias="toToken")
    from_token_amount: Amount = Field(alias="fromTokenAmount")
    from_token_amount_usd: OptAmount = Field(default=None, alias="fromTokenAmountUSD")
    fee_token: FeeToken | None = Field(default=None, alias="feeToken")
    quotes: list[SwapQuoteExactIn]

    @property
    def best(self) -> SwapQuoteExactIn:
        """The first quote: the provider lists its chosen route first.

        Raises:
            NoRoute: `quotes` is empty (the client raises it before returning such a body).
        """
        if not self.quotes:
            raise _no_route(self)
        return self.quotes[0]

    def fee_token_of(self, quote: SwapQuoteExactIn) -> FeeToken | None:
        """The token `quote`'s fee is in: its own `feeToken` (older), else the top-level one."""
        return quote.fee_token or self.fee_token


class SwapResponseExactOut(WireModel):
    """`POST /swap` or `GET /swap/quote` with `toTokenAmount` (ExactOut)."""

    _checks_text = True

    from_token: SwapTokenInfo = Field(alias="fromToken")
    to_token: SwapTokenInfo = Field(alias="toToken")
    to_token_amount: Amount = Field(alias="toTokenAmount")
    to_token_amount_usd: OptAmount = Field(default=None, alias="toTokenAmountUSD")
    fee_token: FeeToken | None = Field(default=None, alias="feeToken")
    quotes: list[SwapQuoteExactOut]

    @property
    def best(self) -> SwapQuoteExactOut:
        """The first quote: the provider lists its chosen route first.

        Raises:
            NoRoute: `quotes` is empty (the client raises it before returning such a body).
        """
        if not self.quotes:
            raise _no_route(self)
        return self.quotes[0]

    def fee_token_of(self, quote: SwapQuoteExactOut) -> FeeToken | None:
        """The token `quote`'s fee is in: its own `feeToken` (older), else the top-level one."""
        return quote.fee_token or self.fee_token


def _no_route(response: SwapResponseExactIn | SwapResponseExactOut) -> NoRoute:
    if isinstance(response, SwapResponseExactIn):
        amount, exact_in = response.from_token_amount, True
    else:
        amount, exact_in = response.to_token_amount, False
    return NoRoute(
        response.from_token.address, response.to_token.address, str(amount), exact_in=exact_in
    )


# --- createOrder / cancelOrder responses (not shown in the spec) ------------------------


@dataclass(frozen=True)
class OrderResult:
    """The body of createOrder/cancelOrder: not shown in the spec, so any JSON object.

    Exposes the order id and a `txData` when present (docs/wire-decisions.md lists the
    places looked at). The whole body, with `svc` names unprefixed, stays in `raw`.
    """

    raw: dict[str, Any]

    def _bodies(self) -> list[dict[str, Any]]:
        nested = self.raw.get("data")
        return [self.raw, nested] if isinstance(nested, dict) else [self.raw]

    @property
    def order_id(self) -> str | None:
        """The order id (`svcTxId`, or a few likely alternatives) when the body has one."""
        for body in self._bodies():
            for key in ORDER_ID_KEYS:
                value = body.get(key)
                if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
                    return str(value)
        return None

    @property
    def tx_data(self) -> TxData | None:
        """The transaction to sign (on-chain order style), when the body carries one.

        Raises:
            pydantic.ValidationError: when a `txData` is present but malformed.
        """
        for body in self._bodies():
            if isinstance(body.get("txData"), dict):
                return TxData.model_validate(body["txData"])
        return None


ORDER_ID_KEYS: Final = ("svcTxId", "txId", "orderId", "id")
"""Where an order id is looked for in a createOrder body, in this order."""


# --- paged order lists ------------------------------------------------------------------


@dataclass(frozen=True)
class RejectedRecord:
    """A record of a page or list that did not parse: isolated, reported, skipped."""

    index: int
    error: str
    record_id: str | None = None


@dataclass(frozen=True)
class OrdersPage(Generic[OrderT]):
    """One page of getOrders (DCAOrdersResponse / LimitOrdersResponse)."""

    chain_id: int | None
    wallet: str | None
    page_number: int
    total_pages: int
    orders: list[OrderT]
    rejected: list[RejectedRecord] = field(default_factory=list)


@dataclass(frozen=True)
class PriceList:
    """The price endpoint's records, with any malformed record set aside."""

    records: list[PriceRecord]
    rejected: list[RejectedRecord] = field(default_factory=list)
