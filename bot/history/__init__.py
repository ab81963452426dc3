"""Recorded prices: the recorder, retention of old ticks, imported and synthetic series.

Everything here reads or writes the one price-series format of `bot.paper.core.series`
(docs/price-series.md); `bot backtest` and the paper world replay what it produces.
"""
