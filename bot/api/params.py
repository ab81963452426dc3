"""Requests to the provider and the spec's rules on them, enforced before anything is sent.

Each request is an immutable dataclass with exact `Decimal` amounts; `to_query`/`to_body`
check every rule of the spec (section 4 and 8) and raise `RequestRuleError` naming the
field. The rules are `bot.order_rules`, the ones the paper service answers 400 with and
the backtest refuses by, so the client refuses before sending what they would refuse.
Bodies are nested JSON (`fromTokenAmount: {value, type}`), and provider-prefixed names
(`panoraTxId`) are written with the configured prefix (docs/wire-decisions.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final, Literal, TypeVar

from bot import order_rules as rules
from bot.api.errors import RequestRuleError
from bot.api.models import OrderFilter
from bot.api.wire import prefixed
from bot.domain import Slippage
from bot.money import format_decimal
from bot.order_rules import AUTO, MAX_HOPS, MAX_PAGE_SIZE, SwapVariant

__all__ = [
    "ALL_TOKENS_UI",
    "AUTO",
    "MAX_HOPS",
    "MAX_PAGE_SIZE",
    "CancelOrderRequest",
    "DcaCreateRequest",
    "GetOrdersRequest",
    "LimitCreateRequest",
    "Slippage",
    "SwapRequest",
    "SwapVariant",
    "check_slippage",
]

_T = TypeVar("_T")


def _rule(check: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """Apply one of the spec's rules (`bot.order_rules`); a break is a `RequestRuleError`."""
    try:
        return check(*args, **kwargs)
    except rules.RuleError as exc:
        raise RequestRuleError(exc.field, exc.message) from None


def _positive(field: str, value: Decimal) -> str:
    return format_decimal(_rule(rules.positive_amount, field, value))


def _percentage(field: str, value: object, upper: int, variant: SwapVariant) -> str:
    return format_decimal(_rule(rules.percentage, field, value, upper, rules.places(variant)))


def check_slippage(value: Slippage | str | None, variant: SwapVariant = "current") -> str | None:
    """Validate a slippage: `auto`, or 0–100 truncated after 1 decimal (legacy: 2).

    Returns the wire text, or None when not given (the provider's default is `auto`).
    """
    checked = _rule(rules.slippage, value, rules.places(variant))
    return format_decimal(checked) if isinstance(checked, Decimal) else checked


def _check_period(
    field: str, value: int | None, unit: str | None, minimum: int = 1
) -> dict[str, str] | None:
    """An optional `{value, timePeriod}` object, or None when neither is given."""
    if value is None and unit is None:
        return None
    number, period = _rule(rules.period, field, value, unit, minimum=minimum)
    return {"value": str(number), "timePeriod": period}


def _base_units(
    field: str, amount: Decimal, decimals: int, request: DcaCreateRequest | LimitCreateRequest
) -> int:
    """The amount in the sold token's base units, as the service will read it (≥ 1)."""
    return _rule(rules.base_units, field, amount, decimals, request.from_token)


def _check_count(field: str, value: int, minimum: int = 1, maximum: int | None = None) -> int:
    return _rule(rules.whole_number, field, value, minimum, maximum)


def _check_address(field: str, value: str) -> str:
    return _rule(rules.hex_address, field, value)


def _list_param(names: Sequence[str]) -> str:
    """`Thala,Hyperion`: list parameters joined with commas, never bracketed.

    Every SDK version does so (1.3.1 and 1.0.8 `dist/index.es.js`: `includeSources?.join(",")`).
    """
    return ",".join(name.strip() for name in names)


def _flag(value: bool) -> str:
    """A boolean query value as axios writes the SDK's booleans: `true`/`false`."""
    return "true" if value else "false"


ALL_TOKENS_UI: Final = "true,false"
"""`panoraUI` for every token, listed or hidden: the docs' "Set as true, false to get all
tokens", the SDK's `[true, false]`, and what public callers send. `false` alone asks for
the hidden ones only."""


@dataclass(frozen=True)
class SwapRequest:
    """Parameters of `POST /swap` and `GET /swap/quote` (spec 4.7; SDK 1.3.1 `SwapParams`).

    Exactly one of `from_amount` (ExactIn) and `to_amount` (ExactOut) is given, in human
    units (10.5 tokens, not base units). At most one of `include_sources` and
    `exclude_sources` (the SDK refuses both). `include_pools`, `only_direct_routes`,
    `max_hops` (1–5 or `max`) and `disable_splits` are the current variant's route
    controls; the legacy variant knows only the first two.
    """

    from_token: str
    to_token: str
    from_amount: Decimal | None = None
    to_amount: Decimal | None = None
    to_wallet: str | None = None
    slippage: Slippage | None = None
    integrator_fee_percentage: Decimal | None = None
    integrator_fee_address: str | None = None
    include_sources: tuple[str, ...] | None = None
    exclude_sources: tuple[str, ...] | None = None
    include_pools: tuple[str, ...] | None = None
    only_direct_routes: bool | None = None
    max_hops: int | Literal["max"] | None = None
    disable_splits: bool | None = None
    chain_id: int | None = None

    @property
    def exact_in(self) -> bool:
        """True for ExactIn (an amount to sell), False for ExactOut (an amount to buy)."""
        return self.from_amount is not None

    def to_query(
        self, variant: SwapVariant, *, with_tx_data: bool, skipped_pools: list[str] | None = None
    ) -> list[tuple[str, str]]:
        """The query string, after checking every rule of the spec.

        Args:
            variant: `current` or `legacy` (older endpoint variant).
            with_tx_data: True for a swap to sign, which requires `toWalletAddress`; a
                quote (`POST /swap` or legacy `GET /swap/quote`) may omit the wallet.
            skipped_pools: receives coin-standard pools skipped because their address
                contains a comma (the spec says they are skipped).

        Raises:
            RequestRuleError: naming the field that breaks a rule.
        """
        if (self.from_amount is None) == (self.to_amount is None):
            raise RequestRuleError(
                "fromTokenAmount/toTokenAmount", "exactly one of the two must be given"
            )
        query: list[tuple[str, str]] = []
        if self.chain_id is not None:
            query.append(("chainId", str(self.chain_id)))
        query.append(("fromTokenAddress", self._token("fromTokenAddress", self.from_token)))
        query.append(("toTokenAddress", self._token("toTokenAddress", self.to_token)))
        if self.from_amount is not None:
            query.append(("fromTokenAmount", _positive("fromTokenAmount", self.from_amount)))
        if self.to_amount is not None:
            query.append(("toTokenAmount", _positive("toTokenAmount", self.to_amount)))
        if self.to_wallet is not None:
            query.append(("toWalletAddress", _check_address("toWalletAddress", self.to_wallet)))
        elif with_tx_data:
            raise RequestRuleError("toWalletAddress", "is required for a swap to sign")
        slippage = check_slippage(self.slippage, variant)
        if slippage is not None:
            query.append(("slippagePercentage", slippage))
        if self.integrator_fee_percentage is not None:
            fee = _percentage("integratorFeePercentage", self.integrator_fee_percentage, 2, variant)
            query.append(("integratorFeePercentage", fee))
        if self.integrator_fee_address is not None:
            fee_address = _rule(rules.fee_address, self.integrator_fee_address)
            query.append(("integratorFeeAddress", fee_address))
        _rule(rules.one_of_sources, self.include_sources, self.exclude_sources)
        for name, values in (
            ("includeSources", self.include_sources),
            ("excludeSources", self.exclude_sources),
        ):
            if values:
                query.append((name, _list_param(values)))
        query.extend(self._route_controls(variant, skipped_pools))
        return query

    def _route_controls(
        self, variant: SwapVariant, skipped_pools: list[str] | None
    ) -> list[tuple[str, str]]:
        """includePools, onlyDirectRoutes (both variants); maxHops, disableSplits (current).

        Sent as the SDK 1.3.1 sends them: pools comma-joined, booleans `true`/`false`,
        maxHops `1`–`5` or `max`.
        """
        extra: list[tuple[str, str]] = []
        if self.include_pools is not None:
            pools = [p for p in self.include_pools if "," not in p]
            if skipped_pools is not None:
                skipped_pools.extend(p for p in self.include_pools if "," in p)
            _rule(rules.include_pools, len(pools))
            if pools:
                extra.append(("includePools", ",".join(pools)))
        if self.only_direct_routes is not None:
            extra.append(("onlyDirectRoutes", _flag(self.only_direct_routes)))
        for name, value in (("maxHops", self.max_hops), ("disableSplits", self.disable_splits)):
            if value is not None and variant == "legacy":
                raise RequestRuleError(name, "exists only in the current swap variant")
        if self.max_hops is not None:
            extra.append(("maxHops", _rule(rules.max_hops, self.max_hops)))
        if self.disable_splits is not None:
            extra.append(("disableSplits", _flag(self.disable_splits)))
        return extra

    @staticmethod
    def _token(field: str, value: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise RequestRuleError(field, "a token address is required")
        return value.strip()


@dataclass(frozen=True)
class DcaCreateRequest:
    """Body of `POST /dca/v1/createOrder` (spec 4.2).

    With `from_decimals` (the sold token's decimals) the amount is also held to the rules
    the service applies in base units: at least one, and for a `total` at least one per
    order; without it only to "above 0".
    """

    chain_id: int
    to_wallet: str
    from_token: str
    to_token: str
    amount: Decimal
    amount_type: Literal["total", "perorder"]
    interval_value: int
    interval_period: str
    number_of_orders: int
    min_rate: Decimal | None = None
    max_rate: Decimal | None = None
    delay_value: int | None = None
    delay_period: str | None = None
    slippage: Decimal | None = None
    from_decimals: int | None = None

    def to_body(self) -> dict[str, Any]:
        """The JSON body (nested objects for dotted names), after checking every rule.

        A rate bound that bounds nothing (a minimum of 0, a maximum of Infinity) is left
        out, as the service reads an absent bound (docs/wire-decisions.md).
        """
        amount_type = _rule(rules.amount_type, self.amount_type)
        body: dict[str, Any] = {
            "chainId": str(self.chain_id),
            "toWalletAddress": _check_address("toWalletAddress", self.to_wallet),
            "fromTokenAddress": _check_address("fromTokenAddress", self.from_token),
            "toTokenAddress": _check_address("toTokenAddress", self.to_token),
            "fromTokenAmount": {
                "value": _positive("fromTokenAmount.value", self.amount),
                "type": amount_type,
            },
            "interval": _check_period("interval", self.interval_value, self.interval_period),
            "numberOfOrders": _check_count("numberOfOrders", self.number_of_orders),
        }
        if body["interval"] is None:
            raise RequestRuleError("interval", "value and timePeriod must be given together")
        if self.from_decimals is not None:
            units = _base_units("fromTokenAmount.value", self.amount, self.from_decimals, self)
            _rule(rules.split, units, body["numberOfOrders"], amount_type)
        low, high = _rule(rules.rate_bounds, self.min_rate, self.max_rate)
        if low is not None:
            body["minRateToTokenPerFromToken"] = format_decimal(low)
        if high is not None:
            body["maxRateToTokenPerFromToken"] = format_decimal(high)
        delay = _check_period("delay", self.delay_value, self.delay_period, minimum=0)
        if delay is not None:
            body["delay"] = delay
        slippage = _rule(rules.dca_slippage, self.slippage)
        if slippage is not None:
            body["slippagePercentage"] = format_decimal(slippage)
        return body


LimitFromField = Literal["token", "wallet"]


@dataclass(frozen=True)
class LimitCreateRequest:
    """Body of `POST /limit/v1/createOrder` (spec 4.5).

    The docs' `fromWalletAddress` is named a wallet but described as the sold token, and
    the docs list no sold-token field. `from_field` chooses what it carries
    (docs/wire-decisions.md 6): `"token"` (default) sends exactly the docs' fields, the sold
    token in `fromWalletAddress`; `"wallet"` sends the wallet there and then names the sold
    token in an extra `fromTokenAddress` (the only place left for it).

    With `from_decimals`, the amount must also be at least one base unit of the sold token.
    """

    chain_id: int
    from_token: str
    to_token: str
    from_wallet: str
    to_wallet: str
    amount: Decimal
    rate: Decimal
    slippage: Slippage | None = None
    expiry_value: int | None = None
    expiry_period: str | None = None
    from_decimals: int | None = None

    def to_body(self, from_field: LimitFromField = "token") -> dict[str, Any]:
        """The JSON body, after checking every rule."""
        from_token = _check_address("fromTokenAddress", self.from_token)
        wallet = _check_address("fromWalletAddress", self.from_wallet)
        body: dict[str, Any] = {
            "chainId": str(self.chain_id),
            "fromWalletAddress": from_token if from_field == "token" else wallet,
            "toTokenAddress": _check_address("toTokenAddress", self.to_token),
            "toWalletAddress": _check_address("toWalletAddress", self.to_wallet),
            "fromTokenAmount": _positive("fromTokenAmount", self.amount),
            "rateToTokenPerFromToken": format_decimal(_rule(rules.limit_rate, self.rate)),
        }
        if self.from_decimals is not None:
            _base_units("fromTokenAmount", self.amount, self.from_decimals, self)
        if from_field == "wallet":  # a field the docs do not list: only when it must be
            body["fromTokenAddress"] = from_token
        slippage = check_slippage(self.slippage, "current")
        if slippage is not None:
            body["slippagePercentage"] = slippage
        expiry = _check_period("expiry", self.expiry_value, self.expiry_period)
        if expiry is not None:
            body["expiry"] = expiry
        return body


@dataclass(frozen=True)
class CancelOrderRequest:
    """Body of `POST /dca/v1/cancelOrder` and `/limit/v1/cancelOrder` (spec 4.3, 4.6)."""

    order_id: str
    chain_id: int | None = None
    to_wallet: str | None = None

    def to_body(self, prefix: str) -> dict[str, Any]:
        """The JSON body; the id is written under the configured prefix (`panoraTxId`)."""
        if not isinstance(self.order_id, str) or not self.order_id.strip():
            raise RequestRuleError(prefixed("svcTxId", prefix), "an order id is required")
        body: dict[str, Any] = {prefixed("svcTxId", prefix): self.order_id}
        if self.chain_id is not None:
            body["chainId"] = str(self.chain_id)
        if self.to_wallet is not None:
            body["toWalletAddress"] = _check_address("toWalletAddress", self.to_wallet)
        return body


@dataclass(frozen=True)
class GetOrdersRequest:
    """Body of `POST /dca/v1/getOrders` and `/limit/v1/getOrders` (spec 4.4, 4.6)."""

    chain_id: int
    wallet: str
    status: OrderFilter
    page_number: int = 1
    limit: int = 50
    tx_details: bool = True
    order_id: str | None = None

    def to_body(self, prefix: str) -> dict[str, Any]:
        """The JSON body; `status` is a list filter (`active`/`completed`), not a status."""
        try:
            status = OrderFilter(self.status)
        except ValueError:
            raise RequestRuleError(
                "status", f"must be active or completed (a list filter), got {self.status!r}"
            ) from None
        body: dict[str, Any] = {
            "chainId": self.chain_id,
            "toWalletAddress": _check_address("toWalletAddress", self.wallet),
            "status": status.value,
            "txDetails": bool(self.tx_details),
            "limit": _check_count("limit", self.limit, maximum=MAX_PAGE_SIZE),
            "pageNumber": _check_count("pageNumber", self.page_number),
        }
        if self.order_id is not None:
            body[prefixed("svcTxId", prefix)] = self.order_id
        return body
