"""Output commit keyed by the idempotency key: first committer wins; differences become
incidents."""

from __future__ import annotations

import itertools

from sqlalchemy import func, select

from labrig.domain.jobs import JobState
from labrig.jobs.fenced import FencedWrites
from labrig.jobs.queue import JobQueue
from labrig.jobs.runner import run_claim
from labrig.jobs.stages import Stage, StageContext, StageOutput, StageRegistry
from labrig.store import Store
from labrig.store.models import JobOutput
from tests.integration.queue.conftest import FakeClock, Time

_counter = itertools.count()


def _drifting(ctx: StageContext) -> StageOutput:
    return StageOutput({"value": next(_counter)})  # a different answer every run


def _queue(store: Store, deterministic: bool) -> tuple[JobQueue, FencedWrites]:
    q = JobQueue(
        store,
        StageRegistry((Stage("t.drift", 1, deterministic, _drifting),)),
        FakeClock(Time(), "w"),
    )
    return q, FencedWrites(q)


def _run_one(q: JobQueue, w: FencedWrites) -> None:
    [claim] = q.claim(1)
    result = run_claim(w, q.registry, claim)
    assert result.view is not None and result.view.state is JobState.SUCCEEDED


def test_a_deterministic_stage_that_disagrees_with_itself_opens_an_incident(store: Store) -> None:
    q, w = _queue(store, deterministic=True)
    first = q.enqueue("t.drift", ["in"])
    _run_one(q, w)
    second = q.reprocess(first.id)
    _run_one(q, w)
    [incident] = q.incidents()
    first_done, second_done = q.get(first.id), q.get(second.id)
    assert (incident.first_job_id, incident.second_job_id) == (first.id, second.id)
    assert incident.first_digest == first_done.output_digest
    assert incident.second_digest != incident.first_digest
    assert second_done.output_digest == first_done.output_digest  # the first output stands
    with store.read() as s:
        assert s.scalar(select(func.count()).select_from(JobOutput)) == 1
        row = s.get(JobOutput, first_done.idempotency_key)
        assert row is not None and row.job_id == first.id


def test_a_non_deterministic_stage_keeps_its_first_output_without_an_incident(store: Store) -> None:
    q, w = _queue(store, deterministic=False)
    first = q.enqueue("t.drift", ["in"])
    _run_one(q, w)
    q.reprocess(first.id)
    _run_one(q, w)
    assert q.incidents() == []
    with store.read() as s:
        assert s.scalar(select(func.count()).select_from(JobOutput)) == 1
