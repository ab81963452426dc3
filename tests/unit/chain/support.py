"""Shared test material: a key, tokens, paper-layout router txData, a fake clock, a harness."""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from aptos_sdk import ed25519
from nacl.signing import SigningKey

from bot.aptos.address import Address
from bot.aptos.tokens import Token
from bot.chain.keys import account_address, authentication_key
from bot.chain.node import NodeClient
from bot.chain.outcome import InMemoryRecorder
from bot.chain.policy import Intent, IntentKind, SignerPolicy
from bot.chain.signer import Signer
from tests.unit.chain.fake_node import APT, FakeNode, FaultTransport, load_fixture

SEED = bytes(range(32))
KEY = ed25519.PrivateKey(SigningKey(SEED))
SENDER = account_address(KEY)
SELL = Token(
    decimals=6,
    symbol="USDC",
    fa_address="0x357b0b74bc833e95a115ad22604854d6b0fca151cecd94111770e5d6ffc9dc2b",
)
BUY = Token(
    decimals=8,
    symbol="THL",
    fa_address="0x2ebb2ccac5e027a87fa0e2e5f656a3a4238d6a48d93ec9b610d570fc0aa0df12",
)
APT_TOKEN = Token(decimals=8, symbol="APT", coin_type=APT, fa_address="0xa")
OTHER = Address.parse("0x" + "0b" * 32)
NODE_URL = "http://node.test/v1"


def router_txdata(
    amount_in: int = 1_000,
    min_out: int = 18_305,
    recipient: Address = SENDER,
    sell: str | None = None,
    buy: str | None = None,
) -> dict[str, Any]:
    """The real fixture's shape, with the paper layout's slots set."""
    data: dict[str, Any] = copy.deepcopy(load_fixture("panora_router_entry_txdata.json"))
    args = data["arguments"]
    args[10][0][0] = sell or SELL.fa_address
    args[11][0][0] = buy or BUY.fa_address
    args[1] = str(recipient)
    args[16] = [str(amount_in)]
    args[17] = str(min_out)
    return data


def swap_intent(amount_in: int = 1_000, min_out: int = 18_305, **kwargs: Any) -> Intent:
    return Intent(
        kind=IntentKind.SWAP,
        sender=SENDER,
        sell=kwargs.pop("sell", SELL),
        sell_amount=amount_in,
        buy=kwargs.pop("buy", BUY),
        min_out=min_out,
        **kwargs,
    )


class FakeTime:
    """Monotonic time that moves only in `sleep`; the fake node's ledger moves with it."""

    def __init__(self, node: FakeNode) -> None:
        self.now = 0.0
        self.node = node
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        self.node.advance(seconds)
        await asyncio.sleep(0)


@dataclass
class Harness:
    fake: FakeNode
    transport: FaultTransport
    node: NodeClient
    signer: Signer
    recorder: InMemoryRecorder
    time: FakeTime

    async def close(self) -> None:
        await self.node.aclose()


def default_policy(**kwargs: Any) -> SignerPolicy:
    values: dict[str, Any] = {
        "chain_id": 4,
        "max_slippage_percent": Decimal("5"),
        "max_gas_amount": 200_000,
    }
    values.update(kwargs)
    return SignerPolicy(**values)


def make_harness(
    fake: FakeNode | None = None,
    policy: SignerPolicy | None = None,
    *,
    fund: bool = True,
    **signer_kwargs: Any,
) -> Harness:
    fake = fake or FakeNode()
    if fund:
        auth = authentication_key(KEY.public_key())
        fake.fund(SENDER, APT, 10_000_000_000, auth_key=auth)
        fake.fund(SENDER, str(Address.parse(SELL.fa_address or "")), 1_000_000_000)
    clock = FakeTime(fake)
    transport = fake.transport()
    policy = policy or default_policy()
    node = NodeClient(
        NODE_URL,
        expected_chain_id=policy.chain_id,
        transport=transport,
        sleep=clock.sleep,
        monotonic=clock.monotonic,
    )
    recorder = InMemoryRecorder()
    signer = Signer(
        node, KEY, policy, recorder, sleep=clock.sleep, monotonic=clock.monotonic, **signer_kwargs
    )
    return Harness(fake, transport, node, signer, recorder, clock)
