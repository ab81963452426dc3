"""`bot.cli.orders_view`: the `bot orders` table and `orders show`, from journal views."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from bot.cli.orders_view import duration, order_row, show_json, show_lines, table_lines
from bot.journal import FillView, OrderView
from bot.price_view import PriceConvention

T0 = datetime(2026, 3, 1, tzinfo=UTC)
APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
ODD = "0x" + "ab" * 32
WALLET = "0x" + "01" * 32


def order(**fields: object) -> OrderView:
    base: dict[str, object] = {
        "kind": "limit",
        "order_id": "0x" + "12" * 32,
        "wallet": WALLET,
        "from_token": USDC,
        "to_token": APT,
        "status": "active",
        "amount_total": Decimal(25),
        "row_id": 1,
        "created_at": T0,
        "updated_at": T0,
        "last_seen_at": T0,
    }
    return OrderView(**{**base, **fields})  # type: ignore[arg-type]


def prices() -> PriceConvention:
    from bot.paper.core.registry import PaperTokens

    return PriceConvention(book=PaperTokens.from_token_list().book, short_names=True)


def test_one_pair_puts_the_unit_in_the_headers() -> None:
    rows = [
        order(rate=Decimal("0.2028"), amount_spent=Decimal("12.5")),
        order(
            order_id="0x" + "34" * 32,
            kind="dca",
            from_token=APT,
            to_token=USDC,
            amount_total=Decimal(4),
            amount_spent=Decimal(2),
            to_amount_received=Decimal("10.006"),
            orders_total=4,
            orders_completed=2,
            min_rate=Decimal(4),
            max_rate=Decimal("Infinity"),
        ),
    ]
    header, limit, dca = table_lines(rows, prices(), T0 + timedelta(hours=3))
    assert "LIMIT (USDC per APT)" in header and "AVG PRICE (USDC per APT)" in header
    assert limit.split() == [
        "0x1212121212", "limit", "USDC→APT", "12.5/25", "USDC", "≤", "4.931", "-", "active", "3h",
    ]  # fmt: skip
    assert dca.split() == [
        "0x3434343434", "dca", "APT→USDC", "2/4", "slices", "≥", "4", "5.003", "active", "3h",
    ]  # fmt: skip


def test_mixed_pairs_put_the_unit_in_each_cell() -> None:
    rows = [
        order(rate=Decimal("0.2028")),
        order(order_id="0x" + "56" * 32, from_token=ODD, to_token=APT, rate=Decimal(2)),
    ]
    header, first, second = table_lines(rows, prices(), T0)
    assert "LIMIT " in header and "(USDC per APT)" not in header
    assert "≤ 4.931 USDC per APT" in first
    # An unknown token against APT: APT is listed, so prices are in APT, names shortened.
    assert "0xabababab…→APT" in second and "≥ 2 APT per 0xabababab…" in second


def test_a_row_as_json_has_exact_amounts_and_the_unit() -> None:
    row = order_row(
        order(
            rate=Decimal("0.2028"),
            amount_spent=Decimal(25),
            to_amount_received=Decimal("5.07180000"),
            status="filled",
            expire_at=T0 + timedelta(days=1),
        ),
        prices(),
        T0 + timedelta(minutes=5),
    )
    assert row["price_unit"] == "USDC per APT"
    # 25 / 5.0718 = 4.92921…: as many digits as the more precise amount (5).
    assert row["limit_price"] == "≤ 4.931" and row["average_price"] == "4.9292"
    assert row["to_amount_received"] == "5.0718" and row["age_seconds"] == 300
    assert row["expire_at"] == "2026-03-02T00:00:00+00:00"


def test_show_names_the_limit_the_expiry_and_each_fill_with_its_time() -> None:
    the_order = order(
        rate=Decimal("0.2028"),
        amount_spent=Decimal(10),
        to_amount_received=Decimal("2.02"),
        status="partially_filled",
        expire_at=T0 + timedelta(days=1),
    )
    fills = [
        FillView(
            tx_id="0xf1",
            type="filled",
            tx_number=1,
            from_amount=Decimal(10),
            to_amount=Decimal("2.02"),
            time=T0 + timedelta(minutes=20),
            recorded_at=T0 + timedelta(minutes=21),
        ),
        FillView(tx_id="0xf2", type="attempted", recorded_at=T0 + timedelta(minutes=30)),
    ]
    book = prices()
    now = T0 + timedelta(hours=1)
    data = show_json(the_order, [], fills, book, now)
    lines = show_lines(data, the_order, book, now)
    assert "limit price    buy APT at ≤ 4.931 USDC per APT" in lines
    assert "expires        2026-03-02T00:00:00+00:00 (in 23h)" in lines
    # 10 / 2.02 = 4.9504…: beyond the limit of 4.931, since the keeper's fee is in the 10.
    assert "average price  4.95 USDC per APT (the keeper's fees included)" in lines
    assert (
        "  2026-03-01T00:20:00+00:00  #1 filled    10 USDC → 2.02 APT at 4.95 USDC per APT" in lines
    )
    assert "  2026-03-01T00:30:00+00:00 (recorded)  #None attempted - USDC → - APT" in lines


def test_duration() -> None:
    assert [duration(s) for s in (-5, 0, 59, 60, 3_599, 3_600, 86_399, 86_400)] == [
        "0s", "0s", "59s", "1m", "59m", "1h", "23h", "1d",
    ]  # fmt: skip


def test_a_filled_limit_orders_average_is_explained_under_the_table() -> None:
    filled = order(
        rate=Decimal("0.2028"),
        amount_spent=Decimal(25),
        to_amount_received=Decimal("5.0718"),
        status="filled",
    )
    _header, row, note = table_lines([filled], prices(), T0)
    assert row.split()[5:7] == ["≤", "4.931"] and row.split()[7] == "4.9292"
    assert note == (
        "AVG PRICE: what was sold (the keeper's fees included) per unit received, so a filled "
        "limit order's can lie a little beyond its LIMIT"
    )
    assert len(table_lines([order(rate=Decimal("0.2028"))], prices(), T0)) == 2  # none filled
