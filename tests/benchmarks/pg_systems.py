"""The two queues ``bench_queue.py --db`` compares: how each enqueues, drains and is checked.

Each side works in one fresh database: ``prepare`` creates its schema, ``enqueue`` times N
enqueues from this process, ``worker`` is the command line of one worker process (``env`` its
environment), ``left_over``/``catch_up`` deal with work a drain leaves behind, and ``verify``
stops the run unless every job succeeded.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

from tests.benchmarks.pg_server import Server, counts_by, scalar

THREADS_PER_PROCESS = 2
PEER = "procrastinate"
PEER_APP = "tests.benchmarks.pg_peer_app.app"
LABRIG_SUCCESS = ("Succeeded", "SucceededDegraded")


def digest(i: int) -> str:
    return hashlib.sha256(f"bench-pg-{i}".encode()).hexdigest()


class Labrig:
    name = "labrig"
    worker = (
        sys.executable,
        "-m",
        "labrig",
        "worker",
        "--drain",
        "--workers",
        str(THREADS_PER_PROCESS),
    )

    def __init__(self, server: Server, database: str, scratch: Path) -> None:
        self.server, self.database, self.scratch = server, database, scratch
        self.env = {"LABRIG_DB": server.url(database), "LABRIG_STORE": str(scratch / "store")}

    @classmethod
    def commands(cls, processes: int) -> list[tuple[str, ...]]:
        """The command lines started at once for ``processes`` worker processes."""
        return [cls.worker] * processes

    @contextmanager
    def _services(self) -> Iterator[Any]:
        from labrig.bootstrap import bootstrap
        from labrig.store import open_store

        services = bootstrap(store=open_store(self.env["LABRIG_STORE"], db=self.env["LABRIG_DB"]))
        try:
            yield services
        finally:
            services.close()

    def prepare(self) -> None:
        """Create the schema (Alembic migrations), before any clock starts."""
        with self._services():
            pass

    def enqueue(self, jobs: int) -> float:
        with self._services() as services:
            start = time.perf_counter()
            for i in range(jobs):
                services.queue.enqueue("labrig.selftest", [digest(i)], {"steps": 0})
            return time.perf_counter() - start

    def left_over(self) -> int:
        """Completed jobs whose event no result publisher had received when the workers exited."""
        from labrig.results.publish import PUBLISHER

        with psycopg.connect(self.server.conninfo(self.database)) as conn:
            return int(
                scalar(
                    conn,
                    "SELECT count(*) FROM outbox_events e WHERE e.name = "
                    "'analysis.stage.completed' AND NOT EXISTS (SELECT 1 FROM consumer_inbox i "
                    "WHERE i.consumer = %s AND i.event_id = e.event_id)",
                    [PUBLISHER],
                )
            )

    def catch_up(self) -> float:
        """Seconds for one dispatcher in this process (already open) to deliver every
        event still pending."""
        with self._services() as services:
            start = time.perf_counter()
            while any(services.dispatcher.dispatch_once().values()):
                pass
            return time.perf_counter() - start

    def verify(self, jobs: int) -> None:
        """Stop unless every job succeeded with its committed output, its events,
        and their delivery."""
        with psycopg.connect(self.server.conninfo(self.database)) as conn:
            states = counts_by(conn, "SELECT state, count(*) FROM jobs GROUP BY state")
            outputs = scalar(conn, "SELECT count(*) FROM job_outputs")
            committed = scalar(
                conn,
                "SELECT count(*) FROM jobs j JOIN job_outputs o ON o.idempotency_key = "
                "j.idempotency_key AND o.digest = j.output_digest WHERE j.state = ANY(%s)",
                [list(LABRIG_SUCCESS)],
            )
            events = counts_by(conn, "SELECT name, count(*) FROM outbox_events GROUP BY name")
        succeeded = sum(states.get(s, 0) for s in LABRIG_SUCCESS)
        expected = (
            {"analysis.stage.requested": jobs, "analysis.stage.completed": jobs} if jobs else {}
        )
        undelivered = self.left_over()
        if (
            succeeded != jobs
            or outputs != jobs
            or committed != jobs
            or events != expected
            or undelivered
        ):
            raise SystemExit(
                f"labrig round incomplete: {jobs} jobs enqueued; states {states}, {outputs} "
                f"outputs, {committed} jobs with their committed output, events {events}, "
                f"{undelivered} completions never delivered to the result publisher"
            )


class LabrigForked(Labrig):
    """Labrig as one command of P processes, forked once it has started
    (``labrig worker --processes P``)."""

    name = "labrig-forked"

    @classmethod
    def commands(cls, processes: int) -> list[tuple[str, ...]]:
        return [(*cls.worker, "--processes", str(processes))]


class Procrastinate:
    name = PEER
    worker = (
        sys.executable,
        "-m",
        "procrastinate",
        "--app",
        PEER_APP,
        "worker",
        "--one-shot",
        "--concurrency",
        str(THREADS_PER_PROCESS),
    )

    def __init__(self, server: Server, database: str, scratch: Path) -> None:
        from tests.benchmarks.pg_peer_app import CONNINFO_ENV

        self.server, self.database = server, database
        self.env = {CONNINFO_ENV: server.conninfo(database)}
        del scratch  # procrastinate keeps nothing outside the database

    @classmethod
    def commands(cls, processes: int) -> list[tuple[str, ...]]:
        return [cls.worker] * processes

    def _app(self) -> Any:
        import procrastinate

        return procrastinate.App(
            connector=procrastinate.SyncPsycopgConnector(
                conninfo=self.server.conninfo(self.database)
            )
        )

    def prepare(self) -> None:
        app = self._app()
        with app.open():
            app.schema_manager.apply_schema()

    def enqueue(self, jobs: int) -> float:
        from tests.benchmarks.pg_peer_app import TASK_NAME

        app = self._app()
        with app.open():
            task = app.configure_task(TASK_NAME)
            start = time.perf_counter()
            for i in range(jobs):
                task.defer(i=i)
            return time.perf_counter() - start

    def left_over(self) -> int:
        """procrastinate has no event consumers: a drained queue leaves no work behind."""
        return 0

    def catch_up(self) -> float:
        return 0.0

    def verify(self, jobs: int) -> None:
        """Stop unless every job succeeded."""
        with psycopg.connect(self.server.conninfo(self.database)) as conn:
            states = counts_by(
                conn, "SELECT status::text, count(*) FROM procrastinate_jobs GROUP BY status"
            )
        if states.get("succeeded", 0) != jobs or sum(states.values()) != jobs:
            raise SystemExit(f"{PEER} round incomplete: {jobs} jobs deferred; states {states}")


System = type[Labrig] | type[LabrigForked] | type[Procrastinate]
