"""Trade exports: hand-checked rows of each layout, exact amounts, and round trips.

Round trips: our CSV read back gives the same trades and the same accounting figures to
the last digit; Koinly's and CoinTracking's files, read with the `csv` module, give each
token's net change (what the journal says left and reached the wallet) to the base unit.
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.accounting import Fee, FeeKind, Figures, PriceBook, PricePoint, Trade, account
from bot.accounting.exports import (
    APT_COIN_TYPE,
    COINTRACKING_COLUMNS,
    CSV_COLUMNS,
    KOINLY_COLUMNS,
    ExportError,
    ExportFormat,
    read_csv,
    render,
    tool_rows,
    unnamed,
)

T0 = datetime(2026, 5, 1, 12, 0, 7, 250_000, tzinfo=UTC)
APT = APT_COIN_TYPE
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
GUI = "0x" + "9a" * 32 + "::gui::GUI"
NAMES = {APT: "APT", USDC: "USDC"}
HASH = "0x" + "c4" * 32
BOOK = PriceBook.of_points(
    {
        USDC: [PricePoint(T0 - timedelta(days=1), Decimal("1"))],
        APT: [PricePoint(T0 - timedelta(days=1), Decimal("5"))],
    }
)


def _slice(**changes: object) -> Trade:
    """A DCA slice: 25 USDC (0.05 of it the keeper's) for 4.99 APT."""
    base: dict[str, object] = {
        "time": T0,
        "strategy": "dca-apt",
        "wallet": "0xw",
        "ref": "dca:0xd1#1",
        "sold_token": USDC,
        "sold": Decimal("25"),
        "bought_token": APT,
        "bought": Decimal("4.99"),
        "fees": (Fee(FeeKind.KEEPER, USDC, Decimal("0.05")),),
        "label": HASH,
    }
    base.update(changes)
    return Trade(**base)  # type: ignore[arg-type]


def _table(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_koinly_row_of_a_dca_slice() -> None:
    text = render(ExportFormat.KOINLY, [_slice()], BOOK, NAMES)
    header, row = _table(text)
    assert tuple(header) == KOINLY_COLUMNS
    # The keeper fee leaves the sent amount for the fee column: 24.95 + 0.05 = 25 left.
    # Net worth: the 24.95 USDC sent, at 1 USD. Times: UTC, to the minute.
    assert row == [
        "2026-05-01 12:00 UTC",
        "24.95",
        "USDC",
        "4.99",
        "APT",
        "0.05",
        "USDC",
        "24.95",
        "USD",
        "",
        f"dca-apt: dca:0xd1#1 ({HASH})",
        HASH,
    ]


def test_cointracking_row_of_a_dca_slice() -> None:
    text = render(ExportFormat.COINTRACKING, [_slice()], BOOK, NAMES)
    assert not text.endswith("\n")  # a final newline imports as an empty row
    header, row = _table(text)
    assert tuple(header) == COINTRACKING_COLUMNS
    assert row == [
        "Trade",
        "4.99",
        "APT",
        "24.95",
        "USDC",
        "0.05",
        "USDC",
        "Aptos 0xw",
        "dca-apt",
        f"dca:0xd1#1 {HASH}",
        "2026-05-01 12:00:07",
        "dca:0xd1#1",
        "24.95",
        "24.95",
    ]


def test_our_csv_row_has_every_field() -> None:
    trade = _slice(gas_octas=1_234, gas_usd=Decimal("0.0000617"), sold_usd_price=Decimal("0.9998"))
    header, row = _table(render(ExportFormat.CSV, [trade], BOOK, NAMES))
    assert tuple(header) == CSV_COLUMNS
    data = dict(zip(header, row, strict=True))
    assert data["time"] == "2026-05-01T12:00:07.250000+00:00"
    assert (data["sold_symbol"], data["sold"], data["bought_symbol"]) == ("USDC", "25", "APT")
    assert data["keeper_fees"] == f"0.05 {USDC} 0.04999"  # at the trade's own USDC price
    assert (data["provider_fees"], data["platform_fees"]) == ("", "")
    assert (data["fees_usd"], data["fees_unvalued"]) == ("0.04999", "0")
    assert (data["gas_octas"], data["gas_apt"], data["gas_usd"]) == (
        "1234",
        "0.00001234",
        "0.0000617",
    )
    assert (data["sold_usd_price"], data["bought_usd_price"]) == ("0.9998", "5")
    assert data["value_usd"] == "24.995"  # 25 × 0.9998, exact


def test_gas_goes_to_the_fee_column_and_a_third_tokens_fee_to_a_row_of_its_own() -> None:
    trade = _slice(
        fees=(
            Fee(FeeKind.KEEPER, USDC, Decimal("0.05")),
            Fee(FeeKind.PLATFORM, GUI, Decimal("3"), usd=Decimal("0.3")),
        ),
        gas_octas=50_000,
        gas_usd=Decimal("0.0025"),
    )
    first, second = tool_rows(trade, BOOK)
    # On-top outflows first: the GUI fee takes the fee column, the gas a row of its own;
    # the keeper fee stays inside the 25 USDC sent.
    assert (first.sent, first.received, first.fee) == (
        (Decimal("25"), USDC),
        (Decimal("4.99"), APT),
        (Decimal("3"), GUI),
    )
    assert first.value_usd == Decimal("25")
    assert (second.sent, second.received, second.fee) == ((Decimal("0.0005"), APT), None, None)
    assert (second.fee_only, second.value_usd) == ("gas", Decimal("0.0025"))
    koinly = _table(render(ExportFormat.KOINLY, [trade], BOOK, NAMES))
    assert koinly[2][1:3] == ["0.0005", "APT"] and koinly[2][9] == "cost"
    assert koinly[1][5:7] == ["3", GUI]  # unknown to the book: its identity
    tracking = _table(render(ExportFormat.COINTRACKING, [trade], BOOK, NAMES))
    assert tracking[2][0] == "Other Fee" and tracking[2][3:5] == ["0.0005", "APT"]
    assert tracking[2][11] == f"dca:0xd1#1:gas:{APT}"  # Tx-IDs stay unique


def test_a_fee_in_the_bought_token_is_added_back_to_the_received_amount() -> None:
    trade = _slice(fees=(Fee(FeeKind.PROVIDER, APT, Decimal("0.01")),))
    (row,) = tool_rows(trade, BOOK)
    # 4.99 APT reached the wallet after a 0.01 APT fee: received 5, fee 0.01 APT.
    assert (row.sent, row.received, row.fee) == (
        (Decimal("25"), USDC),
        (Decimal("5"), APT),
        (Decimal("0.01"), APT),
    )


def test_amounts_are_exact_and_never_in_exponent_notation() -> None:
    tiny = Decimal("1E-18")
    huge = Decimal("123456789012345678901234567890.000000000000000001")
    trade = _slice(sold=huge, bought=tiny, fees=())
    for fmt in ExportFormat:
        text = render(fmt, [trade], BOOK, NAMES)
        assert "0.000000000000000001" in text
        assert "123456789012345678901234567890.000000000000000001" in text
        assert "E-" not in text and "E+" not in text


def test_a_token_without_a_symbol_is_named_by_its_identity_and_listed() -> None:
    trade = _slice(bought_token=GUI)
    assert unnamed([trade], NAMES) == [GUI]
    assert unnamed([_slice(gas_octas=1)], {USDC: "USDC"}) == [APT]
    row = _table(render(ExportFormat.KOINLY, [trade], BOOK, NAMES))[1]
    assert row[4] == GUI


def test_reading_back_refuses_what_is_not_ours() -> None:
    with pytest.raises(ExportError, match="not a trades export"):
        read_csv("Date,Sent Amount\n")
    good = render(ExportFormat.CSV, [_slice()], BOOK, NAMES)
    with pytest.raises(ExportError, match=r"row 2: sold: not a plain decimal: '2\.5E\+1'"):
        read_csv(good.replace(",25,", ",2.5E+1,", 1))
    with pytest.raises(ExportError, match="row 2: sold: not a decimal"):
        read_csv(good.replace(",25,", ",lots,", 1))
    with pytest.raises(ExportError, match="row 2: gas_octas"):
        read_csv(good.replace(",0,0,,", ",-1,0,,", 1))


def test_text_a_spreadsheet_would_run_stays_text() -> None:
    trade = _slice(label='=HYPERLINK("http://x")', strategy="@risky")
    for fmt in ExportFormat:
        text = render(fmt, [trade], BOOK, NAMES)
        assert ",=" not in text and ",@" not in text and "'@risky" in text
    (back,) = read_csv(render(ExportFormat.CSV, [trade], BOOK, NAMES))
    assert (back.label, back.strategy) == (trade.label, "@risky")
    with pytest.raises(ExportError, match="row 3: not 22 fields"):
        read_csv(render(ExportFormat.CSV, [trade], BOOK, NAMES) + "a,b\r\n")


# -- round trips over generated trades -----------------------------------------------------

TOKENS = (APT, USDC, GUI)
amounts = st.integers(min_value=0, max_value=10**15).map(lambda n: Decimal(n).scaleb(-8))
positive = st.integers(min_value=1, max_value=10**15).map(lambda n: Decimal(n).scaleb(-8))
prices = st.integers(min_value=0, max_value=10**9).map(lambda n: Decimal(n).scaleb(-4))


@st.composite
def trades(draw: st.DrawFn) -> Trade:
    """Any trade between two of the tokens, with fees, gas, own prices sometimes."""
    sold, bought = draw(st.permutations(TOKENS))[:2]
    fees = tuple(
        Fee(
            draw(st.sampled_from(list(FeeKind))),
            draw(st.sampled_from(TOKENS)),
            draw(amounts),
            draw(st.none() | prices),
        )
        for _ in range(draw(st.integers(0, 3)))
    )
    gas = draw(st.integers(0, 10**7))
    return Trade(
        time=T0 + timedelta(microseconds=draw(st.integers(0, 10**13))),
        strategy=draw(st.sampled_from(("dca", 'ladder, "quoted"'))),
        wallet="0xw",
        ref=f"r{draw(st.integers(0, 10**6))}",
        sold_token=sold,
        sold=draw(positive),
        bought_token=bought,
        bought=draw(positive),
        fees=fees,
        gas_octas=gas,
        gas_usd=draw(st.none() | prices) if gas else None,
        sold_usd_price=draw(st.none() | prices),
        bought_usd_price=draw(st.none() | prices),
        label=draw(st.sampled_from(("", HASH, "intent 7; a, b", "=HYPERLINK(1)", "'-x"))),
    )


def _figures(trades: list[Trade], book: PriceBook) -> Figures:
    return account(trades, book, valued_at=T0 + timedelta(days=200)).totals


def _net_by_name(trades: list[Trade], names: dict[str, str]) -> dict[str, Decimal]:
    """What the journal says each token's balance changed by: −sold, +bought, −on top."""
    net: dict[str, Decimal] = {}

    def add(token: str, amount: Decimal) -> None:
        name = names.get(token, token)
        net[name] = net.get(name, Decimal(0)) + amount

    for t in trades:
        add(t.sold_token, -t.sold)
        add(t.bought_token, t.bought)
        for fee in t.fees:
            if fee.token not in (t.sold_token, t.bought_token):
                add(fee.token, -fee.amount)
        add(APT, -t.gas_apt)
    return {k: v for k, v in net.items() if v}


def _net_of_tool(text: str, received: str, sent: str) -> dict[str, Decimal]:
    net: dict[str, Decimal] = {}
    for row in csv.DictReader(io.StringIO(text, newline="")):
        for amount, currency, sign in (
            (f"{received} Amount", f"{received} Currency", 1),
            (f"{sent} Amount", f"{sent} Currency", -1),
            ("Fee Amount" if "Fee Amount" in row else "Fee", "Fee Currency", -1),
        ):
            if row[amount]:
                net[row[currency]] = net.get(row[currency], Decimal(0)) + sign * Decimal(
                    row[amount]
                )
    return {k: v for k, v in net.items() if v}


@settings(max_examples=150, deadline=None)
@given(st.lists(trades(), max_size=12), st.booleans())
def test_every_layout_round_trips_to_the_base_unit(batch: list[Trade], name_gui: bool) -> None:
    names = {**NAMES, GUI: "GUI"} if name_gui else NAMES
    ours = read_csv(render(ExportFormat.CSV, batch, BOOK, names))
    ordered = sorted(batch, key=lambda t: t.time)
    assert [(t.time, t.ref, t.strategy, t.label) for t in ours] == [
        (t.time, t.ref, t.strategy, t.label) for t in ordered
    ]
    for back, original in zip(ours, ordered, strict=True):
        assert (back.sold, back.bought, back.gas_octas, back.gas_usd) == (
            original.sold,
            original.bought,
            original.gas_octas,
            original.gas_usd,
        )
        assert sorted((f.kind, f.token, f.amount) for f in back.fees) == sorted(
            (f.kind, f.token, f.amount) for f in original.fees
        )
    # Accounted again without the price book (the export carries the prices it used):
    # the same figures, USD included, to the last digit.
    assert _figures(ours, PriceBook()) == _figures(batch, BOOK)
    expected = _net_by_name(batch, names)
    koinly = render(ExportFormat.KOINLY, batch, BOOK, names)
    assert _net_of_tool(koinly, "Received", "Sent") == expected
    tracking = render(ExportFormat.COINTRACKING, batch, BOOK, names)
    assert _net_of_tool(tracking, "Buy", "Sell") == expected
