"""Labrig's durable job queue against huey's SqliteHuey, on the same disk, in the same run.

Run as a script (pytest does not collect ``bench_*.py``)::

    # 3 rounds of 2000 jobs, a count + kill -9, ~75 s
    .venv/bin/python tests/benchmarks/bench_queue.py
    # 1 round of 300 jobs, < 30 s
    .venv/bin/python tests/benchmarks/bench_queue.py --quick
    .venv/bin/python tests/benchmarks/bench_queue.py --jobs 5000 --rounds 5
    # PostgreSQL: see bench_queue_pg.py
    .venv/bin/python tests/benchmarks/bench_queue.py --db cluster [--quick]

What is measured (docs/performance.md has the settings and the figures):

* throughput: N no-op jobs, each with its own inputs, enqueued one by one from the
  main thread, then drained by 4 worker threads until every job has a persisted
  result. Labrig: enqueue → claim+start → run → commit (output row + outbox
  events; the executor commits the runs that ended together with its next claim);
  huey: enqueue → dequeue → run → result stored. Both on SQLite files in a
  fresh temporary folder, WAL journal, ``synchronous=FULL``. The two systems
  alternate which goes first in each round. jobs/s = N / (enqueue time + drain time).
* write transactions per job, counted the same way on both sides: SQLite's statement
  trace callback on every connection (``BEGIN`` ... ``COMMIT``); "durable" ones are
  those that changed rows (each is an fsync of the WAL with synchronous=FULL). The
  callback runs Python for every statement and expands its bound values into text,
  which slowed Labrig's rounds by about 5 % more than huey's, so it runs in one extra
  round of each system that counts and is not timed; the timed rounds are untraced.
* each round's temporary folder is deleted and the disk synced before the next round
  starts, so no round pays for writing back the one before it.
* Labrig claim latency (each ``JobQueue.lease_ready`` call that asked for at least one
  job: the leasing UPDATE and the read of upstream outputs, inside the executor's
  write transaction, without the commit) and, for comparison, huey's dequeue latency
  (calls that returned a task).
* kill -9: a child process enqueues M jobs whose stage/task sleeps 50 ms and runs
  4 workers; it is SIGKILLed once a third of them finished. Then a fresh worker
  drains what is left (Labrig: ``python -m labrig worker --drain``; huey: a new
  consumer until the queue is empty). A job is lost when it never gets a result.

The last line is ``ratio_vs_huey=X``: median Labrig jobs/s over median huey jobs/s.

With ``--db URL`` (or ``--db cluster``) it measures the queue on PostgreSQL against procrastinate
instead, with worker processes: ``bench_queue_pg.py`` says how; its last line is
``pg_ratio_vs_procrastinate_4proc=X``.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import itertools
import os
import platform
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # run as a script, only this folder is on the path
    sys.path.insert(0, str(REPO))

from tests.benchmarks.installed import temp_dir  # noqa: E402

WORKERS = 4
KILL_SLEEP_SECONDS = 0.05
HUEY_CONSUMER_OPTIONS: dict[str, Any] = {
    # Poll every 1 ms when the queue looks empty (no backoff, capped at 10 ms): huey's
    # fastest fair setting; while tasks are queued its workers loop without sleeping.
    "workers": WORKERS,
    "worker_type": "thread",
    "periodic": False,
    "initial_delay": 0.001,
    "backoff": 1.0,
    "max_delay": 0.01,
    "check_worker_health": False,
}
LABRIG_SUCCESS = ("Succeeded", "SucceededDegraded")


def digest(i: int, salt: str = "bench") -> str:
    return hashlib.sha256(f"{salt}-{i}".encode()).hexdigest()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[rank]


@dataclass
class TxCounter:
    """Transactions seen by statement tracing; ``durable`` = write transactions that changed
    rows."""

    write: int = 0
    durable: int = 0
    read: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, *, write: int = 0, durable: int = 0, read: int = 0) -> None:
        with self._lock:
            self.write += write
            self.durable += durable
            self.read += read

    def reset(self) -> None:
        with self._lock:
            self.write = self.durable = self.read = 0

    def trace(self, conn: sqlite3.Connection) -> None:
        """Count ``conn``'s transactions with SQLite's statement trace: a BEGIN opens one, a COMMIT
        that follows changed rows makes it durable. ``BEGIN IMMEDIATE``/``EXCLUSIVE`` are writes,
        plain ``BEGIN`` reads."""
        began: list[int] = []

        def trace(statement: str) -> None:
            head = statement.lstrip()[:16].upper()
            if head.startswith(("BEGIN IMMEDIATE", "BEGIN EXCLUSIVE")):
                self.add(write=1)
                began[:] = [conn.total_changes]
            elif head.startswith("BEGIN"):
                self.add(read=1)
                began[:] = []
            elif head.startswith("COMMIT") and began and conn.total_changes > began.pop():
                self.add(durable=1)

        conn.set_trace_callback(trace)


@dataclass
class RoundResult:
    system: str
    jobs: int
    enqueue_s: float
    drain_s: float
    tx: TxCounter | None  # None: a timed round, not traced
    latencies: list[float]
    pragmas: str = ""

    @property
    def total_s(self) -> float:
        return self.enqueue_s + self.drain_s

    @property
    def jobs_per_s(self) -> float:
        return self.jobs / self.total_s


def timed(
    record: list[float], fn: Callable[..., Any], skip: Callable[..., bool]
) -> Callable[..., Any]:
    """Wrap ``fn`` so the duration of each call not skipped is appended to ``record``."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if skip(*args, **kwargs):
            return fn(*args, **kwargs)
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        record.append(time.perf_counter() - start)
        return result

    return wrapper


# -- Labrig ----------------------------------------------------------------------------------------


def labrig_noop_stage() -> Any:
    from labrig.jobs.stages import Stage, StageOutput

    return Stage(
        "bench.noop",
        1,
        True,
        run=lambda ctx: StageOutput({"ok": True, "inputs": ctx.input_digests}),
    )


def count_labrig_transactions(engine: Any, counter: TxCounter) -> None:
    """Trace every connection the engine hands out from now on (sessions and the
    raw-write connection)."""
    from sqlalchemy import event

    traced: set[int] = set()

    @event.listens_for(engine, "checkout")
    def _checkout(dbapi_conn: sqlite3.Connection, *_args: Any) -> None:
        if id(dbapi_conn) not in traced:
            traced.add(id(dbapi_conn))
            counter.trace(dbapi_conn)


def pragmas(execute: Callable[[str], Any]) -> str:
    """The journal mode and synchronous level in effect on a live connection (2 = FULL)."""
    return (
        f"journal_mode={execute('PRAGMA journal_mode')} synchronous={execute('PRAGMA synchronous')}"
    )


def labrig_round(jobs: int, count: bool = False) -> RoundResult:
    from sqlalchemy import func, select

    from labrig.bootstrap import bootstrap
    from labrig.jobs.executor import ThreadExecutor
    from labrig.jobs.stages import StageRegistry
    from labrig.store.models import Job, JobOutput, OutboxEvent

    with temp_dir("bench-labrig-", sync=True) as root:
        services = bootstrap(root / "store", registry=StageRegistry((labrig_noop_stage(),)))
        try:
            queue = services.queue
            counter, latencies = TxCounter(), []
            if count:
                count_labrig_transactions(services.store.engine, counter)
            # The benchmark instruments the instance: only claims that ask for a job are timed. The
            # executor claims inside the transaction that commits finished runs
            # (JobQueue.lease_ready), so this is the claim's own statements (lease+start, upstream
            # read), not the lock wait or commit.
            queue.lease_ready = timed(
                latencies,
                queue.lease_ready,  # type: ignore[method-assign]
                skip=lambda _tx, slots, *_a, **_k: slots <= 0,
            )
            inputs = [[digest(i)] for i in range(jobs)]
            executor = ThreadExecutor(queue, workers=WORKERS)
            with services.store.engine.connect() as conn:
                in_effect = pragmas(lambda sql: conn.exec_driver_sql(sql).scalar())
            gc.collect()
            counter.reset()
            start = time.perf_counter()
            for digests in inputs:
                queue.enqueue("bench.noop", digests, {})
            enqueued = time.perf_counter()
            stats = executor.run(drain=True)
            end = time.perf_counter()
            with services.store.read() as session:
                succeeded = session.scalar(
                    select(func.count()).select_from(Job).where(Job.state.in_(LABRIG_SUCCESS))
                )
                outputs = session.scalar(select(func.count()).select_from(JobOutput))
                events = dict(
                    session.execute(
                        select(OutboxEvent.name, func.count()).group_by(OutboxEvent.name)
                    ).all()
                )
            expected = {"analysis.stage.requested": jobs, "analysis.stage.completed": jobs}
            if succeeded != jobs or outputs != jobs or events != expected or stats.finished != jobs:
                raise SystemExit(
                    f"labrig round incomplete: succeeded={succeeded} outputs={outputs} "
                    f"events={events} finished={stats.finished}"
                )
            if count and counter.durable < jobs:  # each enqueue is a durable transaction of its own
                raise SystemExit(
                    f"transaction tracing missed some: {counter.durable} durable for {jobs} "
                    "enqueues"
                )
        finally:
            services.close()
    return RoundResult(
        "labrig",
        jobs,
        enqueued - start,
        end - enqueued,
        counter if count else None,
        latencies,
        in_effect,
    )


# -- huey ------------------------------------------------------------------------------------------


def counting_storage_class(counter: TxCounter) -> type:
    """SqliteStorage whose one shared connection reports its transactions to ``counter``."""
    from huey.storage import SqliteStorage

    class CountingSqliteStorage(SqliteStorage):  # type: ignore[misc]
        def _create_connection(self) -> sqlite3.Connection:
            conn: sqlite3.Connection = super()._create_connection()
            counter.trace(conn)
            return conn

    return CountingSqliteStorage


def make_huey(path: Path, name: str, counter: TxCounter | None = None) -> Any:
    from huey import SqliteHuey

    # fsync → synchronous=FULL
    options: dict[str, Any] = {
        "filename": str(path),
        "journal_mode": "wal",
        "fsync": True,
        "results": True,
        "utc": True,
    }
    if counter is not None:
        options["storage_class"] = counting_storage_class(counter)
    return SqliteHuey(name, **options)


@contextmanager
def huey_consumer(huey: Any) -> Iterator[Any]:
    """Start huey's consumer (4 worker threads) without it keeping this process's signal
    handlers."""
    handled = [
        s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None
    ]
    saved = {s: signal.getsignal(s) for s in handled}
    consumer = huey.create_consumer(**HUEY_CONSUMER_OPTIONS)
    consumer.start()
    for s, handler in saved.items():
        signal.signal(s, handler)
    try:
        yield consumer
    finally:
        consumer.stop(graceful=True)


def huey_round(jobs: int, count: bool = False) -> RoundResult:
    from huey.signals import SIGNAL_COMPLETE

    with temp_dir("bench-huey-", sync=True) as root:
        counter, latencies = TxCounter(), []
        huey = make_huey(root / "huey.db", "bench", counter if count else None)
        try:

            @huey.task(name="bench_noop")
            def noop(i: int) -> dict[str, Any]:
                return {"ok": True, "i": i}

            done, completed = threading.Event(), itertools.count(1)

            @huey.signal(SIGNAL_COMPLETE)
            # emitted after the result is stored
            def _complete(_signal: str, _task: Any, *_args: Any) -> None:
                if next(completed) >= jobs:
                    done.set()

            original = huey.dequeue

            # Time the dequeues that returned a task (an empty poll returns None).
            def timed_dequeue() -> Any:
                start = time.perf_counter()
                task = original()
                if task is not None:
                    latencies.append(time.perf_counter() - start)
                return task

            huey.dequeue = timed_dequeue
            in_effect = pragmas(lambda sql: huey.storage.sql(sql, results=True)[0][0])
            gc.collect()
            counter.reset()
            start = time.perf_counter()
            for i in range(jobs):
                noop(i)
            enqueued = time.perf_counter()
            with huey_consumer(huey):
                if not done.wait(timeout=600):
                    raise SystemExit("huey round did not finish in 10 minutes")
                end = time.perf_counter()
            stored = huey.storage.result_store_size()
            if stored != jobs or huey.storage.queue_size() != 0:
                raise SystemExit(
                    f"huey round incomplete: {stored} results, {huey.storage.queue_size()} queued"
                )
        finally:
            huey.storage.close()
    return RoundResult(
        "huey",
        jobs,
        enqueued - start,
        end - enqueued,
        counter if count else None,
        latencies,
        in_effect,
    )


# -- kill -9 ---------------------------------------------------------------------------------------


def child_main(system: str, folder: Path, jobs: int) -> None:
    """In a subprocess: enqueue ``jobs`` sleeping jobs, say so, then work until killed."""
    if system == "labrig":
        from labrig.bootstrap import bootstrap
        from labrig.jobs.executor import ThreadExecutor

        # default registry: the built-in labrig.selftest stage
        services = bootstrap(folder / "store")
        for i in range(jobs):
            services.queue.enqueue(
                "labrig.selftest",
                [digest(i, "kill")],
                {"steps": 1, "step_seconds": KILL_SLEEP_SECONDS},
            )
        print("ENQUEUED", flush=True)
        ThreadExecutor(services.queue, workers=WORKERS).run(drain=True)
    else:
        huey = make_huey(folder / "huey.db", "bench-kill")
        sleepy = huey_sleep_task(huey)
        for i in range(jobs):
            sleepy(i)
        print("ENQUEUED", flush=True)
        huey.create_consumer(**HUEY_CONSUMER_OPTIONS).run()
    print("FINISHED BEFORE THE KILL", flush=True)


def huey_sleep_task(huey: Any) -> Any:
    @huey.task(name="bench_sleep")
    def sleepy(i: int) -> dict[str, Any]:
        time.sleep(KILL_SLEEP_SECONDS)
        return {"ok": True, "i": i}

    return sleepy


def count_rows(db: Path, sql: str) -> int:
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=15)
    try:
        return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:  # table not created yet
        return 0
    finally:
        conn.close()


@dataclass
class KillResult:
    system: str
    jobs: int
    done_at_kill: int
    in_flight_at_kill: int
    recovered: int

    @property
    def lost(self) -> int:
        return self.jobs - self.recovered


def kill_mid_run(system: str, folder: Path, jobs: int, db: Path, done_sql: str) -> int:
    """Start the child, SIGKILL it once a third of the jobs are done; returns the number done
    then."""
    child = subprocess.Popen(
        [sys.executable, __file__, "--child", system, str(folder), str(jobs)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        if child.stdout.readline().strip() != "ENQUEUED":
            raise SystemExit(f"{system} kill child failed to start")
        deadline = time.monotonic() + 120
        while count_rows(db, done_sql) < jobs // 3:
            if child.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{system} kill child ended or stalled before the kill")
            time.sleep(0.005)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()  # reaped: its pid is no longer alive, as after a real crash
    return count_rows(db, done_sql)


def labrig_kill(jobs: int) -> KillResult:
    with temp_dir("bench-kill-labrig-", sync=True) as folder:
        db = folder / "store" / "labrig.db"
        done_sql = f"SELECT count(*) FROM jobs WHERE state IN {LABRIG_SUCCESS}"
        done = kill_mid_run("labrig", folder, jobs, db, done_sql)
        in_flight = count_rows(
            db, "SELECT count(*) FROM jobs WHERE state IN ('Leased', 'Running', 'Checkpointed')"
        )
        subprocess.run(
            [
                sys.executable,
                "-m",
                "labrig",
                "--store",
                str(folder / "store"),
                "worker",
                "--drain",
                "--workers",
                str(WORKERS),
            ],
            check=True,
            timeout=300,
            stdout=subprocess.DEVNULL,
        )
        recovered = count_rows(
            db,
            "SELECT count(*) FROM jobs j JOIN job_outputs o "
            "ON o.idempotency_key = j.idempotency_key AND o.digest = j.output_digest "
            f"WHERE j.state IN {LABRIG_SUCCESS}",
        )
        return KillResult("labrig", jobs, done, in_flight, recovered)


def huey_kill(jobs: int) -> KillResult:
    with temp_dir("bench-kill-huey-", sync=True) as folder:
        db = folder / "huey.db"
        done = kill_mid_run("huey", folder, jobs, db, "SELECT count(*) FROM kv")
        queued = count_rows(db, "SELECT count(*) FROM task")
        # A fresh consumer drains what is still queued; a task dequeued by the killed
        # consumer is no longer in the queue, so nothing brings it back.
        huey = make_huey(db, "bench-kill")
        huey_sleep_task(huey)
        try:
            with huey_consumer(huey):
                deadline = time.monotonic() + 300
                while huey.storage.queue_size() and time.monotonic() < deadline:
                    time.sleep(0.01)
            recovered = huey.storage.result_store_size()
        finally:
            huey.storage.close()
        return KillResult("huey", jobs, done, jobs - queued - done, recovered)


# -- report ----------------------------------------------------------------------------------------


def describe(result: RoundResult) -> str:
    if result.tx is not None:
        tx = result.tx
        return (
            f"{result.system:6s} counted (traced, not timed): write tx/job "
            f"{tx.write / result.jobs:.2f} durable {tx.durable / result.jobs:.2f} read tx/job "
            f"{tx.read / result.jobs:.2f}"
        )
    ms = [x * 1000 for x in result.latencies]
    name = "claim" if result.system == "labrig" else "dequeue"
    return (
        f"{result.system:6s} {result.jobs_per_s:8.1f} jobs/s  (enqueue "
        f"{result.jobs / result.enqueue_s:7.1f}/s, drain {result.jobs / result.drain_s:7.1f}/s)  "
        f"{name} p50 {percentile(ms, 50):.2f} ms p99 {percentile(ms, 99):.2f} ms (n={len(ms)})"
    )


def summarize(results: list[RoundResult], system: str) -> dict[str, float]:
    timed = [r for r in results if r.system == system and r.tx is None]
    counted = [r for r in results if r.system == system and r.tx is not None]
    lat = [x * 1000 for r in timed for x in r.latencies]
    jobs = sum(r.jobs for r in counted)
    return {
        "jobs_per_s": statistics.median(r.jobs_per_s for r in timed),
        "enqueue_per_s": statistics.median(r.jobs / r.enqueue_s for r in timed),
        "drain_per_s": statistics.median(r.jobs / r.drain_s for r in timed),
        "write_tx": sum(r.tx.write for r in counted if r.tx) / jobs,
        "durable_tx": sum(r.tx.durable for r in counted if r.tx) / jobs,
        "read_tx": sum(r.tx.read for r in counted if r.tx) / jobs,
        "p50_ms": percentile(lat, 50),
        "p99_ms": percentile(lat, 99),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="1 round of 300 jobs, small kill test (< 30 s)"
    )
    parser.add_argument(
        "--jobs", type=int, default=None, help="jobs per round (default 2000, --quick 300)"
    )
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 3, --quick 1)")
    parser.add_argument(
        "--kill-jobs",
        type=int,
        default=None,
        help="jobs in the kill -9 test (default 120, --quick 40)",
    )
    parser.add_argument(
        "--db",
        metavar="URL|cluster",
        default=None,
        help="PostgreSQL instead of SQLite: a postgresql+psycopg:// URL of a server where this "
        "role may create databases, or 'cluster' for a throwaway one (--quick: 500 jobs, 1 and 2 "
        "processes; default 2000 jobs, 1, 2 and 4 processes, 3 rounds)",
    )
    parser.add_argument(
        "--child", nargs=3, metavar=("SYSTEM", "DIR", "JOBS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.child:
        child_main(args.child[0], Path(args.child[1]), int(args.child[2]))
        return 0
    if args.db:
        return run_postgresql(args.db, jobs=args.jobs, quick=args.quick, rounds=args.rounds)
    jobs = args.jobs or (300 if args.quick else 2000)
    rounds = args.rounds or (1 if args.quick else 3)
    kill_jobs = args.kill_jobs or (40 if args.quick else 120)

    import huey
    import sqlalchemy

    print(
        f"# {platform.platform()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}, SQLAlchemy {sqlalchemy.__version__}, huey "
        f"{huey.__version__}"
    )
    print(
        f"# {rounds} round(s) x {jobs} jobs, {WORKERS} worker threads, WAL + synchronous=FULL on "
        f"both; temp dir {tempfile.gettempdir()}"
    )
    results: list[RoundResult] = []
    for r in range(rounds):
        order = (labrig_round, huey_round) if r % 2 == 0 else (huey_round, labrig_round)
        for run in order:
            result = run(jobs)
            results.append(result)
            print(f"round {r + 1}: {describe(result)}", flush=True)
    for run in (labrig_round, huey_round):  # the transactions, counted where they are not timed
        result = run(jobs, count=True)
        results.append(result)
        print(f"counting round: {describe(result)}", flush=True)

    lab, hue = summarize(results, "labrig"), summarize(results, "huey")
    print()
    print(f"{'':26s} {'labrig':>10s} {'huey':>10s}")
    for key, label, fmt in (
        ("jobs_per_s", "jobs/s (median)", ".1f"),
        ("enqueue_per_s", "enqueue/s (median)", ".1f"),
        ("drain_per_s", "drain/s (median)", ".1f"),
        ("write_tx", "write tx per job", ".2f"),
        ("durable_tx", "durable write tx per job", ".2f"),
        ("read_tx", "read tx per job", ".2f"),
        ("p50_ms", "claim/dequeue p50 ms", ".2f"),
        ("p99_ms", "claim/dequeue p99 ms", ".2f"),
    ):
        print(f"{label:26s} {lab[key]:>10{fmt}} {hue[key]:>10{fmt}}")

    for system in ("labrig", "huey"):
        print(
            f"{system} pragmas in effect: {next(r.pragmas for r in results if r.system == system)}"
        )
    print()
    kills = [labrig_kill(kill_jobs), huey_kill(kill_jobs)]
    for k in kills:
        print(
            f"kill -9 {k.system:6s}: {k.jobs} jobs, {k.done_at_kill} done and "
            f"{k.in_flight_at_kill} in flight at the kill; {k.recovered} with a result after a "
            f"fresh worker drained; lost {k.lost}"
        )
    print(f"labrig_lost={kills[0].lost} huey_lost={kills[1].lost}")
    ratio = lab["jobs_per_s"] / hue["jobs_per_s"]
    print(f"target >= 1.50x huey: {'met' if ratio >= 1.5 else 'NOT met'}")
    print(f"ratio_vs_huey={ratio:.2f}")
    return 0


def run_postgresql(spec: str, *, jobs: int | None, quick: bool, rounds: int | None) -> int:
    from tests.benchmarks.bench_queue_pg import run_postgresql as run

    return run(spec, jobs=jobs, quick=quick, rounds=rounds)


if __name__ == "__main__":
    sys.exit(main())
