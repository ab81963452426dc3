"""The five built-in strategies in one config, as the loopback test and bench/daemon.py run them.

The docs' examples (docs/strategies.md), with what the two callers vary as parameters.
"""

from __future__ import annotations

from decimal import Decimal

_TEMPLATE = """
[[strategies]]
name = "weekly-apt"
plugin = "recurring_dca"
schedule = {{ interval_seconds = 3600 }}
[strategies.params]
from_token = "USDC"
to_token = "APT"
amount_per_order = "25"
orders = {dca_orders}
interval = "{dca_interval}"
min_rate = "0.08"
max_rate = "0.25"
slippage = "0.5"

[[strategies]]
name = "apt-ladder"
plugin = "limit_ladder"
schedule = {{ interval_seconds = 3600 }}
[strategies.params]
sell_token = "USDC"
buy_token = "APT"
rungs = 5
spacing_percent = "2"
amount_per_rung = "40"
redrift_percent = "5"
expiry = "1 day"

[[strategies]]
name = "apt-dips"
plugin = "dip_buyer"
schedule = {{ interval_seconds = 3600 }}
[strategies.params]
sell_token = "USDC"
buy_token = "APT"
amount = "100"
drop_percent = "8"
ma_ticks = 24
cooldown = "12 hour"
slippage = "1"

[[strategies]]
name = "apt-take-profit"
plugin = "take_profit"
schedule = {{ interval_seconds = 3600 }}
[strategies.params]
token = "APT"
quote_token = "USDC"
entry_price = "{entry}"
targets = [
  {{ percent_above = "20", fraction = "0.5" }},
  {{ percent_above = "50", fraction = "0.25" }},
]
expiry = "30 day"

[[strategies]]
name = "apt-usdc-mix"
plugin = "rebalancer"
schedule = {rebalancer_schedule}
[strategies.params]
weights = {{ APT = "0.6", USDC = "0.4" }}
band_percent = "5"
quote_token = "USDC"
min_trade = "20"
cooldown = "6 hour"
slippage = "0.5"
"""


def five_strategies_toml(
    *,
    entry: Decimal,
    dca_orders: int = 7,
    dca_interval: str = "1 day",
    rebalancer_schedule: str = "{ interval_seconds = 3600 }",
) -> str:
    """The `[[strategies]]` entries; `entry` is take-profit's entry price."""
    return _TEMPLATE.format(
        entry=entry,
        dca_orders=dca_orders,
        dca_interval=dca_interval,
        rebalancer_schedule=rebalancer_schedule,
    )
