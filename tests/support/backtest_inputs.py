"""What the backtest tests hand a backtest: price files, windows, parameters, entries.

The CLI tests' series start at `T0` (APT as given, USDC at 1); the hand-computed cases
trade against pools `DEEP` USD deep with every fee `FREE`, so a slice buys 10 / price.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from bot.config import StrategyEntry

APT = "0x1::aptos_coin::AptosCoin"
USDC = "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
DCA = "from_token=USDC,to_token=APT,amount_per_order=10,orders=4,interval=1 hour"
"""`--params` of a four-slice hourly DCA of 10 USDC."""
DEEP = Decimal(10**12)
FREE = {"fee_bps": 0, "platform_fee_bps": 0, "keeper_fee_bps": 0}


def write_series(path: Path, apt: list[str], step: timedelta = timedelta(minutes=30)) -> Path:
    """A price file in the one series format: APT as given, USDC at 1, every `step`."""
    lines = ["timestamp,token,symbol,usdPrice"]
    for i, price in enumerate(apt):
        at = (T0 + i * step).isoformat().replace("+00:00", "Z")
        lines.append(f"{at},{APT},APT,{price}")
        lines.append(f"{at},{USDC},USDC,1")
    path.write_text("\n".join(lines) + "\n")
    return path


def window(hours: int = 6) -> list[str]:
    """`--from T0 --to T0 + hours`."""
    end = T0 + timedelta(hours=hours)
    return ["--from", T0.isoformat(), "--to", end.isoformat()]


def dca(orders: int = 4, every: int = 4 * 3600, **params: Any) -> StrategyEntry:
    """A recurring DCA of 10 USDC an hour; it ticks every 4 hours (no renewal in 3 h)."""
    return StrategyEntry(
        name="dca",
        plugin="recurring_dca",
        schedule={"interval_seconds": every},
        params={
            "from_token": "USDC",
            "to_token": "APT",
            "amount_per_order": "10",
            "orders": orders,
            "interval": "1 hour",
            **params,
        },
    )
