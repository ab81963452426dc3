"""Crash windows: a bot process SIGKILLed at each failpoint, then restarted.

Each test serves one paper world (`bot paper serve`, accelerated clock, the wallet funded
with USDC and APT) and runs the bot as real subprocesses (tests/support/crash_runner.py)
against a journal file in `tmp_path`:

1. `execute` with `BOT_FAILPOINT` set: the process kills itself right after the intent
   commit (`after_intent`), right after the request went out (`after_send`: the provider
   may or may not have applied it), after the response but before it was recorded
   (`after_response`), between signing and submitting (`before_submit`), or after the
   created order was journaled but before the intent was confirmed (`after_order`);
2. `reconcile` without it (a long grace: nothing is failed early); an intent still unknown
   is reconciled again with a short grace, once any transaction it signed can no longer
   land (committed, or unknown to the node past its expiration);
3. `execute` of the same idempotency key again: a duplicate, nothing new — unless the
   intent ended `failed` (nothing of it applied): then the key runs again, once.

Then, read from the journal file and from the paper world over HTTP: the intent is settled
(confirmed or failed); exactly one provider order when a create is confirmed and none
otherwise; at most one committed transaction per intent and the account's sequence
number equal to the committed transactions; every order's and intent's history a chain
from None to its current state.

Reconciliation links an order to an intent only on evidence the bot produced (its journaled
order, a deposit it signed). An escrow-style createOrder applied by the provider whose answer
never came back (or died with the process before it was journaled) leaves none: that intent
is held `unknown` (never linked on the order's looks, never failed into a second order), its
order unlinked in the journal.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.journal import Journal
from harness.paper_signing import address_of, fixed_key
from tests.support.paper_server import PAPER_KEY, ROOT, paper_serve

LABEL = "crash-windows"
WALLET = address_of(fixed_key(LABEL))
SPEED = 60.0
SHORT_GRACE = 1.0  # seconds of the runner's (real) clock
HEADERS = {"x-api-key": PAPER_KEY}
SETTLED = {"confirmed", "failed"}


@dataclass
class Rig:
    url: str
    journal_url: str

    def run(
        self,
        mode: str,
        *,
        action: str | None = None,
        key: str = "k-1",
        failpoint: str | None = None,
        grace: float | None = None,
        switch: str = "",
    ) -> subprocess.CompletedProcess[str]:
        command = [
            sys.executable,
            "-m",
            "tests.support.crash_runner",
            "--journal",
            self.journal_url,
            "--paper",
            self.url,
            "--key-label",
            LABEL,
            "--mode",
            mode,
            "--key",
            key,
        ]
        if action is not None:
            command += ["--action", action]
        if grace is not None:
            command += ["--grace-seconds", str(grace)]
        if switch:
            command.append(switch)
        env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
        if failpoint is not None:
            env["BOT_FAILPOINT"] = failpoint
        return subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
        )

    def result(self, mode: str, **kwargs: Any) -> dict[str, Any]:
        done = self.run(mode, **kwargs)
        assert done.returncode == 0, done.stderr[-3000:]
        lines = done.stdout.strip().splitlines()
        assert len(lines) == 1, done.stdout
        parsed: dict[str, Any] = json.loads(lines[0])
        return parsed

    @contextmanager
    def journal(self) -> Iterator[Journal]:
        journal = Journal.open(self.journal_url, readonly=True)
        try:
            yield journal
        finally:
            journal.close()

    # -- the paper world, over HTTP ----------------------------------------------------

    def provider_orders(self) -> list[tuple[str, str, str]]:
        """(kind, order id, status) of every listed order of the wallet."""
        found = []
        with httpx.Client(base_url=self.url, headers=HEADERS, timeout=10) as http:
            for kind in ("dca", "limit"):
                for status in ("active", "completed"):
                    body = {
                        "chainId": 1,
                        "toWalletAddress": WALLET,
                        "status": status,
                        "limit": 1000,
                        "pageNumber": 1,
                        "txDetails": False,
                    }
                    response = http.post(f"/{kind}/v1/getOrders", json=body)
                    assert response.status_code == 200, response.text
                    page = response.json()
                    assert page["totalPages"] <= 1
                    found += [(kind, o["panoraTxId"], o["status"]) for o in page["orders"]]
        return found

    def sequence_number(self) -> int:
        with httpx.Client(base_url=self.url, timeout=10) as http:
            response = http.get(f"/v1/accounts/{WALLET}")
        assert response.status_code == 200, response.text
        return int(response.json()["sequence_number"])

    def node_transaction(self, tx_hash: str) -> tuple[dict[str, Any] | None, int]:
        """(the node's record of the hash or None, the ledger time in seconds)."""
        with httpx.Client(base_url=self.url, timeout=10) as http:
            response = http.get(f"/v1/transactions/by_hash/{tx_hash}")
            ledger = int(http.get("/v1").json()["ledger_timestamp"]) // 1_000_000
        if response.status_code == 404:
            return None, ledger
        assert response.status_code == 200, response.text
        record: dict[str, Any] = response.json()
        return record, ledger

    def wait_until_landed_or_dead(self, tx_hash: str, expiration: int) -> dict[str, Any] | None:
        """Block until the transaction committed, or is unknown past its expiration."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            record, ledger = self.node_transaction(tx_hash)
            if record is not None and record["type"] == "user_transaction":
                return record
            if record is None and ledger >= expiration:
                return None
            time.sleep(0.1)
        raise AssertionError(f"transaction {tx_hash} still pending")


@contextmanager
def served(tmp_path: Path, style: str) -> Iterator[Rig]:
    start = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    config = tmp_path / "bot.toml"
    config.write_text(
        "[paper]\n"
        f'clock = "accelerated"\nspeed = {SPEED}\nstart = "{start}"\n'
        f'order_style = "{style}"\n'
        f'api_keys = ["{PAPER_KEY}"]\n'
        "rate_limit_per_second = 1000.0\nrate_limit_burst = 1000\n"
        "funding = [\n"
        f'  {{ wallet = "{WALLET}", token = "USDC", amount = "10000" }},\n'
        f'  {{ wallet = "{WALLET}", token = "APT", amount = "100" }},\n'
        "]\n"
    )
    with paper_serve(config) as (url, _process):
        yield Rig(url, f"sqlite:///{tmp_path / 'bot.db'}")


def assert_chain(states: list[tuple[str | None, str]], current: str, what: str) -> None:
    """The log is a chain: starts at None, each move from the previous state, ends here."""
    assert states, f"{what}: no history"
    assert states[0][0] is None, f"{what}: history starts at {states[0][0]}"
    for (_, before), (after_from, _) in pairwise(states):
        assert after_from == before, f"{what}: broken history {states}"
    assert states[-1][1] == current, f"{what}: history ends at {states[-1][1]}, not {current}"


def assert_held(rig: Rig, intent_id: int, action: str) -> None:
    """An applied create whose answer was lost: one order at the provider, in the journal
    unlinked; the intent unknown, a rerun of its key a duplicate; nothing signed."""
    again = rig.result("execute", action=action)
    assert (again["duplicate"], again["intent_id"], again["state"]) == (True, intent_id, "unknown")
    [(kind, order_id, _status)] = rig.provider_orders()
    with rig.journal() as journal:
        final = journal.intent(intent_id)
        stored = journal.order(kind, order_id)
        assert journal.transactions() == []
    assert final is not None and (final.state, final.order_id) == ("unknown", None)
    assert stored is not None and stored.intent_id is None and stored.strategy is None
    assert rig.sequence_number() == 0


CASES = [
    # (order style, action, failpoint, runner switch). At `after_send` the request has
    # usually not left a fresh process 5 ms later (it is still connecting): `--warm-up`
    # opens the connection first, so the provider applies it; `--throttle` holds it in
    # the client's rate limiter, so it never leaves.
    ("onchain", "create_dca", "after_intent", ""),
    ("onchain", "create_dca", "after_send", "--warm-up"),
    ("onchain", "create_dca", "after_response", ""),
    ("onchain", "create_dca", "before_submit", ""),
    ("onchain", "swap", "before_submit", ""),
    ("escrow", "create_dca", "after_send", "--warm-up"),
    ("escrow", "create_dca", "after_send", "--throttle"),
    ("escrow", "create_dca", "after_response", ""),
    ("onchain", "create_dca", "after_order", ""),
    ("escrow", "create_dca", "after_order", ""),
]


@pytest.mark.parametrize(
    ("style", "action", "failpoint", "switch"),
    CASES,
    ids=["-".join(c[:3]) + c[3].replace("--", "-") for c in CASES],
)
def test_a_crash_window_reconciles_to_one_effect(
    tmp_path: Path, style: str, action: str, failpoint: str, switch: str
) -> None:
    with served(tmp_path, style) as rig:
        # 1. die at the failpoint
        crashed = rig.run("execute", action=action, failpoint=failpoint, switch=switch)
        assert crashed.returncode == -signal.SIGKILL, (crashed.returncode, crashed.stderr[-2000:])
        assert crashed.stdout == ""
        with rig.journal() as journal:
            [intent] = journal.intents()
            left = journal.transactions(intent_id=intent.id)
            journaled = [o for o in journal.orders(wallet=WALLET) if o.intent_id == intent.id]
        assert intent.state == ("planned" if failpoint == "after_intent" else "sent")
        if failpoint == "before_submit":  # the hash is durable before the bytes leave
            assert [t.state for t in left] == ["signed"]
            assert rig.node_transaction(left[0].hash)[0] is None  # and they never left
        elif failpoint == "after_order" and style == "onchain":  # the deposit committed
            assert [t.state for t in left] == ["committed"]
        else:
            assert left == []
        assert len(journaled) == (failpoint == "after_order")

        # 2. restart: reconcile (nothing failed early), then again once nothing can land
        first = rig.result("reconcile")
        [resolution] = first["resolutions"]
        if style == "escrow" and failpoint == "after_response":
            # The provider answered, the answer died with the process: it is there, but
            # nothing the bot produced names it. Never linked on its looks.
            assert (resolution["state"], rig.provider_orders()[0][2]) == ("unknown", "active")
        if switch == "--throttle":  # it never left: nothing to find, nothing failed early
            assert resolution["state"] == "unknown" and rig.provider_orders() == []
        if failpoint == "after_order":  # its own journaled order: confirmed at once, never failed
            assert (resolution["state"], resolution["order_id"]) == (
                "confirmed",
                journaled[0].order_id,
            )
        if resolution["state"] == "unknown":
            with rig.journal() as journal:
                signed = journal.transactions(intent_id=intent.id)
            for tx in signed:
                expiration = json.loads(tx.payload_summary)["expiration_timestamp_secs"]
                assert rig.wait_until_landed_or_dead(tx.hash, expiration) is None
            age = (datetime.now(UTC) - intent.created_at).total_seconds()
            time.sleep(max(0.0, SHORT_GRACE + 0.1 - age))
            second = rig.result("reconcile", grace=SHORT_GRACE)
            [resolution] = second["resolutions"]
        if resolution["state"] == "unknown" and resolution["detail"].startswith("held: "):
            assert style == "escrow" and failpoint in ("after_send", "after_response"), resolution
            assert_held(rig, intent.id, action)
            return
        assert resolution["state"] in SETTLED, resolution

        # 3. the same key again: a duplicate when it was applied, nothing new; a failed
        # key (nothing of it applied) runs again, once
        again = rig.result("execute", action=action)
        if resolution["state"] == "confirmed":
            assert again["duplicate"] is True
            assert (again["intent_id"], again["state"]) == (intent.id, "confirmed")
        else:
            assert again["duplicate"] is False and again["intent_id"] != intent.id
            assert again["state"] == "confirmed", again
            rerun = rig.result("execute", action=action)
            assert (rerun["duplicate"], rerun["intent_id"]) == (True, again["intent_id"])
        assert rig.result("reconcile")["resolutions"] == []

        # the effects, from the journal and from the paper world
        provider = rig.provider_orders()
        with rig.journal() as journal:
            *retired, final = journal.intents()
            assert [(i.id, i.state) for i in retired] == (
                [] if resolution["state"] == "confirmed" else [(intent.id, "failed")]
            )
            history = [(t.from_state, t.state) for t in journal.intent_history(final.id)]
            txs = journal.transactions()
            orders = journal.orders(wallet=WALLET)
            transitions = {
                o.order_id: [
                    (t.from_status, t.to_status) for t in journal.transitions(o.kind, o.order_id)
                ]
                for o in orders
            }
        assert final.state in SETTLED
        assert_chain(history, final.state, f"intent {final.id}")
        if final.state == "confirmed" and action.startswith("create"):
            # exactly one order for the intent, at the provider and in the journal
            assert [o[1] for o in provider] == [final.order_id], provider
            [linked] = [o for o in orders if o.intent_id == final.id]
            assert linked.order_id == final.order_id and linked.strategy == "crash"
        else:
            assert provider == [], provider
            # A failed create may name the order its answer proposed; none was journaled.
            assert [o for o in orders if o.intent_id == final.id] == []
        assert {o.order_id for o in orders} == {o[1] for o in provider}
        for order in orders:
            assert_chain(transitions[order.order_id], order.status, f"order {order.order_id}")

        committed = [t for t in txs if t.state == "committed"]
        assert len([t for t in committed if t.intent_id == final.id]) <= 1
        assert [t for t in committed if t.intent_id == intent.id and retired] == []
        assert [o for o in orders if retired and o.intent_id == intent.id] == []
        assert rig.sequence_number() == len(committed)
        for tx in txs:
            record, _ledger = rig.node_transaction(tx.hash)
            if tx.state == "committed":
                assert record is not None and record["type"] == "user_transaction"
            else:
                assert record is None, (tx.state, record)
