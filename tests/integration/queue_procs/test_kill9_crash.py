"""A worker killed with ``kill -9`` mid-run, again and again, loses no job and
commits nothing twice.

Real world: the analysis workstation's worker is OOM-killed, or the machine loses power,
while stages are half-way through (some checkpointed, some in a write). Each restarted
worker must see that the dead process's leases are void (its pid is gone), retry those
jobs from their checkpoints, and in the end every job succeeds with exactly one committed
output per idempotency key, one ``analysis.stage.completed`` event per job, and no
reproducibility incident (a checkpoint resumed wrongly would change a digest).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
from pathlib import Path

from labrig.domain.jobs import JobState
from labrig.jobs.queue import WORKER_LOST
from tests.integration.queue_procs.conftest import Workers
from tests.integration.queue_procs.helpers import enqueue, snapshot, wait_until
from tests.integration.queue_procs.worker_child import expected_output, request_hold

JOBS, DISTINCT_INPUTS, KILLS = 200, 160, 25  # every 5th job repeats an earlier input: same key
CONFIG = {"steps": 6, "step_seconds": 0.02, "checkpoint_every": 2}
# Every other life is killed while one of its stages runs for certain: the stage stops at a chosen
# step (after that step's checkpoint, if it has one; --hold) until the kill. Those are 13 of the 25
# kills, so at least KILLS // 2 land mid-stage, and some after a checkpoint, whatever the machine's
# speed. The other lives are killed at a random moment, wherever the worker happens to be (claiming,
# committing, ...). A random life runs at most 0.6 s with 2 workers and a stage takes at least 0.12
# s: at most ~10 jobs each, so the queue cannot drain before the last kill.


def test_repeated_kill9_loses_nothing_and_commits_each_key_once(
    tmp_path: Path, workers: Workers
) -> None:
    store, log = tmp_path / "store", tmp_path / "runs.log"
    inputs = [f"input-{i % DISTINCT_INPUTS:03d}" for i in range(JOBS)]
    job_ids = enqueue(store, inputs, CONFIG)
    rng = random.Random(20240607)

    kills = 0
    for life in range(KILLS):
        ready, hold = tmp_path / f"ready-{life}", tmp_path / f"hold-{life}"
        held = life % 2 == 0
        if held:  # each step in turn, from before the first to before the last
            request_hold(hold, (life // 2) % CONFIG["steps"])
        proc = workers.spawn(
            store,
            "drain",
            "--workers",
            "2",
            "--ready",
            str(ready),
            "--log",
            str(log),
            "--hold",
            str(hold),
        )
        wait_until(ready.exists, 20, "a worker to start")
        try:
            if held:
                wait_until(
                    lambda h=hold, p=proc: Path(f"{h}.held").exists() or p.poll() is not None,
                    60,
                    "the worker to hold a running stage",
                )
                # raises TimeoutExpired: still running, as it must be
                returncode = proc.wait(timeout=0)
            else:
                returncode = proc.wait(timeout=rng.uniform(0.05, 0.6))
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
            proc.wait()  # reaped: no zombie keeps its pid (and so its leases) alive
        else:
            assert returncode == 0, workers.stderr(proc)
    assert kills == KILLS, "the queue drained before every kill landed; make the stage slower"

    final = workers.spawn(store, "drain", "--workers", "2", "--log", str(log))
    assert final.wait(timeout=60) == 0, workers.stderr(final)

    snap = snapshot(store)
    jobs, outputs = snap["jobs"], snap["outputs"]
    assert sorted(jobs) == sorted(job_ids), "a job row was lost"
    assert {state for state, *_ in jobs.values()} == {JobState.SUCCEEDED.value}
    assert sorted(outputs) == sorted({key for _, key, *_ in jobs.values()})
    assert len(outputs) == DISTINCT_INPUTS
    for job_id, (_, key, digest, _, _) in jobs.items():
        committer, _, committed_digest, body = outputs[key]
        assert digest == committed_digest, f"job {job_id} reports an output other than its key's"
        assert body == expected_output(body["inputs"], CONFIG["steps"])
        assert jobs[committer][1] == key
    assert snap["incidents"] == []
    assert snap["completed"] == {job_id: 1 for job_id in job_ids}
    lost = [f for f in snap["failed"] if f["error_code"] == WORKER_LOST]
    assert len(lost) >= KILLS // 2, f"only {len(lost)} kills landed while a stage was running"
    resumed = [line for line in log.read_text().splitlines() if line.split()[-1] != "0"]
    assert resumed, "no killed job was resumed from its checkpoint"
