"""Every path a job can take through the seed-000 state machine, on a real SQLite store."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from labrig.domain.idempotency import config_digest, idempotency_key
from labrig.domain.jobs import JobState
from labrig.errors import (
    InvalidTransitionError,
    LeaseLostError,
    TerminalStateError,
    UnknownJobError,
    UnknownStageError,
)
from labrig.events import events_after
from labrig.jobs.runner import run_claim
from labrig.jobs.stages import NO_MODEL_DIGEST
from labrig.store.models import Job, JobOutput
from tests.integration.queue.conftest import STAGES, Rig

S = JobState


def _events(rig: Rig, name: str) -> list[dict[str, object]]:
    return [e.payload for e in events_after(rig.store, 0) if e.name == name]


def _run(rig: Rig, slots: int = 1) -> list[JobState]:
    return [run_claim(rig.writes, rig.queue.registry, c).view.state for c in rig.queue.claim(slots)]  # type: ignore[union-attr]


def test_enqueue_makes_a_ready_job_keyed_exactly_as_the_seed_says(rig: Rig) -> None:
    view = rig.queue.enqueue("t.echo", ["d1", "d2"], {"k": 1}, attempt_id="att-1")
    assert view.state is S.READY
    assert view.idempotency_key == idempotency_key(
        "t.echo", ["d1", "d2"], NO_MODEL_DIGEST, config_digest({"k": 1}), 1
    )
    assert view.idempotency_key != idempotency_key(
        "t.echo", ["d2", "d1"], NO_MODEL_DIGEST, config_digest({"k": 1}), 1
    )
    assert _events(rig, "analysis.stage.requested") == [
        {
            "job_id": view.id,
            "stage_id": "t.echo",
            "idempotency_key": view.idempotency_key,
            "attempt_id": "att-1",
        }
    ]


def test_unknown_stage_is_refused_and_nothing_is_stored(rig: Rig) -> None:
    with pytest.raises(UnknownStageError) as info:
        rig.queue.enqueue("t.nope")
    assert "t.echo" in info.value.message
    assert rig.queue.jobs() == []


def test_claim_takes_only_free_slots_by_priority_then_age(rig: Rig) -> None:
    low = rig.queue.enqueue("t.echo", ["a"])
    rig.time.advance(1)
    high = rig.queue.enqueue("t.echo", ["b"], priority=5)
    rig.time.advance(1)
    later = rig.queue.enqueue("t.echo", ["c"])
    claims = rig.queue.claim(2)
    assert [c.job_id for c in claims] == [high.id, low.id]
    assert rig.queue.get(later.id).state is S.READY
    assert all(c.token == 1 and c.attempt == 1 for c in claims)
    assert rig.queue.claim(0) == []


def test_success_path_commits_output_once_with_events(rig: Rig) -> None:
    job = rig.queue.enqueue("t.echo", ["a"])
    [claim] = rig.queue.claim(1)
    assert rig.queue.get(job.id).state is S.LEASED
    assert run_claim(rig.writes, rig.queue.registry, claim).view.state is S.SUCCEEDED  # type: ignore[union-attr]
    done = rig.queue.get(job.id)
    assert done.owner is None and done.progress == 1.0 and done.output_digest
    [completed] = _events(rig, "analysis.stage.completed")
    assert completed["output_digest"] == done.output_digest
    with rig.store.read() as s:
        row = s.get(JobOutput, done.idempotency_key)
        assert (
            row is not None
            and row.digest == done.output_digest
            and row.fencing_token == claim.token
        )


def test_degraded_output_succeeds_degraded_and_says_why(rig: Rig) -> None:
    rig.queue.enqueue("t.degraded", attempt_id="att-9")
    assert _run(rig) == [S.SUCCEEDED_DEGRADED]
    assert _events(rig, "quality.degraded")[0]["reasons"] == [
        "no valid calibration: results in pixels"
    ]


def test_transient_failures_back_off_with_jitter_then_fail_permanently(rig: Rig) -> None:
    job = rig.queue.enqueue("t.fail", config={"fail": "transient"})
    assert _run(rig) == [S.RETRY_WAITING]
    view = rig.queue.get(job.id)
    assert view.error_code == "LABRIG_STAGE_TRANSIENT" and view.next_attempt_at is not None
    assert rig.time.wall <= view.next_attempt_at <= rig.time.wall + timedelta(seconds=2)
    rig.time.advance(0.0)
    if view.next_attempt_at > rig.time.wall:
        assert rig.queue.claim(1) == []  # not before its time
    rig.time.advance(2.01)
    assert _run(rig) == [S.RETRY_WAITING]
    rig.time.advance(4.01)
    assert _run(rig) == [S.PERMANENT_FAILURE]  # third attempt of three
    final = rig.queue.get(job.id)
    assert final.attempts == 3 and "gave up after 3 attempts" in (final.error_message or "")
    assert [e["retryable"] for e in _events(rig, "analysis.stage.failed")] == [True, True, False]


@pytest.mark.parametrize(
    ("kind", "code"), [("permanent", "LABRIG_MEDIA_UNDECODABLE"), ("crash", "LABRIG_STAGE_CRASHED")]
)
def test_permanent_failures_carry_a_stable_code(rig: Rig, kind: str, code: str) -> None:
    job = rig.queue.enqueue("t.fail", config={"fail": kind})
    assert _run(rig) == [S.PERMANENT_FAILURE]
    assert rig.queue.get(job.id).error_code == code
    assert _events(rig, "analysis.stage.failed")[0]["error_code"] == code


def test_quality_block_then_new_evidence_makes_it_ready_again(rig: Rig) -> None:
    job = rig.queue.enqueue("t.fail", config={"fail": "quality"}, attempt_id="att-2")
    assert _run(rig) == [S.BLOCKED_BY_QUALITY]
    assert _events(rig, "quality.blocked")[0]["reasons"] == [
        "markers found in 3% of frames (need 60%)"
    ]
    assert rig.queue.release_blocked(job.id).state is S.READY


def test_reprocess_supersedes_a_blocked_job_and_links_the_new_one(rig: Rig) -> None:
    job = rig.queue.enqueue("t.fail", config={"fail": "quality"})
    _run(rig)
    new = rig.queue.reprocess(job.id)
    assert new.supersedes_job_id == job.id and new.state is S.READY
    assert rig.queue.get(job.id).state is S.SUPERSEDED


def test_reprocess_leaves_a_terminal_job_unchanged(rig: Rig) -> None:
    job = rig.queue.enqueue("t.echo", ["a"])
    _run(rig)
    before = rig.queue.get(job.id)
    new = rig.queue.reprocess(job.id[:8])  # a unique prefix is enough
    assert rig.queue.get(job.id) == before
    assert new.idempotency_key == before.idempotency_key
    assert _run(rig) == [S.SUCCEEDED]
    assert rig.queue.get(new.id).output_digest == before.output_digest
    assert rig.queue.incidents() == []  # same digest a second time: a no-op success


def test_terminal_jobs_never_change(rig: Rig) -> None:
    job = rig.queue.enqueue("t.echo")
    _run(rig)
    for act in (rig.queue.cancel, rig.queue.release_blocked):
        with pytest.raises(TerminalStateError):
            act(job.id)
    assert rig.queue.get(job.id).state is S.SUCCEEDED


def test_cancel_before_running_and_unknown_ids(rig: Rig) -> None:
    job = rig.queue.enqueue("t.echo")
    assert rig.queue.cancel(job.id).state is S.CANCELLED
    assert rig.queue.claim(1) == []
    with pytest.raises(UnknownJobError) as info:
        rig.queue.cancel("no-such-job")
    assert info.value.code == "LABRIG_UNKNOWN_JOB"


def test_cancel_while_running_is_cooperative(rig: Rig) -> None:
    job = rig.queue.enqueue("t.echo")
    [claim] = rig.queue.claim(1)
    rig.writes.start(claim)
    assert rig.queue.cancel(job.id).cancel_requested
    assert rig.queue.get(job.id).state is S.RUNNING  # the worker decides when to stop
    assert rig.writes.renew(claim) is True
    assert rig.writes.acknowledge_cancel(claim).state is S.CANCELLED
    assert rig.queue.get(job.id).error_code == "LABRIG_CANCELLED"


def test_a_stale_worker_cannot_write_after_its_lease_was_taken_over(rig: Rig) -> None:
    job = rig.queue.enqueue("t.echo", ["a"])
    [old] = rig.queue.claim(1)
    rig.writes.start(old)
    rig.time.advance(31)  # lease of 30 s lapses
    other_queue, other_writes = rig.worker("w2")
    other_queue.claim(1)  # reaps the lapsed lease: Running → RetryWaiting, the attempt counted
    assert rig.queue.get(job.id).error_code == "LABRIG_WORKER_LOST"
    rig.time.advance(2.01)  # past the jittered backoff of a first retry
    [new] = other_queue.claim(1)
    assert new.job_id == job.id and new.token == old.token + 1
    for stale_write in (
        lambda: rig.writes.renew(old),
        lambda: rig.writes.checkpoint(old, {"s": 1}),
        lambda: rig.writes.acknowledge_cancel(old),
    ):
        with pytest.raises(LeaseLostError):
            stale_write()
    result = run_claim(rig.writes, rig.queue.registry, old)
    assert result.lease_lost and result.view is None
    assert run_claim(other_writes, rig.queue.registry, new).view.state is S.SUCCEEDED  # type: ignore[union-attr]
    with rig.store.read() as s:
        assert s.get(JobOutput, rig.queue.get(job.id).idempotency_key).fencing_token == new.token  # type: ignore[union-attr]


def test_a_lapsed_lease_cannot_be_renewed_even_before_takeover(rig: Rig) -> None:
    rig.queue.enqueue("t.echo")
    [claim] = rig.queue.claim(1)
    rig.writes.start(claim)
    rig.time.advance(30.5)
    with pytest.raises(LeaseLostError):
        rig.writes.renew(claim)


def test_leased_but_never_started_goes_back_to_ready(rig: Rig) -> None:
    job = rig.queue.enqueue("t.echo")
    rig.queue.claim(1)
    rig.time.advance(31)
    other_queue, _ = rig.worker("w2")
    [claim] = other_queue.claim(1)
    assert claim.job_id == job.id and claim.attempt == 1  # the unstarted claim used no attempt


def test_a_worker_lost_mid_run_costs_an_attempt_and_ends_permanent_if_it_keeps_dying(
    rig: Rig,
) -> None:
    job = rig.queue.enqueue("t.echo")
    for attempt in (1, 2, 3):
        [claim] = rig.queue.claim(1)
        assert claim.attempt == attempt
        rig.writes.start(claim)
        rig.time.advance(31)  # the worker dies: its lease lapses
        rig.queue.reap()
        rig.time.advance(120)  # past any backoff
    final = rig.queue.get(job.id)
    assert final.state is S.PERMANENT_FAILURE and final.error_code == "LABRIG_WORKER_LOST"


def test_a_reboot_voids_the_lease_at_once(rig: Rig) -> None:
    job = rig.queue.enqueue("t.echo")
    rig.queue.claim(1)
    rebooted, _ = rig.worker("w1-after-reboot", boot_id="boot-b")
    # no waiting for the 30 s lease: its monotonic clock died with the boot
    [claim] = rebooted.claim(1)
    assert claim.job_id == job.id


def test_a_dead_process_on_this_host_voids_its_lease_at_once(rig: Rig) -> None:
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    job = rig.queue.enqueue("t.echo")
    rig.queue.claim(1)
    with rig.store.write() as s:
        row = s.get(Job, job.id)
        assert row is not None
        row.owner = f"bench-1:{dead.pid}:gone"
    other, _ = rig.worker("w2")
    assert [c.job_id for c in other.claim(1)] == [job.id]


def test_another_hosts_lease_is_judged_by_the_wall_clock(rig: Rig) -> None:
    job = rig.queue.enqueue("t.echo")
    remote, _ = rig.worker("r1", host="bench-2", boot_id="boot-z")
    remote.claim(1)
    assert rig.queue.claim(1) == []
    rig.time.advance(31)
    assert [c.job_id for c in rig.queue.claim(1)] == [job.id]


def test_checkpoint_survives_a_crash_and_the_job_resumes_from_it(rig: Rig) -> None:
    job = rig.queue.enqueue("t.echo")
    [claim] = rig.queue.claim(1)
    rig.writes.start(claim)
    rig.writes.checkpoint(claim, {"frame": 1200})
    assert rig.queue.get(job.id).state is S.RUNNING
    rig.time.advance(200)
    rig.queue.reap()
    rig.time.advance(200)
    [again] = rig.queue.claim(1)
    assert again.checkpoint == {"frame": 1200}


def test_dependencies_wait_then_run_with_upstream_outputs(rig: Rig) -> None:
    upstream = rig.queue.enqueue("t.echo", ["raw"])
    downstream = rig.queue.enqueue("t.echo", ["own"], depends_on=[upstream.id])
    assert downstream.state is S.INPUTS_PENDING and downstream.idempotency_key is None
    assert _run(rig, 2) == [S.SUCCEEDED]  # only the upstream job could be claimed
    ready = rig.queue.get(downstream.id)
    up = rig.queue.get(upstream.id)
    assert ready.state is S.READY and ready.input_digests == ["own", up.output_digest]
    [claim] = rig.queue.claim(1)
    view = run_claim(rig.writes, rig.queue.registry, claim).view
    assert view is not None and view.state is S.SUCCEEDED
    with rig.store.read() as s:
        body = json.loads(s.get(JobOutput, view.idempotency_key).body)  # type: ignore[union-attr]
    assert body["upstream"] == {upstream.id: {"config": {}, "inputs": ["raw"], "upstream": {}}}


def test_a_failed_upstream_fails_its_dependents(rig: Rig) -> None:
    upstream = rig.queue.enqueue("t.fail", config={"fail": "permanent"})
    downstream = rig.queue.enqueue("t.echo", depends_on=[upstream.id])
    _run(rig)
    failed = rig.queue.get(downstream.id)
    assert failed.state is S.PERMANENT_FAILURE and failed.error_code == "LABRIG_INPUT_UNAVAILABLE"


def test_depending_on_an_unknown_job_is_refused(rig: Rig) -> None:
    with pytest.raises(UnknownJobError):
        rig.queue.enqueue("t.echo", depends_on=["missing"])
    with rig.store.read() as s:
        assert s.scalar(select(func.count()).select_from(Job)) == 0


def test_claim_ignores_stages_this_worker_cannot_run(rig: Rig) -> None:
    from labrig.jobs.queue import JobQueue
    from labrig.jobs.stages import StageRegistry

    rig.queue.enqueue("t.echo")
    narrow = JobQueue(rig.store, StageRegistry(), rig.queue.clock)
    assert narrow.claim(1) == []
    assert len(rig.queue.claim(1)) == 1


def test_shutdown_hands_the_job_back_without_charging_an_attempt(rig: Rig) -> None:
    job = rig.queue.enqueue("t.echo")
    [claim] = rig.queue.claim(1)
    rig.writes.start(claim)
    released = rig.writes.release(claim)
    assert released.state is S.RETRY_WAITING and released.attempts == 0
    assert released.error_code == "LABRIG_WORKER_STOPPED"
    assert [c.job_id for c in rig.queue.claim(1)] == [job.id]


def test_only_a_blocked_job_can_be_released(rig: Rig) -> None:
    # Leased → Ready is a seed transition (lease expiry), but not one an operator may take by
    # "release"
    job = rig.queue.enqueue("t.echo")
    [claim] = rig.queue.claim(1)
    with pytest.raises(InvalidTransitionError) as info:
        rig.queue.release_blocked(job.id)
    assert "only a blocked job" in info.value.message
    assert rig.queue.get(job.id).state is S.LEASED
    rig.writes.start(claim)  # the worker's lease was left intact
    assert rig.queue.get(job.id).state is S.RUNNING


def test_a_success_after_a_lost_worker_carries_no_stale_error(rig: Rig) -> None:
    job = rig.queue.enqueue("t.echo")
    [claim] = rig.queue.claim(1)
    rig.writes.start(claim)
    rig.time.advance(31)
    rig.queue.reap()
    assert rig.queue.get(job.id).error_code == "LABRIG_WORKER_LOST"
    rig.time.advance(120)
    assert _run(rig) == [S.SUCCEEDED]
    done = rig.queue.get(job.id)
    assert done.error_code is None and done.error_message is None
    assert [e["error_code"] for e in _events(rig, "analysis.stage.failed")] == [
        "LABRIG_WORKER_LOST"
    ]


def test_output_heavy_stages_wait_while_storage_pressure_is_high(rig: Rig) -> None:
    from labrig.jobs.stages import Stage

    rig.queue.registry.register(Stage("t.render", 1, True, STAGES[0].run, output_heavy=True))
    heavy = rig.queue.enqueue("t.render")
    light = rig.queue.enqueue("t.echo")
    paused = [True]
    rig.queue.heavy_paused = lambda: paused[0]
    assert [c.job_id for c in rig.queue.claim(5)] == [light.id]
    paused[0] = False
    assert [c.job_id for c in rig.queue.claim(5)] == [heavy.id]
