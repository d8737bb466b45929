"""Four worker processes on one PostgreSQL queue, killed with ``kill -9`` and restarted at random.

Real world: several analysis machines share the lab's catalog; any of them may die
at any moment (power, OOM). Every job must end Succeeded, every logical output must
be committed exactly once, and no job may be lost — with the claim's ``FOR UPDATE
SKIP LOCKED`` and the fenced writes doing the work that SQLite's single writer does
on one workstation.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from labrig.jobs.queue import WORKER_LOST, JobQueue, JobSpec
from labrig.store import DB_ENV_VAR, open_store
from tests.conftest import PostgresDatabases
from tests.integration.queue_procs.conftest import Workers
from tests.integration.queue_procs.helpers import snapshot, wait_until
from tests.integration.queue_procs.worker_child import (
    STAGE_ID,
    expected_output,
    make_registry,
    request_hold,
)

pytestmark = pytest.mark.postgresql

# every 5th job repeats an earlier input: the same key
JOBS, DISTINCT_INPUTS, PROCESSES = 2000, 1600, 4
CONFIG = {"steps": 2, "step_seconds": 0.004, "checkpoint_every": 1}
MIN_KILLS, TIME_LIMIT_S = 12, 240
KILLS = MIN_KILLS * 2
# Kills are paced by the queue's progress, not by the clock: kill k lands once k * KILL_STRIDE stage
# runs have finished, so all of them land in the first three quarters of the work however fast or
# loaded the machine is.
KILL_STRIDE = JOBS * 3 // 4 // KILLS


def test_four_workers_killed_at_random_lose_nothing_and_commit_each_key_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres: PostgresDatabases, workers: Workers
) -> None:
    monkeypatch.setenv(DB_ENV_VAR, postgres.url())
    store_root, log = tmp_path / "store", tmp_path / "runs.log"
    inputs = [f"input-{i % DISTINCT_INPUTS:04d}" for i in range(JOBS)]
    store = open_store(store_root)
    try:
        job_ids = [
            v.id
            for v in JobQueue(store, make_registry()).enqueue_many(
                [JobSpec(STAGE_ID, [digest], CONFIG) for digest in inputs]
            )
        ]
    finally:
        store.close()

    holds: dict[subprocess.Popen[bytes], Path] = {}

    def spawn(n: int) -> subprocess.Popen[bytes]:
        proc = workers.spawn(
            store_root,
            "drain",
            "--workers",
            "2",
            "--log",
            str(log),
            "--ready",
            str(tmp_path / f"ready-{n}"),
            "--hold",
            str(tmp_path / f"hold-{n}"),
        )
        holds[proc] = tmp_path / f"hold-{n}"
        return proc

    log.touch()
    seen = {"offset": 0, "lines": 0}

    def runs_finished() -> int:  # lines of --log so far, read on from where the last call stopped
        with log.open("rb") as fh:
            fh.seek(seen["offset"])
            chunk = fh.read()
        seen["offset"] += len(chunk)
        seen["lines"] += chunk.count(b"\n")
        return seen["lines"]

    def drained() -> bool:
        return all(p.poll() is not None for p in running)

    rng = random.Random(20261129)
    running = [spawn(n) for n in range(PROCESSES)]
    started, kills, spawned = time.monotonic(), 0, PROCESSES
    for k in range(KILLS):
        wait_until(
            lambda k=k: runs_finished() >= k * KILL_STRIDE or drained(),
            TIME_LIMIT_S,
            f"{k * KILL_STRIDE} stage runs to finish",
        )
        alive = [p for p in running if p.poll() is None]
        if not alive:
            break
        victim = rng.choice(alive)
        if k % 2 == 0:  # every other kill is made to land while one of the victim's stages runs
            hold = holds[victim]
            request_hold(hold, rng.randrange(CONFIG["steps"]))
            wait_until(
                lambda h=hold, v=victim: Path(f"{h}.held").exists() or v.poll() is not None,
                TIME_LIMIT_S,
                "the victim to hold a running stage",
            )
            if victim.poll() is not None:  # it ran out of work first: nothing to kill
                continue
        os.kill(victim.pid, signal.SIGKILL)  # the others: wherever the victim happens to be
        victim.wait()
        kills += 1
        running[running.index(victim)] = spawn(spawned)  # restarted, as a service manager would
        spawned += 1
    wait_until(
        drained,
        max(TIME_LIMIT_S - (time.monotonic() - started), 1.0),
        "the workers to drain the queue",
    )
    for proc in running:
        assert proc.returncode in (0, -signal.SIGKILL), workers.stderr(proc)
    final = spawn(spawned)  # whatever the last kills left behind
    assert final.wait(timeout=120) == 0, workers.stderr(final)

    assert kills >= MIN_KILLS, "the queue drained before enough kills landed; make the stage slower"
    snap = snapshot(store_root)
    jobs, outputs = snap["jobs"], snap["outputs"]
    assert sorted(jobs) == sorted(job_ids), "a job row was lost"
    assert {state for state, *_ in jobs.values()} == {"Succeeded"}
    assert len(outputs) == DISTINCT_INPUTS == len({key for _, key, *_ in jobs.values()})
    for job_id, (_, key, digest, _, _) in jobs.items():
        committer, _, committed_digest, body = outputs[key]
        assert jobs[committer][1] == key
        assert digest == committed_digest, f"job {job_id} reports an output other than its key's"
        assert body == expected_output(body["inputs"], CONFIG["steps"])
    assert snap["incidents"] == []
    assert snap["completed"] == {job_id: 1 for job_id in job_ids}, "a job completed twice"
    lost = [f for f in snap["failed"] if f["error_code"] == WORKER_LOST]
    assert lost, "no kill landed while a stage was running"
