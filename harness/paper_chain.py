"""The bot's signer against the paper world's node, in process, on a scripted clock.

For the chain tests and `bench/signer.py`: one paper world (`bot.paper`) — the same node
every other test meets — reached through `httpx.ASGITransport` wrapped in a `Wire`,
which plays the network: it records every request, and can refuse a connection or lose an
answer once. Faults of the node itself are the paper node's own (`NodeSettings`,
`NodeReadFaults`). Time moves only when the signer sleeps (`ScriptedTime`), and the paper
ledger moves with it.

The wallet is a fixed test key's; `router_txdata` is the real router's txData (the mainnet
fixture, `tests/fixtures/shared/aptos`) with the paper layout's slots set.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any, Final

import httpx

from bot.aptos.address import Address
from bot.aptos.tokens import Token
from bot.aptos.transactions import transaction_hash
from bot.chain.node import NodeClient
from bot.chain.outcome import InMemoryRecorder
from bot.chain.policy import Intent, IntentKind, SignerPolicy
from bot.chain.signer import Signer
from bot.clock import SteppedClock
from bot.config import PaperFunding, PaperSettings
from bot.paper.core.chain import NodeSettings, TxRecord
from bot.paper.faults import NodeReadFaults
from bot.paper.world import PaperWorld, build_world
from harness.paper_signing import address_of, fixed_key

__all__ = [
    "APT",
    "APT_TOKEN",
    "BUY",
    "FIXTURES",
    "KEY",
    "NODE_URL",
    "OTHER",
    "SELL",
    "SENDER",
    "START",
    "ChainRig",
    "ScriptedTime",
    "Wire",
    "chain_rig",
    "default_policy",
    "load_fixture",
    "router_txdata",
    "swap_intent",
]

FIXTURES: Final = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "shared" / "aptos"
"""The real Aptos reference data (router ABI and txData, a signing vector)."""
KEY: Final = fixed_key("chain-signer")
SENDER: Final = Address.parse(address_of(KEY))
APT: Final = "0x1::aptos_coin::AptosCoin"
APT_TOKEN: Final = Token(decimals=8, symbol="APT", coin_type=APT, fa_address="0xa")
SELL: Final = Token(
    decimals=6,
    symbol="USDt",
    fa_address="0x357b0b74bc833e95a115ad22604854d6b0fca151cecd94111770e5d6ffc9dc2b",
)
BUY: Final = Token(
    decimals=8,
    symbol="CELL",
    fa_address="0x2ebb2ccac5e027a87fa0e2e5f656a3a4238d6a48d93ec9b610d570fc0aa0df12",
)
OTHER: Final = Address.parse("0x" + "0b" * 32)
NODE_URL: Final = "http://paper/v1"
START: Final = "2026-01-01T00:00:00Z"
FUNDS: Final = {"APT": Decimal(100), "USDt": Decimal(1000)}


@cache
def _fixture_text(name: str) -> str:
    path = FIXTURES / name
    if not path.is_file():
        raise FileNotFoundError(f"fixture missing (tests must not skip): {path}")
    return path.read_text()


def load_fixture(name: str) -> Any:
    """A JSON fixture of `FIXTURES`, parsed afresh (callers may change it)."""
    return json.loads(_fixture_text(name))


def router_txdata(
    amount_in: int = 1_000,
    min_out: int = 18_305,
    recipient: Address = SENDER,
    sell: str | None = None,
    buy: str | None = None,
) -> dict[str, Any]:
    """The real fixture's shape, with the paper layout's slots set (#1, #10, #11, #16, #17)."""
    data: dict[str, Any] = copy.deepcopy(load_fixture("panora_router_entry_txdata.json"))
    args = data["arguments"]
    args[10][0][0] = sell or SELL.fa_address
    args[11][0][0] = buy or BUY.fa_address
    args[1] = str(recipient)
    args[16] = [str(amount_in)]
    args[17] = str(min_out)
    return data


def swap_intent(amount_in: int = 1_000, min_out: int = 18_305, **kwargs: Any) -> Intent:
    """The swap `router_txdata` asks for, as the bot would have computed it."""
    return Intent(
        kind=IntentKind.SWAP,
        sender=SENDER,
        sell=kwargs.pop("sell", SELL),
        sell_amount=amount_in,
        buy=kwargs.pop("buy", BUY),
        min_out=min_out,
        **kwargs,
    )


def default_policy(**kwargs: Any) -> SignerPolicy:
    """Chain 4, the router only, 5% slippage, a 200,000 gas budget (`kwargs` override)."""
    values: dict[str, Any] = {
        "chain_id": 4,
        "max_slippage_percent": Decimal("5"),
        "max_gas_amount": 200_000,
    }
    values.update(kwargs)
    return SignerPolicy(**values)


class Wire(httpx.AsyncBaseTransport):
    """The network to the paper world: records every request; refuses or drops on cue.

    `faults` holds `(label, kind)` with label `"POST /v1/transactions"` and the like:
    `connect` refuses the connection before the node sees the request; `drop` lets the
    node apply it, then loses the answer (`ReadError`). Each fault fires once.
    """

    def __init__(self, world: PaperWorld) -> None:
        self.inner = httpx.ASGITransport(app=world.app)
        self.faults: list[tuple[str, str]] = []
        self.requests: list[str] = []
        """`METHOD /path` of every request that reached the node, in order."""
        self.bodies: list[tuple[str, bytes]] = []

    def sent(self, label: str) -> list[bytes]:
        """The bodies of the requests labelled `label` that reached the node."""
        return [body for seen, body in self.bodies if seen == label]

    @property
    def submissions(self) -> list[bytes]:
        """Signed transactions the node received."""
        return self.sent("POST /v1/transactions")

    @property
    def simulations(self) -> list[bytes]:
        """Simulated transactions the node received."""
        return self.sent("POST /v1/transactions/simulate")

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request` to the world, unless a fault says otherwise."""
        label = f"{request.method} {request.url.path}"
        fault = next((i for i, (seen, _) in enumerate(self.faults) if seen == label), None)
        kind = self.faults.pop(fault)[1] if fault is not None else None
        if kind == "connect":
            raise httpx.ConnectError("connection refused", request=request)
        body = await request.aread()
        self.requests.append(label)
        self.bodies.append((label, body))
        response = await self.inner.handle_async_request(request)
        if kind == "drop":
            await response.aread()
            raise httpx.ReadError("connection dropped", request=request)
        return response


class ScriptedTime:
    """Monotonic time that moves only in `sleep`; the paper ledger moves with it."""

    def __init__(self, world: PaperWorld) -> None:
        self.now = 0.0
        self.world = world
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        """Seconds slept so far."""
        return self.now

    async def sleep(self, seconds: float) -> None:
        """Move the local and the ledger clock on by `seconds` (without waiting)."""
        self.sleeps.append(seconds)
        self.now += seconds
        self.advance(seconds)
        await asyncio.sleep(0)

    def advance(self, seconds: float) -> None:
        """Move only the ledger (the paper clock) on by `seconds`."""
        clock = self.world.market.clock
        if not isinstance(clock, SteppedClock):
            raise TypeError("the paper world of a chain rig runs on a stepped clock")
        if seconds > 0:
            clock.advance(timedelta(seconds=seconds))


@dataclass
class ChainRig:
    """The signer, its node client and the paper world behind a recording wire."""

    world: PaperWorld
    wire: Wire
    node: NodeClient
    signer: Signer
    recorder: InMemoryRecorder
    time: ScriptedTime

    def balance(self, owner: Address | str, token: Token) -> int:
        """`owner`'s balance of `token` in the paper ledger (base units)."""
        market = self.world.market
        return market.balance(str(Address.parse(str(owner))), market.tokens.require(token.address))

    def committed(self) -> list[str]:
        """Hashes of the transactions of ours the paper chain committed, in commit order."""
        done = [r for r in self.world.chain.transactions() if r.version is not None]
        return [r.hash for r in sorted(done, key=lambda r: r.version or 0)]

    def foreign(self, *, pruned: bool = False) -> str:
        """Another signer of the wallet commits with its next sequence number; the hash.

        `pruned`: the node shows that transaction nowhere.
        """
        return self.world.chain.commit_foreign(str(SENDER), pruned=pruned).hash

    def on_submit(self, hook: Callable[[str], None], *, admitted: bool = False) -> None:
        """Call `hook(tx_hash)` at each submission the node receives.

        Before the node judges it, or (`admitted`) once it sits in the mempool.
        """
        chain = self.world.chain
        real = chain.submit

        def submit(data: bytes) -> TxRecord:
            if not admitted:
                hook(transaction_hash(data))
            record = real(data)
            if admitted:
                hook(record.hash)
            return record

        vars(chain)["submit"] = submit

    def set_node(self, **changes: Any) -> None:
        """Change the paper node's settings (`NodeSettings` fields) from now on."""
        chain = self.world.chain
        chain.settings = replace(chain.settings, **changes)

    @property
    def read_faults(self) -> NodeReadFaults:
        """The paper node's read faults (set their fields to arm them)."""
        return self.world.node_api.read_faults

    @property
    def ledger_secs(self) -> int:
        """The paper ledger's time, in seconds."""
        return self.world.chain.ledger_timestamp_us // 1_000_000

    async def close(self) -> None:
        """Close the node client."""
        await self.node.aclose()


def chain_rig(
    policy: SignerPolicy | None = None,
    *,
    node: NodeSettings | None = None,
    fund: bool = True,
    **signer_kwargs: Any,
) -> ChainRig:
    """A paper world whose wallet (`SENDER`) holds `FUNDS` unless `fund` is false; a signer."""
    funding = [PaperFunding(wallet=str(SENDER), token=t, amount=a) for t, a in FUNDS.items()]
    world = build_world(
        PaperSettings(
            clock="stepped",
            start=START,
            api_keys=["k"],
            rate_limit_per_second=1e6,
            rate_limit_burst=10**6,
            funding=funding if fund else [],
        )
    )
    if node is not None:
        world.chain.settings = node
    time = ScriptedTime(world)
    wire = Wire(world)
    policy = policy or default_policy()
    client = NodeClient(
        NODE_URL,
        expected_chain_id=policy.chain_id,
        transport=wire,
        sleep=time.sleep,
        monotonic=time.monotonic,
    )
    recorder = InMemoryRecorder()
    signer = Signer(
        client, KEY, policy, recorder, sleep=time.sleep, monotonic=time.monotonic, **signer_kwargs
    )
    return ChainRig(world, wire, client, signer, recorder, time)
