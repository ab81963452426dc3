"""The paper world: a faithful local simulation of the provider's API and an Aptos node.

`core` is pure Python with no HTTP (clock, tokens, prices, pools, wallets, order
engines); `faces` wrap it in ASGI apps speaking the provider's API and the node's API.
"""
