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

CONFIG = """mode = "paper"
[wallet]
key_file = "wallet.key"
[journal]
url = "sqlite:///data/journal.db"
[daemon]
lock_dir = "{locks}"
[paper]
order_style = "escrow"
funding = [{{ wallet = "{wallet}", token = "USDC", amount = "1000" }}]
{faults}
[[strategies]]
name = "dca"
plugin = "recurring_dca"
schedule = {{ interval_seconds = 3600 }}
[strategies.params]
from_token = "USDC"
to_token = "APT"
amount_per_order = "10"
orders = 2
interval = "1 day"
"""
FAULTS = '[paper.faults]\nmalformed_body = "1"\nendpoints = ["/dca/v1/createOrder"]\n'


def test_a_held_create_is_linked_by_hand_and_never_placed_twice(tmp_path: Path) -> None:
    def bot(*args: str, code: int = 0) -> str:
        result = run_bot("-c", "config.toml", *args, cwd=tmp_path)
        assert result.returncode == code, result.stdout + result.stderr
        assert "Traceback" not in result.stderr
        return result.stdout + result.stderr

    wallet = run_bot("keys", "new", "--out", "wallet.key", cwd=tmp_path).stdout.strip()
    config = tmp_path / "config.toml"

    def write(faults: str) -> None:
        config.write_text(CONFIG.format(locks=tmp_path / "locks", wallet=wallet, faults=faults))

    write(FAULTS)
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
    write("")
    assert "create DCA" not in bot("once")  # the strategy rests on its (linked) DCA
    listed = json.loads(run_bot("-c", "config.toml", "orders", "--json", cwd=tmp_path).stdout)
    assert [(o["id"], o["strategy"]) for o in listed] == [(order["id"], "dca")]
