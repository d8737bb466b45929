"""The hot path: claim that starts, outcomes of several runs committed together, batched enqueue."""

from __future__ import annotations

import time
from typing import Any

import pytest
from sqlalchemy import event, func, select

from labrig.bootstrap import bootstrap
from labrig.domain.jobs import JobState
from labrig.errors import InvalidEventPayloadError, PermanentStageError, UnknownStageError
from labrig.events import events_after
from labrig.jobs.completions import Outcome
from labrig.jobs.executor import ThreadExecutor
from labrig.jobs.fenced import FencedWrites
from labrig.jobs.queue import JobQueue, JobSpec
from labrig.jobs.rows import queue_sql
from labrig.jobs.runner import execute_claim, run_claim
from labrig.jobs.stages import Stage, StageOutput, StageRegistry
from labrig.store import Store
from labrig.store.models import Job, JobOutput, ReproducibilityIncident
from tests.integration.queue.conftest import Rig

S = JobState


def _events(rig: Rig, name: str) -> list[dict[str, Any]]:
    return [e.payload for e in events_after(rig.store, 0) if e.name == name]


def _output(claim_id: str) -> StageOutput:
    return StageOutput({"job": claim_id})


def test_claim_with_start_runs_the_job_in_the_claim_transaction(rig: Rig) -> None:
    job = rig.queue.enqueue("t.echo", ["a"])
    [claim] = rig.queue.claim(1, start=True)
    assert claim.started and claim.upstream == {} and claim.attempt == 1 and claim.token == 1
    assert rig.queue.get(job.id).state is S.RUNNING
    assert run_claim(rig.writes, rig.queue.registry, claim).view.state is S.SUCCEEDED  # type: ignore[union-attr]


def test_claim_without_start_still_leaves_the_job_leased(rig: Rig) -> None:
    job = rig.queue.enqueue("t.echo", ["a"])
    [claim] = rig.queue.claim(1)
    assert not claim.started and claim.upstream == {}
    assert rig.queue.get(job.id).state is S.LEASED
    assert run_claim(rig.writes, rig.queue.registry, claim).view.state is S.SUCCEEDED  # type: ignore[union-attr]


def test_a_started_claim_whose_worker_died_costs_an_attempt(rig: Rig) -> None:
    job = rig.queue.enqueue("t.echo", ["a"])
    rig.queue.claim(1, start=True)
    rig.time.advance(31)
    other_queue, _ = rig.worker("w2")
    other_queue.claim(1)  # reaps: Running → RetryWaiting
    view = rig.queue.get(job.id)
    assert (
        view.state is S.RETRY_WAITING
        and view.error_code == "LABRIG_WORKER_LOST"
        and view.attempts == 1
    )


def test_a_claim_carries_the_upstream_outputs(rig: Rig) -> None:
    first = rig.queue.enqueue("t.echo", ["a"])
    second = rig.queue.enqueue("t.echo", ["b"], depends_on=[first.id])
    [c1] = rig.queue.claim(1, start=True)
    run_claim(rig.writes, rig.queue.registry, c1)
    [c2] = rig.queue.claim(1, start=True)
    assert c2.job_id == second.id
    assert c2.upstream == {first.id: {"inputs": ["a"], "config": {}, "upstream": {}}}
    view = run_claim(rig.writes, rig.queue.registry, c2).view
    assert view is not None and view.state is S.SUCCEEDED


@pytest.mark.parametrize("lost", [0, 1, 2])
def test_a_batch_commits_every_run_but_the_one_whose_lease_was_lost(rig: Rig, lost: int) -> None:
    jobs = [rig.queue.enqueue("t.echo", [d]) for d in "abc"]
    # the takeover below stands for a lapse and another worker's claim
    claims = rig.queue.claim(3, start=True)
    claims.sort(key=lambda c: [j.id for j in jobs].index(c.job_id))
    stale = claims[lost]
    other_queue, _ = rig.worker("w2")
    with rig.store.write() as session:  # the takeover: a new token and owner on the middle job
        row = session.get(Job, stale.job_id)
        assert row is not None
        row.fencing_token += 1
        row.owner = other_queue.clock.owner
    views = rig.writes.complete_many([(c, _output(c.job_id)) for c in claims])
    kept = [j.id for i, j in enumerate(jobs) if i != lost]
    assert views[lost] is None
    assert [v.id for v in views if v is not None] == kept
    assert [v.state for v in views if v is not None] == [S.SUCCEEDED, S.SUCCEEDED]
    assert rig.queue.get(jobs[lost].id).state is S.RUNNING  # the new owner's run is untouched
    assert rig.queue.get(jobs[lost].id).owner == other_queue.clock.owner
    with rig.store.read() as s:
        assert s.scalar(select(func.count()).select_from(JobOutput)) == 2
        assert s.get(JobOutput, jobs[lost].idempotency_key) is None
    completed = _events(rig, "analysis.stage.completed")
    assert sorted(e["job_id"] for e in completed) == sorted(kept)


def test_a_lapsed_lease_in_a_batch_is_reported_lost(rig: Rig) -> None:
    rig.queue.enqueue("t.echo", ["a"])
    [claim] = rig.queue.claim(1, start=True)
    rig.time.advance(31)
    results, _ = rig.writes.finish([Outcome(claim, "complete", output=_output(claim.job_id))])
    assert results[0].lease_lost and results[0].view is None
    assert rig.queue.get(claim.job_id).state is S.RUNNING  # left for the reaper


def _lapsed_behind_a_look(rig: Rig, every: float) -> tuple[str, FencedWrites, JobQueue]:
    """A job Running under the first worker, another worker's commit that has just looked for
    lapsed leases (finding none), then the first worker's lease lapsed."""
    running = rig.queue.enqueue("t.echo", ["a"])
    rig.queue.claim(1, start=True)
    other_queue, other_writes = rig.worker("w2")
    other_queue.reap_check_seconds = every
    assert other_writes.finish([], claim_slots=1) == ([], [])  # nothing Ready, nothing lapsed
    rig.time.advance(31)
    return running.id, other_writes, other_queue


def test_a_workers_commits_look_for_lapsed_leases_at_most_every_reap_check(rig: Rig) -> None:
    job_id, other_writes, other_queue = _lapsed_behind_a_look(rig, every=3600)
    # looked a moment ago: this commit does not look again, and claims nothing
    assert other_writes.finish([], claim_slots=1) == ([], [])
    assert rig.queue.get(job_id).state is S.RUNNING
    other_queue.claim(1)  # a claim of its own always looks, and reaps
    view = rig.queue.get(job_id)
    assert view.state is S.RETRY_WAITING and view.error_code == "LABRIG_WORKER_LOST"


def test_a_workers_commits_reap_a_lapsed_lease_once_the_reap_check_is_due(rig: Rig) -> None:
    job_id, other_writes, _ = _lapsed_behind_a_look(rig, every=0.05)
    deadline = time.monotonic() + 30
    while rig.queue.get(job_id).state is S.RUNNING and time.monotonic() < deadline:
        other_writes.finish([], claim_slots=1)
    view = rig.queue.get(job_id)
    assert view.state is S.RETRY_WAITING and view.error_code == "LABRIG_WORKER_LOST"


def test_a_batch_mixes_outcomes_and_keeps_the_first_output_of_a_key(rig: Rig) -> None:
    twin_a = rig.queue.enqueue("t.echo", ["same"])
    rig.time.advance(1)
    twin_b = rig.queue.enqueue("t.echo", ["same"])  # same idempotency key
    doomed = rig.queue.enqueue("t.echo", ["x"])
    claims = {c.job_id: c for c in rig.queue.claim(3, start=True)}
    assert set(claims) == {twin_a.id, twin_b.id, doomed.id}
    outcomes = [
        Outcome(claims[twin_a.id], "complete", output=StageOutput({"v": 1})),
        # differs: an incident
        Outcome(claims[twin_b.id], "complete", output=StageOutput({"v": 2})),
        Outcome(claims[doomed.id], "fail", failure=PermanentStageError("broken", code="LABRIG_X")),
    ]
    results, fresh = rig.writes.finish(outcomes)
    assert fresh == []
    assert [r.view.state for r in results] == [S.SUCCEEDED, S.SUCCEEDED, S.PERMANENT_FAILURE]  # type: ignore[union-attr]
    first = StageOutput({"v": 1}).digest
    assert results[0].view.output_digest == results[1].view.output_digest == first  # type: ignore[union-attr]
    with rig.store.read() as s:
        assert s.get(JobOutput, twin_a.idempotency_key).job_id == twin_a.id  # type: ignore[union-attr]
        [incident] = s.scalars(select(ReproducibilityIncident)).all()
        assert (incident.first_job_id, incident.second_job_id) == (twin_a.id, twin_b.id)
    assert [e["job_id"] for e in _events(rig, "analysis.stage.failed")] == [doomed.id]


def test_finish_commits_and_claims_in_one_transaction(rig: Rig) -> None:
    first = rig.queue.enqueue("t.echo", ["a"])
    dependent = rig.queue.enqueue("t.echo", ["b"], depends_on=[first.id])
    [claim] = rig.queue.claim(1, start=True)
    outcome = execute_claim(rig.writes, rig.queue.registry, claim)
    begins: list[str] = []
    event.listen(rig.store.engine, "begin", lambda conn: begins.append("begin"))
    results, claims = rig.writes.finish([outcome], claim_slots=2)
    assert len(begins) == 1
    assert results[0].view.state is S.SUCCEEDED  # type: ignore[union-attr]
    # released by the commit, claimed in the same transaction
    assert [c.job_id for c in claims] == [dependent.id]
    assert claims[0].started and claims[0].upstream == {
        first.id: {"inputs": ["a"], "config": {}, "upstream": {}}
    }


def test_one_outcome_that_cannot_be_written_does_not_sink_the_others(rig: Rig) -> None:
    degraded = rig.queue.enqueue("t.degraded", ["a"], attempt_id="att-1")
    rig.queue.enqueue("t.echo", ["b"])
    claims = rig.queue.claim(2, start=True)
    [bad] = [c for c in claims if c.job_id == degraded.id]
    [good] = [c for c in claims if c.job_id != degraded.id]
    bad_output = StageOutput({"px": 1}, degraded_reasons=(object(),))  # type: ignore[arg-type]  # not JSON
    with pytest.raises(InvalidEventPayloadError):
        rig.writes.finish(
            [
                Outcome(bad, "complete", output=bad_output),
                Outcome(good, "complete", output=_output(good.job_id)),
            ]
        )
    assert rig.queue.get(good.job_id).state is S.SUCCEEDED
    assert rig.queue.get(bad.job_id).state is S.RUNNING  # nothing of it was written


def test_enqueue_many_is_all_or_nothing_and_may_depend_on_earlier_jobs(rig: Rig) -> None:
    with pytest.raises(UnknownStageError):
        rig.queue.enqueue_many([JobSpec("t.echo", ["a"]), JobSpec("t.nope")])
    assert rig.queue.jobs() == []
    [first] = rig.queue.enqueue_many([JobSpec("t.echo", ["a"], attempt_id="att")])
    views = rig.queue.enqueue_many(
        [JobSpec("t.echo", ["b"]), JobSpec("t.echo", ["c"], depends_on=[first.id])]
    )
    second = views[1]
    assert [v.state for v in views] == [S.READY, S.INPUTS_PENDING]
    assert second is not None and rig.queue.get(second.id).state is S.INPUTS_PENDING
    requested = _events(rig, "analysis.stage.requested")
    assert [e["job_id"] for e in requested] == [first.id, views[0].id]
    assert requested[0]["attempt_id"] == "att"


def test_the_claim_statement_reads_only_what_it_leases(sqlite_store: Store) -> None:
    """The claim walks the claim index in claim order and updates its rows by id: no sort, no scan
    of the backlog."""
    # SQLite's query planner; PostgreSQL's claim is tested by the concurrency tests
    store = sqlite_store
    params = {
        "stage_ids": '["a", "b"]',
        "slots": 4,
        "v_state": "Running",
        "v_owner": "o",
        "v_host": "h",
        "v_boot_id": "b",
        "v_mono": 1.0,
        "v_expires_at": None,
        "v_now": "2026-01-01 00:00:00.000000",
    }
    with store.raw_write() as tx:
        plan = tx.execute(
            "EXPLAIN QUERY PLAN " + queue_sql("sqlite").claim_ready, params
        ).fetchall()
    details = [str(row[-1]) for row in plan]
    assert any("ix_jobs_ready" in d for d in details)
    assert not any("TEMP B-TREE" in d for d in details)
    # the outer UPDATE finds its rows by primary key; scanning the state index would read every
    # Ready job
    assert details[0] == "SEARCH jobs USING INDEX sqlite_autoindex_jobs_1 (id=?)"


def test_the_per_batch_lookups_read_only_the_live_queue(sqlite_store: Store) -> None:
    """Lapsed leases, due retries and waiting jobs are found through indexes that hold only what
    they look for (migration 0010), never by scanning every job or dependency ever recorded."""
    sql = queue_sql("sqlite")
    params = {"now": "2026-01-01 00:00:00.000000", "ids": '["a"]'}
    with sqlite_store.raw_write() as tx:

        def plan(statement: str) -> str:
            return " | ".join(
                str(row[-1]) for row in tx.execute("EXPLAIN QUERY PLAN " + statement, params)
            )

        assert plan(sql.held_leases) == "SEARCH jobs USING INDEX ix_jobs_held (state=?)"
        assert plan(sql.due_retries) == "SEARCH jobs USING INDEX ix_jobs_retry (next_attempt_at<?)"
        finishing = plan(sql.finishing_jobs)
        assert (
            "USING COVERING INDEX ix_job_dependencies_depends_on (depends_on_job_id=?)" in finishing
        )
        assert "SCAN d" not in finishing


def test_the_thread_executor_commits_runs_in_batches(store: Store) -> None:
    stage = Stage("t.noop", 1, True, run=lambda ctx: StageOutput({"inputs": ctx.input_digests}))
    services = bootstrap(store=store, registry=StageRegistry((stage,)))
    for i in range(60):
        services.queue.enqueue("t.noop", [f"d{i}"])
    writes: list[int] = []
    event.listen(store.engine, "begin", lambda conn: writes.append(1))
    stats = ThreadExecutor(services.queue, workers=4).run(drain=True)
    assert stats.finished == 60 and stats.by_state == {"Succeeded": 60}
    # claim+start and complete share transactions (was 3 per job, plus a read)
    assert len(writes) < 2 * 60
    with store.read() as s:
        assert s.scalar(select(func.count()).select_from(JobOutput)) == 60
    assert len([e for e in events_after(store, 0) if e.name == "analysis.stage.completed"]) == 60
