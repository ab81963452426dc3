"""Recording the provider's answers (`[api].record_answers_dir`) over a real loopback server.

The client is made by `bot.app.runtime.connect` for a live config pointed at the scripted
provider stub on 127.0.0.1, so the wiring is what runs in production.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import stat
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import structlog
from pydantic import SecretStr

from bot.api import (
    CancelOrderRequest,
    DcaCreateRequest,
    GetOrdersRequest,
    OrderFilter,
    PanoraClient,
    SwapRequest,
)
from bot.api.answer_check import check_answers, load_answers
from bot.api.answer_files import answer_files
from bot.api.recording import WALLET_PLACEHOLDER, recording_transport
from bot.app.runtime import connect
from bot.clock import SteppedClock
from bot.config import ApiSettings, JournalSettings, Settings, WalletSettings
from tests.support.loopback import serve
from tests.support.provider_stub import APT, USDC_FA, WALLET, ProviderStub, Reply

API_KEY = "rec-test-api-key-7d2e91b0c4"
# A wallet with leading zeros: its short form (0xc3c3…) differs from its long one.
OTHER_WALLET = "0x00" + "c3" * 31


@pytest.fixture
def stub() -> ProviderStub:
    return ProviderStub()


@pytest.fixture
def base_url(stub: ProviderStub) -> Iterator[str]:
    with serve(stub) as url:
        yield url


def live_settings(base_url: str, folder: Path, **api: Any) -> Settings:
    return Settings(
        mode="live",
        api=ApiSettings(
            base_url=base_url,
            api_key=SecretStr(API_KEY),
            record_answers_dir=folder,
            **api,
        ),
        wallet=WalletSettings(address=WALLET),
    )


def records(folder: Path) -> list[dict[str, Any]]:
    found = []
    for _seq, path in answer_files(folder):
        found += [json.loads(line) for line in path.read_text().splitlines()]
    return found


def wallet_forms(address: str) -> list[bytes]:
    long = address.lower().removeprefix("0x").rjust(64, "0")
    short = long.lstrip("0")
    forms = {long, long.upper(), "0x" + long, "0x" + short, ("0x" + short).upper()}
    return [f.encode() for f in forms]


async def wait_for_file(folder: Path) -> None:
    for _ in range(500):
        if answer_files(folder) and answer_files(folder)[0][1].stat().st_size:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("nothing was recorded")


def folder_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


async def every_endpoint(client: PanoraClient) -> None:
    await client.get_prices()
    await client.swap(SwapRequest(APT, USDC_FA, from_amount=Decimal(1), to_wallet=WALLET))
    for kind in ("dca", "limit"):
        page = GetOrdersRequest(chain_id=1, wallet=WALLET, status=OrderFilter.ACTIVE)
        await client.get_orders(kind, page)
        await client.cancel_order(kind, CancelOrderRequest("0xdca1", to_wallet=WALLET))
    await client.create_dca_order(
        DcaCreateRequest(
            chain_id=1,
            to_wallet=WALLET,
            from_token=USDC_FA,
            to_token=APT,
            amount=Decimal(100),
            amount_type="total",
            interval_value=1,
            interval_period="day",
            number_of_orders=4,
        )
    )


async def test_live_answers_land_in_the_folder_without_key_or_wallet(
    base_url: str, stub: ProviderStub, tmp_path: Path
) -> None:
    folder = tmp_path / "answers"
    connection = connect(live_settings(base_url, folder))
    async with connection.client as client:
        await every_endpoint(client)
    await connection.node.aclose()

    assert {r.path for r in stub.requests} >= {"/prices", "/swap", "/dca/v1/getOrders"}
    got = records(folder)
    assert [(r["method"], r["path"]) for r in got] == [(r.method, r.path) for r in stub.requests]
    assert all(r["mode"] == "live" and r["status"] == 200 and r["v"] == 1 for r in got)
    prices = got[0]
    assert prices["headers"]["content-type"] == "application/json"
    assert prices["body"][0]["usdPrice"] == "5.12345678" and prices["body"][1]["usdPrice"] == 0.9998
    swap = next(r for r in got if r["path"] == "/swap")
    assert ["toWalletAddress", WALLET_PLACEHOLDER] in swap["query"]
    assert swap["body"]["quotes"][0]["txData"]["function"]  # the body is kept whole
    page = next(r for r in got if r["path"] == "/dca/v1/getOrders")
    assert page["body"]["toWalletAddress"] == WALLET_PLACEHOLDER
    assert datetime.fromisoformat(prices["time"].replace("Z", "+00:00")).tzinfo is not None

    raw = folder_bytes(folder)
    assert API_KEY.encode() not in raw
    for form in wallet_forms(WALLET):
        assert form not in raw, form
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert [stat.S_IMODE(p.stat().st_mode) for _s, p in answer_files(folder)] == [0o600]


async def test_a_wallet_sent_but_not_configured_is_learned_and_hidden_in_every_form(
    base_url: str, stub: ProviderStub, tmp_path: Path
) -> None:
    short = "0x" + OTHER_WALLET[4:]
    body = json.loads(json.dumps(stub_swap_body()))
    body["quotes"][0]["txData"]["arguments"] = [short, OTHER_WALLET.upper()[2:], OTHER_WALLET]
    body["note"] = f"for {short.upper()} and api key {API_KEY}"
    stub.script("POST", "/swap", Reply(body=body))
    folder = tmp_path / "answers"
    settings = live_settings(base_url, folder).model_copy(update={"wallet": WalletSettings()})
    connection = connect(settings)
    async with connection.client as client:
        request = SwapRequest(APT, USDC_FA, from_amount=Decimal(1), to_wallet=OTHER_WALLET)
        await client.swap(request)
    await connection.node.aclose()

    [record] = records(folder)
    assert record["body"]["quotes"][0]["txData"]["arguments"] == [WALLET_PLACEHOLDER] * 3
    assert record["body"]["note"] == f"for {WALLET_PLACEHOLDER} and api key [REDACTED]"
    raw = folder_bytes(folder)
    for form in wallet_forms(OTHER_WALLET):
        assert form not in raw, form
    assert API_KEY.encode() not in raw
    assert b"0x1::aptos_coin::AptosCoin" in raw  # a special address is no wallet


def stub_swap_body() -> dict[str, Any]:
    from tests.support.provider_stub import SWAP_EXACT_IN

    return SWAP_EXACT_IN


async def test_a_gzip_answer_is_recorded_decoded(
    base_url: str, stub: ProviderStub, tmp_path: Path
) -> None:
    prices = [{"tokenAddress": APT, "decimals": 8, "usdPrice": "5.5"}]
    packed = gzip.compress(json.dumps(prices).encode())
    stub.script("GET", "/prices", Reply(body=packed, headers={"content-encoding": "gzip"}))
    folder = tmp_path / "answers"
    connection = connect(live_settings(base_url, folder))
    async with connection.client as client:
        listed = await client.get_prices()
    await connection.node.aclose()
    assert listed.records[0].usd_price == Decimal("5.5")
    [record] = records(folder)
    assert record["body"] == prices and record["headers"]["content-encoding"] == "gzip"


async def test_a_long_list_keeps_its_first_records_and_a_large_object_only_its_size(
    base_url: str, stub: ProviderStub, tmp_path: Path
) -> None:
    many = [{"tokenAddress": f"0x{i:x}::c::C", "decimals": 8, "usdPrice": "1"} for i in range(200)]
    stub.script("GET", "/prices", Reply(body=many))
    swap = json.loads(json.dumps(stub_swap_body()))
    swap["padding"] = "x" * 4000
    stub.script("POST", "/swap", Reply(body=swap))
    folder = tmp_path / "answers"
    connection = connect(live_settings(base_url, folder, record_answers_max_body_kb=2))
    async with connection.client as client:
        assert len((await client.get_prices()).records) == 200  # the client saw it all
        await client.swap(SwapRequest(APT, USDC_FA, from_amount=Decimal(1), to_wallet=WALLET))
    await connection.node.aclose()

    prices, swapped = records(folder)
    cut = prices["body_truncated"]
    assert cut["records_total"] == 200 and 0 < cut["records_kept"] == len(prices["body"]) < 200
    assert len(json.dumps(prices["body"], separators=(",", ":"))) <= 2048
    assert prices["body"] == many[: cut["records_kept"]]
    assert "body" not in swapped and "over the limit of 2048" in swapped["body_omitted"]


async def test_files_rotate_and_the_oldest_go_past_the_limits(
    base_url: str, stub: ProviderStub, tmp_path: Path
) -> None:
    big = [{"tokenAddress": f"0x{i:x}::c::C", "decimals": 8, "usdPrice": "1"} for i in range(1800)]
    size = len(json.dumps(big))
    assert 100_000 < size < 128 * 1024
    folder = tmp_path / "answers"
    settings = live_settings(base_url, folder, record_answers_max_mb=1, record_answers_max_files=3)
    connection = connect(settings)
    async with connection.client as client:
        for _ in range(18):
            stub.script("GET", "/prices", Reply(body=big))
            await client.get_prices()
    await connection.node.aclose()

    files = answer_files(folder)
    seqs = [seq for seq, _p in files]
    assert len(files) <= 3 and seqs[0] > 1  # the oldest were deleted
    assert seqs == sorted(seqs) and seqs[-1] >= 4  # it rotated again and again
    total = sum(p.stat().st_size for _s, p in files)
    assert total <= 1024 * 1024 + size + 1000
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for _s, p in files)
    kept = records(folder)
    assert 5 <= len(kept) < 18 and all(r["body"] == big for r in kept)


async def test_a_new_day_starts_a_new_file(
    base_url: str, stub: ProviderStub, tmp_path: Path
) -> None:
    folder = tmp_path / "answers"
    clock = SteppedClock(datetime(2030, 1, 1, 23, 59, tzinfo=UTC))
    settings = ApiSettings(base_url=base_url, record_answers_dir=folder)
    transport = recording_transport(settings, None, now=clock.now, mode="paper")
    async with PanoraClient.from_settings(settings, api_key=None, transport=transport) as client:
        await client.get_prices()
        clock.advance(timedelta(minutes=2))
        await client.get_prices()
    names = [p.name for _s, p in answer_files(folder)]
    assert names == ["answers-20300101-000001.jsonl", "answers-20300102-000002.jsonl"]
    assert [r["time"][:16] for r in records(folder)] == ["2030-01-01T23:59", "2030-01-02T00:01"]
    assert {r["mode"] for r in records(folder)} == {"paper"}


async def test_a_disk_error_stops_recording_once_and_never_breaks_a_call(
    base_url: str, stub: ProviderStub, tmp_path: Path
) -> None:
    folder = tmp_path / "answers"
    clock = SteppedClock(datetime(2030, 1, 1, 12, tzinfo=UTC))
    settings = ApiSettings(base_url=base_url, record_answers_dir=folder)
    with structlog.testing.capture_logs() as logs:
        transport = recording_transport(settings, None, now=clock.now, mode="live")
        async with PanoraClient.from_settings(settings, api_key=None, transport=transport) as c:
            await c.get_prices()
            await wait_for_file(folder)  # the first answer is on disk
            for path in folder.iterdir():
                path.unlink()
            folder.rmdir()
            folder.write_text("not a folder any more")  # the next file cannot be made
            clock.advance(timedelta(days=1))
            for _ in range(3):
                assert len((await c.get_prices()).records) == 2
    disabled = [e for e in logs if e["event"] == "api.recording_disabled"]
    assert len(disabled) == 1 and disabled[0]["log_level"] == "error"
    assert "NotADirectoryError" in disabled[0]["error"]


async def test_a_folder_that_cannot_be_made_leaves_the_client_working(
    base_url: str, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    settings = ApiSettings(base_url=base_url, record_answers_dir=blocker / "answers")
    with structlog.testing.capture_logs() as logs:
        transport = recording_transport(
            settings, None, now=SteppedClock(datetime.now(UTC)).now, mode="live"
        )
        async with PanoraClient.from_settings(settings, api_key=None, transport=transport) as c:
            assert len((await c.get_prices()).records) == 2
    assert [e["event"] for e in logs if e["log_level"] == "error"] == ["api.recording_disabled"]


async def test_a_recorded_folder_passes_the_check(
    base_url: str, stub: ProviderStub, tmp_path: Path
) -> None:
    folder = tmp_path / "answers"
    connection = connect(live_settings(base_url, folder))
    async with connection.client as client:
        await every_endpoint(client)
    await connection.node.aclose()
    answers, notes = load_answers(folder)
    report = await check_answers(answers)
    assert notes == [] and report.failures == [] and len(answers) == len(stub.requests)
    assert sum(report.checked.values()) == len(answers)
    assert ("GET /prices", "[].brandNewField") in report.new_fields  # the stub's extra field


def test_nothing_is_recorded_without_the_setting(tmp_path: Path) -> None:
    settings = ApiSettings()
    assert (
        recording_transport(settings, None, now=SteppedClock(datetime.now(UTC)).now, mode="live")
        is None
    )
    assert os.listdir(tmp_path) == []


async def test_paper_mode_records_the_embedded_worlds_answers(tmp_path: Path) -> None:
    folder = tmp_path / "answers"
    settings = Settings(
        mode="paper",
        api=ApiSettings(record_answers_dir=folder),
        journal=JournalSettings(url="sqlite://"),
    )
    connection = connect(settings)
    async with connection.client as client:
        await client.get_prices([APT])
    await connection.node.aclose()
    [record] = records(folder)
    assert (record["mode"], record["path"], record["status"]) == ("paper", "/prices", 200)
    assert record["body"][0]["tokenAddress"] == APT
