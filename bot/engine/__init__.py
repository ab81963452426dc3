"""The engine: strategies, actions, risk, brokers, executor, scheduling, tracking.

Also reconciliation and the wallet lock; see docs/ARCHITECTURE.md.
"""
