"""Our own async client for an Aptos node's REST API (`/v1`), as docs/paper-world.md describes.

aptos-sdk's `RestClient` is not used: it builds its own HTTP/2 client, treats a 404 from
`by_hash` as "pending" (the node answers 404 for unknown *and* lost hashes) and checks with
`assert`. Here:

* Side-effect-free calls (ledger info, accounts, modules, balances, gas price, simulate) are
  retried on connection errors, timeouts, 5xx and 429 (honouring `Retry-After`), then raise
  `NotSent` / `NodeUnavailable` / `NodeRateLimited`.
* `submit` is never retried here. A connect error is `NotSent` (the bytes never left); a read
  timeout, a dropped connection or a 5xx other than 507 is `SubmitOutcomeUnknown` (resolve
  by hash); 507 is `MempoolFull` and 429 `NodeRateLimited` (not applied: resend the same
  bytes); a 400 is `SequenceTooOld` (`sequence_number_too_old`, or `vm_error` with
  `vm_error_code` 3) or `TransactionRejected`.
* `transaction_by_hash` returns None for 404: "not found", which is neither "pending" nor
  "lost" (a node may 404 a committed transaction: pruned, load-balanced, lagging).
* `account_state` and `account_transaction` give what settles a transaction `by_hash`
  does not show: the account's sequence number with the ledger state it was read at, and
  the committed transaction that used a given sequence number.
* Every answer's `X-Aptos-Chain-Id` is checked against the expected chain id and its
  `X-Aptos-Ledger-TimestampUsec` remembered: the signer judges expiration by the node's
  ledger time, never the local clock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final
from urllib.parse import quote

import httpx

from bot.aptos.abi import AbiError, ModuleAbi
from bot.aptos.address import Address
from bot.bounded_body import ACCEPT_ENCODING, BodyRefused, read_limited
from bot.chain.errors import (
    AccountNotFound,
    ChainIdMismatch,
    MalformedNodeResponse,
    MempoolFull,
    NodeError,
    NodeNotSent,
    NodeRateLimited,
    NodeUnavailable,
    NotSent,
    SubmitOutcomeUnknown,
    TransactionRejected,
)
from bot.chain.records import (
    AccountInfo,
    AccountState,
    LedgerInfo,
    LedgerStamp,
    NodeStats,
    SimulationResult,
    TxLookup,
    TxStatus,
    parse_account_transaction,
    parse_uint,
)
from bot.chain.wire import HEADER_CHAIN_ID, error_from_response, ledger_header, node_backoff
from bot.clock import Clock, RealClock
from bot.config import ChainSettings
from bot.money import loads_exact
from bot.retry import Jitter

__all__ = [
    "BCS_SIGNED_TRANSACTION",
    "AccountState",
    "LedgerStamp",
    "NodeClient",
    "NodeStats",
    "TxLookup",
]

BCS_SIGNED_TRANSACTION: Final = "application/x.aptos.signed_transaction+bcs"
_NOT_SENT: Final = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_LOST: Final = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
_DECODED: Final = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Headers that describe the body as sent, not as `read_limited` hands it on."""
_HEADER_LEDGER_VERSION: Final = "x-aptos-ledger-version"

_LedgerPoint = tuple[int | None, int | None]
"""An answer's (`X-Aptos-Ledger-Version`, `X-Aptos-Ledger-TimestampUsec`), each None if absent."""


def _ledger_point(response: httpx.Response) -> _LedgerPoint:
    value = response.headers.get(_HEADER_LEDGER_VERSION)
    version = int(value) if value is not None and value.strip().isdigit() else None
    return version, ledger_header(response)


class NodeClient:
    """Typed async access to the node endpoints the signer needs."""

    def __init__(
        self,
        base_url: str,
        *,
        expected_chain_id: int | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout_seconds: float = 20.0,
        connect_timeout_seconds: float = 5.0,
        deadline_seconds: float = 30.0,
        max_response_bytes: int = 4 * 1024 * 1024,
        max_attempts: int = 3,
        gas_price_ttl_seconds: float = 30.0,
        backoff_cap_seconds: float = 5.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
        rng: Jitter | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.expected_chain_id = expected_chain_id
        self.stats = NodeStats()
        self.ledger_stamp: LedgerStamp | None = None
        self.headers_seen = False
        self._max_attempts = max(1, max_attempts)
        self._gas_ttl = gas_price_ttl_seconds
        self._gas_cache: tuple[int, float] | None = None
        self._abis: dict[tuple[Address, str], ModuleAbi] = {}
        self._backoff = node_backoff(backoff_cap_seconds, rng)
        self._wall = clock or RealClock()  # a Retry-After date is read against it
        self._sleep = sleep
        self._monotonic = monotonic
        self._deadline = deadline_seconds
        self._max_bytes = max_response_bytes
        timeout = httpx.Timeout(timeout_seconds, connect=connect_timeout_seconds)
        self._http = httpx.AsyncClient(
            timeout=timeout,
            transport=transport,
            headers={"accept": "application/json", "accept-encoding": ACCEPT_ENCODING},
            follow_redirects=False,
        )

    @classmethod
    def from_settings(
        cls,
        chain: ChainSettings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> NodeClient:
        """Build from `[chain]` (node URL, chain id, timeout, gas price cache when set)."""
        return cls(
            chain.node_url,
            expected_chain_id=chain.chain_id,
            transport=transport,
            timeout_seconds=chain.request_timeout_seconds,
            deadline_seconds=chain.request_deadline_seconds,
            max_response_bytes=chain.max_response_bytes,
            gas_price_ttl_seconds=float(getattr(chain, "gas_price_ttl_seconds", 30.0)),
            sleep=sleep,
            monotonic=monotonic,
        )

    async def __aenter__(self) -> NodeClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    # --- transport --------------------------------------------------------------------

    def _observe(self, response: httpx.Response) -> None:
        chain = response.headers.get(HEADER_CHAIN_ID)
        expected = self.expected_chain_id
        actual = int(chain) if chain is not None and chain.strip().isdigit() else None
        if expected is not None and actual is not None and actual != expected:
            raise ChainIdMismatch(expected, actual)
        stamp = ledger_header(response)
        if stamp is not None:
            self.headers_seen = True
            self._remember_ledger(stamp)

    def _remember_ledger(self, timestamp_us: int) -> None:
        previous = self.ledger_stamp
        if previous is None or timestamp_us >= previous.timestamp_us:
            self.ledger_stamp = LedgerStamp(timestamp_us, self._monotonic())

    async def _send(
        self,
        method: str,
        path: str,
        route: str,
        *,
        params: Mapping[str, str] | None = None,
        content: bytes | None = None,
        json_body: Any = None,
    ) -> httpx.Response:
        """One request, transport errors mapped: `NotSent`, or `_LostError` once sent.

        The whole exchange must end within the deadline and the body stay within its size
        limit (read as it streams): otherwise the answer is lost, as a dropped one is.
        """
        self.stats.requests[route] += 1
        headers = {"content-type": BCS_SIGNED_TRANSACTION} if content is not None else None
        request = self._http.build_request(
            method,
            self.base_url + path,
            params=params,
            content=content,
            json=json_body,
            headers=headers,
        )
        try:
            async with asyncio.timeout(self._deadline):
                streamed = await self._http.send(request, stream=True)
                try:
                    body = await read_limited(streamed, self._max_bytes)
                finally:
                    await streamed.aclose()
        except _NOT_SENT as exc:
            raise NodeNotSent(f"node not reached ({type(exc).__name__})", endpoint=route) from None
        except _LOST as exc:
            raise _LostError(f"no complete answer ({type(exc).__name__})") from None
        except TimeoutError:
            raise _LostError(f"no complete answer within {self._deadline:g} s") from None
        except BodyRefused as exc:
            raise _LostError(f"answer refused: {exc}") from None
        kept = [(k, v) for k, v in streamed.headers.multi_items() if k.lower() not in _DECODED]
        response = httpx.Response(streamed.status_code, headers=kept, content=body, request=request)
        self._observe(response)
        return response

    async def _read(
        self,
        method: str,
        path: str,
        route: str,
        *,
        params: Mapping[str, str] | None = None,
        content: bytes | None = None,
        json_body: Any = None,
        none_on: tuple[int, ...] = (),
        ledger_out: list[_LedgerPoint] | None = None,
    ) -> Any:
        """A side-effect-free request with retries; returns the parsed JSON.

        None when the node answers a status in `none_on` (e.g. 404: not found).
        """
        last: Exception | None = None
        for attempt in range(1, self._max_attempts + 1):
            retry_after: float | None = None
            try:
                response = await self._send(
                    method, path, route, params=params, content=content, json_body=json_body
                )
            except NotSent as exc:
                last = exc
            except _LostError as exc:
                last = NodeUnavailable(str(exc), endpoint=route)
            else:
                if ledger_out is not None:
                    ledger_out.append(_ledger_point(response))
                status = response.status_code
                if status in none_on:
                    return None
                if status < 300:
                    try:
                        return loads_exact(response.content)
                    except ValueError:
                        raise MalformedNodeResponse("body is not JSON", endpoint=route) from None
                error = error_from_response(response, route, now=self._wall.now())
                if isinstance(error, NodeRateLimited):
                    last, retry_after = error, error.retry_after
                elif status >= 500:
                    last = NodeUnavailable(str(error), endpoint=route)
                else:
                    raise error
            if attempt < self._max_attempts:
                await self._sleep(self._backoff.delay(attempt, retry_after))
        if last is None:  # the loop runs at least once: a failed attempt always sets it
            raise NodeUnavailable("no attempt was made", endpoint=route)
        raise last

    # --- endpoints --------------------------------------------------------------------

    async def ledger_info(self) -> LedgerInfo:
        """`GET /v1`: chain id and ledger state (also refreshes the ledger time)."""
        info = LedgerInfo.from_json(await self._read("GET", "", "GET /v1"))
        self._remember_ledger(info.ledger_timestamp_us)
        return info

    async def ledger_timestamp_us(self, *, max_age_seconds: float = 2.0) -> int:
        """The node's ledger time: a recent observation, else a fresh `GET /v1`."""
        stamp = self.ledger_stamp
        if stamp is not None and self._monotonic() - stamp.observed_at <= max_age_seconds:
            return stamp.timestamp_us
        return (await self.ledger_info()).ledger_timestamp_us

    def ledger_estimate_us(self) -> int | None:
        """The last observed ledger time moved on by the local time since (None before any).

        Good enough to date a simulation (a wrong guess fails it with TRANSACTION_EXPIRED
        and is refreshed); never used to judge an expiration.
        """
        stamp = self.ledger_stamp
        if stamp is None:
            return None
        elapsed = max(0.0, self._monotonic() - stamp.observed_at)
        return stamp.timestamp_us + int(elapsed * 1_000_000)

    async def account(self, address: Address) -> AccountInfo:
        """`GET /v1/accounts/{a}`.

        Raises:
            AccountNotFound: the account was never created (funded).
        """
        return (await self.account_state(address)).info

    async def account_state(self, address: Address) -> AccountState:
        """`GET /v1/accounts/{a}` with the ledger version and time of that very answer.

        Raises:
            AccountNotFound: the account was never created (funded).
        """
        route = "GET /v1/accounts/{a}"
        seen: list[_LedgerPoint] = []
        try:
            body = await self._read("GET", f"/accounts/{address}", route, ledger_out=seen)
        except NodeError as exc:
            if exc.status != 404:
                raise
            raise AccountNotFound(
                404,
                f"account {address} does not exist on chain; fund it first",
                error_code=exc.error_code,
                endpoint=route,
            ) from None
        version, timestamp_us = seen[-1] if seen else (None, None)
        return AccountState(AccountInfo.from_json(body, endpoint=route), version, timestamp_us)

    async def account_transaction(self, address: Address, sequence_number: int) -> TxStatus | None:
        """The committed transaction of `address` that used `sequence_number`.

        `GET /v1/accounts/{a}/transactions?start={n}&limit=1`: the node lists the account's
        committed user transactions from sequence number n on. None when this node does
        not show it: not committed (yet, as far as it knows), pruned (410), or the account
        unknown to it (404) — "not shown" proves nothing.
        """
        route = "GET /v1/accounts/{a}/transactions"
        body = await self._read(
            "GET",
            f"/accounts/{address}/transactions",
            route,
            params={"start": str(sequence_number), "limit": "1"},
            none_on=(404, 410),
        )
        if body is None:
            return None
        return parse_account_transaction(
            body, sender=address, sequence_number=sequence_number, endpoint=route
        )

    async def module_abi(self, address: Address, name: str) -> ModuleAbi:
        """`GET /v1/accounts/{a}/module/{name}`'s ABI, cached per module id."""
        key = (address, name)
        cached = self._abis.get(key)
        if cached is not None:
            return cached
        route = "GET /v1/accounts/{a}/module/{name}"
        body = await self._read("GET", f"/accounts/{address}/module/{quote(name, safe='')}", route)
        if not isinstance(body, Mapping):
            raise MalformedNodeResponse("module is not a JSON object", endpoint=route)
        try:
            abi = ModuleAbi.from_json(body)
        except AbiError as exc:
            raise MalformedNodeResponse(str(exc), endpoint=route) from None
        if abi.address != address or abi.name != name:
            raise MalformedNodeResponse(
                f"asked for {address}::{name}, got {abi.address}::{abi.name}", endpoint=route
            )
        self._abis[key] = abi
        return abi

    async def balance(self, address: Address, asset: str) -> int:
        """`GET /v1/accounts/{a}/balance/{asset}`: base units (asset: coin type or FA address)."""
        route = "GET /v1/accounts/{a}/balance/{asset}"
        body = await self._read(
            "GET", f"/accounts/{address}/balance/{quote(asset, safe=':')}", route
        )
        return parse_uint(body, "balance", endpoint=route)

    async def view(self, function: str, type_arguments: list[str], arguments: list[Any]) -> Any:
        """`POST /v1/view`: a `#[view]` function's return values (a JSON list).

        A Move abort (a stale Pyth price, say) is the node's 400, raised as `NodeError`.
        """
        body = {"function": function, "type_arguments": type_arguments, "arguments": arguments}
        answer = await self._read("POST", "/view", "POST /v1/view", json_body=body)
        if not isinstance(answer, list):
            raise MalformedNodeResponse("a view answer is not a list", endpoint="POST /v1/view")
        return answer

    async def estimate_gas_price(self) -> int:
        """`GET /v1/estimate_gas_price`'s `gas_estimate`, cached for a short while."""
        now = self._monotonic()
        if self._gas_cache is not None and now - self._gas_cache[1] < self._gas_ttl:
            return self._gas_cache[0]
        route = "GET /v1/estimate_gas_price"
        body = await self._read("GET", "/estimate_gas_price", route)
        if not isinstance(body, Mapping):
            raise MalformedNodeResponse("not a JSON object", endpoint=route)
        price = parse_uint(body.get("gas_estimate"), "gas_estimate", endpoint=route)
        self._gas_cache = (price, now)
        return price

    async def simulate(self, signed: bytes) -> SimulationResult:
        """`POST /v1/transactions/simulate` of BCS bytes carrying a zeroed signature."""
        route = "POST /v1/transactions/simulate"
        params = {"estimate_gas_unit_price": "true", "estimate_max_gas_amount": "true"}
        body = await self._read(
            "POST", "/transactions/simulate", route, params=params, content=signed
        )
        return SimulationResult.from_json(body, endpoint=route)

    async def submit(self, signed: bytes, tx_hash: str) -> str:
        """`POST /v1/transactions` (BCS); returns the hash the node reports (202).

        Args:
            signed: the BCS `SignedTransaction`.
            tx_hash: our hash of these bytes (carried by `SubmitOutcomeUnknown`).

        Raises:
            NotSent, SubmitOutcomeUnknown, MempoolFull, NodeRateLimited, SequenceTooOld,
            TransactionRejected, NodeError: see the module docstring.
        """
        route = "POST /v1/transactions"
        try:
            response = await self._send("POST", "/transactions", route, content=signed)
        except _LostError as exc:
            raise SubmitOutcomeUnknown(tx_hash, str(exc)) from None
        status = response.status_code
        if status < 300:
            try:
                body = loads_exact(response.content)
            except ValueError:
                raise SubmitOutcomeUnknown(tx_hash, "accepted, but the body is not JSON") from None
            reported = body.get("hash") if isinstance(body, Mapping) else None
            return str(reported) if isinstance(reported, str) else tx_hash
        error = error_from_response(response, route, now=self._wall.now())
        if status >= 500 and not isinstance(error, MempoolFull):
            raise SubmitOutcomeUnknown(tx_hash, str(error))
        if status == 400 and type(error) is NodeError:
            raise TransactionRejected(
                status,
                error.node_message,
                error_code=error.error_code,
                vm_error_code=error.vm_error_code,
                endpoint=route,
            )
        raise error

    async def transaction_by_hash(self, tx_hash: str) -> TxStatus | None:
        """`GET /v1/transactions/by_hash/{h}`: pending or committed; None when not found."""
        return (await self.lookup_transaction(tx_hash)).status

    async def lookup_transaction(self, tx_hash: str) -> TxLookup:
        """`by_hash`, with the ledger time of that very answer (`X-Aptos-Ledger-TimestampUsec`).

        "Not found at ledger time t ≥ expiration" is what proves a transaction expired
        unexecuted; the time is None when the node sends no such header.
        """
        route = "GET /v1/transactions/by_hash/{h}"
        seen: list[_LedgerPoint] = []
        body = await self._read(
            "GET", f"/transactions/by_hash/{tx_hash}", route, none_on=(404,), ledger_out=seen
        )
        version, ledger = seen[-1] if seen else (None, None)
        if body is None:
            return TxLookup(None, ledger, version)
        return TxLookup(TxStatus.from_json(body, tx_hash=tx_hash, endpoint=route), ledger, version)


class _LostError(Exception):
    """Sent, but no complete answer came back (internal: mapped per endpoint)."""
