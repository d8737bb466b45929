"""The peer of ``bench_queue.py --db``: a procrastinate app with one no-op task.

Its worker processes find it by its dotted path (``procrastinate --app
tests.benchmarks.pg_peer_app.app worker --one-shot --concurrency 2``); the database
comes from ``BENCH_PROCRASTINATE_CONNINFO``, a libpq URL, set by the benchmark.
The app uses procrastinate's default connector (psycopg 3, a connection pool with
its default sizes): asynchronous in the worker, synchronous when the benchmark defers.
"""

from __future__ import annotations

import os
from typing import Any

import procrastinate

CONNINFO_ENV = "BENCH_PROCRASTINATE_CONNINFO"
TASK_NAME = "bench_noop"

app = procrastinate.App(
    connector=procrastinate.PsycopgConnector(conninfo=os.environ.get(CONNINFO_ENV, ""))
)


@app.task(name=TASK_NAME)
def noop(i: int) -> dict[str, Any]:
    """The counterpart of ``labrig.selftest`` with ``{"steps": 0}``: returns a result
    built from its input."""
    return {"ok": True, "i": i}
