from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator

import pytest
import structlog

from harness.paper_chain import ChainRig, chain_rig


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """Tests that configure logging (the CLI, redaction checks) must not leak streams."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    config = structlog.get_config()
    yield
    structlog.configure(**config)
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture
async def harness() -> AsyncIterator[ChainRig]:
    """The signer against a fresh paper world (`harness.paper_chain`)."""
    h = chain_rig()
    yield h
    await h.close()
