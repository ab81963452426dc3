from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal, localcontext
from itertools import pairwise
from pathlib import Path

import pytest

from bot.aptos.tokens import Token
from bot.paper.core.prices import (
    NoPrice,
    PriceBook,
    PricePath,
    RandomWalkPath,
    RandomWalkSpec,
)
from bot.paper.core.registry import APT_COIN_TYPE, PaperTokens, UnknownToken
from bot.paper.core.series import SeriesReport, SeriesRow, load_series_csv, write_series_csv

T0 = datetime(2026, 1, 1, tzinfo=UTC)
H = timedelta(hours=1)
THL = "0x7fd500c11216f0fe3095d0c4b8aa4d64a4e2e04f83758462f2b127255643615::thl_coin::THL"
USDC_FA = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"


@pytest.fixture(scope="module")
def registry() -> PaperTokens:
    return PaperTokens.from_token_list()


def book(registry: PaperTokens, seed: int = 7, **kwargs: object) -> PriceBook:
    return PriceBook(seed, registry, T0, **kwargs)  # type: ignore[arg-type]


def at_least(num: Decimal, threshold: Decimal, den: Decimal) -> bool:
    with localcontext() as ctx:
        ctx.prec = 100
        return num >= threshold * den


# --- PricePath -------------------------------------------------------------------------


def test_price_path_lookups() -> None:
    path = PricePath([T0, T0 + H, T0 + 3 * H], [Decimal("1"), Decimal("2"), Decimal("3")])
    assert path.at(T0 - timedelta(seconds=1)) is None
    assert path.point_index(T0 - timedelta(seconds=1)) is None
    assert path.step_start(T0 - timedelta(seconds=1)) is None
    assert path.at(T0) == 1 and path.point_index(T0) == 0 and path.step_start(T0) == T0
    assert path.at(T0 + 2 * H) == 2 and path.step_start(T0 + 2 * H) == T0 + H
    assert path.at(T0 + 3 * H) == 3 and path.point_index(T0 + 3 * H) == 2
    assert path.at(T0 + 100 * H) == 3  # the last price stays in force
    assert path.next_change_after(T0 - H) == T0
    assert path.next_change_after(T0) == T0 + H  # strictly after
    assert path.next_change_after(T0 + 2 * H) == T0 + 3 * H
    assert path.next_change_after(T0 + 3 * H) is None
    other_zone = timezone(timedelta(hours=2))
    assert path.at((T0 + H).astimezone(other_zone)) == 2
    assert path.times == [T0, T0 + H, T0 + 3 * H]
    assert path.prices == [Decimal(1), Decimal(2), Decimal(3)]


def test_price_path_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="naive"):
        PricePath([datetime(2026, 1, 1)], [Decimal(1)])
    with pytest.raises(ValueError, match="order"):
        PricePath([T0 + H, T0], [Decimal(1), Decimal(2)])
    with pytest.raises(ValueError, match="order"):
        PricePath([T0, T0], [Decimal(1), Decimal(2)])
    with pytest.raises(TypeError, match="Decimal"):
        PricePath([T0], [1.5])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="> 0"):
        PricePath([T0], [Decimal(0)])
    with pytest.raises(ValueError, match="times"):
        PricePath([T0], [])
    path = PricePath([T0], [Decimal(1)])
    with pytest.raises(ValueError, match="naive"):
        path.at(datetime(2026, 1, 1))


def test_random_walk_spec_validation() -> None:
    with pytest.raises(ValueError):
        RandomWalkSpec(Decimal(0), Decimal(0), Decimal(1))
    with pytest.raises(ValueError):
        RandomWalkSpec(Decimal(1), Decimal(0), Decimal(-1))
    with pytest.raises(ValueError):
        RandomWalkSpec(Decimal(1), Decimal(0), Decimal(1), step_seconds=0)
    with pytest.raises(ValueError):
        RandomWalkSpec(Decimal(1), 0.1, Decimal(1))  # type: ignore[arg-type]
    assert RandomWalkSpec(2, "0.1", Decimal(1)).drift_per_year == Decimal("0.1")  # type: ignore[arg-type]


# --- random walks ----------------------------------------------------------------------


def test_walk_grid_lookups_and_lazy_generation() -> None:
    spec = RandomWalkSpec(Decimal(5), Decimal(0), Decimal("0.8"), step_seconds=60)
    walk = RandomWalkPath(spec, T0, seed=1)
    assert walk.at(T0 - timedelta(microseconds=1)) is None
    assert walk.at(T0) == 5 and walk.step_start(T0 + timedelta(seconds=59)) == T0
    assert walk.next_change_after(T0 - H) == T0
    assert walk.next_change_after(T0 + timedelta(seconds=30)) == T0 + timedelta(seconds=60)
    assert walk.next_change_after(T0 + timedelta(seconds=60)) == T0 + timedelta(seconds=120)
    assert walk.point_index(T0 + 10 * H) == 600
    assert len(walk.times) < 5000  # only what was asked for (plus one chunk)
    # same values whatever the query order
    late_first = RandomWalkPath(spec, T0, seed=1)
    late = late_first.at(T0 + 30 * H)
    assert [late_first.at(T0 + k * H) for k in range(30)] == [
        walk.at(T0 + k * H) for k in range(30)
    ]
    assert walk.at(T0 + 30 * H) == late


def test_walk_prices_are_positive_decimals_with_12_digits() -> None:
    spec = RandomWalkSpec(Decimal("0.00123"), Decimal("0.3"), Decimal("1.5"), step_seconds=300)
    walk = RandomWalkPath(spec, T0, seed=99)
    walk.at(T0 + timedelta(days=30))
    prices = walk.prices
    assert len(prices) > 8000
    for price in prices:
        assert type(price) is Decimal and price > 0
        assert len(price.as_tuple().digits) <= 12
    assert len(set(prices)) > len(prices) * 0.99  # it does move


def test_walk_statistics() -> None:
    drift, vol = Decimal("0.5"), Decimal("0.3")
    spec = RandomWalkSpec(Decimal(10), drift, vol, step_seconds=86_400)
    walk = RandomWalkPath(spec, T0, seed=2024)
    steps = 36_500  # 100 years of daily steps
    walk.at(T0 + timedelta(days=steps))
    logs = [math.log(p) for p in walk.prices[: steps + 1]]
    returns = [b - a for a, b in pairwise(logs)]
    years = steps * 86_400 / 31_557_600
    mean_per_year = (logs[-1] - logs[0]) / years
    expected = float(drift) - float(vol) ** 2 / 2
    assert abs(mean_per_year - expected) < 4 * float(vol) / math.sqrt(years)
    realized_vol = math.sqrt(sum(r * r for r in returns) / len(returns) * (len(returns) / years))
    assert abs(realized_vol - float(vol)) < 0.05 * float(vol)


def test_walks_are_deterministic_per_seed_and_token(registry: PaperTokens) -> None:
    a, b, c = book(registry, 7), book(registry, 7), book(registry, 8)
    times = [T0 + k * 7 * H for k in range(20)]
    for token in (APT_COIN_TYPE, THL, USDC_FA):
        assert [a.usd(token, t) for t in times] == [b.usd(token, t) for t in times]
    assert [a.usd(THL, t) for t in times] != [c.usd(THL, t) for t in times]
    # different tokens move independently (returns differ)
    apt = [a.usd(APT_COIN_TYPE, t) / a.usd(APT_COIN_TYPE, T0) for t in times[1:]]
    thl = [a.usd(THL, t) / a.usd(THL, T0) for t in times[1:]]
    assert apt != thl


def test_adding_a_token_does_not_change_other_paths(registry: PaperTokens) -> None:
    before = book(registry, 11)
    bigger = PaperTokens(registry.tokens)
    bigger.add(Token(decimals=6, symbol="NEW", fa_address="0xabcdef", ui=True))
    after = book(bigger, 11)
    after.usd("0xabcdef", T0 + 5 * H)  # touch the new token first
    times = [T0 + k * H for k in range(0, 48, 5)]
    for token in (APT_COIN_TYPE, THL, USDC_FA):
        assert [before.usd(token, t) for t in times] == [after.usd(token, t) for t in times]


def test_default_start_prices(registry: PaperTokens) -> None:
    prices = book(registry, 5)
    assert prices.usd("0xa", T0) == 5
    for token in registry.tokens:
        start = prices.usd(token.address, T0)
        if "USD" in token.symbol.upper():
            assert start == 1
        elif token.symbol != "APT":
            assert Decimal("0.001") <= start <= 50


def test_stable_coins_stay_near_one(registry: PaperTokens) -> None:
    prices = book(registry, 3)
    week = [T0 + k * H for k in range(0, 7 * 24, 6)]
    for token in (USDC_FA, registry.tokens[1].address):
        assert all(abs(prices.usd(token, t) - 1) < Decimal("0.01") for t in week)


def test_before_origin_there_is_no_price(registry: PaperTokens) -> None:
    prices = book(registry)
    with pytest.raises(NoPrice):
        prices.usd(THL, T0 - H)
    assert prices.usd_visible(THL, T0 - H) is None
    assert prices.change_24h(THL, T0 + H) is None  # 24 h earlier is before the origin
    with pytest.raises(UnknownToken):
        prices.usd("0xdead::nope::NOPE", T0)
    with pytest.raises(UnknownToken):
        prices.usd("garbage", T0)


def test_coin_type_and_fa_share_one_path(registry: PaperTokens) -> None:
    prices = book(registry)
    thl = registry.require(THL)
    assert thl.fa_address is not None
    assert prices.series_for(THL) is prices.series_for(thl.fa_address)
    assert prices.series_for(APT_COIN_TYPE) is prices.series_for("0xa")
    t = T0 + 5 * H
    assert prices.usd(THL, t) == prices.usd(thl.fa_address.upper().replace("0X", "0x"), t)


def test_hidden_tokens_have_internal_but_no_visible_price(registry: PaperTokens) -> None:
    prices = book(registry, 7)
    t = T0 + 30 * H
    hidden = [tok for tok in registry.tokens if not prices.is_visible(tok.address)]
    assert 1 <= len(hidden) <= 25  # ~5 % of ~180 candidates
    for token in hidden:
        assert token.symbol != "APT" and "USD" not in token.symbol.upper()
        assert prices.usd(token.address, t) > 0
        assert prices.usd_visible(token.address, t) is None
        assert prices.native(token.address, t) is None
        assert prices.change_24h(token.address, t) is None
    assert prices.usd_visible(THL, t) == prices.usd(THL, t) or THL in {h.address for h in hidden}
    none_hidden = book(registry, 7, hidden_fraction=Decimal(0))
    assert all(none_hidden.is_visible(tok.address) for tok in registry.tokens)
    # the choice depends only on the seed and the token
    again = book(registry, 7)
    assert [tok for tok in registry.tokens if not again.is_visible(tok.address)] == hidden


def test_specs_override_defaults_and_are_visible(registry: PaperTokens) -> None:
    hidden = next(
        tok.address for tok in registry.tokens if not book(registry, 7).is_visible(tok.address)
    )
    spec = RandomWalkSpec(Decimal("1.25"), Decimal(0), Decimal(0), step_seconds=3600)
    prices = book(registry, 7, specs={"0x000a": spec, hidden: spec})
    assert prices.usd(APT_COIN_TYPE, T0 + 5 * H) == Decimal("1.25")  # zero vol, zero drift
    assert prices.step_start("0xa", T0 + 90 * timedelta(minutes=1)) == T0 + H
    assert prices.usd_visible(hidden, T0) == Decimal("1.25")


# --- replayed series -------------------------------------------------------------------


CSV_TEXT = """timestamp,token,symbol,usdPrice,nativePrice
2026-01-01T02:00:00Z,0xa,APT,5.5,1
2026-01-01T00:00:00Z,0x1::aptos_coin::AptosCoin,APT,5,1
2026-01-01T01:00:00+01:00,0x0a,APT,4.9,1
1767229200,{usdc},USDC,1.01,
2026-01-01T00:00:00Z,{usdc},USDC,1.00,
2026-01-01T02:00:00Z,0xa,APT,5.6,1
2026-01-01T03:00:00,0xa,APT,5,1
2026-01-01T04:00:00Z,not-a-token,X,1,
2026-01-01T05:00:00Z,0xa,APT,-1,
2026-01-01T06:00:00Z,0xa,APT,abc,
garbage,0xa,APT,1,
2026-01-01T08:00:00Z,0xa,APT,{huge},
2026-01-01T07:00:00Z,0xa
2026-01-01T09:00:00Z,{usdc},USDC,0.99,
"""


def write_sample(tmp_path: Path) -> Path:
    path = tmp_path / "series.csv"
    text = CSV_TEXT.format(usdc=USDC_FA, huge="1" * 200_000)  # over the csv field limit
    path.write_text(text, encoding="utf-8")
    return path


def test_load_series_csv_sorts_dedupes_and_counts(tmp_path: Path) -> None:
    paths, report = load_series_csv(write_sample(tmp_path))
    assert report == SeriesReport(rows=14, skipped=7, duplicates=1)
    # without a registry, the coin type and the FA address of APT are different keys
    assert set(paths) == {APT_COIN_TYPE, "0xa", USDC_FA}
    assert paths[APT_COIN_TYPE].prices == [Decimal(5)]
    apt = paths["0xa"]
    assert apt.times == [T0, T0 + 2 * H]  # 01:00+01:00 is 00:00Z
    assert apt.prices == [Decimal("4.9"), Decimal("5.6")]  # the later duplicate (5.6) wins
    usdc = paths[USDC_FA]
    assert usdc.times == [T0, T0 + H, T0 + 9 * H]  # 1767229200 = 2026-01-01T01:00Z
    assert usdc.prices == [Decimal("1.00"), Decimal("1.01"), Decimal("0.99")]


def test_load_series_csv_with_registry_keys(tmp_path: Path, registry: PaperTokens) -> None:
    paths, report = load_series_csv(write_sample(tmp_path), key_of=registry.key_of)
    assert report == SeriesReport(rows=14, skipped=7, duplicates=2)
    assert set(paths) == {APT_COIN_TYPE, USDC_FA}
    assert paths[APT_COIN_TYPE].prices == [Decimal("4.9"), Decimal("5.6")]
    prices = book(registry, replayed=paths)
    assert prices.usd("0xa", T0 + 3 * H) == Decimal("5.6")


def test_load_series_csv_missing_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("timestamp,token\n2026-01-01T00:00:00Z,0xa\n", encoding="utf-8")
    with pytest.raises(ValueError, match="usdPrice"):
        load_series_csv(path)


def test_write_then_load_round_trip(tmp_path: Path) -> None:
    rows = [
        SeriesRow(T0 + H, "0x0a", Decimal("0.00000012"), "APT", Decimal("1")),
        SeriesRow(T0, USDC_FA, Decimal("1E+2"), None, None),
        SeriesRow(T0 + timedelta(microseconds=5), "0xa", Decimal("3")),
    ]
    path = tmp_path / "out.csv"
    assert write_series_csv(path, rows) == 3
    text = path.read_text(encoding="utf-8")
    assert "0.00000012" in text and "2026-01-01T01:00:00Z" in text and "E" not in text
    paths, report = load_series_csv(path)
    assert report == SeriesReport(rows=3, skipped=0, duplicates=0)
    assert paths["0xa"].prices == [Decimal(3), Decimal("0.00000012")]
    assert paths["0xa"].times == [T0 + timedelta(microseconds=5), T0 + H]
    assert paths[USDC_FA].prices == [Decimal(100)]
    with pytest.raises(TypeError):
        SeriesRow(T0, "0xa", 1.5)  # type: ignore[arg-type]


def hand_built(registry: PaperTokens) -> PriceBook:
    apt = PricePath([T0, T0 + 12 * H, T0 + 24 * H], [Decimal(5), Decimal("5.5"), Decimal(4)])
    thl = PricePath([T0, T0 + 24 * H], [Decimal(2), Decimal("1.95")])
    registry_fa = registry.require(THL).fa_address
    assert registry_fa is not None
    return book(registry, replayed={"0xa": apt, registry_fa: thl})


def test_change_24h_and_native_on_replayed_series(registry: PaperTokens) -> None:
    prices = hand_built(registry)
    day = T0 + 24 * H
    assert prices.usd(THL, day) == Decimal("1.95")  # replay keyed by FA, asked by coin type
    assert prices.change_24h(THL, day) == Decimal("-2.5")
    assert prices.change_24h(APT_COIN_TYPE, day) == Decimal(-20)
    assert prices.change_24h(THL, day - H) is None  # 24 h earlier is before the series
    assert prices.change_24h(THL, day + 23 * H) == Decimal("-2.5")
    assert prices.change_24h(THL, day + 24 * H) == 0
    assert prices.native(THL, day) == Decimal("0.4875")
    assert prices.native(THL, T0 + 12 * H) == Decimal("0.363636363636")  # 2 / 5.5, 12 digits
    assert prices.native("0xa", day) == 1
    with pytest.raises(NoPrice):
        prices.usd(THL, T0 - timedelta(seconds=1))
    assert prices.step_start(APT_COIN_TYPE, day - H) == T0 + 12 * H
    assert prices.is_visible(THL)


def test_two_replays_for_one_token_are_refused(registry: PaperTokens) -> None:
    one, two = PricePath([T0], [Decimal(1)]), PricePath([T0], [Decimal(2)])
    prices = book(registry, replayed={APT_COIN_TYPE: one, "0xa": two})
    with pytest.raises(ValueError, match="two replayed"):
        prices.usd("0xa", T0)


def test_unregistered_replayed_token_is_priced(registry: PaperTokens) -> None:
    prices = book(registry, replayed={"0xbeef": PricePath([T0], [Decimal(3)])})
    assert prices.usd("0x0beef", T0 + H) == 3


def test_next_change_after_over_tokens(registry: PaperTokens) -> None:
    prices = hand_built(registry)
    assert prices.next_change_after([APT_COIN_TYPE, THL], T0, T0 + 30 * H) == T0 + 12 * H
    assert prices.next_change_after([THL], T0, T0 + 30 * H) == T0 + 24 * H
    assert prices.next_change_after([THL], T0, T0 + 23 * H) is None
    assert prices.next_change_after([THL], T0 + 24 * H, T0 + 99 * H) is None
    # a 60 s walk changes every minute
    after = T0 + timedelta(seconds=90)
    assert prices.next_change_after([USDC_FA, THL], after, after + H) == T0 + timedelta(seconds=120)
    assert prices.next_change_after([], T0, T0 + H) is None


# --- first_ratio_at_least --------------------------------------------------------------


def brute_force(
    prices: PriceBook, num: str, den: str, threshold: Decimal, after: datetime, until: datetime
) -> datetime | None:
    points: set[datetime] = set()
    for token in (num, den):
        path = prices.series_for(token)
        path.at(until)  # make a walk generate the window
        points.update(t for t in path.times if after < t <= until)
    for t in sorted(points):
        try:
            if at_least(prices.usd(num, t), threshold, prices.usd(den, t)):
                return t
        except NoPrice:
            continue
    return None


def test_first_ratio_matches_brute_force(registry: PaperTokens) -> None:
    rng = random.Random(1234)
    other_grid = RandomWalkSpec(Decimal(2), Decimal(0), Decimal("1.5"), step_seconds=97)
    replay = PricePath(
        [T0 + timedelta(minutes=m) for m in range(30, 600, 45)],
        [Decimal(rng.randint(150, 250)) / 100 for _ in range(30, 600, 45)],
    )
    pairs = [(APT_COIN_TYPE, USDC_FA), (THL, APT_COIN_TYPE), ("0xbeef", THL), (THL, "0xcafe")]
    found = never = 0
    for seed in range(6):
        prices = book(registry, seed, specs={"0xbeef": other_grid}, replayed={"0xcafe": replay})
        for num, den in pairs:
            after = T0 + timedelta(seconds=rng.randint(0, 3 * 3600))
            until = after + timedelta(seconds=rng.randint(600, 5 * 3600))
            start = prices.usd(num, after) / prices.usd(den, after)
            for factor in ("0.97", "0.999", "1", "1.001", "1.01", "1.03", "1.2"):
                threshold = (start * Decimal(factor)).quantize(Decimal("1E-18"))
                expected = brute_force(prices, num, den, threshold, after, until)
                got = prices.first_ratio_at_least(num, den, threshold, after, until)
                assert got == expected, (seed, num, den, factor)
                found += got is not None
                never += got is None
    assert found > 20 and never > 20  # both outcomes exercised


def test_first_ratio_never_crossed_and_edges(registry: PaperTokens) -> None:
    prices = book(registry, 3)
    after, until = T0 + H, T0 + 3 * H
    assert prices.first_ratio_at_least(APT_COIN_TYPE, USDC_FA, Decimal(1000), after, until) is None
    inf = Decimal("Infinity")
    assert prices.first_ratio_at_least(APT_COIN_TYPE, USDC_FA, inf, after, until) is None
    assert prices.first_ratio_at_least(APT_COIN_TYPE, USDC_FA, Decimal(0), until, after) is None
    # any threshold below the ratio fills at the first change point strictly after `after`
    got = prices.first_ratio_at_least(APT_COIN_TYPE, USDC_FA, Decimal(0), after, until)
    assert got == after + timedelta(minutes=1)
    with pytest.raises(ValueError):
        prices.first_ratio_at_least(APT_COIN_TYPE, USDC_FA, 1.5, after, until)  # type: ignore[arg-type]


def test_first_ratio_on_hand_built_series(registry: PaperTokens) -> None:
    prices = hand_built(registry)
    thl = THL
    # THL/APT: 0.4 at T0, 2/5.5 ≈ 0.3636 from 12 h, 1.95/4 = 0.4875 from 24 h
    assert prices.first_ratio_at_least(thl, "0xa", Decimal("0.48"), T0, T0 + 48 * H) == T0 + 24 * H
    assert prices.first_ratio_at_least(thl, "0xa", Decimal("0.36"), T0, T0 + 48 * H) == T0 + 12 * H
    assert (
        prices.first_ratio_at_least(thl, "0xa", Decimal("0.4875"), T0, T0 + 24 * H) == T0 + 24 * H
    )
    assert prices.first_ratio_at_least(thl, "0xa", Decimal("0.48751"), T0, T0 + 48 * H) is None
    assert prices.first_ratio_at_least(thl, "0xa", Decimal("0.1"), T0 + 24 * H, T0 + 48 * H) is None
