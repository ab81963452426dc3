"""Benchmark: encode + sign + hash the real Panora router txData, per transaction.

Run from the repository root: `python bench/codec.py [iterations]`. The module ABI is parsed once
(as the signer does); each iteration encodes the 20 JSON arguments and 32 type arguments, builds
the `RawTransaction`, signs it with Ed25519, serialises it and computes the transaction hash. The
last line is a one-line summary for CI logs.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from aptos_sdk import ed25519  # noqa: E402
from nacl.signing import SigningKey  # noqa: E402

from bot.aptos.address import Address  # noqa: E402
from bot.aptos.codec import ModuleAbi, encode_entry_function  # noqa: E402
from bot.aptos.transactions import (  # noqa: E402
    build_raw_transaction,
    sign_transaction,
    signed_bytes,
    transaction_hash,
)

FIXTURES = ROOT / "tests" / "fixtures" / "shared" / "aptos"  # the repo's copy
TARGET_NS = 1_000_000
WARMUP = 50


def _ms(ns: int) -> str:
    """Nanoseconds as milliseconds with two decimals, in integer arithmetic."""
    return f"{ns // 1_000_000}.{(ns % 1_000_000) // 10_000:02d}"


def main(iterations: int = 2000) -> int:
    if not FIXTURES.is_dir():
        raise SystemExit(f"fixture directory missing: {FIXTURES}")
    abi = ModuleAbi.from_json(json.loads((FIXTURES / "panora_swap_module_abi.json").read_text()))
    txdata = json.loads((FIXTURES / "panora_router_entry_txdata.json").read_text())
    key = ed25519.PrivateKey(SigningKey(bytes(range(32))))
    sender = Address.parse("0x53aed9413aa7a4aa64305191875df907b9fcf323cba8621a4fe48573dbd18a3e")

    def one(sequence_number: int) -> str:
        payload = encode_entry_function(
            abi, txdata["function"], txdata["type_arguments"], txdata["arguments"]
        )
        raw = build_raw_transaction(
            sender, sequence_number, payload, 200_000, 100, 1_800_000_000, 1
        )
        signed = sign_transaction(raw, key)
        return transaction_hash(signed_bytes(signed))

    for i in range(WARMUP):
        one(i)
    samples: list[int] = []
    for i in range(iterations):
        start = time.perf_counter_ns()
        one(i)
        samples.append(time.perf_counter_ns() - start)
    samples.sort()
    median = samples[len(samples) // 2]
    p90 = samples[(len(samples) * 9) // 10]
    print(f"iterations={iterations} min_ms={_ms(samples[0])} max_ms={_ms(samples[-1])}")
    print(f"median per transaction: {_ms(median)} ms, p90: {_ms(p90)} ms")
    ok = "yes" if median <= TARGET_NS else "no"
    print(f"codec: median_ms={_ms(median)} p90_ms={_ms(p90)} target_ms={_ms(TARGET_NS)} ok={ok}")
    return 0 if ok == "yes" else 1


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
