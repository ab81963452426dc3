"""Shared test hygiene."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import structlog

# The throwaway PostgreSQL cluster (`pg_cluster`, one a session) and its fresh databases.
pytest_plugins = ["tests.support.postgres"]


@pytest.fixture(autouse=True)
def _fresh_logging() -> Iterator[None]:
    """Each test starts and ends with default logging (no handler on a closed stream)."""
    yield
    structlog.reset_defaults()
    logging.getLogger().handlers.clear()
