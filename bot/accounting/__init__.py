"""Accounting over trades: what was invested and received, and what it made.

Average entry vs the market, realised and unrealised P&L by a stated cost basis, fees
and gas, in day/week/month buckets.

Pure: it reads plain records (`Trade`, `PricePoint`) and imports only `bot.money`,
`bot.clock`, `bot.domain` and the standard library; adapters turn journal rows or a
backtest's result into its records. Definitions: docs/accounting.md.
"""

from __future__ import annotations

from bot.accounting.buckets import BucketPeriod, bucket_label, bucket_of, zone_of
from bot.accounting.exact import RATIO_DIGITS, ratio
from bot.accounting.figures import Figures
from bot.accounting.lots import CostBasis, Lot, Taken
from bot.accounting.prices import PriceBook, PricePoint, PriceSeries
from bot.accounting.records import APT_DECIMALS, CostMethod, Fee, FeeKind, Pair, Trade
from bot.accounting.report import (
    Bucket,
    Holding,
    Position,
    Summary,
    account,
    by_strategy,
    by_wallet,
    main_pair,
)

__all__ = [
    "APT_DECIMALS",
    "RATIO_DIGITS",
    "Bucket",
    "BucketPeriod",
    "CostBasis",
    "CostMethod",
    "Fee",
    "FeeKind",
    "Figures",
    "Holding",
    "Lot",
    "Pair",
    "Position",
    "PriceBook",
    "PricePoint",
    "PriceSeries",
    "Summary",
    "Taken",
    "Trade",
    "account",
    "bucket_label",
    "bucket_of",
    "by_strategy",
    "by_wallet",
    "main_pair",
    "ratio",
    "zone_of",
]
