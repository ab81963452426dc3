"""`bot` run unchanged, with stamps on stderr for the chaos and soak harnesses.

    python -m harness.bot_child -c CONFIG run

The bot's own code runs as it is; this module only wraps a few methods before calling
`bot.cli.main` (as bench/daemon.py does): the provider and node clients' constructors (to
find their counters, whatever holds them) and the four below. It prints one line per
event on stderr, each starting with `STAMP`:

* `STAMP order-call <path>`: a createOrder/cancelOrder request is handed to the client
  (the harness kills the process a random moment later: mid-request);
* `STAMP tx-submit <hash>`: signed bytes are handed to the node client (mid-transaction);
* `STAMP tick <strategy>`: a strategy tick begins;
* `STAMP stats <json>`: after every tracker poll, the clients' and the node clients'
  counters (requests, retries, errors by kind), the engine's per-strategy counters and
  the number of memory blocks Python holds (`sys.getallocatedblocks()`).

Stamps are plain lines (not the JSON log) so the harness can find them without parsing
every log line.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any

STAMP = "STAMP"


def _stamp(kind: str, detail: str) -> None:
    print(f"{STAMP} {kind} {detail}", file=sys.stderr, flush=True)


_CLIENTS: list[Any] = []
"""Every `PanoraClient` the process built (`bot run` builds one)."""
_NODES: list[Any] = []
"""Every `NodeClient` the process built."""


def _stats(engine: Any) -> dict[str, Any]:
    """The clients' and node clients' counters (summed), and the engine's per strategy."""
    errors: Counter[str] = Counter()
    for client in _CLIENTS:
        errors.update(client.stats.errors)
    return {
        "requests": sum(c.stats.requests for c in _CLIENTS),
        "retries": sum(c.stats.retries for c in _CLIENTS),
        "errors": dict(errors),
        "rejected_records": sum(c.stats.rejected_records for c in _CLIENTS),
        "node_requests": sum(n.stats.total for n in _NODES),
        "strategy_errors": {name: s.errors for name, s in engine.stats.items()},
        "strategy_ticks": {name: s.ticks for name, s in engine.stats.items()},
        "py_blocks": sys.getallocatedblocks(),  # Python objects alive: a leak shows here
    }


def install() -> None:
    """Wrap the methods the stamps come from."""
    from bot.api.client import PanoraClient
    from bot.chain.node import NodeClient
    from bot.engine.engine import Engine

    client_init = PanoraClient.__init__
    node_init = NodeClient.__init__
    order_call = PanoraClient._order_call
    submit = NodeClient.submit
    tick = Engine.tick
    poll = Engine.poll_orders

    def recorded_client_init(self: PanoraClient, *args: Any, **kwargs: Any) -> None:
        client_init(self, *args, **kwargs)
        _CLIENTS.append(self)

    def recorded_node_init(self: NodeClient, *args: Any, **kwargs: Any) -> None:
        node_init(self, *args, **kwargs)
        _NODES.append(self)

    async def stamped_order_call(self: PanoraClient, path: str, body: dict[str, Any]) -> Any:
        _stamp("order-call", path)
        return await order_call(self, path, body)

    async def stamped_submit(self: NodeClient, signed: bytes, tx_hash: str) -> str:
        _stamp("tx-submit", tx_hash)
        return await submit(self, signed, tx_hash)

    async def stamped_tick(self: Engine, name: str) -> Any:
        _stamp("tick", name)
        return await tick(self, name)

    async def stamped_poll(self: Engine) -> Any:
        try:
            return await poll(self)
        finally:
            _stamp("stats", json.dumps(_stats(self), sort_keys=True))

    PanoraClient.__init__ = recorded_client_init  # type: ignore[method-assign]
    NodeClient.__init__ = recorded_node_init  # type: ignore[method-assign]
    PanoraClient._order_call = stamped_order_call  # type: ignore[method-assign]
    NodeClient.submit = stamped_submit  # type: ignore[method-assign]
    Engine.tick = stamped_tick  # type: ignore[method-assign]
    Engine.poll_orders = stamped_poll  # type: ignore[method-assign]


def main() -> None:
    """Install the stamps and run the `bot` command with this process's arguments."""
    install()
    from bot.cli import main as bot_main

    sys.argv = ["bot", *sys.argv[1:]]
    bot_main()


if __name__ == "__main__":
    main()
