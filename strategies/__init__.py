"""Built-in strategy plugins, found by name (`plugin = "<module name>"` in config).

- `recurring_dca`: keep a DCA running between two tokens, renewed on completion.
- `limit_ladder`: N limit buys spaced below the market, re-placed when it drifts.
- `dip_buyer`: swap when the 24 h change or a moving average falls past a threshold.
- `take_profit`: limit sells at targets above the average entry price.
- `rebalancer`: swap toward target weights when drift exceeds a band.

The plugin API and a config example for each are in docs/strategies.md. Modules are not
imported here: `bot.engine.plugins` imports the one a config names.
"""
