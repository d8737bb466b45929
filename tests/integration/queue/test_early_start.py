"""Runs started before their claim commits: overlapped with the commit's fsync, void if
that commit fails.

The commit failure is the database's own: a deferred foreign key that a trigger on
the claim's UPDATE violates is checked at COMMIT, so the whole transaction rolls back.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from sqlalchemy import func, select, text

from labrig.bootstrap import bootstrap
from labrig.domain.jobs import JobState
from labrig.jobs.executor import ThreadExecutor
from labrig.jobs.fenced import FencedWrites
from labrig.jobs.stages import Stage, StageOutput, StageRegistry
from labrig.jobs.views import Claim
from labrig.store import Store
from labrig.store.models import Job, JobOutput

S = JobState
FAULT = {
    "sqlite": [
        "CREATE TABLE fault (ref TEXT REFERENCES jobs(id) DEFERRABLE INITIALLY DEFERRED)",
        "CREATE TRIGGER fail_claims AFTER UPDATE OF state ON jobs WHEN NEW.state = 'Running' "
        "BEGIN INSERT INTO fault (ref) VALUES ('no-such-job'); END",
    ],
    "postgresql": [
        "CREATE TABLE fault (ref TEXT REFERENCES jobs(id) DEFERRABLE INITIALLY DEFERRED)",
        "CREATE FUNCTION fail_claim() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN INSERT INTO fault (ref) VALUES ('no-such-job'); RETURN NEW; END $$",
        "CREATE TRIGGER fail_claims AFTER UPDATE OF state ON jobs FOR EACH ROW WHEN (NEW.state = "
        "'Running') EXECUTE FUNCTION fail_claim()",
    ],
}
CLEAR = {
    "sqlite": ["DROP TRIGGER fail_claims", "DROP TABLE fault"],
    "postgresql": [
        "DROP TRIGGER fail_claims ON jobs",
        "DROP FUNCTION fail_claim()",
        "DROP TABLE fault",
    ],
}


def _fault(store: Store, on: bool) -> None:
    with store.write() as session:
        for sql in (FAULT if on else CLEAR)[store.dialect]:
            session.execute(text(sql))


class Recorder:
    def __init__(self) -> None:
        self.started: list[Claim] = []
        self.voided: list[Claim] = []

    def start(self, claims: list[Claim]) -> None:
        self.started += claims

    def void(self, claims: list[Claim]) -> None:
        self.voided += claims


def _states(store: Store) -> dict[str, int]:
    with store.read() as session:
        return dict(session.execute(select(Job.state, func.count()).group_by(Job.state)).all())  # type: ignore[arg-type]


def test_claims_are_handed_over_inside_the_transaction_and_returned_to_nobody(store: Store) -> None:
    services = bootstrap(
        store=store, registry=StageRegistry((Stage("t.ok", 1, True, lambda c: StageOutput({})),))
    )
    for i in range(3):
        services.queue.enqueue("t.ok", [f"d{i}"])
    early = Recorder()
    results, claims = FencedWrites(services.queue).finish([], 2, start=True, early=early)
    assert results == [] and claims == [] and len(early.started) == 2 and early.voided == []
    assert _states(store) == {"Running": 2, "Ready": 1}


def test_a_commit_that_fails_voids_the_claims_started_early_and_leaves_the_jobs_ready(
    store: Store,
) -> None:
    services = bootstrap(
        store=store, registry=StageRegistry((Stage("t.ok", 1, True, lambda c: StageOutput({})),))
    )
    for i in range(3):
        services.queue.enqueue("t.ok", [f"d{i}"])
    _fault(store, on=True)
    early = Recorder()
    results, claims = FencedWrites(services.queue).finish([], 3, start=True, early=early)
    assert results == [] and claims == []  # and no second claim while void runs may still be going
    assert len(early.started) == 3 and early.voided == early.started
    assert _states(store) == {"Ready": 3}


def test_the_executor_commits_nothing_for_void_runs_and_every_job_once_after_the_fault_clears(
    store: Store,
) -> None:
    runs: list[tuple[str, int]] = []
    lock = threading.Lock()

    def run(ctx: Any) -> StageOutput:
        with lock:
            runs.append((ctx.job_id, len(runs)))
        return StageOutput({"inputs": ctx.input_digests})

    services = bootstrap(store=store, registry=StageRegistry((Stage("t.count", 1, True, run),)))
    jobs = [services.queue.enqueue("t.count", [f"d{i}"]).id for i in range(12)]
    _fault(store, on=True)
    executor = ThreadExecutor(services.queue, workers=3, poll_seconds=0.02)
    stats: list[Any] = []
    worker = threading.Thread(target=lambda: stats.append(executor.run(drain=True)))
    worker.start()
    deadline = time.monotonic() + 10
    # void runs happened: the stage ran, nothing committed
    while len(runs) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(runs) >= 3
    assert _states(store) == {"Ready": 12}
    _fault(store, on=False)
    worker.join(30)
    assert not worker.is_alive()
    assert _states(store) == {"Succeeded": 12}
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(JobOutput)) == 12
    assert stats[0].finished == 12 and stats[0].lease_lost >= 3  # the void runs, reported lost
    assert {job_id for job_id, _ in runs} == set(jobs)
