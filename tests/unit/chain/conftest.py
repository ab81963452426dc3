from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator

import pytest
import structlog

from tests.unit.chain.support import Harness, make_harness


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
async def harness() -> AsyncIterator[Harness]:
    h = make_harness()
    yield h
    await h.close()
