"""The out-of-the-box demo: `bot run --paper` with no config file at all.

A paper world embedded in the process on an accelerated clock (an hour of market per six
seconds), a wallet key created once in `data/` and funded by the paper faucet, two
built-in strategies (a recurring DCA and a limit ladder), a journal of its own, and the
world kept in `data/paper-demo-world.pickle` (saved on exit and every
`[paper].snapshot_seconds`) so the next run continues where this one stopped. Prices are
recorded every market hour, so the summary every 6 market hours (36 s) shows what
the position is worth and its average entry against the market.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from bot.app.paper_key import DEMO_DIR, demo_key_file
from bot.chain import account_address, load_private_key
from bot.config import (
    JournalSettings,
    PaperFunding,
    Schedule,
    Settings,
    StrategyEntry,
    WalletSettings,
)

__all__ = ["DEMO_DIR", "DEMO_JOURNAL", "demo_settings"]

DEMO_JOURNAL = "paper-demo.db"
"""The demo's journal, in `DEMO_DIR`."""

DEMO_FUNDS = (("USDC", Decimal(10_000)), ("APT", Decimal(100)))
"""What the paper faucet gives the demo wallet on the first run."""
DEMO_SUMMARY_SECONDS = 6 * 3600
"""The demo's summary interval in market seconds (36 real seconds at the demo's speed)."""


def demo_settings(base: Settings, directory: Path = DEMO_DIR) -> Settings:
    """`base` turned into the paper demo (its `[api]`, `[risk]` and `[log]` are kept)."""
    key_file = demo_key_file(directory)
    assert key_file is not None  # made when missing
    wallet = str(account_address(load_private_key(key_file, None)))
    paper = base.paper.model_copy(
        update={
            "url": "",
            "clock": "accelerated",
            "speed": 600.0,
            "order_style": "onchain",
            "snapshot_file": directory / "paper-demo-world.pickle",
            "funding": [
                PaperFunding(wallet=wallet, token=symbol, amount=amount)
                for symbol, amount in DEMO_FUNDS
            ],
        }
    )
    strategies = [
        StrategyEntry(
            name="demo-dca",
            plugin="recurring_dca",
            schedule=Schedule(interval_seconds=600),
            params={
                "from_token": "USDC",
                "to_token": "APT",
                "amount_per_order": "25",
                "orders": 6,
                "interval": "1 hour",
            },
        ),
        StrategyEntry(
            name="demo-ladder",
            plugin="limit_ladder",
            schedule=Schedule(interval_seconds=1800),
            params={
                "sell_token": "USDC",
                "buy_token": "APT",
                "rungs": 3,
                "spacing_percent": "1",
                "amount_per_rung": "50",
                "redrift_percent": "3",
                "expiry": "1 day",
            },
        ),
    ]
    scheduler = base.scheduler.model_copy(update={"tracker_interval_seconds": 300})
    record = base.record.model_copy(
        update={"enabled": True, "every_seconds": 3600, "to_journal": True, "out": None}
    )
    display = base.display.model_copy(update={"summary_every_seconds": DEMO_SUMMARY_SECONDS})
    return base.model_copy(
        update={
            "mode": "paper",
            "paper": paper,
            "wallet": WalletSettings(key_file=key_file),
            "journal": JournalSettings(url=f"sqlite:///{directory / DEMO_JOURNAL}"),
            "scheduler": scheduler,
            "record": record,
            "display": display,
            "strategies": strategies,
        }
    )
