"""A worker frozen past its lease (SIGSTOP) cannot commit when it wakes: its result is discarded.

Real world: a worker process is suspended (a debugger, a laptop lid, a VM pause, swap
storm) while it runs a stage. It is still alive, so its pid says nothing; its lease runs
out on the monotonic clock, another worker takes the job over and commits it. When the
frozen worker resumes, every write it tries is fenced off (LeaseLostError) and it must
change nothing: the committed output is the second claimer's, the job succeeded once.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
from pathlib import Path

from labrig.domain.jobs import JobState
from labrig.jobs.fenced import FencedWrites
from labrig.jobs.lease import Clock, LeaseTerms
from labrig.jobs.policy import RetryPolicy
from labrig.jobs.queue import WORKER_LOST, JobQueue
from labrig.jobs.runner import run_claim
from labrig.store import open_store
from labrig.store.models import Job
from labrig.store.paths import DB_FILENAME
from tests.integration.queue_procs.conftest import Workers
from tests.integration.queue_procs.helpers import enqueue, snapshot, wait_until
from tests.integration.queue_procs.worker_child import LEASE_LOST_EXIT, make_registry

LEASE = 1.0
# ~1 s of work, progress every 50 ms
CONFIG = {"steps": 20, "step_seconds": 0.05, "checkpoint_every": 0}


def _dump(store_root: Path) -> list[str]:
    """The whole database as SQL text: any write at all changes it."""
    conn = sqlite3.connect(store_root / DB_FILENAME)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def _lease_lapsed(queue: JobQueue, job_id: str) -> bool:
    with queue.store.read() as session:
        job = session.get(Job, job_id)
        assert job is not None and job.state == JobState.RUNNING.value, (
            "the stopped run's job is no longer running"
        )
        return queue.lease_lapsed(job)


def _process_state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_a_stopped_worker_past_its_lease_is_fenced_off_when_it_resumes(
    tmp_path: Path, workers: Workers
) -> None:
    store, markers, result = tmp_path / "store", tmp_path / "markers", tmp_path / "stale.json"
    # the stale run waits here after it started: it is mid-stage when it is stopped
    gate = tmp_path / "gate"
    markers.mkdir()
    [job_id] = enqueue(store, ["frozen-input"], CONFIG)
    stale = workers.spawn(
        store,
        "once",
        "--lease",
        str(LEASE),
        "--marker-dir",
        str(markers),
        "--result",
        str(result),
        "--gate",
        str(gate),
    )
    try:
        wait_until(
            lambda: (markers / f"{job_id}.{stale.pid}.started").exists(), 20, "the stage to start"
        )
        os.kill(stale.pid, signal.SIGSTOP)
        wait_until(lambda: _process_state(stale.pid) == "T", 5, "the worker to stop")
        gate.touch()  # it goes on with its steps only once it is resumed

        second = open_store(store)
        try:
            queue = JobQueue(
                second,
                make_registry(marker_dir=markers),
                Clock(),
                LeaseTerms(30.0),
                RetryPolicy(base_seconds=0.0),
            )
            # its lease lapses on the monotonic clock while its process still exists
            wait_until(
                lambda: _lease_lapsed(queue, job_id),
                LEASE + 30,
                "the stopped worker's lease to lapse",
            )
            [claim] = queue.claim(1)
            assert (claim.job_id, claim.token, claim.attempt) == (job_id, 2, 2)
            run = run_claim(FencedWrites(queue), queue.registry, claim)
            assert run.view is not None and run.view.state is JobState.SUCCEEDED
        finally:
            second.close()
        before = _dump(store)
    finally:
        os.kill(stale.pid, signal.SIGCONT)
    assert stale.wait(timeout=20) == LEASE_LOST_EXIT, workers.stderr(stale)

    assert json.loads(result.read_text()) == {
        "pid": stale.pid,
        "token": 1,
        "lease_lost": True,
        "state": None,
    }
    assert _dump(store) == before, "the stale worker wrote to the store after it resumed"
    snap = snapshot(store)
    state, key, digest, _, attempts = snap["jobs"][job_id]
    assert (state, attempts) == (JobState.SUCCEEDED.value, 2)
    assert snap["outputs"][key][:3] == (job_id, claim.token, digest)
    assert snap["completed"] == {job_id: 1}
    assert [f["error_code"] for f in snap["failed"]] == [WORKER_LOST]
    assert snap["incidents"] == []
