"""`bot api check FOLDER` as a user runs it: a real subprocess on a recorded folder.

The folder is recorded first: a live config's client (`connect`) against the scripted
provider stub on 127.0.0.1, every endpoint once.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bot.api import (
    CancelOrderRequest,
    DcaCreateRequest,
    GetOrdersRequest,
    LimitCreateRequest,
    OrderFilter,
    SwapRequest,
)
from bot.api.answer_files import answer_files
from bot.app.runtime import connect
from bot.config import ApiSettings, Settings, WalletSettings
from tests.support.cli import ROOT, run_bot
from tests.support.loopback import serve
from tests.support.provider_stub import (
    APT,
    SWAP_EXACT_IN,
    SWAP_EXACT_OUT,
    USDC_FA,
    WALLET,
    ProviderStub,
    Reply,
)

CONTRACT_FIXTURES = ROOT / "tests" / "contract" / "fixtures"


async def _record(folder: Path) -> None:
    stub = ProviderStub()
    stub.script("POST", "/swap", Reply(body=SWAP_EXACT_IN), Reply(body=SWAP_EXACT_OUT))
    with serve(stub) as url:
        settings = Settings(
            mode="live",
            api=ApiSettings(base_url=url, api_key=SecretStr("k" * 24), record_answers_dir=folder),
            wallet=WalletSettings(address=WALLET),
        )
        connection = connect(settings)
        async with connection.client as client:
            await client.get_prices()
            await client.swap(SwapRequest(APT, USDC_FA, from_amount=Decimal(1), to_wallet=WALLET))
            await client.swap(SwapRequest(APT, USDC_FA, to_amount=Decimal(50), to_wallet=WALLET))
            for kind in ("dca", "limit"):
                page = GetOrdersRequest(chain_id=1, wallet=WALLET, status=OrderFilter.ACTIVE)
                await client.get_orders(kind, page)
                await client.cancel_order(kind, CancelOrderRequest("0xdca1", to_wallet=WALLET))
            await client.create_limit_order(
                LimitCreateRequest(1, APT, USDC_FA, WALLET, WALLET, Decimal(1), Decimal(6))
            )
            await client.create_dca_order(
                DcaCreateRequest(1, WALLET, USDC_FA, APT, Decimal(10), "total", 1, "day", 2)
            )
        await connection.node.aclose()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("recorded") / "answers"
    asyncio.run(_record(folder))
    return folder


def _copy(recorded: Path, tmp_path: Path) -> Path:
    target = tmp_path / "answers"
    shutil.copytree(recorded, target)
    return target


def _edit(folder: Path, path: str, change: Any) -> None:
    """Rewrite the first record of `path` with `change(record)`."""
    [(_seq, file)] = answer_files(folder)
    lines = file.read_text().splitlines()
    for index, line in enumerate(lines):
        record = json.loads(line)
        if record["path"] == path:
            change(record)
            lines[index] = json.dumps(record)
            break
    file.write_text("\n".join(lines) + "\n")


def _check(folder: Path, tmp_path: Path) -> tuple[int, list[str], str]:
    result = run_bot("api", "check", str(folder), cwd=tmp_path)
    return result.returncode, result.stdout.splitlines(), result.stderr


def test_a_recorded_folder_parses(recorded: Path, tmp_path: Path) -> None:
    code, lines, stderr = _check(recorded, tmp_path)
    assert code == 0, (lines, stderr)
    assert not [line for line in lines if line.startswith("does not parse")]
    summary = lines[-1]
    assert summary.startswith("checked 9 of 9 answers") and "0 not parsed" in summary
    assert "POST /swap 2" in summary and "POST /limit/v1/createOrder 1" in summary
    assert "new field: GET /prices [].brandNewField (1 answer)" in lines  # the stub's extra


def test_a_renamed_field_shows_as_new_and_the_old_as_gone(recorded: Path, tmp_path: Path) -> None:
    folder = _copy(recorded, tmp_path)

    def rename(record: dict[str, Any]) -> None:
        for price in record["body"]:
            price["usdPriceNow"] = price.pop("usdPrice")

    _edit(folder, "/prices", rename)
    code, lines, _stderr = _check(folder, tmp_path)
    assert code == 0
    assert "new field: GET /prices [].usdPriceNow (1 answer)" in lines
    assert "gone: GET /prices [].usdPrice" in lines


def test_an_unparseable_answer_fails_the_check(recorded: Path, tmp_path: Path) -> None:
    folder = _copy(recorded, tmp_path)

    def break_amount(record: dict[str, Any]) -> None:
        record["body"]["quotes"][0]["toTokenAmount"] = "lots"

    _edit(folder, "/swap", break_amount)
    code, lines, _stderr = _check(folder, tmp_path)
    assert code == 1
    [failure] = [line for line in lines if line.startswith("does not parse")]
    assert failure.startswith("does not parse: POST /swap 20")  # its recorded time
    assert "quotes.0.toTokenAmount" in failure
    assert "1 not parsed" in lines[-1]


def test_a_rejected_price_record_is_named(recorded: Path, tmp_path: Path) -> None:
    folder = _copy(recorded, tmp_path)
    _edit(folder, "/prices", lambda record: record["body"][1].pop("decimals"))
    code, lines, _stderr = _check(folder, tmp_path)
    assert code == 1
    assert any(
        line.startswith("does not parse: GET /prices ")
        and "record 1 (" in line
        and "decimals" in line
        for line in lines
    )


def test_a_missing_or_empty_folder_is_a_usage_error(tmp_path: Path) -> None:
    code, lines, stderr = _check(tmp_path / "nowhere", tmp_path)
    assert code == 2 and lines == []
    assert stderr.strip().endswith("nowhere: no such folder")
    assert stderr.count("\n") == 1 and "Traceback" not in stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _lines, stderr = _check(empty, tmp_path)
    assert code == 2 and "no recorded answers" in stderr


def test_plain_bodies_are_read_by_their_folder(tmp_path: Path) -> None:
    folder = tmp_path / "bodies"
    (folder / "swap").mkdir(parents=True)
    (folder / "dca" / "getOrders").mkdir(parents=True)
    (folder / "swap" / "exact_out.json").write_text(json.dumps(SWAP_EXACT_OUT))
    (folder / "swap" / "post_swap.request.json").write_text('{"method": "POST"}')  # a form
    page = {"orders": [{"panoraTxId": "0x1"}], "pageNumber": 1, "cursor": "x"}
    (folder / "dca" / "getOrders" / "page.json").write_text(json.dumps(page))
    code, lines, _stderr = _check(folder, tmp_path)
    assert code == 1
    assert "new field: POST /dca/v1/getOrders cursor (1 answer)" in lines
    failure = "does not parse: POST /dca/v1/getOrders dca/getOrders/page.json: record 0 (0x1): "
    assert any(line.startswith(failure) for line in lines)
    assert lines[-1].startswith("checked 2 of 2 answers (POST /dca/v1/getOrders 1, POST /swap 1)")


@pytest.mark.skipif(not CONTRACT_FIXTURES.is_dir(), reason="the contract fixtures are not here")
def test_the_contract_fixtures_parse(tmp_path: Path) -> None:
    code, lines, stderr = _check(CONTRACT_FIXTURES, tmp_path)
    assert code == 0, (lines, stderr)
    assert lines[-1].startswith("checked ") and " 0 not parsed" in lines[-1]
