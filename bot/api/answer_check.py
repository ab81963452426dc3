"""Checking provider answers against the client, as `bot api check FOLDER` does.

An answer is replayed through a real `PanoraClient` (its transport answers with the
recorded status and body), by the public method the bot itself calls for that endpoint
(`READERS`): whatever the client does with a body, the check does, so a change to the
client or its models is what gets checked. What the client gives back is walked:

* an answer the client refuses (or a record it sets aside) **does not parse**;
* a field a model does not name (`model_extra`) is a **new field**, by JSON path;
* a field a model names that no answer of that endpoint had (at that path) is **gone**.

The folder may hold the recorder's JSON-lines files (`bot.api.recording`), recorded
answers as single `*.json` objects, or plain bodies (`*.json`) named by their folder:
`prices/`, `tokenlist/`, `swap/`, `swap_quote/` (or `quote/`), `dca/getOrders/` (or
`dca_getOrders/`), `limit/createOrder/`… (`endpoint_for`). A plain body in `swap/` that is
a bare `txData` (or a transaction holding one in `payload`) is read as a `TxData`.
Files named `*request*.json` are request forms, not answers: skipped.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

import httpx
from pydantic import BaseModel, ValidationError

from bot.api.answer_files import dumps_exact
from bot.api.answers import first_error
from bot.api.client import PanoraClient
from bot.api.errors import NoRoute
from bot.api.models import OrderFilter, OrderResult, RejectedRecord, TxData
from bot.api.params import (
    CancelOrderRequest,
    DcaCreateRequest,
    GetOrdersRequest,
    LimitCreateRequest,
    SwapRequest,
)
from bot.api.wire import prefixed
from bot.domain import APT_COIN_TYPE as _APT
from bot.domain import OrderKind
from bot.money import loads_exact

__all__ = ["READERS", "Answer", "CheckReport", "FolderError", "check_answers", "load_answers"]

_USDC: Final = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
_WALLET: Final = "0x" + "5a" * 32
_TX_DATA: Final = ("", "txData")
_PAGE_KEYS: Final = frozenset({"chainId", "toWalletAddress", "pageNumber", "totalPages", "orders"})
"""The keys of a getOrders page the client reads (`PanoraClient.get_orders`)."""


class FolderError(ValueError):
    """The folder is missing, not a folder, or holds no answer at all."""


@dataclass(frozen=True)
class Answer:
    """One answer to check: where it came from, what was asked, what came back."""

    source: str
    method: str
    path: str
    status: int = 200
    time: str | None = None
    query: tuple[tuple[str, str], ...] = ()
    body: Any = None
    text: str | None = None
    omitted: str | None = None

    @property
    def endpoint(self) -> str:
        """`GET /prices`."""
        return f"{self.method} {self.path}".strip()

    @property
    def when(self) -> str:
        """The answer's time, else where it came from."""
        return self.time or self.source


@dataclass
class _Parsed:
    parts: list[tuple[str, BaseModel]] = field(default_factory=list)
    rejected: list[RejectedRecord] = field(default_factory=list)
    new_keys: list[str] = field(default_factory=list)


Reader = Callable[[PanoraClient, Answer], Awaitable[_Parsed]]


# --- the readers: the client's own methods, one per endpoint ----------------------------


async def _prices(client: PanoraClient, answer: Answer) -> _Parsed:
    # Paths start at a record, `[]`, whichever the wrapping (a list, `{data: [...]}`…).
    result = await client.get_prices()
    return _Parsed([("[]", r) for r in result.records], list(result.rejected))


async def _token_list(client: PanoraClient, answer: Answer) -> _Parsed:
    # Records at `[]` as for prices; keys beside the `data` list are new at the top.
    result = await client.get_token_list()
    body = answer.body
    wrapped = isinstance(body, dict) and isinstance(body.get("data"), list)
    new = [k for k in body if k != "data"] if wrapped else []
    return _Parsed([("[]", r) for r in result.records], list(result.rejected), new)


def _exact_in(answer: Answer) -> bool:
    names = {k for k, _v in answer.query}
    if "fromTokenAmount" in names or "toTokenAmount" in names:
        return "fromTokenAmount" in names
    quotes = answer.body.get("quotes") if isinstance(answer.body, dict) else None
    first = quotes[0] if isinstance(quotes, list) and quotes else {}
    return not (isinstance(first, dict) and "maxFromTokenAmount" in first)


def _swap_request(answer: Answer, wallet: str | None) -> SwapRequest:
    if _exact_in(answer):
        return SwapRequest(_APT, _USDC, from_amount=Decimal(1), to_wallet=wallet)
    return SwapRequest(_APT, _USDC, to_amount=Decimal(1), to_wallet=wallet)


async def _swap(client: PanoraClient, answer: Answer) -> _Parsed:
    return _Parsed([("", await client.swap(_swap_request(answer, _WALLET)))])


async def _quote(client: PanoraClient, answer: Answer) -> _Parsed:
    return _Parsed([("", await client.quote(_swap_request(answer, None)))])


def _orders(kind: OrderKind) -> Reader:
    async def read(client: PanoraClient, answer: Answer) -> _Parsed:
        request = GetOrdersRequest(chain_id=1, wallet=_WALLET, status=OrderFilter.ACTIVE)
        page = await client.get_orders(kind, request)
        body = answer.body if isinstance(answer.body, dict) else {}
        new = [k for k in body if k not in _PAGE_KEYS]
        return _Parsed([("orders[]", o) for o in page.orders], list(page.rejected), new)

    return read


def _with_tx_data(result: OrderResult) -> _Parsed:
    tx = result.tx_data  # raises ValidationError for a malformed txData, as the bot would
    if tx is None:
        return _Parsed()
    return _Parsed([("txData" if "txData" in result.raw else "data.txData", tx)])


async def _create_dca(client: PanoraClient, answer: Answer) -> _Parsed:
    request = DcaCreateRequest(
        chain_id=1,
        to_wallet=_WALLET,
        from_token=_USDC,
        to_token=_APT,
        amount=Decimal(10),
        amount_type="total",
        interval_value=1,
        interval_period="day",
        number_of_orders=2,
    )
    return _with_tx_data(await client.create_dca_order(request))


async def _create_limit(client: PanoraClient, answer: Answer) -> _Parsed:
    request = LimitCreateRequest(
        chain_id=1,
        from_token=_APT,
        to_token=_USDC,
        from_wallet=_WALLET,
        to_wallet=_WALLET,
        amount=Decimal(1),
        rate=Decimal(5),
    )
    return _with_tx_data(await client.create_limit_order(request))


def _cancel(kind: OrderKind) -> Reader:
    async def read(client: PanoraClient, answer: Answer) -> _Parsed:
        request = CancelOrderRequest("0x1", to_wallet=_WALLET)
        return _with_tx_data(await client.cancel_order(kind, request))

    return read


async def _tx_data(client: PanoraClient, answer: Answer) -> _Parsed:
    body = answer.body
    if isinstance(body, dict) and isinstance(body.get("payload"), dict):
        return _Parsed([("payload", TxData.model_validate(body["payload"]))])
    return _Parsed([("", TxData.model_validate(body))])


READERS: Final[dict[tuple[str, str], Reader]] = {
    ("GET", "/prices"): _prices,
    ("GET", "/tokenlist"): _token_list,
    ("POST", "/swap"): _swap,
    ("GET", "/swap/quote"): _quote,
    ("POST", "/dca/v1/getOrders"): _orders(OrderKind.DCA),
    ("POST", "/limit/v1/getOrders"): _orders(OrderKind.LIMIT),
    ("POST", "/dca/v1/createOrder"): _create_dca,
    ("POST", "/limit/v1/createOrder"): _create_limit,
    ("POST", "/dca/v1/cancelOrder"): _cancel(OrderKind.DCA),
    ("POST", "/limit/v1/cancelOrder"): _cancel(OrderKind.LIMIT),
    _TX_DATA: _tx_data,
}
"""Endpoint → how the bot reads its answer. `_TX_DATA` is a bare txData (fixtures only)."""


# --- loading a folder -------------------------------------------------------------------


def _alias(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


_ALIASES: Final = (
    {_alias(path): (method, path) for method, path in READERS if path.startswith("/")}
    | {
        _alias(path.replace("/v1/", "")): (method, path)
        for method, path in READERS
        if "/v1/" in path
    }
    | {"quote": ("GET", "/swap/quote")}
)


def endpoint_for(relative: Path) -> tuple[str, str] | None:
    """The endpoint a plain body answers, from its folders (nearest first) or its name."""
    folders = relative.parent.parts
    for take in range(1, len(folders) + 1):
        found = _ALIASES.get(_alias("".join(folders[-take:])))
        if found is not None:
            return found
    stem = _alias(relative.name.split(".")[0])
    for alias in sorted(_ALIASES, key=len, reverse=True):
        if stem.startswith(alias):
            return _ALIASES[alias]
    return None


def _looks_like_tx_data(body: Any) -> bool:
    if isinstance(body, dict) and isinstance(body.get("payload"), dict):
        body = body["payload"]
    return isinstance(body, dict) and "function" in body and "quotes" not in body


def _from_record(data: dict[str, Any], source: str) -> Answer:
    """An `Answer` from a recorded line. Raises ValueError when it is not one."""
    method, path, status = data.get("method"), data.get("path"), data.get("status")
    if not (isinstance(method, str) and isinstance(path, str) and isinstance(status, int)):
        raise ValueError("not a recorded answer (method, path, status)")
    query = data.get("query") or []
    pairs = tuple((str(p[0]), str(p[1])) for p in query if isinstance(p, list) and len(p) == 2)
    time = data.get("time")
    omitted = data.get("body_omitted")
    return Answer(
        source=source,
        method=method.upper(),
        path=path,
        status=status,
        time=time if isinstance(time, str) else None,
        query=pairs,
        body=data.get("body"),
        text=data["body_text"] if isinstance(data.get("body_text"), str) else None,
        omitted=str(omitted) if omitted is not None else None,
    )


def _is_record(data: Any) -> bool:
    return isinstance(data, dict) and "v" in data and "status" in data and "path" in data


def _read_jsonl(path: Path, name: str, notes: list[str]) -> Iterator[Answer]:
    with path.open("rb") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                yield _from_record(loads_exact(line), f"{name}:{number}")
            except (ValueError, AttributeError) as exc:  # a line cut short by a crash, say
                notes.append(f"skipped: {name}:{number}: {exc}")


def load_answers(folder: Path) -> tuple[list[Answer], list[str]]:
    """Every answer under `folder`, and a note for each file or line that is none.

    Raises:
        FolderError: `folder` is missing or no folder, or no answer was found in it.
    """
    if not folder.exists():
        raise FolderError(f"{folder}: no such folder")
    if not folder.is_dir():
        raise FolderError(f"{folder}: not a folder")
    answers: list[Answer] = []
    notes: list[str] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder)
        name = relative.as_posix()
        try:
            if path.suffix == ".jsonl":
                answers.extend(_read_jsonl(path, name, notes))
            elif path.suffix == ".json" and "request" not in path.name.lower():
                answers.extend(_read_json(path, relative, notes))
        except OSError as exc:
            notes.append(f"skipped: {name}: {exc.strerror or exc}")
    if not answers:
        raise FolderError(f"{folder}: no recorded answers (*.jsonl, or *.json by endpoint)")
    return answers, notes


def _read_json(path: Path, relative: Path, notes: list[str]) -> list[Answer]:
    name = relative.as_posix()
    try:
        data = loads_exact(path.read_bytes())
    except ValueError as exc:
        notes.append(f"skipped: {name}: not JSON ({exc})")
        return []
    if _is_record(data):
        try:
            return [_from_record(data, name)]
        except ValueError as exc:
            notes.append(f"skipped: {name}: {exc}")
            return []
    endpoint = endpoint_for(relative)
    if endpoint is None:
        notes.append(f"skipped: {name}: no endpoint (put it in a folder such as prices/)")
        return []
    if endpoint == ("POST", "/swap") and _looks_like_tx_data(data):
        endpoint = _TX_DATA
    return [Answer(source=name, method=endpoint[0], path=endpoint[1], body=data)]


# --- checking ---------------------------------------------------------------------------


@dataclass
class CheckReport:
    """What `check_answers` found; `lines()` is what `bot api check` prints."""

    prefix: str = "panora"
    answers: int = 0
    checked: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    no_route: int = 0
    not_checked: Counter[str] = field(default_factory=Counter)
    new_fields: Counter[tuple[str, str]] = field(default_factory=Counter)
    seen: dict[tuple[str, str, type[BaseModel]], set[str]] = field(default_factory=dict)

    def gone(self) -> list[tuple[str, str]]:
        """(endpoint, JSON path) of every field a model names that no answer had."""
        found: set[tuple[str, str]] = set()
        for (endpoint, path, model), present in self.seen.items():
            for name, info in model.model_fields.items():
                if name not in present:
                    found.add((endpoint, _join(path, prefixed(info.alias or name, self.prefix))))
        return sorted(found)

    def walk(self, endpoint: str, path: str, model: BaseModel, new: set[tuple[str, str]]) -> None:
        """Note the fields `model` (parsed at `path` of an answer) had; add new ones to `new`."""
        present = self.seen.setdefault((endpoint, path, type(model)), set())
        present.update(model.model_fields_set)
        for key in model.model_extra or {}:
            new.add((endpoint, _join(path, prefixed(key, self.prefix))))
        for name, info in type(model).model_fields.items():
            self._descend(endpoint, _join(path, info.alias or name), getattr(model, name), new)

    def _descend(self, endpoint: str, path: str, value: Any, new: set[tuple[str, str]]) -> None:
        if isinstance(value, BaseModel):
            self.walk(endpoint, path, value, new)
        elif isinstance(value, list):
            for item in value:
                self._descend(endpoint, path + "[]", item, new)

    def lines(self) -> list[str]:
        """One line per problem, then the summary."""
        out = list(self.failures)
        out += [
            f"new field: {endpoint} {path} ({count} answer{'s' if count > 1 else ''})"
            for (endpoint, path), count in sorted(self.new_fields.items())
        ]
        gone = self.gone()
        out += [f"gone: {endpoint} {path}" for endpoint, path in gone]
        checked = sum(self.checked.values())
        per = ", ".join(f"{e} {n}" for e, n in sorted(self.checked.items()))
        summary = (
            f"checked {checked} of {self.answers} answers{f' ({per})' if per else ''}: "
            f"{len(self.failures)} not parsed, {len(self.new_fields)} new fields, "
            f"{len(gone)} gone"
        )
        if self.no_route:
            summary += f"; {self.no_route} no-route answers"
        if self.not_checked:
            skipped = ", ".join(f"{n} {why}" for why, n in sorted(self.not_checked.items()))
            summary += f"; not checked: {skipped}"
        return [*out, summary]


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


class _Replay:
    """The transport's answer: set before each replayed call."""

    def __init__(self) -> None:
        self.status = 200
        self.content = b""

    def __call__(self, request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "application/json"}
        return httpx.Response(self.status, headers=headers, content=self.content)


async def _no_sleep(seconds: float) -> None:
    return None


async def check_answers(
    answers: list[Answer], *, prefix: str = "panora", order_amount_units: str = "human"
) -> CheckReport:
    """Replay every answer through a `PanoraClient` (see module) and report."""
    report = CheckReport(prefix=prefix, answers=len(answers))
    replay = _Replay()
    client = PanoraClient(
        base_url="http://replay.invalid",
        api_key=None,
        provider_prefix=prefix,
        order_amount_units="base" if order_amount_units == "base" else "human",
        max_attempts=1,
        rate_limit_per_second=1e9,
        rate_limit_burst=10**9,
        transport=httpx.MockTransport(replay),
        sleep=_no_sleep,
    )
    async with client:
        for answer in answers:
            await _check_one(client, replay, answer, report)
    return report


async def _check_one(
    client: PanoraClient, replay: _Replay, answer: Answer, report: CheckReport
) -> None:
    reader = READERS.get((answer.method, answer.path))
    if not 200 <= answer.status < 300:
        report.not_checked["error statuses"] += 1
        return
    if answer.omitted is not None:
        report.not_checked["bodies not kept"] += 1
        return
    if reader is None:
        report.not_checked[f"{answer.endpoint} (no reader)"] += 1
        return
    replay.status = answer.status
    text = answer.text if answer.text is not None else dumps_exact(answer.body)
    replay.content = text.encode()
    endpoint = "txData" if (answer.method, answer.path) == _TX_DATA else answer.endpoint
    try:
        parsed = await reader(client, answer)
    except NoRoute:
        report.no_route += 1
        report.checked[endpoint] += 1
        return
    except ValidationError as exc:
        problem = first_error(exc)
    except Exception as exc:  # the client's refusal (MalformedResponse…), or anything else
        problem = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    else:
        report.checked[endpoint] += 1
        for rejected in parsed.rejected:
            named = f" ({rejected.record_id})" if rejected.record_id else ""
            report.failures.append(
                f"does not parse: {endpoint} {answer.when}: "
                f"record {rejected.index}{named}: {rejected.error}"
            )
        new = {(endpoint, prefixed(key, prefix=report.prefix)) for key in parsed.new_keys}
        for path, model in parsed.parts:
            report.walk(endpoint, path, model, new)
        report.new_fields.update(new)  # counted once per answer
        return
    report.checked[endpoint] += 1
    report.failures.append(f"does not parse: {endpoint} {answer.when}: {problem}")
