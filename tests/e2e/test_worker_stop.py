"""Stopping ``labrig worker`` while a stage runs: the first Ctrl-C or SIGTERM hands the job back at
the stage's next check, and says so at once; a second one stops the worker at once."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from labrig.bootstrap import bootstrap
from labrig.cli import main
from labrig.domain.jobs import JobState
from labrig.jobs.queue import JobQueue
from labrig.store import open_store
from tests.support.cli import lines_of, read_until, worker

#: a stage that will not check for an hour: the first stop cannot end it
DEAF = {"steps": 1, "step_seconds": 3600.0}


@pytest.fixture
def jobs(tmp_path: Path) -> Iterator[tuple[Path, JobQueue]]:
    """A new store, and its queue to enqueue in and watch (closed after the test)."""
    store = tmp_path / "store"
    services = bootstrap(store=open_store(store))
    try:
        yield store, services.queue
    finally:
        services.close()


@pytest.mark.parametrize(
    ("processes", "signum"),
    [(1, signal.SIGINT), (2, signal.SIGTERM)],
    ids=["one process, Ctrl-C", "two processes, SIGTERM"],
)
def test_a_second_stop_ends_a_worker_whose_stage_does_not_check(
    jobs: tuple[Path, JobQueue], processes: int, signum: signal.Signals
) -> None:
    store, q = jobs
    job_id = q.enqueue("labrig.selftest", config=DEAF).id
    child = worker({"LABRIG_STORE": str(store)}, "--workers", "1", "--processes", str(processes))
    lines, errors = lines_of(child.stdout), lines_of(child.stderr)
    try:
        said = read_until(lines, "started (process", processes)  # each stops as a worker from here
        deadline = time.monotonic() + 120
        while q.get(job_id).state is not JobState.RUNNING:
            assert time.monotonic() < deadline and child.poll() is None, "never ran the job"
            time.sleep(0.05)
        child.send_signal(signum)
        # each process took the first stop (two signals sent close together may arrive as one)
        said += read_until(lines, "stopping: running jobs are handed back", processes)
        assert child.poll() is None  # its stage sleeps for an hour before it checks
        child.send_signal(signum)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 128 + signum
    said += read_until(lines, "stopped at once")
    assert any("stopped at once: the jobs it was running are taken back" in s for s in said), said
    assert "Traceback" not in "".join(errors.queue)
    q.reap()  # its process is gone: the lease is void at once on this host
    view = q.get(job_id)
    assert view.state is JobState.RETRY_WAITING and view.error_code == "LABRIG_WORKER_LOST"
    assert view.attempts == 1


def test_the_first_stop_hands_a_checking_stage_back_and_says_so(
    jobs: tuple[Path, JobQueue],
) -> None:
    store, q = jobs
    job_id = q.enqueue("labrig.selftest", config={"steps": 100_000, "step_seconds": 0.05}).id
    child = worker({"LABRIG_STORE": str(store)}, "--workers", "1")
    try:
        while q.get(job_id).state is not JobState.RUNNING:
            assert child.poll() is None, "the worker ended before it ran the job"
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        raise
    assert child.returncode == 0
    assert "Worker stopping: running jobs are handed back" in out, out
    assert "Worker stopped: 1 jobs finished (1 RetryWaiting)" in out, out
    view = q.get(job_id)
    assert view.state is JobState.RETRY_WAITING and view.error_code == "LABRIG_WORKER_STOPPED"


def test_a_worker_run_within_a_process_leaves_the_stop_signals_as_they_were(
    tmp_path: Path,
) -> None:
    """Its handler would end the whole process at a second Ctrl-C: it is not left behind."""
    stops = (signal.SIGINT, signal.SIGTERM)
    before = [signal.getsignal(sig) for sig in stops]
    assert main(["--store", str(tmp_path / "store"), "worker", "--drain"]) == 0
    assert [signal.getsignal(sig) for sig in stops] == before
