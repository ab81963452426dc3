"""The client and the token book against `bot paper serve`'s `GET /tokenlist` over loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from bot.api import PanoraClient
from bot.api.tokens import fetch_token_book
from tests.support.client_capture import unknown_fields
from tests.support.paper_server import PAPER_KEY, paper_serve, write_config

APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"


@pytest.fixture(scope="module")
def paper_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    config = write_config(tmp_path_factory.mktemp("paper") / "bot.toml")
    with paper_serve(config) as (url, _process):
        yield url


def client(url: str) -> PanoraClient:
    return PanoraClient(base_url=url, api_key=SecretStr(PAPER_KEY))


async def test_the_client_reads_every_paper_token_list_record(paper_url: str) -> None:
    async with client(paper_url) as api:
        every = await api.get_token_list(ui_only=False)
        shown = await api.get_token_list(ui_only=True)
        two = await api.get_token_list([APT, USDC])
    assert not every.rejected and not shown.rejected
    assert 0 < len(shown.records) < len(every.records)
    assert all(unknown_fields(r) == [] for r in every.records)  # the model names every key
    assert [(r.token_address or r.fa_address, r.decimals) for r in two.records] == [
        (APT, 8),
        (USDC, 6),
    ]
    assert all(isinstance(r.svc_id, str) and r.svc_index is not None for r in every.records)


async def test_the_token_book_is_built_from_the_paper_token_list(paper_url: str) -> None:
    async with client(paper_url) as api:
        book = await fetch_token_book(api)
        listed = await api.get_token_list(ui_only=False)
        assert api.stats.errors == {}  # /tokenlist served: no 404, no fallback
    assert book.find("APT").coin_type == APT and book.find("USDC").fa_address == USDC
    assert book.find("lzUSDC").provider_symbol == "lzUSDC"
    assert len(book) == len(listed.records) and not any(t.banned for t in book)
