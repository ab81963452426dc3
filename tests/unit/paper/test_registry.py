from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.aptos.tokens import Token
from bot.paper.core.registry import (
    ALL,
    APT_COIN_TYPE,
    SHOWN,
    PaperTokens,
    UnknownToken,
    default_token_list_path,
)

RAW = json.loads(default_token_list_path().read_text(encoding="utf-8"))
THL = "0x7fd500c11216f0fe3095d0c4b8aa4d64a4e2e04f83758462f2b127255643615::thl_coin::THL"
USDC_FA = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
USD1_FA = "0x05fabd1b12e39967a3c24e91b7b8f67719a6dacee74f3c8b9fb7d93e855437d2"  # panoraUI false


@pytest.fixture(scope="module")
def registry() -> PaperTokens:
    return PaperTokens.from_token_list()


def test_loads_every_token_in_list_order(registry: PaperTokens) -> None:
    assert len(registry) == len(RAW) == 209
    assert [t.symbol for t in registry.tokens] == [item["symbol"] for item in RAW]
    tapp = registry.require("0x7e464f3d2c1aed51cdcbdc653cc5c21526fe424bed2944bdd21dabb389dd7921")
    assert tapp.coin_type is None and tapp.symbol == "TAPP"  # entry without tokenAddress


def test_apt_by_coin_type_and_by_fa(registry: PaperTokens) -> None:
    apt = registry.apt
    assert apt.symbol == "APT" and apt.decimals == 8
    for text in (
        APT_COIN_TYPE,
        "0x01::aptos_coin::AptosCoin",
        "0xa",
        "0x0A",
        "0x" + "0" * 63 + "a",
    ):
        assert registry.get(text) is apt
        assert text in registry


def test_lookup_by_either_identity_any_spelling(registry: PaperTokens) -> None:
    thl = registry.require(THL)
    assert thl.fa_address is not None
    assert registry.require(thl.fa_address) is thl
    assert registry.require(THL.replace("0x7fd5", "0x07fd5")) is thl
    assert registry.require(USDC_FA.upper().replace("0X", "0x")).symbol == "USDC"


def test_require_unknown_names_the_text(registry: PaperTokens) -> None:
    with pytest.raises(UnknownToken, match="0xdead::nope::NOPE"):
        registry.require("0xdead::nope::NOPE")
    with pytest.raises(UnknownToken, match="APT"):
        registry.require("APT")  # symbols are not identities here
    assert registry.get("not an address") is None
    assert isinstance(UnknownToken("x"), LookupError)


def test_select_by_coin_type_fa_mixed_unknown_and_duplicates(registry: PaperTokens) -> None:
    thl = registry.require(THL)
    assert thl.fa_address is not None
    assert [t.symbol for t in registry.select([THL])] == ["THL"]
    assert [t.symbol for t in registry.select([USDC_FA])] == ["USDC"]
    chosen = registry.select(
        [USDC_FA, " 0x0xbad ", THL, "0xdead::nope::NOPE", thl.fa_address, "0xa", USDC_FA, ""]
    )
    assert [t.symbol for t in chosen] == ["USDC", "THL", "APT"]  # request order, each once


def test_select_explicit_addresses_ignore_ui_flag(registry: PaperTokens) -> None:
    usd1 = registry.require(USD1_FA)
    assert not usd1.ui
    assert registry.select([USD1_FA]) == [usd1]
    assert registry.select([USD1_FA], ui=SHOWN) == [usd1]
    assert registry.select([], ui=SHOWN) == registry.select(None)  # empty = not given


def test_select_shown_by_default_all_for_true_false_hidden_for_false(
    registry: PaperTokens,
) -> None:
    ui_count = sum(1 for item in RAW if item["panoraUI"])
    assert ui_count == 79
    assert len(registry.select(None)) == ui_count
    assert all(t.ui for t in registry.select(None))
    assert len(registry.select(None, ui=ALL)) == 209  # panoraUI=true,false: every token
    hidden = registry.select(None, ui=frozenset({False}))  # panoraUI=false: hidden ones only
    assert len(hidden) == 209 - ui_count and not any(t.ui for t in hidden)
    assert registry.apt not in hidden


def test_select_tags_any_case_insensitive(registry: PaperTokens) -> None:
    memes = sum(1 for item in RAW if "Meme" in item["panoraTags"])
    ui_memes = sum(1 for item in RAW if "Meme" in item["panoraTags"] and item["panoraUI"])
    assert len(registry.select(None, ui=ALL, tags=["Meme"])) == memes
    assert len(registry.select(None, tags=["meme"])) == ui_memes
    rwa_or_lp = sum(1 for i in RAW if {"RWA", "LP"} & set(i["panoraTags"]))
    assert len(registry.select(None, ui=ALL, tags=["rwa", "LP"])) == rwa_or_lp
    assert len(registry.select(None, ui=ALL, tags=["RWA,LP"])) == rwa_or_lp
    # with explicit addresses the tag filter still applies
    assert registry.select([THL, "0xa"], tags=["Native"]) == [registry.require(THL), registry.apt]
    assert registry.select([THL, "0xa"], tags=["Meme"]) == []


def test_select_priced_predicate_only_without_addresses(registry: PaperTokens) -> None:
    priced = registry.select(None, priced=lambda t: t.symbol != "USDC")
    assert "USDC" not in {t.symbol for t in priced}
    assert [t.symbol for t in registry.select([USDC_FA], priced=lambda t: False)] == ["USDC"]


def test_add_user_token_and_replace() -> None:
    registry = PaperTokens.from_token_list()
    mine = Token(decimals=6, symbol="MINE", fa_address="0x1234", ui=True, tags=("Test",))
    registry.add(mine)
    assert len(registry) == 210 and registry.require("0x01234") is mine
    assert registry.select(None, tags=["test"]) == [mine]
    # a token sharing an identity replaces the old one, at its position
    new_apt = Token(decimals=8, symbol="APT2", coin_type=APT_COIN_TYPE, fa_address="0xa")
    registry.add(new_apt)
    assert len(registry) == 210
    assert registry.tokens[0] is new_apt and registry.apt is new_apt
    assert registry.get("0xa") is new_apt and registry.book.get(APT_COIN_TYPE) is new_apt


def test_empty_registry_has_no_apt() -> None:
    with pytest.raises(UnknownToken):
        _ = PaperTokens().apt


def test_bad_entry_names_index_and_symbol(tmp_path: Path) -> None:
    good = RAW[0]
    bad = {"symbol": "BROKEN", "faAddress": "0x55", "tokenAddress": None}  # no decimals
    path = tmp_path / "list.json"
    path.write_text(json.dumps([good, bad]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"#1 \(BROKEN\)"):
        PaperTokens.from_token_list(path)
    path.write_text(json.dumps([good, {"symbol": "NOID", "decimals": 6}]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"#1 \(NOID\)"):
        PaperTokens.from_token_list(path)
    path.write_text(json.dumps({"not": "a list"}), encoding="utf-8")
    with pytest.raises(ValueError, match="JSON list"):
        PaperTokens.from_token_list(path)


def test_key_of_files_both_identities_under_one_key(registry: PaperTokens) -> None:
    thl = registry.require(THL)
    assert thl.fa_address is not None
    assert registry.key_of("0xa") == registry.key_of(APT_COIN_TYPE) == APT_COIN_TYPE
    assert registry.key_of(thl.fa_address) == thl.coin_type == thl.address
    assert registry.key_of(USDC_FA) == USDC_FA  # FA-only token
    assert registry.key_of("0x00beef") == "0x" + "0" * 60 + "beef"  # unknown: canonical
    with pytest.raises(LookupError):
        registry.key_of("garbage")
