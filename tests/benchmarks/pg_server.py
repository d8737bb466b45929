"""The PostgreSQL server under ``bench_queue.py --db``: its databases, settings and counters.

A :class:`Server` creates and drops the benchmark's own databases on a server reached by
URL (or on a throwaway cluster, :func:`server_for`). :func:`read_counters` takes the server's
statistics at a quiet moment; :class:`WalRecords` counts transaction records in the WAL between
two such moments (pg_walinspect), which is how durable commits are counted.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from sqlalchemy.engine import make_url

SETTINGS = (
    "server_version",
    "synchronous_commit",
    "fsync",
    "wal_sync_method",
    "full_page_writes",
    "commit_delay",
    "wal_writer_delay",
    "wal_level",
    "shared_buffers",
    "max_connections",
    "default_transaction_isolation",
    "autovacuum",
)


class Server:
    """A PostgreSQL server reached through ``url`` (SQLAlchemy form); databases are made
    and dropped here."""

    def __init__(self, url: str) -> None:
        self.base = make_url(url)
        self._names = itertools.count(1)

    def url(self, database: str) -> str:
        """The SQLAlchemy URL Labrig takes (``LABRIG_DB``)."""
        return self.base.set(drivername="postgresql+psycopg", database=database).render_as_string(
            hide_password=False
        )

    def conninfo(self, database: str | None = None) -> str:
        """The libpq URL psycopg and procrastinate take."""
        target = self.base.set(drivername="postgresql", database=database or self.base.database)
        return target.render_as_string(hide_password=False)

    def admin(self) -> psycopg.Connection[tuple[Any, ...]]:
        return psycopg.connect(self.conninfo(), autocommit=True)

    @contextmanager
    def fresh_database(self) -> Iterator[str]:
        name = f"labrig_bench_{os.getpid()}_{next(self._names)}"
        with self.admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        try:
            yield name
        finally:
            with self.admin() as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def settings(self) -> dict[str, str]:
        with self.admin() as conn:
            rows = conn.execute(
                "SELECT name, current_setting(name) FROM unnest(%s::text[]) AS name",
                [list(SETTINGS)],
            ).fetchall()
        return dict(rows)


@contextmanager
def server_for(spec: str) -> Iterator[tuple[Server, str]]:
    """The server ``spec`` names (a URL, or ``cluster`` for a throwaway one) and a line
    saying where it is."""
    if spec != "cluster":
        yield Server(spec), f"server {make_url(spec).render_as_string(hide_password=True)}"
        return
    from tests.support.pg_cluster import running_cluster

    with running_cluster() as cluster:
        fs = subprocess.run(
            ["stat", "-f", "-c", "%T", str(cluster.folder)], capture_output=True, text=True
        )
        yield (
            Server(cluster.url("postgres")),
            (
                f"throwaway cluster in {cluster.folder} "
                f"(filesystem {fs.stdout.strip() or '?'}), 127.0.0.1:{cluster.port}"
            ),
        )


def scalar(
    conn: psycopg.Connection[tuple[Any, ...]], sql: str, params: list[Any] | None = None
) -> Any:
    row = conn.execute(sql, params).fetchone()
    assert row is not None, sql
    return row[0]


def counts_by(
    conn: psycopg.Connection[tuple[Any, ...]], sql: str, params: list[Any] | None = None
) -> dict[str, int]:
    """``{key: count}`` from a query of (key, count) rows."""
    return {str(key): int(count) for key, count in conn.execute(sql, params).fetchall()}


# -- the server's counters -------------------------------------------------------------------------


@dataclass(frozen=True)
class Counters:
    """The server's counters at a quiet moment (no session on the benchmark's database)."""

    # pg_stat_database.xact_commit of the benchmark's database: every committed transaction
    commits: int
    rollbacks: int  # pg_stat_database.xact_rollback of the same: ended by ROLLBACK or by an error
    wal_syncs: int  # cluster-wide: pg_stat_wal.wal_sync, fsyncs of the WAL
    lsn: str  # cluster-wide: pg_current_wal_insert_lsn(), where the next WAL record goes


@dataclass(frozen=True)
class Delta:
    """What happened between two :class:`Counters`; durable and aborted are ``None``
    when not counted."""

    commits: int
    rollbacks: int
    wal_syncs: int
    # cluster-wide: Transaction/COMMIT records in the WAL (commits that wrote something)
    durable: int | None
    # cluster-wide: Transaction/ABORT records (transactions that wrote, then failed)
    aborted: int | None


def read_counters(server: Server, database: str) -> Counters:
    """The counters once every session on ``database`` has ended (a backend reports its
    counts as it exits)."""
    with server.admin() as conn:
        deadline = time.monotonic() + 30
        while scalar(conn, "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [database]):
            if time.monotonic() > deadline:
                raise SystemExit(f"sessions on {database} did not end within 30 s")
            time.sleep(0.02)
        conn.execute("SELECT pg_stat_clear_snapshot()")
        return Counters(
            scalar(conn, "SELECT xact_commit FROM pg_stat_database WHERE datname = %s", [database]),
            scalar(
                conn, "SELECT xact_rollback FROM pg_stat_database WHERE datname = %s", [database]
            ),
            scalar(conn, "SELECT wal_sync FROM pg_stat_wal"),
            scalar(conn, "SELECT pg_current_wal_insert_lsn()::text"),
        )


class WalRecords:
    """Counts transaction records in a stretch of the WAL with pg_walinspect (PostgreSQL
    15+, superuser).

    The extension lives in a database of the benchmark's own, so the systems' databases stay
    as they would be in use; reading the WAL writes none.
    """

    def __init__(self, server: Server, database: str) -> None:
        self.server, self.database = server, database

    def count(self, start: Counters, end: Counters) -> tuple[int, int]:
        """(COMMIT, ABORT) records between the two moments, waiting for the end to be flushed."""
        deadline = time.monotonic() + 10
        with psycopg.connect(self.server.conninfo(self.database), autocommit=True) as conn:
            while scalar(conn, "SELECT pg_current_wal_flush_lsn() < %s::pg_lsn", [end.lsn]):
                if time.monotonic() > deadline:
                    raise SystemExit(f"the WAL was not flushed up to {end.lsn} within 10 s")
                # the last records may be ones nothing flushes soon (a background snapshot of
                # running transactions): a commit of our own, after the stretch, flushes them
                scalar(conn, "SELECT pg_current_xact_id()::text")
                time.sleep(0.05)
            counts = counts_by(
                conn,
                'SELECT "resource_manager/record_type", count FROM pg_get_wal_stats(%s, %s, true)',
                [start.lsn, end.lsn],
            )
        return counts.get("Transaction/COMMIT", 0), counts.get("Transaction/ABORT", 0)

    def delta(self, start: Counters, end: Counters) -> Delta:
        durable, aborted = self.count(start, end)
        return Delta(
            end.commits - start.commits,
            end.rollbacks - start.rollbacks,
            end.wal_syncs - start.wal_syncs,
            durable,
            aborted,
        )


class NoWalRecords:
    """Stands in for :class:`WalRecords` where pg_walinspect cannot be used: durable
    commits not counted."""

    def delta(self, start: Counters, end: Counters) -> Delta:
        return Delta(
            end.commits - start.commits,
            end.rollbacks - start.rollbacks,
            end.wal_syncs - start.wal_syncs,
            None,
            None,
        )


@contextmanager
def wal_records(server: Server) -> Iterator[tuple[WalRecords | NoWalRecords, str]]:
    """A WAL record counter and a line saying how durable commits are counted (or why they are
    not)."""
    with server.fresh_database() as database:
        try:
            with psycopg.connect(server.conninfo(database), autocommit=True) as conn:
                conn.execute("CREATE EXTENSION pg_walinspect")
        except psycopg.Error as exc:
            reason = str(exc).strip().splitlines()[0]
            yield (
                NoWalRecords(),
                f"durable commits NOT counted: pg_walinspect unavailable ({reason})",
            )
            return
        yield (
            WalRecords(server, database),
            (
                "durable commits counted as Transaction/COMMIT records in the WAL "
                "(pg_walinspect), cluster-wide"
            ),
        )


Wal = WalRecords | NoWalRecords


def plain_commits_per_s(server: Server, commits: int = 500, tries: int = 3) -> float:
    """What the server can do: one client's one-row INSERTs, each its own durable commit; the
    best of ``tries``."""
    rates = []
    with (
        server.fresh_database() as database,
        psycopg.connect(server.conninfo(database), autocommit=True) as conn,
    ):
        conn.execute("CREATE TABLE t (id bigint PRIMARY KEY, payload text)")
        for n in range(tries):
            start = time.perf_counter()
            for i in range(n * commits, (n + 1) * commits):
                conn.execute("INSERT INTO t VALUES (%s, %s)", [i, str(i) * 8])
            rates.append(commits / (time.perf_counter() - start))
    return max(rates)
