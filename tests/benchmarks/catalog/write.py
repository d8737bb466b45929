"""Writing: the rows of each chunk in bulk on the store's raw connection, the consumers'
cursors, and the report printed at the end."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import fields
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from labrig.events.cursors import names_key
from labrig.jobs.rows import JOB_COLUMNS
from labrig.results.publish import PUBLISHER, WATCHED
from labrig.store import RawTransaction, Store, open_store
from labrig.store.dialects import RawDialect
from labrig.store.dialects import postgresql as pg_dialect
from labrig.store.models import Base
from labrig.sync.index import INDEXED, SYNC_INDEXER
from tests.benchmarks.catalog.lab import ATTEMPTS_PER_SESSION, CHUNK_ATTEMPTS, to_us
from tests.benchmarks.catalog.plan import Catalog
from tests.benchmarks.catalog.rows import SERVER_FILLED, TABLES, Chunk, JobRow


def check_schema() -> None:
    """Fail early, naming the columns, when the models have columns this script does not fill."""
    for table, columns in TABLES.items():
        known = {c.name for c in Base.metadata.tables[table].columns}
        known -= SERVER_FILLED.get(table, set())
        missing, gone = sorted(known - set(columns)), sorted(set(columns) - known)
        if missing or gone:
            raise SystemExit(
                f"make_catalog: table {table} changed (not filled: {missing}; gone: {gone}); "
                "update TABLES and the rows"
            )
    assert {f.name for f in fields(JobRow)} == set(JOB_COLUMNS), "JobRow and jobs differ"


def insert_sql(dialect: RawDialect, table: str) -> str:
    columns = TABLES[table]
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({dialect.positional(len(columns))})"


def insert(tx: RawTransaction, table: str, rows: Sequence[tuple[Any, ...]]) -> None:
    # executemany takes any sequence of parameter sequences (tuples bind faster than dicts);
    # RawTransaction is typed for the named style its other callers use
    tx.executemany(insert_sql(tx.dialect, table), cast("Sequence[Mapping[str, Any]]", rows))


def write(store: Store, chunk: Chunk) -> int:
    """The chunk's rows in one transaction, table by table (parents first); how many."""
    with store.raw_write() as tx:
        for table, rows in chunk.rows.items():
            if rows:
                insert(tx, table, rows)
    return sum(len(rows) for rows in chunk.rows.values())


def set_cursors(store: Store) -> None:
    """Mark every generated event delivered to the durable consumers (see the module docstring)."""
    with store.raw_write() as tx:
        if store.dialect == "postgresql":
            seq, txid = 0, int(tx.execute(pg_dialect.SNAPSHOT_XMIN).fetchone()[0])
        else:
            seq, txid = int(tx.execute("SELECT max(seq) FROM outbox_events").fetchone()[0]), None
        consumers = ((PUBLISHER, WATCHED), (SYNC_INDEXER, INDEXED))
        insert(tx, "outbox_cursors", [(c, seq, names_key(names), txid) for c, names in consumers])


def checkpoint(store: Store) -> None:
    """SQLite: move the WAL into the database file (outside any transaction), for its size."""
    raw = store.engine.raw_connection()
    try:
        driver: Any = raw.driver_connection
        driver.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        raw.close()


def count_rows(store: Store) -> dict[str, int]:
    with store.engine.connect() as conn:
        return {
            table: int(conn.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar() or 0)
            for table in TABLES
        }


def check_readers(store: Store, attempts: int) -> None:
    """What the app's own readers make of the catalog."""
    from labrig.results.attempt_list import list_attempts
    from labrig.results.search import AttemptQuery
    from labrig.review.listing import list_results

    started = time.perf_counter()
    newest = list_attempts(store, AttemptQuery(limit=50))
    print(
        f"  results.views.list_attempts(limit=50): {len(newest)} attempts in "
        f"{time.perf_counter() - started:.2f}s: {dict(Counter(a.status.value for a in newest))}"
    )
    if attempts <= 5_000:  # these read every row
        every = list_attempts(store, AttemptQuery(limit=attempts))
        print(f"  list_attempts(every attempt): {dict(Counter(a.status.value for a in every))}")
        started = time.perf_counter()
        results = list_results(store)
        kinds = Counter("degraded" if r.degraded else r.status for r in results)
        print(
            f"  review.listing.list_results: {len(results)} results in "
            f"{time.perf_counter() - started:.2f}s: {dict(kinds)}; revised: "
            f"{sum(1 for r in results if r.revisions)}"
        )


def fill(
    root: Path,
    *,
    attempts: int,
    db: str | None = None,
    seed: int = 1,
    now: datetime,
    points: int = 12,
    check: bool = True,
) -> dict[str, int]:
    """Fill the empty store at ``root`` (``db``: its PostgreSQL database) with a catalog of
    ``attempts`` attempts ending at ``now`` (UTC, whole seconds), printing its progress and
    report; the row count of every table filled."""
    check_schema()
    began = time.perf_counter()
    root.mkdir(parents=True, exist_ok=True)
    store = open_store(root, db=db)
    try:
        with store.engine.connect() as conn:
            if conn.exec_driver_sql("SELECT count(*) FROM attempts").scalar():
                raise SystemExit(f"make_catalog: {root} has attempts already; give an empty one")
        where = pg_dialect.redacted(db) if db else store.db_path
        print(
            f"Filling {where} with {attempts:,} attempts (seed {seed}, ending "
            f"{now:%Y-%m-%d %H:%M} UTC)"
        )
        if store.dialect == "sqlite":
            with store.raw_write() as tx:  # a bigger page cache for the raw connection's inserts
                tx.execute("PRAGMA cache_size = -262144")
        catalog = Catalog(store, attempts, seed, to_us(now), points)
        sessions = catalog.sessions
        written = write(store, catalog.lab())
        per_chunk = CHUNK_ATTEMPTS // ATTEMPTS_PER_SESSION
        for start in range(0, len(sessions), per_chunk):
            part = sessions[start : start + per_chunk]
            following = sessions[start + per_chunk] if start + per_chunk < len(sessions) else None
            chunk = catalog.chunk(part, following.created_us if following else None)
            made = time.perf_counter()
            rows = write(store, chunk)
            written += rows
            done = part[-1].first_attempt + part[-1].attempts
            print(
                f"  {done:>8,} / {attempts:,} attempts  {rows:>9,} rows  (insert "
                f"{time.perf_counter() - made:5.1f}s)  {time.perf_counter() - began:6.1f}s"
            )
        set_cursors(store)
        if store.dialect == "sqlite":
            checkpoint(store)
        print(f"Done: {written:,} rows in {time.perf_counter() - began:.1f}s")
        counts = count_rows(store)
        width = max(len(t) for t in counts)
        for table, n in counts.items():
            print(f"  {table:<{width}} {n:>10,}")
        if store.dialect == "sqlite":
            size = sum(p.stat().st_size for p in root.glob("labrig.db*"))
            print(f"  database file: {size / 1e6:,.1f} MB ({store.db_path})")
        if check:
            print("Readers:")
            check_readers(store, attempts)
    finally:
        store.close()
    return counts
