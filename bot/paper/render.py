"""Paper world state → the provider's wire JSON (spec section 2), with the provider prefix.

Amounts in order records are human amounts by default, or base units when the paper
world's `order_amount_units = "base"` (the same switch the client has: wire decision #3).
USD values are `null` where a token has no visible price.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal, localcontext
from typing import Any, Final

from bot.aptos.tokens import Token
from bot.money import format_decimal, from_base_units
from bot.paper.core.swaps import SwapTerms

__all__ = ["Renderer", "iso"]

_USD_PLACES: Final = Decimal("0.00000001")


def iso(moment: datetime | None) -> str | None:
    """`2026-01-01T00:00:00.000Z`, the provider's timestamp form."""
    if moment is None:
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


UsdPrice = Callable[[Token, datetime], Decimal | None]


class Renderer:
    """Builds wire records; `usd` gives a token's visible USD price at a time (or None)."""

    def __init__(self, *, prefix: str, usd: UsdPrice, base_units: bool = False) -> None:
        self.prefix = prefix
        self._usd = usd
        self._base_units = base_units

    def key(self, name: str) -> str:
        """`svcTxId` → `panoraTxId`."""
        return self.prefix + name[3:] if name.startswith("svc") else name

    def human(self, units: int, token: Token) -> str:
        """A swap amount: always human units (the spec says so for swaps)."""
        return format_decimal(from_base_units(units, token.decimals))

    def order_amount(self, units: int, token: Token) -> str:
        """An order-record amount: human or base units, by setting."""
        return str(units) if self._base_units else self.human(units, token)

    def usd_value(self, units: int, token: Token, at: datetime) -> str | None:
        """USD value of an amount at a time, or None without a visible price."""
        price = self._usd(token, at)
        if price is None:
            return None
        with localcontext() as ctx:
            ctx.prec = 60
            value = from_base_units(units, token.decimals) * price
        return format_decimal(value.quantize(_USD_PLACES))

    @staticmethod
    def order_token(token: Token) -> dict[str, Any]:
        """Token object inside orders (spec 2.2)."""
        return {
            "address": token.address,
            "symbol": token.symbol,
            "decimals": token.decimals,
            "name": token.name or token.symbol,
        }

    @staticmethod
    def fee_token(token: Token) -> dict[str, Any]:
        """Fee-token shape of quotes and route hops."""
        return {
            "tokenType": token.address,
            "name": token.name or token.symbol,
            "symbol": token.symbol,
            "decimals": token.decimals,
        }

    def price_record(
        self,
        token: Token,
        index: int,
        at: datetime,
        chain_id: int,
        native: Decimal | None,
        change: Decimal | None,
    ) -> dict[str, Any]:
        """One `/prices` record, as the real API writes it (wire decision 40).

        The docs' example and SDK 1.3.1's `TokenPrice` carry no `panoraId`, `panoraSymbol`,
        `panoraUI` or `panoraTags` (the spec's field list does): those belong to the token
        list (`token_list_record`). `index` is unused here and kept for the callers.
        """
        del index
        usd = self._usd(token, at)
        return {
            "chainId": chain_id,
            "tokenAddress": token.coin_type,
            "faAddress": token.fa_address,
            "name": token.name or token.symbol,
            "symbol": token.symbol,
            "decimals": token.decimals,
            "usdPrice": format_decimal(usd) if usd is not None else None,
            "nativePrice": format_decimal(native) if native is not None else None,
            "priceChange24H": format_decimal(change) if change is not None else None,
        }

    def token_list_record(
        self,
        token: Token,
        index: int,
        at: datetime,
        chain_id: int,
        change: Decimal | None,
        listing: dict[str, Any],
    ) -> dict[str, Any]:
        """One `/tokenlist` record: SDK 1.3.1 `TokenInfo`, then the docs' two flags.

        `listing` is the token's entry in the paper token list (`bridge`, `logoUrl`,
        `websiteUrl`, `panoraIndex`, `coinGeckoId`, `coinMarketCapId`; null when absent).
        `panoraId` is a text, as in the docs' example; `priceChange24H` (optional in the
        SDK) only when known; no `nativePrice` (the token list has none).
        """
        usd = self._usd(token, at)
        symbol = token.provider_symbol or token.symbol
        record: dict[str, Any] = {
            "chainId": chain_id,
            self.key("svcId"): f"paper-{index}-{symbol}",
            "tokenAddress": token.coin_type,
            "faAddress": token.fa_address,
            "name": token.name or token.symbol,
            "symbol": token.symbol,
            "decimals": token.decimals,
            "bridge": listing.get("bridge"),
            self.key("svcSymbol"): symbol,
            "usdPrice": format_decimal(usd) if usd is not None else None,
        }
        if change is not None:
            record["priceChange24H"] = format_decimal(change)
        return record | {
            "logoUrl": listing.get("logoUrl"),
            "websiteUrl": listing.get("websiteUrl"),
            self.key("svcUI"): token.ui,
            self.key("svcTags"): list(token.tags),
            self.key("svcIndex"): listing.get("panoraIndex", index),
            "coinGeckoId": listing.get("coinGeckoId"),
            "coinMarketCapId": listing.get("coinMarketCapId"),
            "isInPanoraTokenList": True,
            "isBanned": token.banned,
        }

    def swap_response(
        self,
        terms: SwapTerms,
        at: datetime,
        *,
        tx_data: dict[str, Any] | None,
        legacy: bool,
        dex_name: str,
    ) -> dict[str, Any]:
        """The ExactIn or ExactOut response of `/swap` and `/swap/quote`.

        Current variant: SDK 1.3.1's shape (`resources/type.d.ts`): tokens as `{address,
        name, symbol, decimals, current_price}`, a top-level `feeToken` (the sold token:
        the paper router takes its fees from the input) and `quotes[].feeTokenAmount` /
        `feeTokenAmountUSD`. Legacy: the older shape (SDK 1.0.8): `feeAmount` and a
        per-quote `feeToken {tokenType, …}`, with `route`.
        """
        sell, buy = terms.sell, terms.buy
        fee = self.human(terms.fee_total, sell)
        quote: dict[str, Any] = {
            "slippagePercentage": format_decimal(terms.slippage),
            "priceImpact": self._impact(terms, at),
        }
        if legacy:
            quote |= {"feeAmount": fee, "feeToken": self.fee_token(sell)}
        else:
            quote |= {
                "feeTokenAmount": fee,
                "feeTokenAmountUSD": self.usd_value(terms.fee_total, sell, at),
            }
        if terms.exact_in:
            quote |= {
                "toTokenAmount": self.human(terms.amount_out, buy),
                "minToTokenAmount": self.human(terms.min_out, buy),
                "toTokenAmountUSD": self.usd_value(terms.amount_out, buy, at),
            }
        else:
            quote |= {
                "fromTokenAmount": self.human(terms.amount_in, sell),
                "maxFromTokenAmount": self.human(terms.max_in, sell),
                "fromTokenAmountUSD": self.usd_value(terms.amount_in, sell, at),
            }
        if tx_data is not None:
            quote["txData"] = tx_data
        if legacy:
            quote["route"] = [self._route(terms, dex_name)]
        given = terms.amount_in if terms.exact_in else terms.amount_out
        response = self.swap_head(
            sell, buy, at, legacy=legacy, exact_in=terms.exact_in, amount=given
        )
        response["quotes"] = [quote]
        return response

    def swap_head(
        self, sell: Token, buy: Token, at: datetime, *, legacy: bool, exact_in: bool, amount: int
    ) -> dict[str, Any]:
        """A swap response without its quotes: the tokens and the amount given.

        `amount` is in base units of the sold token (ExactIn) or the bought one (ExactOut).
        With `quotes: []` added it is the no-route answer.
        """
        response: dict[str, Any] = {
            "fromToken": self._swap_token(sell, at, legacy=legacy),
            "toToken": self._swap_token(buy, at, legacy=legacy),
        }
        if not legacy:
            response["feeToken"] = self._swap_token(sell, at, legacy=False)
        if exact_in:
            response["fromTokenAmount"] = self.human(amount, sell)
            response["fromTokenAmountUSD"] = self.usd_value(amount, sell, at)
        else:
            response["toTokenAmount"] = self.human(amount, buy)
            response["toTokenAmountUSD"] = self.usd_value(amount, buy, at)
        return response

    def _swap_token(self, token: Token, at: datetime, *, legacy: bool) -> dict[str, Any]:
        """SDK 1.3.1's `Token` (legacy: address, decimals and price only)."""
        usd = self._usd(token, at)
        price = format_decimal(usd) if usd is not None else None
        if legacy:
            return {"address": token.address, "decimals": token.decimals, "current_price": price}
        return {
            "address": token.address,
            "name": token.name or token.symbol,
            "symbol": token.symbol,
            "decimals": token.decimals,
            "current_price": price,
        }

    def _impact(self, terms: SwapTerms, at: datetime) -> str | None:
        """Percent difference of the USD values in and out; null without both prices."""
        usd_in = self._usd(terms.sell, at)
        usd_out = self._usd(terms.buy, at)
        if usd_in is None or usd_out is None:
            return None
        return format_decimal(terms.price_impact)

    def _route(self, terms: SwapTerms, dex_name: str) -> dict[str, Any]:
        hop = {
            "percentage": 100,
            "fromToken": self.fee_token(terms.sell),
            "toToken": self.fee_token(terms.buy),
            "dexName": dex_name,
            "aggregatorName": "paper",
        }
        route: dict[str, Any] = {"percentage": 100, "routeTaken": [[hop]]}
        if not terms.exact_in:
            route["routeTokens"] = [self.fee_token(terms.sell), self.fee_token(terms.buy)]
        return route
