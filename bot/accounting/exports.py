"""Trade exports: our own full-detail CSV, and Koinly's and CoinTracking's import layouts.

Pure: trades and a price book in, CSV text out (and our CSV back in as trades); the file
is written by `bot.app.export`. One row per trade (`Trade`), in time order.

Amounts are written exactly as the journal holds them: plain decimal strings, never a
float, never an exponent, never rounded (`bot.money.format_decimal`); USD values are the
accounting's own (docs/accounting.md: the trade's own prices, else the price book's) and
exact too. A token is written by its symbol (`names`: identity → symbol, from the token
book); a token the book does not know is written by its full identity (coin type or
address) and `unnamed` lists them, so the caller can say so.

Formats (docs/accounting.md, "bot export trades"):

- `csv`: ours, every field of the trade; `read_csv` reads it back into trades.
- `koinly`: Koinly's "universal" custom CSV (columns Date, Sent Amount, Sent Currency,
  Received Amount, Received Currency, Fee Amount, Fee Currency, Net Worth Amount, Net
  Worth Currency, Label, Description, TxHash; dates "YYYY-MM-DD HH:MM UTC", in UTC):
  https://support.koinly.io/en/articles/9489976-how-to-create-a-custom-csv-file-with-your-data
  (formerly https://help.koinly.io/en/articles/3662999-how-can-i-import-my-own-custom-csv-file).
- `cointracking`: CoinTracking's CSV import ("Type", "Buy Amount", "Buy Currency", "Sell
  Amount", "Sell Currency", "Fee", "Fee Currency", "Exchange", "Trade-Group", "Comment",
  "Date", then the optional "Tx-ID", "Buy Value in your Account Currency", "Sell Value
  in your Account Currency"): https://cointracking.info/import/import_csv/ (as quoted by
  exporters importing into it, e.g. github.com/prikhi/cointracking-imports, which also
  notes that a final newline makes CoinTracking import an empty row: we write none).

Fees in the tools' layouts: both deduct the Fee column from the balance on top of the
sent/sold amount. So per trade, one token's outflows go to the Fee column — gas and fees
paid on top (a third token) first, else the fees in the sold token, else those in the
bought token — with the sent amount net of the fees it held (received amount gross of
those kept back); other fees in the sold or bought token stay inside the amounts (what
left and reached the wallet is unchanged). A second on-top token (gas and a fee in a third
token) gets its own row: Koinly label `cost`, CoinTracking type `Other Fee`. The net
change per token of every export equals the journal's, to the base unit. A row's USD value
(Koinly "Net Worth Amount", CoinTracking's value columns) is that of its sent amount as
written (the accounting's rule applied to it: at the sold token's price, else the received
amount at the bought token's), the fee column being valued by the tool on its own; an
extra row's value is its outflow's (gas USD, the fee's USD), blank when not known.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Final

from bot.accounting.exact import EXACT, ZERO, total
from bot.accounting.prices import PriceBook
from bot.accounting.records import Fee, FeeKind, Trade
from bot.accounting.valuing import Valuer
from bot.clock import parse_utc
from bot.domain import APT_COIN_TYPE
from bot.money import format_decimal

__all__ = [
    "APT_COIN_TYPE",
    "COINTRACKING_COLUMNS",
    "CSV_COLUMNS",
    "KOINLY_COLUMNS",
    "ExportError",
    "ExportFormat",
    "ToolRow",
    "read_csv",
    "render",
    "tool_rows",
    "unnamed",
]

"""APT's coin type: the token gas is paid in (its octas: `Trade.gas_octas`)."""
USD: Final = "USD"
KOINLY_DATE: Final = "%Y-%m-%d %H:%M UTC"
COINTRACKING_DATE: Final = "%Y-%m-%d %H:%M:%S"
_HASH: Final = re.compile(r"0x[0-9a-fA-F]{64}")
_FORMULA_STARTS: Final = frozenset("=+-@\t\r'")


class ExportFormat(StrEnum):
    """The layouts `bot export trades` writes."""

    CSV = "csv"
    KOINLY = "koinly"
    COINTRACKING = "cointracking"


class ExportError(ValueError):
    """Our CSV could not be read back: names the row and the field."""


CSV_COLUMNS: Final = (
    "time",
    "strategy",
    "wallet",
    "ref",
    "label",
    "sold_token",
    "sold_symbol",
    "sold",
    "bought_token",
    "bought_symbol",
    "bought",
    *(f"{kind}_fees" for kind in FeeKind),
    "fees_usd",
    "fees_unvalued",
    "gas_octas",
    "gas_apt",
    "gas_usd",
    "sold_usd_price",
    "bought_usd_price",
    "value_usd",
)
"""Our CSV: one row per trade. `<kind>_fees`: `amount token usd` triples joined by `; `."""

KOINLY_COLUMNS: Final = (
    "Date",
    "Sent Amount",
    "Sent Currency",
    "Received Amount",
    "Received Currency",
    "Fee Amount",
    "Fee Currency",
    "Net Worth Amount",
    "Net Worth Currency",
    "Label",
    "Description",
    "TxHash",
)
COINTRACKING_COLUMNS: Final = (
    "Type",
    "Buy Amount",
    "Buy Currency",
    "Sell Amount",
    "Sell Currency",
    "Fee",
    "Fee Currency",
    "Exchange",
    "Trade-Group",
    "Comment",
    "Date",
    "Tx-ID",
    "Buy Value in your Account Currency",
    "Sell Value in your Account Currency",
)


def _text(value: Decimal | None) -> str:
    return "" if value is None else format_decimal(value)


def _in_force(own: Decimal | None, token: str, trade: Trade, prices: PriceBook) -> Decimal | None:
    return own if own is not None else prices.usd_at(token, trade.time)


def _valuation(trade: Trade, prices: PriceBook) -> tuple[Decimal | None, list[Decimal | None]]:
    """The trade's USD value and its fees' (in order) as the accounting values them.

    Asked of the accounting's own `Valuer`, so the rule has one home; None: unvalued.
    """
    value, fee_usd = Valuer(prices).value(trade)
    return value, list(fee_usd)


def unnamed(trades: Iterable[Trade], names: Mapping[str, str]) -> list[str]:
    """The tokens of `trades` (fees and gas included) `names` has no symbol for, sorted."""
    seen: set[str] = set()
    for trade in trades:
        seen.update((trade.sold_token, trade.bought_token), (f.token for f in trade.fees))
        if trade.gas_octas:
            seen.add(APT_COIN_TYPE)
    return sorted(t for t in seen if t not in names)


# -- our CSV -------------------------------------------------------------------------------


def _csv_row(trade: Trade, prices: PriceBook, names: Mapping[str, str]) -> list[str]:
    value, fee_usd = _valuation(trade, prices)
    by_kind: dict[FeeKind, list[str]] = {kind: [] for kind in FeeKind}
    for fee, usd in zip(trade.fees, fee_usd, strict=True):
        triple = f"{format_decimal(fee.amount)} {fee.token}"
        by_kind[fee.kind].append(triple if usd is None else f"{triple} {format_decimal(usd)}")
    return [
        trade.time.isoformat(),
        trade.strategy,
        trade.wallet,
        trade.ref,
        trade.label,
        trade.sold_token,
        names.get(trade.sold_token, trade.sold_token),
        format_decimal(trade.sold),
        trade.bought_token,
        names.get(trade.bought_token, trade.bought_token),
        format_decimal(trade.bought),
        *("; ".join(by_kind[kind]) for kind in FeeKind),
        format_decimal(total(u for u in fee_usd if u is not None)),
        str(sum(1 for u in fee_usd if u is None)),
        str(trade.gas_octas),
        format_decimal(trade.gas_apt),
        _text(trade.gas_usd),
        _text(_in_force(trade.sold_usd_price, trade.sold_token, trade, prices)),
        _text(_in_force(trade.bought_usd_price, trade.bought_token, trade, prices)),
        _text(value),
    ]


def _decimal(row: Mapping[str, str], name: str, line: int) -> Decimal | None:
    text = row.get(name, "")
    if text == "":
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ExportError(f"row {line}: {name}: not a decimal: {text!r}") from None
    if not value.is_finite() or "e" in text.lower():
        raise ExportError(f"row {line}: {name}: not a plain decimal: {text!r}")
    return value


def _fees(row: Mapping[str, str], line: int) -> tuple[Fee, ...]:
    fees: list[Fee] = []
    for kind in FeeKind:
        name = f"{kind}_fees"
        for item in filter(None, (part.strip() for part in row.get(name, "").split(";"))):
            parts = item.split(" ")
            if len(parts) not in (2, 3):
                raise ExportError(f"row {line}: {name}: not `amount token [usd]`: {item!r}")
            amount = _decimal({name: parts[0]}, name, line)
            usd = _decimal({name: parts[2]}, name, line) if len(parts) == 3 else None
            fees.append(Fee(kind, parts[1], amount or ZERO, usd))
    return tuple(fees)


def read_csv(text: str) -> list[Trade]:
    """The trades of our CSV (as `render(ExportFormat.CSV, …)` wrote it).

    Each fee carries the USD value the export gave it, each trade the USD prices it was
    valued at, so accounting the trades read back gives the export's figures exactly.

    Raises:
        ExportError: a header that is not ours, or a row that does not parse (named).
    """
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if tuple(reader.fieldnames or ()) != CSV_COLUMNS:
        raise ExportError(f"not a trades export: header {reader.fieldnames!r}")
    trades: list[Trade] = []
    for cells in reader:
        line = reader.line_num
        if None in cells or None in cells.values():
            raise ExportError(f"row {line}: not {len(CSV_COLUMNS)} fields")
        row = {name: text.removeprefix("'") for name, text in cells.items()}
        try:
            gas = row["gas_octas"]
            if not gas.isdigit():
                raise ExportError(f"row {line}: gas_octas: not a whole number: {gas!r}")
            trades.append(
                Trade(
                    time=parse_utc(row["time"]),
                    strategy=row["strategy"],
                    wallet=row["wallet"],
                    ref=row["ref"],
                    label=row["label"],
                    sold_token=row["sold_token"],
                    sold=_decimal(row, "sold", line) or ZERO,
                    bought_token=row["bought_token"],
                    bought=_decimal(row, "bought", line) or ZERO,
                    fees=_fees(row, line),
                    gas_octas=int(gas),
                    gas_usd=_decimal(row, "gas_usd", line),
                    sold_usd_price=_decimal(row, "sold_usd_price", line),
                    bought_usd_price=_decimal(row, "bought_usd_price", line),
                )
            )
        except ExportError:
            raise
        except (ValueError, ArithmeticError) as exc:
            raise ExportError(f"row {line}: {exc}") from None
    return trades


# -- the tax tools' layouts ----------------------------------------------------------------


@dataclass(frozen=True)
class ToolRow:
    """One row of a tax tool's layout, before it is laid out in that tool's columns.

    `sent`/`received`/`fee`: (amount, token) or None; `value_usd`: the row's USD value
    (None: unknown); `fee_only`: a second on-top outflow of a trade (gas, a third token's
    fee), written as an expense.
    """

    trade: Trade
    sent: tuple[Decimal, str] | None
    received: tuple[Decimal, str] | None
    fee: tuple[Decimal, str] | None
    value_usd: Decimal | None
    fee_only: str = ""


def _outflows(trade: Trade) -> tuple[dict[str, Decimal], dict[str, Decimal]]:
    """Per token: the fees inside the trade's amounts, and what was paid on top (gas too)."""
    inside: dict[str, Decimal] = {}
    on_top: dict[str, Decimal] = {}
    for fee in trade.fees:
        if fee.amount > 0:
            into = inside if fee.token in (trade.sold_token, trade.bought_token) else on_top
            into[fee.token] = EXACT.add(into.get(fee.token, ZERO), fee.amount)
    if trade.gas_octas:
        on_top[APT_COIN_TYPE] = EXACT.add(on_top.get(APT_COIN_TYPE, ZERO), trade.gas_apt)
    return inside, on_top


def _on_top_usd(trade: Trade, token: str, prices: PriceBook) -> Decimal | None:
    """The USD value of what `trade` paid on top in `token` (None: a part has none)."""
    _, fee_usd = _valuation(trade, prices)
    parts = [
        usd
        for fee, usd in zip(trade.fees, fee_usd, strict=True)
        if fee.token == token and fee.token not in (trade.sold_token, trade.bought_token)
    ]
    if token == APT_COIN_TYPE and trade.gas_octas:
        parts.append(trade.gas_usd)
    known = [p for p in parts if p is not None]
    return total(known) if len(known) == len(parts) else None


def tool_rows(trade: Trade, prices: PriceBook) -> list[ToolRow]:
    """The trade as the tax tools' rows: the trade itself, then any second on-top outflow.

    See the module docstring for where fees go; over the rows, the net change of each
    token is the trade's: −sold, +bought, −each fee paid on top, −gas.
    """
    inside, on_top = _outflows(trade)
    if inside.get(trade.sold_token, ZERO) > trade.sold:  # not inside after all: left there
        inside.pop(trade.sold_token)
    fee_token = next(
        (t for t in (*on_top, trade.sold_token, trade.bought_token) if t in on_top or t in inside),
        None,
    )
    sent, received = trade.sold, trade.bought
    fee: tuple[Decimal, str] | None = None
    if fee_token is not None:
        held = inside.get(fee_token, ZERO)
        fee = (EXACT.add(held, on_top.get(fee_token, ZERO)), fee_token)
        if fee_token == trade.sold_token:
            sent = EXACT.subtract(sent, held)
        elif fee_token == trade.bought_token:
            received = EXACT.add(received, held)
    # The row's value is that of what it says was sent (the fee column is valued apart).
    written = replace(trade, sold=sent, bought=received, fees=())
    rows = [
        ToolRow(
            trade,
            (sent, trade.sold_token),
            (received, trade.bought_token),
            fee,
            _valuation(written, prices)[0],
        )
    ]
    for token, amount in on_top.items():
        if token != fee_token:
            kind = "gas" if token == APT_COIN_TYPE and trade.gas_octas else "fee"
            usd = _on_top_usd(trade, token, prices)
            rows.append(ToolRow(trade, (amount, token), None, None, usd, fee_only=kind))
    return rows


def _pair(side: tuple[Decimal, str] | None, names: Mapping[str, str]) -> list[str]:
    """An (amount, token) as the two cells amount and symbol (blank when None)."""
    return ["", ""] if side is None else [format_decimal(side[0]), names.get(side[1], side[1])]


def _koinly(row: ToolRow, names: Mapping[str, str]) -> list[str]:
    trade = row.trade
    about = f"{trade.strategy}: {trade.ref}" + (f" ({trade.label})" if trade.label else "")
    if row.fee_only:
        about = f"{row.fee_only} of {about}"
    return [
        trade.time.strftime(KOINLY_DATE),
        *_pair(row.sent, names),
        *_pair(row.received, names),
        *_pair(row.fee, names),
        _text(row.value_usd),
        "" if row.value_usd is None else USD,
        "cost" if row.fee_only else "",
        about,
        trade.label if _HASH.fullmatch(trade.label) else trade.ref,
    ]


def _cointracking(row: ToolRow, names: Mapping[str, str]) -> list[str]:
    trade = row.trade
    comment = trade.ref + (f" {trade.label}" if trade.label else "")
    value = _text(row.value_usd)
    return [
        "Other Fee" if row.fee_only else "Trade",
        *_pair(row.received, names),
        *_pair(row.sent, names),
        *_pair(row.fee, names),
        f"Aptos {trade.wallet}",
        trade.strategy,
        f"{row.fee_only} of {comment}" if row.fee_only else comment,
        trade.time.strftime(COINTRACKING_DATE),
        f"{trade.ref}:{row.fee_only}:{row.sent[1]}" if row.fee_only and row.sent else trade.ref,
        "" if row.fee_only else value,
        value,
    ]


def render(
    fmt: ExportFormat, trades: Iterable[Trade], prices: PriceBook, names: Mapping[str, str]
) -> str:
    """The CSV text of `trades` in time order (as the accounting: ties keep theirs), as `fmt`.

    `names`: token identity → symbol (a token absent is written by its identity).
    """
    ordered = sorted(trades, key=lambda t: t.time)
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n")
    if fmt is ExportFormat.CSV:
        writer.writerow(CSV_COLUMNS)
        rows = [_csv_row(t, prices, names) for t in ordered]
    elif fmt is ExportFormat.KOINLY:
        writer.writerow(KOINLY_COLUMNS)
        rows = [_koinly(r, names) for t in ordered for r in tool_rows(t, prices)]
    else:
        writer.writerow(COINTRACKING_COLUMNS)
        rows = _unique_tx_ids(
            [_cointracking(r, names) for t in ordered for r in tool_rows(t, prices)]
        )
    writer.writerows([_inert(cell) for cell in row] for row in rows)
    text = out.getvalue()
    return text.removesuffix("\r\n") if fmt is ExportFormat.COINTRACKING else text


def _unique_tx_ids(rows: list[list[str]]) -> list[list[str]]:
    """The rows with every CoinTracking Tx-ID unique: a repeat gets `~2`, `~3`, … appended.

    CoinTracking skips a row whose Tx-ID it already has, without a word: fills the
    provider gave no number share their order's ref, and all but the first would vanish
    from the tax import. Rows are in time order, so a re-export names them the same way.
    """
    at = COINTRACKING_COLUMNS.index("Tx-ID")
    seen: dict[str, int] = {}
    for row in rows:
        tx_id = row[at]
        count = seen.get(tx_id, 0) + 1
        seen[tx_id] = count
        if count > 1:
            row[at] = f"{tx_id}~{count}"
            while row[at] in seen:  # a ref that itself ends in ~n: never collide
                row[at] += "~"
            seen[row[at]] = 1
    return rows


def _inert(cell: str) -> str:
    """`cell`, with a `'` before it when a spreadsheet would take it for a formula.

    The text comes from the journal, some of it from the provider (untrusted): a label
    `=HYPERLINK(…)` must stay text when the file is opened in a spreadsheet (OWASP's CSV
    injection advice). A cell that starts with `'` gets one too, so `read_csv` takes one
    off any cell that starts with it and gets the text back exactly. Amounts and dates
    never start with these.
    """
    return f"'{cell}" if cell[:1] in _FORMULA_STARTS else cell
