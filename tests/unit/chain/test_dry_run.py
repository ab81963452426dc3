from __future__ import annotations

import pytest
from aptos_sdk import ed25519

from bot.chain.errors import InvalidTxData
from harness.paper_chain import (
    KEY,
    OTHER,
    SENDER,
    ChainRig,
    chain_rig,
    default_policy,
    load_fixture,
    router_txdata,
    swap_intent,
)


@pytest.fixture
def no_signing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: object, data: bytes) -> object:
        raise AssertionError("dry run must not sign")

    monkeypatch.setattr(ed25519.PrivateKey, "sign", refuse)


async def test_dry_run_decodes_simulates_and_signs_nothing(
    harness: ChainRig, no_signing: None
) -> None:
    h = harness
    report = await h.signer.dry_run(router_txdata(), swap_intent())
    assert report.function.endswith("::panora_swap::router_entry")
    assert len(report.type_arguments) == 32 and len(report.arguments) == 20
    first, recipient, minimum = report.arguments[0], report.arguments[1], report.arguments[17]
    assert (first.name, first.move_type, first.value) == (
        "arg0",
        "0x1::option::Option<signer>",
        None,
    )
    assert (recipient.move_type, recipient.value) == ("address", str(SENDER))
    assert (minimum.move_type, minimum.value) == ("u64", "18305")
    assert report.arguments[16].value == ["1000"]
    assert report.simulation is not None and report.simulation.success
    assert report.notes == () and not report.refused
    assert h.wire.submissions == [] and h.recorder.events == []
    assert h.signer.allocator.in_flight == frozenset()
    text = "\n".join(report.lines())
    assert "arg15 (address) = " in text and "simulation: success" in text
    assert report.as_json()["simulation"]["balance_changes"]


async def test_dry_run_reports_refusals_instead_of_raising(
    harness: ChainRig, no_signing: None
) -> None:
    h = harness
    transfer = {
        "function": "0x1::aptos_account::transfer",
        "type_arguments": [],
        "arguments": [str(OTHER), "1000"],
    }
    report = await h.signer.dry_run(transfer)
    assert report.refused
    assert any("[chain].allowed_functions" in n for n in report.notes)
    assert [a.move_type for a in report.arguments] == ["address", "u64"]
    h.set_node(router_pays_to=str(OTHER))
    report = await h.signer.dry_run(router_txdata(), swap_intent())
    assert report.refused and any("not to the recipient" in n for n in report.notes)
    assert h.wire.submissions == []


async def test_dry_run_on_the_wrong_chain_does_not_simulate(no_signing: None) -> None:
    h = chain_rig()
    h.set_node(chain_id=2, ledger_headers=False)
    report = await h.signer.dry_run(router_txdata())
    assert report.simulation is None and report.refused
    assert h.wire.simulations == []
    await h.close()


async def test_dry_run_shows_a_failing_simulation(harness: ChainRig, no_signing: None) -> None:
    much = 10**15  # more than any pool gives for 1,000 base units
    report = await harness.signer.dry_run(router_txdata(min_out=much))
    assert report.refused
    assert any(
        n.startswith("simulation failed: ") and "E_OUTPUT_LESS_THAN_MINIMUM" in n
        for n in report.notes
    )


async def test_dry_run_of_garbage_raises(harness: ChainRig) -> None:
    with pytest.raises(InvalidTxData):
        await harness.signer.dry_run({"function": "nope"})


async def test_dry_run_with_an_unreachable_node_and_a_given_abi(no_signing: None) -> None:
    from bot.aptos.abi import ModuleAbi
    from bot.chain.node import NodeClient
    from bot.chain.outcome import InMemoryRecorder
    from bot.chain.signer import Signer
    from tests.support.loopback import closed_port

    node = NodeClient(f"http://127.0.0.1:{closed_port()}/v1", max_attempts=1)
    signer = Signer(node, KEY, default_policy(), InMemoryRecorder())
    abi = ModuleAbi.from_json(load_fixture("panora_swap_module_abi.json"))
    report = await signer.dry_run(router_txdata(), abi=abi)
    assert report.simulation is None
    assert any(n.startswith("not simulated") for n in report.notes)
    assert len(report.arguments) == 20
    await node.aclose()
