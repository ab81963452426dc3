"""The async client for every endpoint of the provider's API (spec section 4).

One `PanoraClient` per process (connection reuse); open it with `async with`. It does not
know whether it talks to the real service, a loopback server or the in-process paper
world: pass a `transport` to choose.

Retry rules (docs/wire-decisions.md):
* `GET /prices`, `GET /tokenlist`, `GET /swap/quote`, `POST /swap` and `getOrders` change
  nothing: they are retried on connection errors, timeouts, 5xx and 429. A swap answer
  with `quotes: []` is `NoRoute`, a real answer: not retried (`bot.api.swap_calls`).
* `createOrder`/`cancelOrder` are retried only when the request provably never reached
  the server (`NotSent`) or was refused with 429. A timeout, a dropped connection, a 5xx or
  an unreadable success body raise `OutcomeUnknown`: the caller reconciles.

Bounds (docs/wire-decisions.md): every exchange (connect, headers and the whole body)
must finish within `request_deadline` seconds, however steadily the bytes trickle; the
body is read as it streams and refused past `max_response_bytes` (on the wire and once
decoded); JSON nested deeper than `bot.money.MAX_JSON_DEPTH` is refused before parsing.
Past a bound, a read gets `MalformedResponse` (a timeout: `OutcomeUnknown`), retried as
above; a createOrder/cancelOrder gets `OutcomeUnknown`, unless the status already says
the request was refused.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, Literal, TypeVar

import httpx
from pydantic import BaseModel, SecretStr, ValidationError

from bot import __version__
from bot.api.answers import (
    as_record_list,
    body_text,
    first_error,
    int_or,
    reason,
    record_id,
)
from bot.api.errors import (
    ApiError,
    ApiNotSent,
    MalformedResponse,
    OutcomeUnknown,
    RateLimited,
    ServerError,
    error_for_status,
)
from bot.api.models import (
    DcaOrder,
    LimitOrder,
    OrderResult,
    OrdersPage,
    PriceList,
    PriceRecord,
    RejectedRecord,
    SwapResponseExactIn,
    SwapResponseExactOut,
)
from bot.api.params import (
    CancelOrderRequest,
    DcaCreateRequest,
    GetOrdersRequest,
    LimitCreateRequest,
    SwapRequest,
    SwapVariant,
)
from bot.api.resilience import API_RETRY_AFTER_LIMIT_SECONDS, TokenBucket, api_backoff
from bot.api.swap_calls import no_route, swap_endpoint, swap_query
from bot.api.token_list import TokenList, TokenListRecord, token_filters
from bot.api.units import order_record_to_human
from bot.api.wire import unprefix_keys
from bot.bounded_body import ACCEPT_ENCODING, BodyRefused, read_limited
from bot.clock import Clock, RealClock
from bot.config import ApiSettings
from bot.domain import OrderKind
from bot.logging import get_logger, register_secret, register_url_secrets
from bot.money import loads_exact
from bot.retry import Backoff, parse_retry_after

__all__ = ["USER_AGENT", "ClientStats", "PanoraClient", "SwapResponse"]

USER_AGENT: Final = f"aptos-dca-bot/{__version__}"
DEFAULT_MAX_RESPONSE_BYTES: Final = 4 * 1024 * 1024
SwapResponse = SwapResponseExactIn | SwapResponseExactOut
_ModelT = TypeVar("_ModelT", bound=BaseModel)

# Transport failures, by what they mean for a request that changes state.
_NOT_SENT: Final = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_UNKNOWN: Final = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


class ClientStats:
    """Counters for `bot status`, `bot doctor` and the soak benchmark."""

    def __init__(self) -> None:
        self.requests = 0
        self.retries = 0
        self.errors: Counter[str] = Counter()
        self.rejected_records = 0
        self.unknown_fields: Counter[str] = Counter()


class PanoraClient:
    """Typed async access to prices, swap quotes/transactions, DCA and limit orders."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: SecretStr | None,
        chain_id: int = 1,
        provider_prefix: str = "panora",
        swap_variant: SwapVariant = "current",
        connect_timeout: float = 5.0,
        read_timeout: float = 20.0,
        rate_limit_per_second: float = 4.0,
        rate_limit_burst: int = 4,
        max_attempts: int = 4,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        request_deadline: float = 30.0,
        backoff: Backoff | None = None,
        order_amount_units: Literal["human", "base"] = "human",
        limit_from_wallet_field: Literal["token", "wallet"] = "token",
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
        clock: Clock | None = None,
    ) -> None:
        self.chain_id = chain_id
        self.prefix = provider_prefix
        self.variant: SwapVariant = swap_variant
        self.stats = ClientStats()
        self._api_key = api_key
        if api_key is not None:
            register_secret(api_key.get_secret_value())
        register_url_secrets(base_url)
        self._max_attempts = max_attempts
        self._max_body = max_response_bytes
        self._deadline = request_deadline
        self._backoff = backoff or api_backoff()
        self._wall = clock or RealClock()  # a Retry-After date is read against it
        self._limiter = TokenBucket(
            rate_limit_per_second, rate_limit_burst, sleep=sleep, monotonic=monotonic
        )
        self._sleep = sleep
        self._amounts_in_base_units = order_amount_units == "base"
        self._limit_from_field: Literal["token", "wallet"] = limit_from_wallet_field
        self._log = get_logger("api")
        timeout = httpx.Timeout(read_timeout, connect=connect_timeout, pool=connect_timeout)
        self._http = httpx.AsyncClient(
            base_url=base_url,
            timeout=timeout,
            transport=transport,
            headers={
                "user-agent": USER_AGENT,
                "accept": "application/json",
                "accept-encoding": ACCEPT_ENCODING,
            },
            follow_redirects=False,
        )

    @classmethod
    def from_settings(
        cls,
        settings: ApiSettings,
        *,
        api_key: SecretStr | None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> PanoraClient:
        """Build from `[api]`; the key is passed resolved (see `bot.secrets.resolve_api_key`)."""
        return cls(
            base_url=settings.base_url,
            api_key=api_key,
            chain_id=settings.chain_id,
            provider_prefix=settings.provider_prefix,
            swap_variant=settings.swap_variant,
            connect_timeout=settings.connect_timeout_seconds,
            read_timeout=settings.read_timeout_seconds,
            rate_limit_per_second=settings.rate_limit_per_second,
            rate_limit_burst=settings.rate_limit_burst,
            max_attempts=settings.max_attempts,
            max_response_bytes=settings.max_response_bytes,
            request_deadline=settings.request_deadline_seconds,
            backoff=api_backoff(settings.backoff_base_seconds, settings.backoff_cap_seconds),
            order_amount_units=settings.order_amount_units,
            limit_from_wallet_field=settings.limit_from_wallet_field,
            transport=transport,
            sleep=sleep,
        )

    async def __aenter__(self) -> PanoraClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool; the client cannot be used afterwards."""
        await self._http.aclose()

    # --- transport --------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        if self._api_key is None:
            return {}
        return {"x-api-key": self._api_key.get_secret_value()}

    async def _request(
        self,
        method: str,
        path: str,
        *,
        params: list[tuple[str, str]] | None = None,
        body: dict[str, Any] | None = None,
        changes_state: bool,
    ) -> Any:
        """Send one request with the retry rules of the module docstring; return its JSON."""
        endpoint = f"{method} {path}"
        for attempt in range(1, self._max_attempts + 1):
            await self._limiter.acquire()
            self.stats.requests += 1
            retry_after: float | None = None
            try:
                async with asyncio.timeout(self._deadline):
                    response, content, refused = await self._exchange(method, path, params, body)
            except _NOT_SENT as exc:
                error: ApiError = ApiNotSent(
                    f"{endpoint}: not sent ({reason(exc)})", endpoint=endpoint
                )
            except (*_UNKNOWN, TimeoutError) as exc:
                why = (
                    f"over the {self._deadline:g} s deadline"
                    if isinstance(exc, TimeoutError)
                    else reason(exc)
                )
                error = OutcomeUnknown(
                    f"{endpoint}: no complete response ({why}); outcome unknown",
                    endpoint=endpoint,
                )
                if changes_state:
                    self._count(error)
                    raise error from None
            else:
                result = self._read(response, content, refused, endpoint, changes_state)
                if not isinstance(result, ApiError):
                    return result
                error = result
                if isinstance(error, RateLimited):
                    retry_after = error.retry_after
                    self._limiter.pause(retry_after or 0.0)
                elif not (isinstance(error, ServerError | MalformedResponse) and not changes_state):
                    self._count(error)
                    raise error
            self._count(error)
            if attempt == self._max_attempts:
                raise error
            delay = self._backoff.delay(attempt, retry_after)
            self.stats.retries += 1
            self._log.warning(
                "api.retry",
                endpoint=endpoint,
                attempt=attempt,
                error=type(error).__name__,
                delay_s=round(delay, 3),
            )
            await self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _count(self, error: ApiError) -> None:
        self.stats.errors[type(error).__name__] += 1

    async def _exchange(
        self,
        method: str,
        path: str,
        params: list[tuple[str, str]] | None,
        body: dict[str, Any] | None,
    ) -> tuple[httpx.Response, bytes, str | None]:
        """Send one request; its response, body, and why the body was refused (or None).

        The body is read while it streams and never past `max_response_bytes`; leaving
        the stream early closes the connection instead of draining it.
        """
        async with self._http.stream(
            method,
            path,
            params=tuple(params) if params else None,
            json=body,
            headers=self._headers(),
        ) as response:
            try:
                return response, await read_limited(response, self._max_body), None
            except BodyRefused as exc:
                return response, b"", str(exc)

    def _read(
        self,
        response: httpx.Response,
        content: bytes,
        refused: str | None,
        endpoint: str,
        changes_state: bool,
    ) -> Any:
        """The parsed body of a 2xx, or the typed error for anything else (not raised).

        `refused` says why the body was not read (too large, unknown encoding).
        """
        body: Any = None
        if refused:
            problem = f"a body refused: {refused}"
        elif not content:
            problem = "an empty body"
        else:
            try:
                body = loads_exact(content)
            except ValueError as exc:
                problem = f"a body that is not usable JSON: {exc}"
            else:
                problem = "a JSON null body"
        if response.is_success:
            if body is not None:
                return body
            message = f"{endpoint}: HTTP {response.status_code} with {problem}"
            if changes_state:
                return OutcomeUnknown(message + "; outcome unknown", endpoint=endpoint)
            return MalformedResponse(
                message, endpoint=endpoint, body=refused or body_text(response, content[:2000])
            )
        error = error_for_status(
            response.status_code,
            refused or body_text(response, content[:2000]),
            body,
            endpoint=endpoint,
            retry_after=parse_retry_after(
                response.headers.get("retry-after"),
                now=self._wall.now(),
                limit=API_RETRY_AFTER_LIMIT_SECONDS,
            ),
        )
        if changes_state and isinstance(error, ServerError):
            unknown = OutcomeUnknown(f"{error}; outcome unknown", endpoint=endpoint)
            unknown.__cause__ = error
            return unknown
        return error

    def _parse(self, model: type[_ModelT], data: Any, endpoint: str) -> _ModelT:
        try:
            parsed = model.model_validate(data, context={"prefix": self.prefix})
        except ValidationError as exc:
            raise MalformedResponse(
                f"{endpoint}: response does not match the spec: {first_error(exc)}",
                endpoint=endpoint,
                body=str(data)[:2000],
            ) from None
        self._note_unknown(endpoint, parsed)
        return parsed

    def _note_unknown(self, endpoint: str, record: BaseModel) -> None:
        for name in record.model_extra or {}:
            self.stats.unknown_fields[f"{endpoint} {name}"] += 1

    # --- prices -----------------------------------------------------------------------

    async def get_prices(
        self,
        tokens: Sequence[str] | None = None,
        *,
        ui_only: bool | None = None,
        tags: Sequence[str] | None = None,
    ) -> PriceList:
        """`GET /prices`: prices of `tokens` (coin types and/or FA addresses), or of all.

        `ui_only`: True asks for the tokens shown in the provider's UI (`panoraUI=true`),
        False for every token, shown or hidden (`panoraUI=true,false`, the real form:
        `ALL_TOKENS_UI`), None leaves the provider's default. One malformed record is set
        aside in `rejected`, not fatal to the list.
        """
        params = token_filters(self.chain_id, self.prefix, tokens, ui_only, tags)
        data = await self._request("GET", "/prices", params=params, changes_state=False)
        records, rejected = self._parse_each(PriceRecord, as_record_list(data), "GET /prices")
        return PriceList(records=records, rejected=rejected)

    async def get_token_list(
        self,
        tokens: Sequence[str] | None = None,
        *,
        ui_only: bool | None = None,
        tags: Sequence[str] | None = None,
    ) -> TokenList:
        """`GET /tokenlist`: the provider's token records (metadata; no native price).

        The query is SDK 1.3.1's (`bot.api.token_list`), the filters as for `get_prices`:
        `ui_only=False` asks for every token (`panoraUI=true,false`). The answer is
        `{data: [...]}`; a bare list (or one record) is read too. One malformed record is
        set aside in `rejected`, not fatal to the list. Retried like `GET /prices`.
        """
        params = token_filters(self.chain_id, self.prefix, tokens, ui_only, tags)
        data = await self._request("GET", "/tokenlist", params=params, changes_state=False)
        endpoint = "GET /tokenlist"
        records, rejected = self._parse_each(TokenListRecord, as_record_list(data), endpoint)
        return TokenList(records=records, rejected=rejected)

    def _parse_each(
        self, model: type[_ModelT], items: list[Any], endpoint: str
    ) -> tuple[list[_ModelT], list[RejectedRecord]]:
        good: list[_ModelT] = []
        bad: list[RejectedRecord] = []
        for index, item in enumerate(items):
            try:
                record = model.model_validate(item, context={"prefix": self.prefix})
            except ValidationError as exc:
                named = record_id(item, self.prefix)
                bad.append(RejectedRecord(index, first_error(exc), named))
                self._log.warning(
                    "api.record_rejected",
                    endpoint=endpoint,
                    index=index,
                    record_id=named,
                    error=first_error(exc),
                )
                continue
            self._note_unknown(endpoint, record)
            good.append(record)
        self.stats.rejected_records += len(bad)
        return good, bad

    # --- swap -------------------------------------------------------------------------

    async def quote(self, request: SwapRequest) -> SwapResponse:
        """A quote: `POST /swap`, wallet optional (legacy variant: `GET /swap/quote`).

        Raises:
            NoRoute: the provider answered `quotes: []`.
        """
        return await self._swap(request, to_sign=False)

    async def swap(self, request: SwapRequest) -> SwapResponse:
        """`POST /swap` with the wallet: a quote with `txData` to sign. Spends nothing.

        Raises:
            NoRoute: the provider answered `quotes: []`.
        """
        return await self._swap(request, to_sign=True)

    async def _swap(self, request: SwapRequest, *, to_sign: bool) -> SwapResponse:
        method, path = swap_endpoint(self.variant, to_sign=to_sign)
        skipped: list[str] = []
        params = swap_query(
            request, self.variant, self.chain_id, to_sign=to_sign, skipped_pools=skipped
        )
        if skipped:
            self._log.warning("api.pools_skipped", reason="address contains a comma", pools=skipped)
        data = await self._request(method, path, params=params, changes_state=False)
        endpoint = f"{method} {path}"
        missing = no_route(data, request, endpoint)
        if missing is not None:
            self._count(missing)
            raise missing
        if request.exact_in:
            return self._parse(SwapResponseExactIn, data, endpoint)
        return self._parse(SwapResponseExactOut, data, endpoint)

    # --- orders -----------------------------------------------------------------------

    async def create_dca_order(self, request: DcaCreateRequest) -> OrderResult:
        """`POST /dca/v1/createOrder`. Never retried once it may have reached the server."""
        return await self._order_call("/dca/v1/createOrder", request.to_body())

    async def create_limit_order(self, request: LimitCreateRequest) -> OrderResult:
        """`POST /limit/v1/createOrder`. Never retried once it may have reached the server."""
        body = request.to_body(self._limit_from_field)
        return await self._order_call("/limit/v1/createOrder", body)

    async def cancel_order(self, kind: OrderKind, request: CancelOrderRequest) -> OrderResult:
        """`POST /{dca|limit}/v1/cancelOrder`. Never retried once it may have reached the server."""
        if request.chain_id is None:
            request = CancelOrderRequest(request.order_id, self.chain_id, request.to_wallet)
        return await self._order_call(f"/{kind}/v1/cancelOrder", request.to_body(self.prefix))

    async def _order_call(self, path: str, body: dict[str, Any]) -> OrderResult:
        data = await self._request("POST", path, body=body, changes_state=True)
        if not isinstance(data, dict):
            raise OutcomeUnknown(
                f"POST {path}: success status with a body that is not a JSON object; "
                "outcome unknown",
                endpoint=f"POST {path}",
            )
        return OrderResult(raw=unprefix_keys(data, self.prefix))

    async def get_orders(
        self, kind: OrderKind, request: GetOrdersRequest
    ) -> OrdersPage[DcaOrder] | OrdersPage[LimitOrder]:
        """`POST /{dca|limit}/v1/getOrders`: one page; malformed orders set aside."""
        path = f"/{kind}/v1/getOrders"
        data = await self._request(
            "POST", path, body=request.to_body(self.prefix), changes_state=False
        )
        endpoint = f"POST {path}"
        if not isinstance(data, dict) or not isinstance(data.get("orders", []), list):
            raise MalformedResponse(
                f"{endpoint}: expected an object with an orders list",
                endpoint=endpoint,
                body=str(data)[:2000],
            )
        raw_orders = list(data.get("orders") or [])
        if self._amounts_in_base_units:
            raw_orders = [
                order_record_to_human(o) if isinstance(o, dict) else o for o in raw_orders
            ]
        page_number = int_or(data.get("pageNumber"), request.page_number)
        total_pages = int_or(data.get("totalPages"), page_number)
        wallet = data.get("toWalletAddress")
        chain = data.get("chainId")
        chain_id = chain if isinstance(chain, int) else None
        owner = wallet if isinstance(wallet, str) else None
        if kind == "dca":
            dca, bad = self._parse_each(DcaOrder, raw_orders, endpoint)
            return OrdersPage(chain_id, owner, page_number, total_pages, dca, bad)
        limit, bad = self._parse_each(LimitOrder, raw_orders, endpoint)
        return OrdersPage(chain_id, owner, page_number, total_pages, limit, bad)
