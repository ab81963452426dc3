"""Shared test hygiene."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import structlog


@pytest.fixture(autouse=True)
def _fresh_logging() -> Iterator[None]:
    """Each test starts and ends with default logging (no handler on a closed stream)."""
    yield
    structlog.reset_defaults()
    logging.getLogger().handlers.clear()
