"""The PostgreSQL fixtures of the tests: one throwaway cluster per session, a database per test.

The cluster is `harness.postgres` (the system's `initdb`/`pg_ctl`, as `nobody` when root,
127.0.0.1 only, removed after). Each test gets a fresh database (`pg_database_url`:
`CREATE DATABASE … TEMPLATE template0`, dropped after). When something is missing
(`initdb`/`pg_ctl`, psycopg, a way to drop root), the tests that need PostgreSQL skip with
one line naming it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.postgres import PgCluster, missing_reason, start_cluster

__all__ = ["pg_cluster", "pg_database_url"]


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """The session's cluster; the test skips (one line) when PostgreSQL cannot run here."""
    reason = missing_reason()
    if reason is not None:
        pytest.skip(f"PostgreSQL tests skipped: {reason}")
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_database_url(pg_cluster: PgCluster) -> Iterator[str]:
    """The URL of a fresh, empty database for this test (dropped after it)."""
    name = pg_cluster.create_database()
    try:
        yield pg_cluster.url(name)
    finally:
        pg_cluster.drop_database(name)
