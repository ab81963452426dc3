"""ASGI faces of the paper world: the provider's API (and, from #5, the node's)."""
