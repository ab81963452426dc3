"""`bot prices [TOKEN…]` and `bot quote FROM TO (--sell AMOUNT | --buy AMOUNT)`.

Under what they show, one line says where the prices come from: the provider's credit
(`Prices by Panora`) in live mode, `Simulated prices (paper world)` in paper mode, whose
prices and quotes are the paper world's own, never the provider's.
"""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from typing import Annotated, Any, Final

import typer

from bot.api import ApiError, NoRoute, PanoraClient, SwapRequest
from bot.api.models import PriceRecord, SwapResponseExactIn
from bot.api.params import check_slippage
from bot.api.tokens import fetch_token_book
from bot.aptos.address import is_coin_type, looks_like_address
from bot.aptos.tokens import TokenLookupError
from bot.cli.common import EXIT_USAGE, fail, load_or_exit, make_client
from bot.config import PRICE_CREDIT, Settings
from bot.money import MoneyError, format_decimal, parse_decimal

CREDIT = PRICE_CREDIT
SIMULATED: Final = "Simulated prices (paper world)"
"""Paper mode's line where live mode credits the provider: the prices are simulated."""


def price_source(settings: Settings) -> str:
    """The line under shown prices: the provider's credit live, `SIMULATED` in paper mode."""
    return CREDIT if settings.mode == "live" else SIMULATED


def _is_identity(name: str) -> bool:
    return looks_like_address(name) or is_coin_type(name)


async def _resolve(client: PanoraClient, names: list[str]) -> list[str]:
    """Provider identities for the names; symbols are looked up in the full price list."""
    if all(_is_identity(n) for n in names):
        return names
    book = await fetch_token_book(client)
    try:
        return [n if _is_identity(n) else book.find(n).address for n in names]
    except TokenLookupError as exc:
        fail(str(exc), EXIT_USAGE)


def _price_rows(records: list[PriceRecord]) -> list[list[str]]:
    rows = [["SYMBOL", "USD", "24H %", "ADDRESS"]]
    for r in sorted(records, key=lambda rec: (rec.display_symbol.lower(), rec.fa_address or "")):
        change = r.price_change_24h
        rows.append(
            [
                r.display_symbol,
                format_decimal(r.usd_price) if r.usd_price is not None else "-",
                f"{change:+.2f}" if change is not None else "-",
                r.token_address or r.fa_address or "-",
            ]
        )
    return rows


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def prices(
    ctx: typer.Context,
    tokens: Annotated[
        list[str] | None,
        typer.Argument(help="Symbols, coin types or FA addresses (default: all listed)."),
    ] = None,
    all_tokens: Annotated[
        bool, typer.Option("--all", help="Include tokens hidden in the provider's UI.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON records.")] = False,
) -> None:
    """Show current USD prices (live: Prices by Panora; paper: the paper world's own)."""
    settings = load_or_exit(ctx)

    async def run() -> list[PriceRecord]:
        async with make_client(ctx, settings) as client:
            names = list(tokens or [])
            if not names:
                return (await client.get_prices(ui_only=not all_tokens)).records
            wanted = await _resolve(client, names)
            return (await client.get_prices(wanted)).records

    try:
        records = asyncio.run(run())
    except ApiError as exc:
        fail(str(exc))
    if as_json:
        live = settings.mode == "live"
        payload: dict[str, Any] = {
            "credit": CREDIT if live else None,
            "simulated": not live,
            "prices": [r.model_dump(mode="json", by_alias=True) for r in records],
        }
        typer.echo(json.dumps(payload, indent=2))
        return
    typer.echo(_table(_price_rows(records)))
    typer.echo(price_source(settings))


def _amount(option: str, text: str | None) -> Decimal | None:
    if text is None:
        return None
    try:
        value = parse_decimal(text, field=option)
    except MoneyError as exc:
        fail(str(exc), EXIT_USAGE)
    if value <= 0:
        fail(f"{option}: must be a positive amount, got {text}", EXIT_USAGE)
    return value


def quote(
    ctx: typer.Context,
    from_token: Annotated[str, typer.Argument(metavar="FROM", help="Token to sell.")],
    to_token: Annotated[str, typer.Argument(metavar="TO", help="Token to buy.")],
    sell: Annotated[
        str | None,
        typer.Option("--sell", help="Amount of FROM to sell (ExactIn). Give --sell or --buy."),
    ] = None,
    buy: Annotated[
        str | None,
        typer.Option("--buy", help="Amount of TO to buy (ExactOut). Give --sell or --buy."),
    ] = None,
    slippage: Annotated[
        str, typer.Option("--slippage", help="'auto' or a percentage 0-100.")
    ] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw quote as JSON.")] = False,
) -> None:
    """Quote a swap (no transaction, nothing spent)."""
    if (sell is None) == (buy is None):
        fail("give exactly one of --sell AMOUNT and --buy AMOUNT", EXIT_USAGE)
    sell_amount, buy_amount = _amount("--sell", sell), _amount("--buy", buy)
    settings = load_or_exit(ctx)
    try:
        check_slippage(slippage, settings.api.swap_variant)
    except ValueError as exc:
        fail(f"--slippage: {exc}", EXIT_USAGE)

    async def run() -> Any:
        async with make_client(ctx, settings) as client:
            from_id, to_id = await _resolve(client, [from_token, to_token])
            request = SwapRequest(
                from_token=from_id,
                to_token=to_id,
                from_amount=sell_amount,
                to_amount=buy_amount,
                slippage=Decimal(slippage) if slippage != "auto" else "auto",
            )
            return await client.quote(request)

    try:
        response = asyncio.run(run())
    except NoRoute as exc:  # `quotes: []`: the provider's answer, not a fault
        fail(exc.describe(from_token, to_token))
    except ApiError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(response.model_dump(mode="json", by_alias=True), indent=2))
        return
    best = response.best
    impact = f"{best.price_impact}%" if best.price_impact is not None else "n/a"
    if isinstance(response, SwapResponseExactIn):
        typer.echo(
            f"sell {format_decimal(response.from_token_amount)} {from_token} → "
            f"receive {format_decimal(best.to_token_amount)} {to_token} "
            f"(at least {format_decimal(best.min_to_token_amount)} after slippage)"
        )
    else:
        typer.echo(
            f"buy {format_decimal(response.to_token_amount)} {to_token} ← "
            f"pay {format_decimal(best.from_token_amount)} {from_token} "
            f"(at most {format_decimal(best.max_from_token_amount)} after slippage)"
        )
    fee_token = response.fee_token_of(best)
    fee_symbol = (fee_token.symbol or fee_token.identity) if fee_token is not None else None
    fee = format_decimal(best.fee) if best.fee is not None else "0"
    fee = f"{fee} {fee_symbol}" if fee_symbol else fee
    typer.echo(f"slippage {best.slippage_percentage}%, price impact {impact}, fee {fee}")
    typer.echo(price_source(settings))
