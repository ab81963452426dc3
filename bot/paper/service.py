"""`PaperService`: the provider's endpoints over the paper core, wire in and wire out.

It reads query strings and JSON bodies the way the real service is specified to, answers
400 with a message naming the field for every rule of the spec (the rules themselves are
`bot.order_rules`, which the client checks before sending and the backtest applies), 404
for unknown tokens and orders, and renders records through `Renderer`. The HTTP face only
routes, authenticates, limits and injects faults. Choices where the spec is silent:
docs/wire-decisions.md and docs/paper-world.md.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any, Literal, TypeVar

from bot import order_rules as rules
from bot.aptos.address import Address, AddressError, split_names
from bot.aptos.tokens import Token
from bot.domain import FINAL_STATUSES, PROVIDER_LIVE_STATUSES, OrderKind
from bot.paper.core.ledger import InsufficientFunds
from bot.paper.core.market import PaperMarket
from bot.paper.core.orders import UnknownOrder
from bot.paper.core.registry import UnknownToken
from bot.paper.core.router import RouterCall, build_router_txdata
from bot.paper.core.swaps import SwapError
from bot.paper.faces.asgi import HttpError, Request
from bot.paper.orders_wire import OrderRenderer, page_of
from bot.paper.swap_query import check_route_controls, sources_allow, ui_filter
from bot.paper.token_list import listed_tokens

__all__ = ["PaperService"]

_T = TypeVar("_T")


def _bad(message: str) -> HttpError:
    return HttpError(400, message)


def _rule(check: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """Apply one of the spec's rules (`bot.order_rules`); a break answers 400 in its words."""
    try:
        return check(*args, **kwargs)
    except rules.RuleError as exc:
        raise _bad(str(exc)) from None


class PaperService:
    """Handlers of every provider endpoint; each takes a `Request` and returns JSON data."""

    def __init__(
        self,
        market: PaperMarket,
        *,
        prefix: str = "panora",
        chain_id: int = 1,
        variant: Literal["current", "legacy"] = "current",
        order_amount_units: Literal["human", "base"] = "human",
        escrow_style: Literal["escrow", "onchain"] = "escrow",
        pending_grace: timedelta = timedelta(minutes=10),
        pay_to: str | None = None,
    ) -> None:
        self.market = market
        self.prefix = prefix
        self.chain_id = chain_id
        self.variant = variant
        self.escrow_style = escrow_style
        self.pending_grace = pending_grace
        self.pay_to = str(Address.parse(pay_to)) if pay_to else None
        self.orders = OrderRenderer(market, prefix=prefix, base_units=order_amount_units == "base")
        self.render = self.orders.render
        self._index = {id(t): i + 1 for i, t in enumerate(market.tokens.tokens)}

    # --- helpers ------------------------------------------------------------------------

    def _token(self, field: str, value: object) -> Token:
        if not isinstance(value, str) or not value.strip():
            raise _bad(f"{field} is required")
        try:
            return self.market.tokens.require(value.strip())
        except (UnknownToken, AddressError, ValueError):
            raise HttpError(404, f"token not found: {value}") from None

    def _chain(self, value: object) -> None:
        if value is None or value == "":
            return
        if str(value).strip() != str(self.chain_id):
            raise _bad(f"chainId: unsupported chain {value!r}")

    @staticmethod
    def _wallet(field: str, value: object, *, required: bool = True) -> str | None:
        if value is None or value == "":
            if required:
                raise _bad(f"{field} is required")
            return None
        text = _rule(rules.hex_address, field, value)
        try:
            return str(Address.parse(text))
        except AddressError:
            raise _bad(f"{field} is not a valid address: {value}") from None

    @staticmethod
    def _amount(field: str, text: object, token: Token) -> int:
        """A human amount in base units, rounded down; at least one base unit."""
        return _rule(rules.base_units, field, text, token.decimals, token.symbol)

    # --- GET /prices, GET /tokenlist ----------------------------------------------------

    def prices(self, request: Request) -> list[dict[str, Any]]:
        """Price records, filtered by `tokenAddress`, `…UI` and `…Tags` (spec 4.1)."""
        self._chain(request.param("chainId"))
        raw = request.param("tokenAddress")
        addresses = split_names(raw) if raw else None
        ui = ui_filter(request.param(f"{self.prefix}UI") or request.param("svcUI"), self.prefix)
        tags_text = request.param(f"{self.prefix}Tags") or request.param("svcTags")
        tags = [t.strip() for t in tags_text.split(",") if t.strip()] if tags_text else None
        now = self.market.now
        prices = self.market.prices
        return [
            self.render.price_record(
                token,
                self._index.get(id(token), 0),
                now,
                self.chain_id,
                prices.native(token.address, now),
                prices.change_24h(token.address, now),
            )
            for token in self.market.tokens.select(
                addresses,
                ui=ui,
                tags=tags,
                priced=lambda t: prices.is_visible(t.address),
            )
        ]

    def token_list(self, request: Request) -> dict[str, Any]:
        """`GET /tokenlist`: `{data: [...]}` of token records (`bot.paper.token_list`)."""
        self._chain(request.param("chainId"))
        now, tokens = self.market.now, self.market.tokens
        changes = self.market.prices.change_24h
        data = [
            self.render.token_list_record(
                token,
                self._index.get(id(token), 0),
                now,
                self.chain_id,
                changes(token.address, now),
                tokens.listing(token),
            )
            for token in listed_tokens(tokens, request, self.prefix)
        ]
        return {"data": data}

    # --- /swap and /swap/quote ----------------------------------------------------------

    def swap(self, request: Request, *, with_tx_data: bool) -> dict[str, Any]:
        """A quote: `POST /swap` or the older `GET /swap/quote`.

        The wallet is optional; `POST /swap` adds `txData` when one is given. `quotes: []`
        when the sources leave no route, as the real service answers (SDK 1.3.1).
        """
        self._chain(request.param("chainId"))
        sell = self._token("fromTokenAddress", request.param("fromTokenAddress"))
        buy = self._token("toTokenAddress", request.param("toTokenAddress"))
        if sell.keys == buy.keys:
            raise _bad("fromTokenAddress and toTokenAddress must differ")
        from_text, to_text = request.param("fromTokenAmount"), request.param("toTokenAmount")
        if (from_text is None) == (to_text is None):
            raise _bad("send exactly one of fromTokenAmount and toTokenAmount")
        recipient = self._wallet(
            "toWalletAddress", request.param("toWalletAddress"), required=False
        )
        digits = rules.places(self.variant)
        chosen = _rule(rules.slippage, request.param("slippagePercentage"), digits)
        slippage: Decimal | Literal["auto"] = "auto" if chosen is None else chosen
        fee_pct = Decimal(0)
        fee_text = request.param("integratorFeePercentage")
        if fee_text is not None:
            upper = rules.INTEGRATOR_FEE_MAX
            fee_pct = _rule(rules.percentage, "integratorFeePercentage", fee_text, upper, digits)
        integrator = request.param("integratorFeeAddress")
        if integrator is not None:
            _rule(rules.fee_address, integrator)
        check_route_controls(request, self.variant)
        amount_in = self._amount("fromTokenAmount", from_text, sell) if from_text else None
        amount_out = self._amount("toTokenAmount", to_text, buy) if to_text else None
        if not sources_allow(request, self.render_dex_name()):  # the real "no route" answer
            given = amount_in if amount_in is not None else amount_out or 0
            legacy = self.variant == "legacy"
            head = self.render.swap_head(
                sell, buy, self.market.now, legacy=legacy, exact_in=bool(from_text), amount=given
            )
            return {**head, "quotes": []}
        try:
            terms = self.market.quote(
                sell,
                buy,
                amount_in=amount_in,
                amount_out=amount_out,
                slippage=slippage,
                integrator_fee_pct=fee_pct,
            )
        except SwapError as exc:
            raise _bad(str(exc)) from None
        tx_data = None
        if with_tx_data and recipient is not None:
            call = RouterCall(
                exact_in=terms.exact_in,
                sell_fa=str(sell.fa_address),
                buy_fa=str(buy.fa_address),
                recipient=self.pay_to or recipient,
                amount_in=terms.max_in,
                amount_out=terms.min_out,
                integrator_fee_e4=int(fee_pct * 10**4),
                integrator=str(Address.parse(integrator)) if integrator else None,
            )
            tx_data = build_router_txdata(call, sell.coin_type, buy.coin_type)
        return self.render.swap_response(
            terms,
            self.market.now,
            tx_data=tx_data,
            legacy=self.variant == "legacy",
            dex_name=self.render_dex_name(),
        )

    def render_dex_name(self) -> str:
        """The DEX name the paper pools show in routes."""
        return self.market.config.pools.dex_name

    # --- orders -------------------------------------------------------------------------

    def _body(self, request: Request) -> dict[str, Any]:
        body = request.json()
        if not isinstance(body, dict):
            raise _bad("request body must be a JSON object")
        return body

    def _order_id(self, body: dict[str, Any]) -> str:
        value = body.get(f"{self.prefix}TxId", body.get("svcTxId"))
        if not isinstance(value, str) or not value.strip():
            raise _bad(f"{self.prefix}TxId is required")
        return value.strip()

    @staticmethod
    def _period(field: str, spec: object, *, minimum: int = 1) -> tuple[int, str]:
        """A `{value, timePeriod}` object (`interval`, `delay`, `expiry`)."""
        if not isinstance(spec, dict):
            raise _bad(f"{field} must be an object {{value, timePeriod}}")
        value, unit = spec.get("value"), spec.get("timePeriod")
        return _rule(rules.period, field, value, unit, minimum=minimum)

    def _optional_period(
        self, field: str, spec: object, *, minimum: int = 1
    ) -> tuple[int, str] | None:
        return None if spec is None else self._period(field, spec, minimum=minimum)

    @staticmethod
    def _whole(field: str, value: object, minimum: int = 1, maximum: int | None = None) -> int:
        return _rule(rules.whole_number, field, value, minimum, maximum)

    def create_order(self, kind: OrderKind, request: Request) -> dict[str, Any]:
        """`createOrder` for DCA (spec 4.2) or limit (spec 4.5)."""
        body = self._body(request)
        self._chain(body.get("chainId"))
        now = self.market.now
        escrow_now = self.escrow_style == "escrow"
        try:
            order = (
                self._create_dca(body, now, escrow_now)
                if kind == "dca"
                else self._create_limit(body, now, escrow_now)
            )
        except InsufficientFunds as exc:
            raise _bad(f"insufficient balance: {exc}") from None
        except ValueError as exc:  # the engine's own checks (the rules above catch most)
            raise _bad(str(exc)) from None
        response: dict[str, Any] = {f"{self.prefix}TxId": order.order_id, "status": "success"}
        if not escrow_now:
            response["txData"] = self.orders.deposit_tx_data(kind, order)
            self.market.schedule_pending_drop(kind, order.order_id, now + self.pending_grace)
        return response

    def _create_dca(self, body: dict[str, Any], now: Any, escrow_now: bool) -> Any:
        owner = self._wallet("toWalletAddress", body.get("toWalletAddress"))
        sell = self._token("fromTokenAddress", body.get("fromTokenAddress"))
        buy = self._token("toTokenAddress", body.get("toTokenAddress"))
        if sell.keys == buy.keys:
            raise _bad("fromTokenAddress and toTokenAddress must differ")
        amount = body.get("fromTokenAmount")
        if not isinstance(amount, dict):
            raise _bad("fromTokenAmount must be an object {value, type}")
        amount_type = _rule(rules.amount_type, amount.get("type"))
        interval = body.get("interval")
        if not isinstance(interval, dict):
            raise _bad("interval must be an object {value, timePeriod}")
        delay = self._optional_period("delay", body.get("delay"), minimum=0)
        min_rate, max_rate = _rule(
            rules.rate_bounds,
            body.get("minRateToTokenPerFromToken"),
            body.get("maxRateToTokenPerFromToken"),
        )
        # An order's slippage is truncated after one decimal whatever the swap variant
        # (the variants are the swap endpoints', spec 9).
        slippage = _rule(rules.dca_slippage, body.get("slippagePercentage"))
        units = self._amount("fromTokenAmount.value", amount.get("value"), sell)
        count = self._whole("numberOfOrders", body.get("numberOfOrders"))
        _rule(rules.split, units, count, amount_type)
        return self.market.dca.create(
            owner=str(owner),
            recipient=str(owner),
            sell=sell,
            buy=buy,
            amount=units,
            amount_type=amount_type,
            orders=count,
            interval=self._period("interval", interval),
            delay=delay,
            min_rate=min_rate,
            max_rate=max_rate,
            slippage=rules.DCA_DEFAULT_SLIPPAGE if slippage is None else slippage,
            now=now,
            escrow_now=escrow_now,
        )

    def _create_limit(self, body: dict[str, Any], now: Any, escrow_now: bool) -> Any:
        # Wire decision #6: the sold token is `fromTokenAddress` when sent, else
        # `fromWalletAddress` (described by the spec as the token being sold).
        sold = body.get("fromTokenAddress") or body.get("fromWalletAddress")
        sell = self._token("fromTokenAddress", sold)
        buy = self._token("toTokenAddress", body.get("toTokenAddress"))
        if sell.keys == buy.keys:
            raise _bad("fromTokenAddress and toTokenAddress must differ")
        owner = self._wallet("toWalletAddress", body.get("toWalletAddress"))
        if body.get("fromWalletAddress") is None:
            raise _bad("fromWalletAddress is required")
        rate = _rule(rules.limit_rate, body.get("rateToTokenPerFromToken"))
        expiry = self._optional_period("expiry", body.get("expiry"))
        chosen = _rule(rules.slippage, body.get("slippagePercentage"))  # one decimal, as DCA
        slippage = chosen if isinstance(chosen, Decimal) else rules.LIMIT_DEFAULT_SLIPPAGE
        return self.market.limit.create(
            owner=str(owner),
            recipient=str(owner),
            sell=sell,
            buy=buy,
            amount=self._amount("fromTokenAmount", body.get("fromTokenAmount"), sell),
            rate=rate,
            slippage=slippage,
            expiry=expiry,
            now=now,
            escrow_now=escrow_now,
        )

    def cancel_order(self, kind: OrderKind, request: Request) -> dict[str, Any]:
        """`cancelOrder` (spec 4.3, 4.6): refunds at once, or returns a withdraw `txData`."""
        body = self._body(request)
        self._chain(body.get("chainId"))
        order_id = self._order_id(body)
        owner = self._wallet("toWalletAddress", body.get("toWalletAddress"), required=False)
        engine = self.market.dca if kind == "dca" else self.market.limit
        try:
            order = engine.get(order_id)
        except UnknownOrder:
            raise HttpError(404, f"order not found: {order_id}") from None
        if order.status == "pending":
            raise HttpError(404, f"order not found: {order_id}")
        if owner is not None and owner != order.owner:
            raise HttpError(404, f"order not found for this wallet: {order_id}")
        if order.status not in PROVIDER_LIVE_STATUSES:
            raise _bad(f"order {order_id} is {order.status}, not active")
        if self.escrow_style == "onchain":
            return {
                f"{self.prefix}TxId": order_id,
                "status": "success",
                "txData": self.orders.withdraw_tx_data(kind, order),
            }
        engine.cancel(order_id, self.market.now)
        return {f"{self.prefix}TxId": order_id, "status": "cancelled"}

    def get_orders(self, kind: OrderKind, request: Request) -> dict[str, Any]:
        """`getOrders` (spec 4.4, 4.6): filter, page (from 1), newest first."""
        body = self._body(request)
        if kind == "dca":
            for required in ("chainId", "toWalletAddress", "status", "limit", "pageNumber"):
                if body.get(required) in (None, ""):
                    raise _bad(f"{required} is required")
        self._chain(body.get("chainId"))
        wallet = self._wallet("toWalletAddress", body.get("toWalletAddress"), required=False)
        status = body.get("status")
        if status not in (None, "active", "completed"):
            raise _bad("status must be active or completed")
        wanted = (
            PROVIDER_LIVE_STATUSES
            if status == "active"
            else FINAL_STATUSES
            if status == "completed"
            else None
        )
        limit = self._whole("limit", body.get("limit", 50), maximum=rules.MAX_PAGE_SIZE)
        page = self._whole("pageNumber", body.get("pageNumber", 1))
        details = body.get("txDetails") in (True, "true")
        order_id = body.get(f"{self.prefix}TxId", body.get("svcTxId"))
        engine = self.market.dca if kind == "dca" else self.market.limit
        if wallet is None:
            # The limit list's wallet is optional in the spec; the paper world needs one.
            raise _bad("toWalletAddress is required by the paper world")
        orders = engine.orders_of(wallet)
        selected = [
            o
            for o in orders
            if (wanted is None or o.status in wanted)
            and (order_id is None or o.order_id == order_id)
        ]
        chunk, total_pages = page_of(selected, page, limit)
        return {
            "chainId": self.chain_id,
            "toWalletAddress": wallet,
            "pageNumber": page,
            "totalPages": total_pages,
            "orders": [self.orders.order(kind, o, with_details=details) for o in chunk],
        }

    # --- paper-only admin endpoints (/paper/v1/...) -------------------------------------

    def admin_fund(self, request: Request) -> dict[str, Any]:
        """The faucet: `{wallet, token, amount}` (human amount) → the new balance."""
        body = self._body(request)
        wallet = str(self._wallet("wallet", body.get("wallet")))
        try:
            token = self.market.tokens.find(str(body.get("token", "")))
        except UnknownToken as exc:
            raise HttpError(404, str(exc)) from None
        units = self._amount("amount", body.get("amount"), token)
        self.market.fund(wallet, token, units)
        balance = self.market.balance(wallet, token)
        return {
            "wallet": wallet,
            "token": token.address,
            "symbol": token.symbol,
            "balance": self.render.human(balance, token),
        }

    def admin_status(self, request: Request) -> dict[str, Any]:
        """Time, live orders and the balances of one wallet (`?wallet=`) or none."""
        wallet = self._wallet("wallet", request.param("wallet"), required=False)
        balances: dict[str, str] = {}
        if wallet is not None:
            for key, units in sorted(self.market.ledger.balances(wallet).items()):
                token = self.market.tokens.get(key)
                if token is not None:
                    balances[token.symbol] = self.render.human(units, token)
        next_event = self.market.next_event_time()
        return {
            "now": self.render_time(self.market.now),
            "nextEvent": self.render_time(next_event),
            "liveDcaOrders": self.market.dca.live_count,
            "liveLimitOrders": self.market.limit.live_count,
            "balances": balances,
        }

    def admin_advance(self, request: Request) -> dict[str, Any]:
        """Move a stepped world's time forward: `{"seconds": N}` or `{"to": ISO}`."""
        from bot.clock import SteppedClock, parse_utc

        clock = self.market.clock
        if not isinstance(clock, SteppedClock):
            raise _bad("this paper world does not run on a stepped clock")
        body = self._body(request)
        try:
            if "to" in body:
                target = parse_utc(str(body["to"]))
            else:
                target = clock.now() + timedelta(
                    seconds=self._whole("seconds", body.get("seconds"), 0)
                )
            clock.advance_to(target)
        except ValueError as exc:
            raise _bad(str(exc)) from None
        processed = self.market.sync()
        return {"now": self.render_time(self.market.now), "eventsProcessed": processed}

    @staticmethod
    def render_time(moment: Any) -> str | None:
        """ISO text of a time (or None)."""
        from bot.paper.render import iso

        return iso(moment)
