"""Benchmark: the signer's own cost per transaction, and HTTP round trips per swap.

Run from the repository root: `python bench/signer.py [iterations]`.

* Overhead (no network): per transaction, the policy's pre-signing checks, ABI encoding of
  the real router txData (32 type arguments, 20 arguments), the policy's judgement of a
  simulation's balance changes, building the `RawTransaction`, Ed25519 signing, BCS and the
  hash. Median over `iterations` (target ≤ 3 ms).
* Round trips: full `Signer.execute` swaps against the paper world's node, in process
  (`harness.paper_chain`, the chain tests' rig: `httpx.ASGITransport`), counting the node
  requests the signer makes: the first swap (cold caches: ledger info, ABI, gas price,
  account) and the steady state. The quote (one provider request) comes before the signer
  and is added to the total.

The last line is a one-line summary for CI logs.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import structlog  # noqa: E402

from bot.aptos.address import Address  # noqa: E402
from bot.aptos.codec import ModuleAbi, encode_entry_function  # noqa: E402
from bot.aptos.transactions import (  # noqa: E402
    build_raw_transaction,
    sign_transaction,
    signed_bytes,
    transaction_hash,
)
from bot.chain.records import BalanceChange, SimulationResult  # noqa: E402
from harness.paper_chain import (  # noqa: E402
    BUY,
    KEY,
    SELL,
    SENDER,
    chain_rig,
    default_policy,
    load_fixture,
    router_txdata,
    swap_intent,
)

TARGET_NS = 3_000_000
WARMUP = 50
STEADY_SWAPS = 20
QUOTE_ROUND_TRIPS = 1
POOL = Address.parse("0x" + "99" * 32)
"""Where the judged simulation says the swap's tokens come from and go (any other account)."""


def _ms(ns: int) -> str:
    """Nanoseconds as milliseconds with two decimals, in integer arithmetic."""
    return f"{ns // 1_000_000}.{(ns % 1_000_000) // 10_000:02d}"


def _per_swap(count: int) -> Decimal:
    """Requests per steady-state swap, to two places."""
    return (Decimal(count) / STEADY_SWAPS).quantize(Decimal("0.01"))


def overhead(iterations: int) -> tuple[int, int]:
    """Median and p90 nanoseconds of the signer's per-transaction work, no network."""
    abi = ModuleAbi.from_json(load_fixture("panora_swap_module_abi.json")).function("router_entry")
    policy = default_policy()
    txdata = router_txdata()
    intent = swap_intent()
    sell, buy = SELL.fa_address or "", BUY.fa_address or ""
    simulation = SimulationResult(
        success=True,
        vm_status="Executed successfully",
        gas_used=1_000,
        gas_unit_price=100,
        events=(),
        changes=(),
        balance_changes=(
            BalanceChange(SENDER, sell, -1_000),
            BalanceChange(POOL, sell, 1_000),
            BalanceChange(POOL, buy, -18_488),
            BalanceChange(SENDER, buy, 18_488),
        ),
    )

    def one(sequence_number: int) -> str:
        function = policy.check_call(txdata, intent)
        payload = encode_entry_function(
            abi, function, txdata["type_arguments"], txdata["arguments"]
        )
        policy.check_effects(simulation, intent, function=str(function))
        raw = build_raw_transaction(
            SENDER, sequence_number, payload, 1_500, 100, 1_800_000_000, policy.chain_id
        )
        return transaction_hash(signed_bytes(sign_transaction(raw, KEY)))

    for i in range(WARMUP):
        one(i)
    samples: list[int] = []
    for i in range(iterations):
        start = time.perf_counter_ns()
        one(i)
        samples.append(time.perf_counter_ns() - start)
    samples.sort()
    return samples[len(samples) // 2], samples[(len(samples) * 9) // 10]


async def round_trips(headers: bool = True) -> tuple[int, int, Counter[str]]:
    """Node requests for the first swap, and over `STEADY_SWAPS` later swaps (by kind).

    Steady-state swaps are spaced 10 s apart (scripted time), so a ledger time is never
    fresh from the previous swap.
    """
    harness = chain_rig()
    harness.set_node(ledger_headers=headers)
    node = harness.node
    await harness.signer.execute(router_txdata(), swap_intent())
    cold = node.stats.total
    before = Counter(node.stats.requests)
    for _ in range(STEADY_SWAPS):
        await harness.time.sleep(10)
        outcome = await harness.signer.execute(router_txdata(), swap_intent())
        assert outcome.success
    steady = node.stats.requests - before
    await harness.close()
    return cold, sum(steady.values()), steady


def main(iterations: int = 1000) -> int:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    median, p90 = overhead(iterations)
    print(f"overhead: iterations={iterations} median_ms={_ms(median)} p90_ms={_ms(p90)}")
    cold, total, kinds = asyncio.run(round_trips())
    steady = _per_swap(total)
    per_kind = ", ".join(f"{k} ×{_per_swap(v)}" for k, v in sorted(kinds.items()))
    print(f"node round trips: first swap {cold}, then {steady} per swap ({per_kind})")
    _, bare, bare_kinds = asyncio.run(round_trips(headers=False))
    print(
        f"  without X-Aptos-Ledger-TimestampUsec headers: {_per_swap(bare)} per swap "
        f"(GET /v1 ×{_per_swap(bare_kinds['GET /v1'])})"
    )
    trips = steady + QUOTE_ROUND_TRIPS
    print(f"per swap end to end: {trips} (quote {QUOTE_ROUND_TRIPS} + node {steady})")
    ok = "yes" if median <= TARGET_NS and steady <= 3 + Decimal("0.5") else "no"
    print(
        f"signer: overhead_median_ms={_ms(median)} p90_ms={_ms(p90)} "
        f"target_ms={_ms(TARGET_NS)} round_trips_per_swap={trips} "
        f"first_swap_node_round_trips={cold} ok={ok}"
    )
    return 0 if ok == "yes" else 1


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
