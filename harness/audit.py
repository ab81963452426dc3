"""The journal against the paper world: every intent applied exactly once, or not at all.

`audit(journal, world, wallet, funding)` reads a journal (read-only) and a paper world's
state (restored from its snapshot, frozen) and counts what a crash or a fault could have
broken:

* effects per intent, from the world's side: a create intent's effect is an order the
  world activated with a committed deposit the journal attributes to that intent; a
  cancel's is a committed withdraw, a swap's a committed router call (only successful
  commits count). `duplicates` = every effect beyond the first; `wrong_effects` = a
  confirmed intent with no effect, a failed one with an effect; `unsettled` = intents
  left planned, sent or unknown; `applied_once` = confirmed intents with exactly one
  effect (plus failed ones with none: nothing, once);
* `double_tx`: intents with more than one committed transaction of the same payload;
  `unrecorded_tx`: committed transactions of the wallet the journal never recorded (the
  hash is journaled before the bytes leave, so this must be 0); `stale_tx`: journal rows
  that disagree with the chain (a committed transaction still `signed` in the journal);
* `orphans`: effects that belong to no intent (an activated order whose deposit is not an
  intent's, a committed call without an intent); `mislinked`: an order the journal links
  to another intent than the one whose deposit funded it;
* `missing`: orders the world activated for the wallet that the journal does not hold;
* `lost_transitions`: orders whose journal status differs from the world's, or whose
  transition log is not a chain (None → … → current, no repeated step);
  `lost_fills`: the world's tx details of an order the journal does not hold (and the
  other way round);
* `conserved`: the world's ledger holds what was minted, and the wallet holds
  funding − deposits − swap inputs − gas + swap outputs + order fills + refunds.

The first problems are kept as text (`problems`) so a failing run says what went wrong.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Final

from bot.journal import Journal
from bot.paper.core.chain import TxRecord
from bot.paper.world import PaperWorld

__all__ = ["Audit", "audit"]

APT: Final = "0x1::aptos_coin::AptosCoin"
OPEN: Final = ("planned", "sent", "unknown")
_MAX_PROBLEMS: Final = 40


@dataclass
class Audit:
    """The figures of one audit (see the module docstring)."""

    intents: Counter[str] = field(default_factory=Counter)
    applied_once: int = 0
    duplicates: int = 0
    wrong_effects: int = 0
    unsettled: int = 0
    double_tx: int = 0
    unrecorded_tx: int = 0
    stale_tx: int = 0
    orphans: int = 0
    mislinked: int = 0
    missing: int = 0
    lost_transitions: int = 0
    lost_fills: int = 0
    world_orders: int = 0
    committed_tx: int = 0
    conserved: bool = True
    problems: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """True when nothing was lost, doubled or left unexplained."""
        return self.conserved and not any(
            (
                self.duplicates,
                self.wrong_effects,
                self.unsettled,
                self.double_tx,
                self.unrecorded_tx,
                self.stale_tx,
                self.orphans,
                self.mislinked,
                self.missing,
                self.lost_transitions,
                self.lost_fills,
            )
        )

    def note(self, text: str) -> None:
        """Keep a problem's description (the first few)."""
        if len(self.problems) < _MAX_PROBLEMS:
            self.problems.append(text)


def _committed(world: PaperWorld, wallet: str) -> list[TxRecord]:
    return sorted(
        (r for r in world.chain.transactions() if r.sender == wallet and r.effects is not None),
        key=lambda r: r.version or 0,
    )


def _call(record: TxRecord) -> tuple[str, list[Any]]:
    payload = record.payload
    return str(payload.get("function", "")), list(payload.get("arguments", []))


def audit(journal: Journal, world: PaperWorld, wallet: str, funding: Mapping[str, int]) -> Audit:
    """Compare the journal with the world; `funding` is base units by token address."""
    result = Audit()
    intents = {i.id: i for i in journal.intents() if i.wallet == wallet}
    result.intents = Counter(i.state for i in intents.values())
    journal_txs = {t.hash: t for t in journal.transactions()}
    committed = _committed(world, wallet)
    result.committed_tx = len(committed)

    effects: dict[int, list[str]] = defaultdict(list)
    payloads: dict[int, Counter[str]] = defaultdict(Counter)
    deposited: dict[str, int | None] = {}  # order id → the intent whose deposit funded it
    for record in committed:
        assert record.effects is not None
        row = journal_txs.get(record.hash)
        function, args = _call(record)
        if row is None:
            result.unrecorded_tx += 1
            result.note(f"committed tx {record.hash} ({function}) is not in the journal")
        elif row.state != ("committed" if record.effects.success else "failed"):
            result.stale_tx += 1
            result.note(f"tx {record.hash} committed on chain, journal says {row.state}")
        intent_id = row.intent_id if row is not None else None
        if intent_id is not None:
            payloads[intent_id][json.dumps(record.payload, sort_keys=True)] += 1
        if not record.effects.success:
            continue
        if function.endswith("::deposit"):
            deposited[str(args[0])] = intent_id
        if intent_id is None:
            result.orphans += 1
            result.note(f"committed {function} {record.hash} belongs to no intent")
        else:
            effects[intent_id].append(record.hash)
    for row in journal_txs.values():
        if row.state == "committed" and world.chain.transaction(row.hash) is None:
            result.stale_tx += 1
            result.note(f"journal says tx {row.hash} committed; the chain does not know it")
    for intent_id, counts in payloads.items():
        repeated = sum(n - 1 for n in counts.values() if n > 1)
        if repeated:
            result.double_tx += repeated
            result.note(f"intent {intent_id}: the same payload committed {repeated + 1} times")

    _judge_intents(result, intents, effects)
    _orders(result, journal, world, wallet, deposited)
    _conservation(result, world, wallet, funding, committed)
    return result


def _judge_intents(
    result: Audit, intents: Mapping[int, Any], effects: Mapping[int, list[str]]
) -> None:
    for intent in intents.values():
        done = len(effects.get(intent.id, []))
        if intent.state in OPEN:
            result.unsettled += 1
            result.note(f"intent {intent.id} ({intent.idempotency_key}) left {intent.state}")
        elif intent.state == "confirmed" and done == 0:
            result.wrong_effects += 1
            result.note(f"intent {intent.id} ({intent.idempotency_key}) confirmed, no effect")
        elif intent.state == "failed" and done:
            result.wrong_effects += 1
            result.note(f"intent {intent.id} ({intent.idempotency_key}) failed, yet applied")
        elif (intent.state == "confirmed" and done == 1) or (
            intent.state == "failed" and done == 0
        ):
            result.applied_once += 1
        if done > 1:
            result.duplicates += done - 1
            result.note(f"intent {intent.id} ({intent.idempotency_key}) applied {done} times")


def _orders(
    result: Audit,
    journal: Journal,
    world: PaperWorld,
    wallet: str,
    deposited: Mapping[str, int | None],
) -> None:
    stored = {(o.kind, o.order_id): o for o in journal.orders(wallet=wallet)}
    for kind, engine in (("dca", world.market.dca), ("limit", world.market.limit)):
        for order in engine.orders_of(wallet):
            result.world_orders += 1
            key = (kind, order.order_id)
            mine = stored.get(key)
            if order.order_id not in deposited:
                result.orphans += 1
                result.note(f"{kind} order {order.order_id} active without a committed deposit")
            if mine is None:
                result.missing += 1
                result.note(f"{kind} order {order.order_id} ({order.status}) not in the journal")
                continue
            linked = deposited.get(order.order_id)
            if linked is not None and mine.intent_id not in (None, linked):
                result.mislinked += 1
                result.note(f"{kind} order {order.order_id} linked to intents {mine.intent_id}")
            if mine.status != order.status:
                result.lost_transitions += 1
                result.note(
                    f"{kind} order {order.order_id}: journal {mine.status}, world {order.status}"
                )
            steps = [
                (t.from_status, t.to_status) for t in journal.transitions(kind, order.order_id)
            ]
            if not _is_chain(steps, mine.status):
                result.lost_transitions += 1
                result.note(f"{kind} order {order.order_id}: broken history {steps}")
            ours = Counter(f.tx_id for f in journal.fills(kind, order.order_id))
            theirs = Counter(d.tx_id for d in order.details)
            if ours != theirs:
                result.lost_fills += sum(((theirs - ours) + (ours - theirs)).values())
                result.note(f"{kind} order {order.order_id}: fills differ {theirs - ours}")


def _is_chain(steps: list[tuple[str | None, str]], current: str) -> bool:
    """None → … → current, each step from the previous one, never a step to itself."""
    if not steps or steps[0][0] is not None or steps[-1][1] != current:
        return False
    return all(a == b for (_, b), (a, _) in pairwise(steps)) and all(x != y for x, y in steps)


def _conservation(
    result: Audit,
    world: PaperWorld,
    wallet: str,
    funding: Mapping[str, int],
    committed: list[TxRecord],
) -> None:
    ledger = world.market.ledger
    for token in sorted(ledger.tokens()):
        if ledger.total(token) != ledger.minted(token):
            result.conserved = False
            result.note(
                f"{token}: accounts hold {ledger.total(token)}, minted {ledger.minted(token)}"
            )
    expected: Counter[str] = Counter(dict(funding))
    for record in committed:
        raw = record.signed.transaction
        assert record.effects is not None
        expected[APT] -= min(record.effects.gas_used, raw.max_gas_amount) * raw.gas_unit_price
        for event in record.effects.events if record.effects.success else []:
            data = event.get("data", {})
            if str(event.get("type", "")).endswith("::SwapEvent"):
                expected[data["from_token"]] -= int(data["amount_in"])
                if data["recipient"] == wallet:
                    expected[data["to_token"]] += int(data["amount_out"])
    for engine in (world.market.dca, world.market.limit):
        for order in engine.orders_of(wallet):
            if order.owner == wallet:
                expected[order.sell.address] += order.withdrawn - order.funded
            if order.recipient == wallet:
                expected[order.buy.address] += order.received
    for token in sorted(set(expected) | set(ledger.balances(wallet))):
        held = ledger.balance(wallet, token)
        if held != expected[token]:
            result.conserved = False
            result.note(f"wallet {token}: holds {held}, funding and effects say {expected[token]}")
