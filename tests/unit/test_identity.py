from __future__ import annotations

import json
import pickle
from typing import Any

import pytest

from bot.aptos.address import (
    Address,
    AddressError,
    FunctionId,
    canonical_type_text,
    is_coin_type,
    looks_like_address,
)
from bot.aptos.tokens import Token, TokenBook, TokenLookupError, token_key
from tests.support.fixtures import FIXTURES as SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES
TOKEN_LIST = FIXTURES / "panora" / "token-list.json"

THL_LONG = "0x07fd500c11216f0fe3095d0c4b8aa4d64a4e2e04f83758462f2b127255643615"
THL_SHORT = "0x7fd500c11216f0fe3095d0c4b8aa4d64a4e2e04f83758462f2b127255643615"
MKLP = (
    "0x5ae6789dd2fec1a9ec9cccfb3acaf12e93d432f0a3a42c92fe1a9d490b7bbc06::house_lp::MKLP"
    "<0x5ae6789dd2fec1a9ec9cccfb3acaf12e93d432f0a3a42c92fe1a9d490b7bbc06::fa_box::W_USDC>"
)
APT_LONG_TYPE = "0x" + "0" * 63 + "1::aptos_coin::AptosCoin"


def token_list() -> list[dict[str, Any]]:
    assert TOKEN_LIST.is_file(), f"missing fixture {TOKEN_LIST}"
    entries: list[dict[str, Any]] = json.loads(TOKEN_LIST.read_text())
    return entries


@pytest.fixture(scope="module")
def book() -> TokenBook:
    return TokenBook(Token.from_listing(entry) for entry in token_list())


# --- addresses -------------------------------------------------------------------


def test_leading_zero_spellings_equal_and_hash_alike() -> None:
    short, long = Address.parse(THL_SHORT), Address.parse(THL_LONG)
    assert short == long
    assert hash(short) == hash(long)
    assert len({short, long}) == 1
    assert str(short) == THL_LONG
    assert Address.parse(THL_LONG.upper().replace("0X", "0x")) == long


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("0x1", "0x1"),
        ("0x0000000000000000000000000000000000000000000000000000000000000001", "0x1"),
        ("0xa", "0xa"),
        ("0xF", "0xf"),
        ("0x0", "0x0"),
        ("0x10", "0x" + "0" * 62 + "10"),
        ("ab", "0x" + "0" * 62 + "ab"),
    ],
)
def test_aip40_printing(text: str, printed: str) -> None:
    assert str(Address.parse(text)) == printed


def test_long_form() -> None:
    assert Address.parse("0x1").long == "0x" + "0" * 63 + "1"
    assert Address.parse("0xa").is_special
    assert not Address.parse("0x10").is_special


def test_bytes_round_trip() -> None:
    address = Address.parse(THL_SHORT)
    raw = address.to_bytes()
    assert len(raw) == 32 and raw[0] == 0x07
    assert Address.from_bytes(raw) == address
    assert Address.from_bytes(b"\x00" * 31 + b"\x01") == Address.parse("0x1")
    with pytest.raises(AddressError):
        Address.from_bytes(b"\x01" * 31)


@pytest.mark.parametrize(
    "text", ["", "0x", "0xzz", "0x" + "1" * 65, " ", "0x1::coin::T", "-0x1", "0x 1"]
)
def test_invalid_addresses_rejected(text: str) -> None:
    with pytest.raises(AddressError):
        Address.parse(text)
    assert not looks_like_address(text)


@pytest.mark.parametrize("value", [1, None, b"0x1"])
def test_non_string_rejected(value: Any) -> None:
    with pytest.raises(AddressError, match="must be a string"):
        Address.parse(value)


def test_address_immutable_and_picklable() -> None:
    address = Address.parse("0xa")
    with pytest.raises(AttributeError):
        address._value = 2  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(address)) == address


# --- types and function ids --------------------------------------------------------


def test_canonical_type_text_normalizes_addresses() -> None:
    assert canonical_type_text(f"{THL_LONG}::thl_coin::THL") == f"{THL_LONG}::thl_coin::THL"
    assert canonical_type_text(f"{THL_SHORT}::thl_coin::THL") == f"{THL_LONG}::thl_coin::THL"
    assert canonical_type_text(APT_LONG_TYPE) == "0x1::aptos_coin::AptosCoin"


def test_canonical_type_text_generic_coin_from_token_list() -> None:
    listed = [e["tokenAddress"] for e in token_list() if "<" in (e.get("tokenAddress") or "")]
    assert MKLP in listed
    assert canonical_type_text(MKLP) == MKLP
    spaced = MKLP.replace("0x5ae6", "0x5AE6").replace("<", " < ").replace(">", " >")
    assert canonical_type_text(spaced) == MKLP
    assert is_coin_type(MKLP)


def test_canonical_type_text_nested_and_spaces() -> None:
    text = "0x01::coin::CoinStore< 0x00a::m::S<0x1::aptos_coin::AptosCoin, u64> >"
    assert (
        canonical_type_text(text)
        == "0x1::coin::CoinStore<0xa::m::S<0x1::aptos_coin::AptosCoin,u64>>"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0x1::aptos_coin::AptosCoin", True),
        (MKLP, True),
        ("0xa", False),
        ("0x1::aptos_coin", False),
        ("APT", False),
        ("0x1::aptos-coin::AptosCoin", False),
        (None, False),
    ],
)
def test_is_coin_type(text: object, expected: bool) -> None:
    assert is_coin_type(text) is expected


def test_function_id_parse_and_eq() -> None:
    short = FunctionId.parse("0x1::coin::transfer")
    long = FunctionId.parse("0x" + "0" * 63 + "1::coin::transfer")
    assert short == long and hash(short) == hash(long)
    assert str(long) == "0x1::coin::transfer"
    assert long.module_id == "0x1::coin"
    assert short != FunctionId.parse("0x1::coin::transfer_coins")
    router = FunctionId.parse(
        "0x1c3206329806286fd2223647c9f9b130e66baeb6d7224a18c1f642ffe48f3b4c::panora_swap::router_entry"
    )
    assert (router.module, router.function) == ("panora_swap", "router_entry")


@pytest.mark.parametrize(
    "text", ["0x1::coin", "0x1::coin::transfer::x", "zz::coin::transfer", "0x1::coin::1bad", ""]
)
def test_function_id_rejects(text: str) -> None:
    with pytest.raises(AddressError):
        FunctionId.parse(text)


# --- tokens ------------------------------------------------------------------------


def test_every_listed_token_builds() -> None:
    entries = token_list()
    assert len(entries) == 209
    tokens = [Token.from_listing(entry) for entry in entries]
    assert all(t.keys for t in tokens)
    fa_only = [t for t in tokens if t.coin_type is None]
    assert fa_only and all(t.address == t.fa_address for t in fa_only)


def test_book_finds_apt_by_every_identity(book: TokenBook) -> None:
    apt = book.find("0x1::aptos_coin::AptosCoin")
    assert apt.symbol == "APT" and apt.decimals == 8
    assert not apt.banned
    assert book.find(APT_LONG_TYPE) is apt
    assert book.find("0xa") is apt
    assert book.find("0x" + "0" * 63 + "a") is apt
    assert book.find("apt") is apt
    assert book.find(" APT ") is apt
    assert book.get("0x1::aptos_coin::AptosCoin") is apt


def test_book_finds_by_leading_zero_spelling(book: TokenBook) -> None:
    thl = book.find(f"{THL_SHORT}::thl_coin::THL")
    assert thl is book.find(f"{THL_LONG}::thl_coin::THL")
    assert thl.symbol == "THL"


def test_book_finds_generic_coin_type(book: TokenBook) -> None:
    assert book.find(MKLP.replace("<", "< ")).coin_type == MKLP


def test_book_finds_fa_only_token(book: TokenBook) -> None:
    usdt = book.find("0x357b0b74bc833e95a115ad22604854d6b0fca151cecd94111770e5d6ffc9dc2b")
    assert usdt.coin_type is None
    assert usdt.symbol == "USDt"


def test_book_finds_by_provider_symbol(book: TokenBook) -> None:
    lz = book.find("lzUSDC")
    assert (
        lz.coin_type
        == "0xf22bede237a07e121b56d91a491eb7bcdfd1f5907926a9e58338f964a01b17fa::asset::USDC"
    )


def test_provider_symbol_picks_native_usdc_over_bridged_copies(book: TokenBook) -> None:
    # On-chain, five tokens are called USDC; the provider's symbols tell them apart.
    assert book.find("USDC").fa_address == (
        "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
    )
    assert book.find("whUSDC").provider_symbol == "whUSDC"


def test_ambiguous_symbol_lists_addresses(book: TokenBook) -> None:
    with pytest.raises(TokenLookupError, match="ambiguous") as info:
        book.find("WETH")
    message = str(info.value)
    assert (
        "0xf22bede237a07e121b56d91a491eb7bcdfd1f5907926a9e58338f964a01b17fa::asset::WETH" in message
    )


def test_unknown_name(book: TokenBook) -> None:
    with pytest.raises(TokenLookupError, match="unknown token"):
        book.find("NOPE-NOT-A-TOKEN")
    assert book.get("0x" + "e" * 64) is None
    assert book.get("not an address") is None


def test_banned_token_detected(book: TokenBook) -> None:
    fake = book.find(
        "0x48327a479bf5c5d2e36d5e9846362cff2d99e0e27ff92859fc247893fded3fbd::APTOS::APTOS"
    )
    assert fake.symbol == "$APT"
    assert fake.tags == ("Banned",)
    assert fake.banned
    impostor = book.find(
        "0x50788befc1107c0cc4473848a92e5c783c635866ce3c98de71d2eeb7d2a34f85::aptos_coin::AptosCoin"
    )
    assert impostor.symbol == "APT" and impostor.banned


def test_banned_count_matches_list(book: TokenBook) -> None:
    listed = sum("Banned" in e["panoraTags"] for e in token_list())
    assert listed > 0
    assert sum(t.banned for t in book) == listed
    assert len(book) == 209


def test_from_listing_text_tags_and_flags() -> None:
    token = Token.from_listing(
        {
            "decimals": "6",
            "faAddress": "0xA",
            "symbol": "X",
            "svcTags": "Meme, Banned",
            "svcUI": "false",
        }
    )
    assert token.tags == ("Meme", "Banned")
    assert token.banned
    assert token.ui is False
    assert token.fa_address == "0xa"


def test_token_needs_an_identity() -> None:
    with pytest.raises(ValueError, match="neither"):
        Token(decimals=8, symbol="X")
    with pytest.raises(TokenLookupError):
        token_key("APT")


def test_tokens_named_skips_non_tokens_and_counts_each_token_once(book: TokenBook) -> None:
    apt = book.find("APT")
    found = book.tokens_named(["1 hour", "APT", "0x1::aptos_coin::AptosCoin", "USDC", "nope"])
    assert list(found) == [apt.address, book.find("USDC").address]
    assert found[apt.address] is apt
