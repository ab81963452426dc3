"""The node's answers are bounded too: size while streaming, a deadline per exchange.

The same hostile loopback server as the provider's (tests/support/hostile_answers.py),
answering as a node: a read that never ends or trickles is unavailable (retried, each
attempt bounded); a submission whose answer is lost that way is an unknown outcome, never
resent.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from bot.chain.errors import NodeUnavailable, SubmitOutcomeUnknown
from bot.chain.node import NodeClient
from tests.support.hostile_answers import Answer, HostileProvider, MiB
from tests.support.loopback import serve

LIMIT = 256 * 1024
DEADLINE = 1.0


async def no_sleep(_seconds: float) -> None:
    """Back-off without waiting."""


@pytest.fixture
def hostile() -> HostileProvider:
    return HostileProvider()


@pytest.fixture
def node_url(hostile: HostileProvider) -> Iterator[str]:
    with serve(hostile) as url:
        yield url + "/v1"


def node(url: str) -> NodeClient:
    return NodeClient(
        url,
        timeout_seconds=5.0,  # longer than any pause between chunks: only the deadline cuts
        deadline_seconds=DEADLINE,
        max_response_bytes=LIMIT,
        max_attempts=2,
        sleep=no_sleep,
    )


async def test_an_endless_node_answer_is_refused_while_it_streams(
    node_url: str, hostile: HostileProvider
) -> None:
    hostile.answers["GET /v1"] = Answer(stream_bytes=50 * MiB)
    started = time.monotonic()
    async with node(node_url) as client:
        with pytest.raises(NodeUnavailable, match=f"over the limit of {LIMIT} bytes"):
            await client.ledger_info()
    assert time.monotonic() - started < 10
    assert hostile.calls["GET /v1"] == 2  # a read is retried, each attempt bounded


async def test_a_trickling_node_read_ends_at_the_deadline(
    node_url: str, hostile: HostileProvider
) -> None:
    hostile.answers["GET /v1"] = Answer(trickle=0.2)
    started = time.monotonic()
    async with node(node_url) as client:
        with pytest.raises(NodeUnavailable, match="within 1 s"):
            await client.ledger_info()
    elapsed = time.monotonic() - started
    assert 2 * DEADLINE <= elapsed < 2 * DEADLINE + 3  # two attempts, each cut at the deadline


async def test_a_submission_whose_answer_trickles_is_an_unknown_outcome_never_resent(
    node_url: str, hostile: HostileProvider
) -> None:
    hostile.answers["POST /v1/transactions"] = Answer(status=202, trickle=0.2)
    async with node(node_url) as client:
        with pytest.raises(SubmitOutcomeUnknown):
            await client.submit(b"\x00" * 10, "0x" + "ab" * 32)
    assert hostile.calls["POST /v1/transactions"] == 1
