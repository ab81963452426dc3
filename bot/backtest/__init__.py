"""Backtests: recorded prices replayed through the same strategies and the paper world's core.

`backtest` runs the bot's engine (`engine.engine`) on ports over `paper.core`
(`backtest.ports`), with a stepped clock and the daemon's own triggers and driver
(`engine.scheduling`); it never imports `paper.faces`, the HTTP client or the journal's
database layer.
"""
