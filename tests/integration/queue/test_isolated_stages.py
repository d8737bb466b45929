"""Stages declared ``isolated`` run in a child process with the same outcomes as in-thread
stages."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from labrig.domain.jobs import JobState
from labrig.jobs.executor import ThreadExecutor
from labrig.jobs.fenced import FencedWrites
from labrig.jobs.lease import Clock, LeaseTerms, process_alive
from labrig.jobs.queue import JobQueue
from labrig.jobs.runner import run_claim
from labrig.jobs.stages import Stage, StageRegistry
from labrig.store import Store
from labrig.store.models import JobOutput
from tests.integration.queue import isolated_stages as fn

REGISTRY = StageRegistry(
    (
        Stage("iso.pid", 1, True, fn.report_pid, isolated=True),
        Stage("iso.blocked", 1, True, fn.blocked, isolated=True),
        Stage("iso.dies", 1, True, fn.dies, isolated=True, max_attempts=2),
        Stage("iso.wait", 1, True, fn.waits_for_cancel, isolated=True),
        Stage("iso.deaf", 1, True, fn.deaf, isolated=True, stop_seconds=0.5),
    )
)


def _rig(store: Store, lease_s: float = 30.0) -> tuple[JobQueue, FencedWrites]:
    # a production-length lease unless the test is about renewals: a child's start-up on a busy
    # machine must not let the lease lapse under a run that is only meant to fail or succeed
    q = JobQueue(store, REGISTRY, Clock(), LeaseTerms(lease_s))
    return q, FencedWrites(q)


def test_output_progress_and_checkpoint_come_back_from_the_child(store: Store) -> None:
    q, w = _rig(store)
    job = q.enqueue("iso.pid", ["in"])
    progress: list[float] = []
    [claim] = q.claim(1)
    view = run_claim(w, REGISTRY, claim, on_progress=lambda j, f, m: progress.append(f)).view
    assert view is not None and view.state is JobState.SUCCEEDED_DEGRADED
    with store.read() as s:
        body = json.loads(s.get(JobOutput, view.idempotency_key).body)  # type: ignore[union-attr]
    assert body["pid"] != os.getpid() and body["inputs"] == ["in"]
    assert progress == [1 / 3, 2 / 3, 1.0]
    assert q.get(job.id).output_digest == view.output_digest


def test_typed_failures_cross_the_process_boundary(store: Store) -> None:
    q, w = _rig(store)
    job = q.enqueue("iso.blocked")
    [claim] = q.claim(1)
    run_claim(w, REGISTRY, claim)
    view = q.get(job.id)
    assert view.state is JobState.BLOCKED_BY_QUALITY and view.error_code == "LABRIG_TOO_FEW_MARKERS"


def test_a_child_that_dies_is_a_transient_failure(store: Store) -> None:
    q, w = _rig(store)
    job = q.enqueue("iso.dies")
    [claim] = q.claim(1)
    run_claim(w, REGISTRY, claim)
    view = q.get(job.id)
    assert view.state is JobState.RETRY_WAITING and "exit code 3" in (view.error_message or "")


def test_cancel_reaches_the_child_and_the_lease_is_renewed_meanwhile(store: Store) -> None:
    # short lease: renewals must flow from the relay
    q, w = _rig(store, lease_s=0.6)
    job = q.enqueue("iso.wait")
    [claim] = q.claim(1)
    runner = threading.Thread(target=run_claim, args=(w, REGISTRY, claim))
    runner.start()
    time.sleep(2.0)  # > 3 leases of 0.6 s: only renewals keep the job
    assert q.get(job.id).state is JobState.RUNNING
    q.cancel(job.id)
    runner.join(20)
    assert q.get(job.id).state is JobState.CANCELLED


def _running(q: JobQueue, job_id: str, pid_file: Path | None = None) -> None:
    """Wait until the job runs (and, given its file, its stage's process has said where)."""
    deadline = time.monotonic() + 60
    while q.get(job_id).state is not JobState.RUNNING or (pid_file and not pid_file.exists()):
        assert time.monotonic() < deadline, "the stage never started"
        time.sleep(0.02)


def _stopped_executor(q: JobQueue, job_id: str, pid_file: Path | None = None) -> None:
    executor = ThreadExecutor(q, workers=1)
    runner = threading.Thread(target=executor.run)
    runner.start()
    _running(q, job_id, pid_file)
    executor.stop()
    runner.join(30)
    assert not runner.is_alive()


def test_a_worker_stop_reaches_the_child_and_hands_the_job_back(store: Store) -> None:
    q, _ = _rig(store)
    job = q.enqueue("iso.wait")
    _stopped_executor(q, job.id)  # the stage checks: it would run 20 s and succeed unasked
    view = q.get(job.id)
    assert view.state is JobState.RETRY_WAITING and view.error_code == "LABRIG_WORKER_STOPPED"
    assert view.attempts == 0


def _deaf(q: JobQueue, folder: Path) -> tuple[str, Path]:
    """A job of the stage that never checks; its id, and the file its process says its id in."""
    pid_file = folder / "pid"
    return q.enqueue("iso.deaf", config={"pid_file": str(pid_file)}).id, pid_file


def test_a_child_deaf_to_a_stop_is_killed_after_its_grace_and_the_job_handed_back(
    store: Store, tmp_path: Path
) -> None:
    q, _ = _rig(store)
    job_id, pid_file = _deaf(q, tmp_path)
    _stopped_executor(q, job_id, pid_file)
    view = q.get(job_id)
    assert view.state is JobState.RETRY_WAITING and view.error_code == "LABRIG_WORKER_STOPPED"
    assert not process_alive(int(pid_file.read_text()))


def test_a_child_deaf_to_a_cancel_is_killed_after_its_grace_and_the_job_cancelled(
    store: Store, tmp_path: Path
) -> None:
    q, w = _rig(store)
    job_id, pid_file = _deaf(q, tmp_path)
    [claim] = q.claim(1)
    runner = threading.Thread(target=run_claim, args=(w, REGISTRY, claim))
    runner.start()
    _running(q, job_id, pid_file)
    q.cancel(job_id)
    runner.join(30)
    assert not runner.is_alive()
    assert q.get(job_id).state is JobState.CANCELLED
    assert not process_alive(int(pid_file.read_text()))
