"""``labrig jobs`` and ``labrig worker``: the queue from the command line."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from labrig.bootstrap import Services
from labrig.cli.common import services_for, store_for
from labrig.cli.forked import STOP_SIGNALS
from labrig.cli.output import (
    add_page_arguments,
    is_page,
    narrowed,
    page_asked,
    print_json,
    print_json_line,
    print_line,
    print_page_line,
)
from labrig.cli.when import add_period_arguments
from labrig.domain.jobs import JobState
from labrig.errors import LabrigError, UsageError
from labrig.events.background import WORKER_SETTLE_S
from labrig.health import damage_found, page_check
from labrig.jobs import JobView, LeaseTerms, ThreadExecutor
from labrig.jobs.listing import JobQuery, count_jobs, read_jobs
from labrig.store.search import Tally


def add_parser(commands: Any) -> None:
    jobs = commands.add_parser(
        "jobs", help="list, cancel, reprocess jobs; show reproducibility incidents"
    )
    jobs.add_argument("--json", action="store_true", help="machine-readable output")
    jobs.add_argument(
        "--state", action="append", choices=[s.value for s in JobState], help="only these states"
    )
    jobs.add_argument("--stage", metavar="STAGE", help="only this stage's jobs (its id)")
    jobs.add_argument(
        "--search", metavar="ID", help="jobs whose id, or whose attempt's id, starts with ID"
    )
    add_period_arguments(jobs, "jobs created")
    add_page_arguments(jobs, "jobs")
    jobs.set_defaults(run=run_list)
    sub = jobs.add_subparsers(dest="jobs_command", metavar="ACTION")
    for name, func, text in (
        ("cancel", run_cancel, "cancel a job (a running one stops at its next check)"),
        ("reprocess", run_reprocess, "run a job again as a new job that supersedes it"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("job_id", metavar="ID", help="job id (a unique prefix is enough)")
        p.add_argument("--json", action="store_true")
        p.set_defaults(run=func)
    incidents = sub.add_parser(
        "incidents", help="reproducibility incidents: same inputs, different output"
    )
    incidents.add_argument("--json", action="store_true")
    incidents.set_defaults(run=run_incidents)
    enqueue = sub.add_parser("enqueue", help="enqueue a job for a registered stage")
    enqueue.add_argument("stage_id", metavar="STAGE")
    enqueue.add_argument(
        "--input", action="append", default=[], metavar="SHA256", help="input digest, in order"
    )
    enqueue.add_argument(
        "--config", default="{}", metavar="JSON", help="stage configuration as a JSON object"
    )
    enqueue.add_argument(
        "--after", action="append", default=[], metavar="ID", help="wait for this job's output"
    )
    enqueue.add_argument("--priority", type=int, default=0)
    enqueue.add_argument("--json", action="store_true")
    enqueue.set_defaults(run=run_enqueue)

    worker = commands.add_parser("worker", help="run queued jobs in this process until Ctrl-C")
    worker.add_argument("--drain", action="store_true", help="exit when no job is left to run")
    worker.add_argument(
        "--workers", type=int, default=2, help="jobs run at once in each process (default 2)"
    )
    worker.add_argument(
        "--processes",
        type=int,
        default=1,
        metavar="N",
        help="worker processes, forked once this one has started (default 1; Linux and macOS)",
    )
    worker.add_argument("--lease", type=float, default=None, help=argparse.SUPPRESS)
    worker.set_defaults(run=run_worker)


def _show(view: JobView, as_json: bool) -> None:
    if as_json:
        print_json(view.to_json())
        return
    extra = f"  {view.error_code}: {view.error_message}" if view.error_code else ""
    print(
        f"{view.id}  {view.stage_id:<22} {view.state.value:<17} attempt "
        f"{view.attempts}/{view.max_attempts}  {view.progress:>4.0%}{extra}"
    )


def run_list(args: argparse.Namespace) -> int:
    query = JobQuery(
        tuple(JobState(s) for s in args.state or ()),
        stage=args.stage,
        search=args.search,
        **page_asked(args),
    )
    paged = is_page(args)
    # a read of the catalog alone: no services are started
    with store_for(args) as store, store.read() as session:
        views = read_jobs(session, query)
        total = count_jobs(session, query) if paged and not args.json else Tally(len(views))
    if not views and not args.json:
        filtered = query.states or query.stage or query.search or narrowed(args)
        print("No job matches." if filtered else "No jobs.")
    for view in views:
        print_json_line(view.to_json()) if args.json else _show(view, False)
    if paged and not args.json:
        print_page_line("Jobs", query.offset, len(views), total)
    return 0


def run_cancel(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        view = services.queue.cancel(args.job_id)
    _show(view, args.json)
    if view.cancel_requested and not args.json:
        print("A worker is running it: it stops at its next check and ends Cancelled.")
    return 0


def run_reprocess(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        view = services.queue.reprocess(args.job_id)
    _show(view, args.json)
    return 0


def run_incidents(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        incidents = services.queue.incidents()
    if args.json:
        print_json([i.to_json() for i in incidents])
        return 0
    if not incidents:
        print("No reproducibility incidents.")
    for i in incidents:
        print(
            f"#{i.id} {i.recorded_at:%Y-%m-%d %H:%M:%S} stage {i.stage_id} key "
            f"{i.idempotency_key[:12]}…\n    first  job {i.first_job_id} output {i.first_digest}\n "
            f"   second job {i.second_job_id} output {i.second_digest}  (not committed; the first "
            "stands)"
        )
    return 0


def run_enqueue(args: argparse.Namespace) -> int:
    try:
        config = json.loads(args.config)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--config is not valid JSON ({exc.msg} at position {exc.pos})") from exc
    if not isinstance(config, dict):
        raise UsageError("--config must be a JSON object, like '{\"steps\": 3}'")
    with services_for(args) as services:
        view = services.queue.enqueue(
            args.stage_id, args.input, config, depends_on=args.after, priority=args.priority
        )
    _show(view, args.json)
    return 0


class _CatalogWatch:
    """SQLite's integrity check of the catalog, once, on a thread of its own from the worker's
    start (claiming does not wait for it). Damage found is recorded, stops the event dispatcher and
    the claiming of jobs, and the worker exits with :class:`~labrig.errors.CatalogDamagedError`."""

    def __init__(self, services: Services, executor: ThreadExecutor) -> None:
        self._services, self._executor = services, executor
        self._check = page_check(services.store)
        self.found: LabrigError | None = None
        self._thread = threading.Thread(target=self._run, name="labrig-page-check", daemon=True)

    def start(self) -> None:
        if self._check is not None:  # None: PostgreSQL, which checks its own pages
            self._thread.start()

    def interrupt(self) -> None:
        if self._check is not None:
            self._check.interrupt()

    def join(self) -> None:
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        assert self._check is not None
        try:
            findings = self._check.run()
        except LabrigError as exc:  # the check could not run: said, and the worker goes on
            print(f"labrig: {exc.code}: {exc.message}", file=sys.stderr)
            return
        if findings:
            # the writers of this process stop first, then the refusal is recorded for every other
            self._executor.stop()
            self._services.dispatcher_thread.stop()
            store = self._services.store
            self.found = damage_found(store, "labrig worker", findings).refusal()


def run_worker(args: argparse.Namespace) -> int:
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.processes < 1:
        raise UsageError("--processes must be at least 1")
    if args.processes == 1:
        return _work(args, "Worker")
    from labrig.cli.forked import can_fork, run_forked

    if not can_fork():
        raise UsageError(
            "--processes needs a system that forks processes (Linux, macOS): here, start one "
            "'labrig worker' for each process instead"
        )
    # the catalog opened (made, migrated) and checked once, closed before the fork: its refusal
    # is said once, and the processes do not race to migrate it
    with store_for(args) as store:
        store.refuse_if_damaged()
    return run_forked(args.processes, lambda n: _work(args, f"Worker {n} of {args.processes}"))


def _stop_handler(
    name: str, executor: ThreadExecutor, watch: _CatalogWatch
) -> Callable[[int, FrameType | None], None]:
    """What Ctrl-C or SIGTERM does to a worker: running stages hand their jobs back at their next
    check and the worker stops, which it says at once (a stage may run a while before it checks).
    Asked again, it stops at once: the jobs it still runs are left to their leases, void as soon
    as this process has ended, and the next claim of any worker takes each back as a lost
    worker's (``LABRIG_WORKER_LOST``, the attempt used)."""
    asked: list[int] = []

    def stop(signum: int, _frame: FrameType | None) -> None:
        if asked:
            _say(
                f"{name} stopped at once: the jobs it was running are taken back by the next "
                "claim of any worker."
            )
            os._exit(128 + signum)  # as a shell reports a command ended by that signal
        asked.append(signum)
        executor.stop()
        watch.interrupt()
        _say(
            f"{name} stopping: running jobs are handed back at their stage's next check "
            "(Ctrl-C again stops at once)."
        )

    return stop


@contextmanager
def _stops_handled_by(handler: Callable[[int, FrameType | None], None]) -> Iterator[None]:
    """Ctrl-C and SIGTERM go to ``handler`` inside, and where they went before afterwards (a
    worker run within a longer process leaves no handler of its own behind)."""
    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)


def _say(text: str) -> None:
    """A line written from a signal handler: straight to the descriptor, since the handler may
    have interrupted a write of ``sys.stdout`` (whose buffer refuses a write within a write)."""
    os.write(sys.stdout.fileno(), (text + "\n").encode())


def _work(args: argparse.Namespace, name: str) -> int:
    """``labrig worker`` in this process; ``name`` begins the line it ends with."""
    with services_for(args) as services:
        services.store.refuse_if_damaged()  # damage recorded before: not one job is claimed
        if args.lease:
            services.queue.terms = LeaseTerms(args.lease)
        executor = ThreadExecutor(services.queue, workers=args.workers)
        watch = _CatalogWatch(services, executor)
        services.dispatcher_thread.settle_seconds = WORKER_SETTLE_S
        with _stops_handled_by(_stop_handler(name, executor, watch)):
            services.start()  # consumers (the result publisher) hear the jobs' events at once
            watch.start()  # after the dispatcher started, which it may have to stop
            print_line(f"{name} started (process {os.getpid()}), {args.workers} jobs at a time.")
            try:
                stats = executor.run(drain=args.drain)
            finally:
                watch.join()  # a drained worker exits with the check's verdict
            if watch.found is not None:
                raise watch.found
            services.dispatcher_thread.stop()  # first, so the passes below do not race it
            # every result of the jobs this worker ran, before it exits
            services.dispatcher.dispatch_all()
    states = ", ".join(f"{n} {s}" for s, n in sorted(stats.by_state.items())) or "none"
    print_line(
        f"{name} stopped: {stats.finished} jobs finished ({states}); {stats.lease_lost} lost "
        "their lease."
    )
    return 0
