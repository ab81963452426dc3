"""Backtests: recorded prices replayed through the same strategies and the paper world's core.

`backtest` drives `paper.core` with a stepped clock and the daemon's own triggers and
driver (`engine.scheduling`); it never imports `paper.faces` or the HTTP client.
"""
