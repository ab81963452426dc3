"""A create whose answer was lost, settled by a person as the docs say, never doubled.

The paper world (escrow style) creates the DCA but answers createOrder with a broken
body: the outcome is unknown, and the next `bot once` is held, not resent. `bot reconcile
--fail` is refused while an order of the wallet looks like the intent's (failing it would
let the strategy place a second DCA); `--link` names it, and the strategy then rests on it.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_bot
from tests.support.user_folder import HOURLY_DCA, new_user_folder

DCA = HOURLY_DCA.replace('amount_per_order = "25"', 'amount_per_order = "10"').replace(
    'interval = "1 hour"', 'interval = "1 day"'
)
FAULTS = '[paper.faults]\nmalformed_body = "1"\nendpoints = ["/dca/v1/createOrder"]\n'


def test_a_held_create_is_linked_by_hand_and_never_placed_twice(tmp_path: Path) -> None:
    def bot(*args: str, code: int = 0) -> str:
        result = run_bot("-c", "config.toml", *args, cwd=tmp_path)
        assert result.returncode == code, result.stdout + result.stderr
        assert "Traceback" not in result.stderr
        return result.stdout + result.stderr

    new_user_folder(
        tmp_path, paper='order_style = "escrow"', funds={"USDC": "1000"}, strategies=DCA
    )
    config = tmp_path / "config.toml"
    healthy = config.read_text()
    config.write_text(healthy + FAULTS)
    assert "→ unknown (POST /dca/v1/createOrder: HTTP 200 with a body" in bot("once")
    held = bot("once")
    assert "→ unknown (held: an earlier attempt under this key has an unknown outcome" in held
    assert "intent 1: unknown: no evidence yet" in bot("reconcile")

    [order] = json.loads(run_bot("-c", "config.toml", "orders", "--json", cwd=tmp_path).stdout)
    refused = bot("reconcile", "--fail", "1", "--reason", "nothing placed", code=2)
    assert f"bot: error: dca order {order['id']} of this wallet looks like intent 1" in refused
    assert "needs --reason" in bot("reconcile", "--link", "1", "--order", order["id"], code=2)

    linked = bot("reconcile", "--link", "1", "--order", order["id"], "--reason", "it is mine")
    assert f"intent 1: confirmed (order {order['id']}): linked by hand: it is mine" in linked
    config.write_text(healthy)
    assert "create DCA" not in bot("once")  # the strategy rests on its (linked) DCA
    listed = json.loads(run_bot("-c", "config.toml", "orders", "--json", cwd=tmp_path).stdout)
    assert [(o["id"], o["strategy"]) for o in listed] == [(order["id"], "dca")]
