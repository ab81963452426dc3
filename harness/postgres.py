"""A throwaway PostgreSQL cluster, started with the system's `initdb`/`pg_ctl`.

Used by the tests (`tests.support.postgres`: one cluster per session, a fresh database
per test) and by `bench/hyperopt.py --postgres`. The cluster lives in a temporary folder
that also holds its unix socket; it listens on 127.0.0.1 only, on a free port, and is
stopped and removed with `PgCluster.stop` (or at exit).

PostgreSQL refuses to run as root: as root the cluster runs as the unprivileged user
`nobody` (through `runuser`, else `setpriv`), its folder owned by that user. The server
is tuned for tests only (`fsync=off`, no synchronous commit): nothing in it must survive.

When something is missing (`initdb`/`pg_ctl`, psycopg, a way to drop root), the tests that
need PostgreSQL skip with one line naming it.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PgCluster", "find_bindir", "missing_reason", "start_cluster"]

_UNPRIVILEGED = "nobody"


def find_bindir() -> Path | None:
    """The folder holding `initdb` and `pg_ctl`: on PATH, else the newest Debian install."""
    on_path = shutil.which("initdb")
    if on_path and shutil.which("pg_ctl"):
        return Path(on_path).parent
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    for bindir in reversed(candidates):
        if (bindir / "initdb").exists() and (bindir / "pg_ctl").exists():
            return bindir
    return None


def _demote() -> list[str]:
    """The command prefix that runs a program as `nobody` (root only); [] when not root."""
    if os.geteuid() != 0:
        return []
    if shutil.which("runuser"):
        return ["runuser", "-u", _UNPRIVILEGED, "--"]
    if shutil.which("setpriv"):
        return ["setpriv", f"--reuid={_UNPRIVILEGED}", "--regid=nogroup", "--clear-groups"]
    raise RuntimeError("running as root and neither runuser nor setpriv is installed")


def missing_reason() -> str | None:
    """One line naming what the PostgreSQL tests lack; None when they can run."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'psycopg[binary]>=3.1')"
    if find_bindir() is None:
        return "initdb/pg_ctl not found (install the postgresql package)"
    if os.geteuid() == 0 and not (shutil.which("runuser") or shutil.which("setpriv")):
        return "running as root and neither runuser nor setpriv is installed"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PgCluster:
    """A running throwaway cluster: its folder, port and superuser `postgres` (trust)."""

    root: Path
    port: int
    bindir: Path
    _names: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def url(self, database: str = "postgres") -> str:
        """The SQLAlchemy URL of `database` on this cluster."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def _admin(self, sql: str) -> None:
        import psycopg

        conninfo = f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(sql.encode())

    def create_database(self, prefix: str = "t") -> str:
        """A fresh empty database (from `template0`); returns its name."""
        name = f"{prefix}_{next(self._names)}"
        self._admin(f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8'")
        return name

    def drop_database(self, name: str) -> None:
        """Drop `name`, ending whatever connection is still open on it."""
        self._admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        """Stop the server at once and remove its folder (again: nothing happens)."""
        if not self.root.exists():
            return
        subprocess.run(  # noqa: S603 - the system's PostgreSQL tools, our arguments
            [
                *_demote(),
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.root / "data"),
                "-m",
                "immediate",
                "stop",
            ],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster() -> PgCluster:
    """Start a cluster (initdb, pg_ctl start) in a new temporary folder (see the module docstring).

    Raises:
        RuntimeError: initdb or the server failed (its log's last lines in the message).
    """
    bindir = find_bindir()
    if bindir is None:
        raise RuntimeError("initdb/pg_ctl not found")
    root = Path(tempfile.mkdtemp(prefix="bot-pg-"))
    demote = _demote()
    if demote:
        shutil.chown(root, user=_UNPRIVILEGED)
    data, sock, log = root / "data", root / "sock", root / "server.log"
    run = [*demote]
    initdb = subprocess.run(  # noqa: S603 - the system's PostgreSQL tools, our arguments
        [
            *run,
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if initdb.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {initdb.stderr.strip().splitlines()[-1:]}")
    subprocess.run([*run, "mkdir", str(sock)], check=True)  # noqa: S603 - the system's PostgreSQL tools, our arguments
    for _attempt in range(3):
        port = _free_port()
        options = (
            f"-h 127.0.0.1 -p {port} -k {sock} -F "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        started = subprocess.run(  # noqa: S603 - the system's PostgreSQL tools, our arguments
            [
                *run,
                str(bindir / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(log),
                "-w",
                "-t",
                "30",
                "start",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if started.returncode == 0:
            cluster = PgCluster(root=root, port=port, bindir=bindir)
            atexit.register(cluster.stop)  # also when the session ends without its finalizer
            return cluster
    tail = log.read_text(errors="replace").splitlines()[-3:] if log.exists() else []
    shutil.rmtree(root, ignore_errors=True)
    raise RuntimeError(f"pg_ctl start failed: {tail}")
