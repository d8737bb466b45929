"""Two worker processes started together on one store never run a job twice at once.

Real world: an operator starts a second ``labrig worker`` (or the GUI's executor runs
beside a CLI worker) on the same data folder. Both claim in the same moments; SQLite's
write lock and the lease must give each job to exactly one of them, and jobs that share
an idempotency key (same stage, inputs, config) must still commit one logical output.
Each stage run logs ``job_id pid start_ns end_ns`` on the system-wide monotonic clock.
Workers started at the same instant must also be able to open the store at all.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from labrig.domain.jobs import JobState
from labrig.store import open_store
from tests.integration.queue_procs.conftest import Workers
from tests.integration.queue_procs.helpers import enqueue, snapshot, wait_until
from tests.integration.queue_procs.worker_child import expected_output

JOBS = 100
ROUNDS, AT_ONCE = 2, 6
CONFIG = {"steps": 3, "step_seconds": 0.01, "checkpoint_every": 0}


def _runs(logs: list[Path]) -> dict[str, list[tuple[int, int, int]]]:
    runs: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for log in logs:
        for line in log.read_text().splitlines():
            job_id, pid, start, end, _ = line.split()
            runs[job_id].append((int(pid), int(start), int(end)))
    return runs


def test_two_workers_claiming_together_split_the_work_without_running_a_job_twice(
    tmp_path: Path, workers: Workers
) -> None:
    store, go, meet = tmp_path / "store", tmp_path / "go", tmp_path / "meet"
    # each process's first stage waits there for the other's: both claim and run, however scheduled
    meet.mkdir()
    # adjacent jobs share a key
    job_ids = enqueue(store, [f"pair-{i // 2:02d}" for i in range(JOBS)], CONFIG)
    logs, procs = [tmp_path / "a.log", tmp_path / "b.log"], []
    # opened one after the other (see the next test), then released together
    for n, log in enumerate(logs):
        ready = tmp_path / f"ready-{n}"
        procs.append(
            workers.spawn(
                store,
                "drain",
                "--workers",
                "2",
                "--log",
                str(log),
                "--ready",
                str(ready),
                "--go",
                str(go),
                "--meet",
                str(meet),
                "--meet-count",
                str(len(logs)),
            )
        )
        wait_until(ready.exists, 20, f"worker {n} to open the store")
    go.touch()
    for proc in procs:
        assert proc.wait(timeout=60) == 0, workers.stderr(proc)

    runs = _runs(logs)
    for job_id, intervals in runs.items():
        for i, (pid_a, start_a, end_a) in enumerate(intervals):
            for pid_b, start_b, end_b in intervals[i + 1 :]:
                assert pid_a == pid_b or end_a <= start_b or end_b <= start_a, (
                    f"job {job_id} ran in two processes"
                )
    assert sorted(runs) == sorted(job_ids)
    assert all(len(intervals) == 1 for intervals in runs.values()), "a job ran more than once"
    work_by_pid = {p.pid: sum(1 for r in runs.values() if r[0][0] == p.pid) for p in procs}
    assert all(work_by_pid.values()), f"one process did all the work: {work_by_pid}"

    snap = snapshot(store)
    assert {state for state, *_ in snap["jobs"].values()} == {JobState.SUCCEEDED.value}
    assert len(snap["outputs"]) == JOBS // 2
    for job_id, (_, key, digest, _, _) in snap["jobs"].items():
        committer, _, committed_digest, body = snap["outputs"][key]
        assert digest == committed_digest and snap["jobs"][committer][1] == key, job_id
        assert body == expected_output(body["inputs"], CONFIG["steps"])
    assert snap["completed"] == {job_id: 1 for job_id in job_ids}
    assert snap["incidents"] == []


def test_workers_started_at_the_same_instant_all_open_the_store(
    tmp_path: Path, workers: Workers
) -> None:
    """Fails today: ``paths.ensure_writable`` uses one fixed probe file, so a process that
    opens the store while another is probing has its probe deleted under it and refuses
    to start with LABRIG_STORE_UNWRITABLE ("No such file or directory")."""
    store = tmp_path / "store"
    open_store(store).close()  # an existing, healthy store with nothing to do
    failed: list[str] = []
    for round_ in range(ROUNDS):
        open_at = tmp_path / f"open-{round_}"
        procs = [workers.spawn(store, "drain", "--open-at", str(open_at)) for _ in range(AT_ONCE)]
        waiting = f"{open_at.name}.*.waiting"
        wait_until(
            lambda w=waiting: len(list(tmp_path.glob(w))) == AT_ONCE,
            30,
            "the workers to reach the barrier",
        )
        open_at.touch()
        failed += [
            workers.stderr(p).strip().splitlines()[-1] for p in procs if p.wait(timeout=60) != 0
        ]
    assert failed == [], (
        f"{len(failed)} of {ROUNDS * AT_ONCE} workers started together refused to open the store "
        f"(probe-file race in labrig.store.paths.ensure_writable): {failed[0]}"
    )
