"""Labrig's job queue on PostgreSQL against procrastinate, on the same server, in the same run.

Run through ``bench_queue.py`` (pytest does not collect ``bench_*.py``); the server's side is in
``pg_server.py``, the two queues in ``pg_systems.py``, the peer's task in ``pg_peer_app.py``::

    # a throwaway cluster, 3 x 2000 jobs, ~4 min
    .venv/bin/python tests/benchmarks/bench_queue.py --db cluster
    # 500 jobs, 1 and 2 processes, < 1 min
    .venv/bin/python tests/benchmarks/bench_queue.py --db cluster --quick
    .venv/bin/python tests/benchmarks/bench_queue.py --db postgresql+psycopg://bench@dbhost:5432/postgres

``--db cluster`` starts a server of its own (``tests/support/pg_cluster.py``) and removes it
afterwards. With a URL, the benchmark connects to the database named in it only to create and
drop databases of its own (``labrig_bench_<pid>_<n>``) and to read the server's statistics: the
role needs ``CREATEDB`` (it owns, and so may drop, what it creates). Counting durable commits
also needs a superuser (``CREATE EXTENSION pg_walinspect``, in a database of the benchmark's own);
without one the run says they were not counted. It changes no server setting. Each dropped
database costs the server a checkpoint, so do not point it at a server in production use.

What is measured (docs/performance-postgresql.md has the figures):

* For 1, 2 and 4 worker **processes** (``--quick``: 1 and 2), for each system a fresh database:
  N no-op jobs enqueued one by one from this process, each its own transaction (timed: the
  enqueue rate); then P worker processes started at once, each running 2 jobs at a time, and
  timed from their start until every one has exited (the drain rate, N / that time; it includes
  the processes' start-up, printed apart from an empty queue), and the CPU time the worker
  processes used. Then every job must have succeeded (Labrig: with its committed output row and
  its two outbox events), else the run stops with the counts. Every ``labrig worker`` also runs
  the result publisher, which takes each ``analysis.stage.completed`` event from the outbox; the
  workers may exit before it has taken them all. Those left over are counted, then delivered by
  one dispatcher in this process, already open, and timed ("catch-up"): drain+catch-up is the
  rate with that work done, and a job still undelivered after it stops the run. The worker
  processes keep compiled bytecode in a temporary folder, as an installed program would (see
  :mod:`tests.benchmarks.installed`).
  Labrig: the built-in stage ``labrig.selftest`` with ``{"steps": 0}``, each job its own input
  digest, drained by ``python -m labrig worker --drain --workers 2`` (``LABRIG_DB`` = that
  database, ``LABRIG_STORE`` = one temporary folder shared by the processes). procrastinate:
  a no-op task (``pg_peer_app.py``) deferred with the sync API, drained by
  ``python -m procrastinate worker --one-shot --concurrency 2``. Labrig is run both ways a lab
  can run P worker processes: P commands started at once (``labrig``, as procrastinate is), and
  one ``labrig worker --drain --workers 2 --processes P`` that forks P processes once it has
  started (``labrig-forked``).
* Transactions per job, from the server's own records, read when no session is connected to the
  database (a backend reports its statistics as it exits), for the enqueue and the drain apart:
  durable = ``Transaction/COMMIT`` records in the WAL between the two moments (pg_walinspect:
  PostgreSQL 15+ and a superuser, else not counted and the run says so): commits of
  transactions that wrote something, each waiting for a WAL flush with ``synchronous_commit=on``;
  aborted = ``Transaction/ABORT`` records (transactions that wrote, then failed); commits and
  rollbacks = ``pg_stat_database.xact_commit`` / ``xact_rollback`` of that database (every
  transaction, read-only ones too; Labrig ends its read-only sessions with ROLLBACK); WAL fsyncs =
  ``pg_stat_wal.wal_sync`` (group commit lets one flush serve several commits). Durable, aborted
  and WAL fsyncs are cluster-wide: exact on ``--db cluster`` (give or take autovacuum), other
  traffic on a shared server adds to them.

Rounds (default 3, ``--quick`` 1) alternate the order of the systems. After the table, each form
of Labrig over procrastinate at each P (drain+catch-up). The last line is
``pg_ratio_vs_procrastinate_4proc=X``: the median Labrig drain rate with 4 processes over
procrastinate's (with ``--quick``, 2 processes, and the line says ``_2proc``); the line before it,
``pg_ratio_with_catch_up_vs_procrastinate_4proc=X``, the same with the catch-up counted.
"""

from __future__ import annotations

import itertools
import math
import os
import platform
import resource
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg

from tests.benchmarks.installed import bytecode_cache, temp_dir
from tests.benchmarks.pg_server import (
    Delta,
    NoWalRecords,
    Server,
    Wal,
    plain_commits_per_s,
    read_counters,
    server_for,
    wal_records,
)
from tests.benchmarks.pg_systems import (
    PEER,
    THREADS_PER_PROCESS,
    Labrig,
    LabrigForked,
    Procrastinate,
    System,
)

REPO = Path(__file__).resolve().parents[2]
PROCESS_TIMEOUT_S = 600
#: Labrig's two ways to run P worker processes: P commands, or one that forks P
LABRIG_FORMS = (Labrig.name, LabrigForked.name)


# -- one round -------------------------------------------------------------------------------------


@dataclass
class RoundResult:
    system: str
    processes: int
    jobs: int
    enqueue_s: float
    drain_s: float
    drain_cpu_s: float  # user + system CPU of the worker processes (not the server's)
    enqueue_tx: Delta
    drain_tx: Delta
    # Labrig: completed jobs whose event no result publisher had received when the workers exited
    left_over: int
    catch_up_s: float  # Labrig: one already open dispatcher delivering those afterwards

    @property
    def complete_per_s(self) -> float:
        """Jobs/s when the drain has to include the left-over deliveries (done afterwards, by
        one dispatcher)."""
        return self.jobs / (self.drain_s + self.catch_up_s)

    @property
    def enqueue_per_s(self) -> float:
        return self.jobs / self.enqueue_s

    @property
    def drain_per_s(self) -> float:
        return self.jobs / self.drain_s


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_processes(
    commands: list[tuple[str, ...]], env: dict[str, str], logs: Path
) -> tuple[float, float]:
    """Start ``commands`` at once; seconds until every one has exited (all must succeed), and the
    CPU seconds (user + system) they and their children used."""
    full_env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        **env,
    }
    outputs = [logs / f"worker-{n}.log" for n in range(len(commands))]
    cpu = children_cpu_s()
    start = time.perf_counter()
    children = []
    for command, path in zip(commands, outputs, strict=True):
        with path.open("wb") as out:  # the child keeps its own descriptor
            children.append(
                subprocess.Popen(
                    command, env=full_env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT
                )
            )
    codes = [child.wait(timeout=PROCESS_TIMEOUT_S) for child in children]
    elapsed = time.perf_counter() - start
    failed = [(code, path) for code, path in zip(codes, outputs, strict=True) if code != 0]
    if failed:
        code, path = failed[0]
        said = path.read_text(errors="replace")[-3000:]
        raise SystemExit(f"{' '.join(commands[0][:4])}… exited {code}:\n{said}")
    return elapsed, children_cpu_s() - cpu


def run_round(system: System, server: Server, wal: Wal, jobs: int, processes: int) -> RoundResult:
    with server.fresh_database() as database, temp_dir("bench-pg-") as scratch:
        side = system(server, database, scratch)
        side.prepare()
        before = read_counters(server, database)
        enqueue_s = side.enqueue(jobs)
        enqueued = read_counters(server, database)
        drain_s, drain_cpu_s = run_processes(side.commands(processes), side.env, scratch)
        drained = read_counters(server, database)
        left_over = side.left_over()
        catch_up_s = side.catch_up()
        side.verify(jobs)
        enqueue_tx, drain_tx = wal.delta(before, enqueued), wal.delta(enqueued, drained)
    return RoundResult(
        side.name,
        processes,
        jobs,
        enqueue_s,
        drain_s,
        drain_cpu_s,
        enqueue_tx,
        drain_tx,
        left_over,
        catch_up_s,
    )


def start_up(system: System, server: Server, processes: int) -> tuple[float, float]:
    """Seconds for ``processes`` worker processes to start, find the queue empty and exit;
    their CPU seconds."""
    result = run_round(system, server, NoWalRecords(), 0, processes)
    return result.drain_s, result.drain_cpu_s


# -- report ----------------------------------------------------------------------------------------


def ratio(count: int | None, jobs: int) -> float:
    return float("nan") if count is None else count / jobs


def figure(value: float, fmt: str, width: int = 0) -> str:
    """``value`` formatted, or ``n/a`` where it was not counted."""
    return f"{'n/a' if math.isnan(value) else format(value, fmt):>{width}s}"


def per_job(d: Delta, jobs: int) -> str:
    return (
        f"durable {figure(ratio(d.durable, jobs), '.2f')} aborted "
        f"{figure(ratio(d.aborted, jobs), '.2f')} commits {d.commits / jobs:.2f} rollbacks "
        f"{d.rollbacks / jobs:.2f} WAL fsyncs {d.wal_syncs / jobs:.2f}"
    )


def describe(r: RoundResult) -> str:
    return (
        f"{r.system:13s} P={r.processes}: drain {r.drain_per_s:6.1f} jobs/s ({r.drain_s:5.2f} s) "
        f"worker CPU {1000 * r.drain_cpu_s / r.jobs:.2f} ms/job enqueue {r.enqueue_per_s:6.1f} "
        f"jobs/s left over for the publisher {r.left_over} ({r.catch_up_s:.2f} s to catch up)\n    "
        f"per job, enqueue: {per_job(r.enqueue_tx, r.jobs)} | drain: {per_job(r.drain_tx, r.jobs)}"
    )


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def median_of(
    results: list[RoundResult], system: str, processes: int, value: Callable[[RoundResult], float]
) -> float:
    return statistics.median(
        value(r) for r in results if r.system == system and r.processes == processes
    )


def print_table(results: list[RoundResult], process_counts: tuple[int, ...]) -> None:
    rows: list[tuple[str, Callable[[RoundResult], float], str]] = [
        ("drain jobs/s", lambda r: r.drain_per_s, ".1f"),
        ("left over (jobs)", lambda r: r.left_over, ".0f"),
        ("catch-up s", lambda r: r.catch_up_s, ".2f"),
        ("drain+catch-up jobs/s", lambda r: r.complete_per_s, ".1f"),
        ("worker CPU ms/job", lambda r: 1000 * r.drain_cpu_s / r.jobs, ".2f"),
        ("enqueue jobs/s", lambda r: r.enqueue_per_s, ".1f"),
        ("enqueue durable/job", lambda r: ratio(r.enqueue_tx.durable, r.jobs), ".2f"),
        ("enqueue commits/job", lambda r: r.enqueue_tx.commits / r.jobs, ".2f"),
        ("enqueue WAL fsyncs/job", lambda r: r.enqueue_tx.wal_syncs / r.jobs, ".2f"),
        ("drain durable/job", lambda r: ratio(r.drain_tx.durable, r.jobs), ".2f"),
        ("drain aborted/job", lambda r: ratio(r.drain_tx.aborted, r.jobs), ".2f"),
        ("drain commits/job", lambda r: r.drain_tx.commits / r.jobs, ".2f"),
        ("drain rollbacks/job", lambda r: r.drain_tx.rollbacks / r.jobs, ".2f"),
        ("drain WAL fsyncs/job", lambda r: r.drain_tx.wal_syncs / r.jobs, ".2f"),
    ]
    columns = [(system, p) for p in process_counts for system in (*LABRIG_FORMS, PEER)]
    print(f"{'(medians)':24s}" + "".join(f"{f'{system} P={p}':>18s}" for system, p in columns))
    for label, value, fmt in rows:
        cells = "".join(
            figure(median_of(results, system, p, value), fmt, 18) for system, p in columns
        )
        print(f"{label:24s}{cells}")


def print_header(server: Server, where: str, counting: str, plan: str) -> None:
    import procrastinate
    import sqlalchemy

    settings = server.settings()
    print(
        f"# {platform.platform()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
        f"PostgreSQL {settings['server_version']}, SQLAlchemy {sqlalchemy.__version__}, "
        f"psycopg {psycopg.__version__}, {PEER} {procrastinate.__version__}"
    )
    print(f"# {where}")
    print(
        "# settings: " + " ".join(f"{k}={v}" for k, v in settings.items() if k != "server_version")
    )
    print(f"# {plan}")
    print(f"# {counting}")
    print(
        "# worker processes keep compiled bytecode in a temporary folder (PYTHONPYCACHEPREFIX), "
        f"filled by one unmeasured empty-queue run of each system; load average at start {load()}",
        flush=True,
    )


def run_postgresql(spec: str, *, jobs: int | None, quick: bool, rounds: int | None) -> int:
    jobs = jobs or (500 if quick else 2000)
    rounds = rounds or (1 if quick else 3)
    process_counts = (1, 2) if quick else (1, 2, 4)
    systems: tuple[System, ...] = (Labrig, LabrigForked, Procrastinate)
    with (
        server_for(spec) as (server, where),
        wal_records(server) as (wal, counting),
        bytecode_cache(),
    ):
        print_header(
            server,
            where,
            counting,
            f"{rounds} round(s) x {jobs} jobs for P = {', '.join(map(str, process_counts))} worker "
            f"processes, {THREADS_PER_PROCESS} jobs at a time in each; a fresh database per system "
            "and P",
        )
        print(
            f"server floor: one client, one-row INSERT per autocommit transaction: "
            f"{plain_commits_per_s(server):.0f} commits/s (best of 3 x 500)",
            flush=True,
        )
        for system in systems:  # fills the bytecode cache
            start_up(system, server, 1)
        idle = {
            (system.name, p): start_up(system, server, p)
            for system in systems
            for p in process_counts
        }
        for system in systems:
            print(
                f"start-up: {system.name:13s} on an empty queue, P worker processes start and all "
                "exit in "
                + ", ".join(
                    f"{idle[system.name, p][0]:.2f} s using {idle[system.name, p][1]:.2f} s CPU "
                    f"(P={p})"
                    for p in process_counts
                ),
                flush=True,
            )
        results: list[RoundResult] = []
        for r, (k, processes) in itertools.product(range(rounds), enumerate(process_counts)):
            for system in systems if (r + k) % 2 == 0 else systems[::-1]:
                results.append(run_round(system, server, wal, jobs, processes))
                print(f"round {r + 1}: {describe(results[-1])}", flush=True)
    print(f"# load average at the end {load()} (other work on this machine shows here)")
    print()
    print_table(results, process_counts)
    print()
    for name, p in itertools.product(LABRIG_FORMS, process_counts):
        ratio_p = median_of(results, name, p, lambda r: r.complete_per_s) / median_of(
            results, PEER, p, lambda r: r.complete_per_s
        )
        print(f"{name} / {PEER}, P={p}, drain+catch-up: {ratio_p:.2f}")
    top = process_counts[-1]
    for name, value in (
        ("pg_ratio_with_catch_up", lambda r: r.complete_per_s),
        ("pg_ratio", lambda r: r.drain_per_s),
    ):
        ratio_top = median_of(results, "labrig", top, value) / median_of(results, PEER, top, value)
        print(f"{name}_vs_{PEER}_{top}proc={ratio_top:.2f}")
    return 0
