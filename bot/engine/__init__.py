"""The engine: order tracking, the executor, strategies, brokers, risk and the daemon.

So far: `observe` (API records → journal observations), `events` (typed order events)
and `tracker` (getOrders → transitions, fills, events).
"""
