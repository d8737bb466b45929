"""The plain-thread executor drains the queue, reports progress and hands jobs back on stop."""

from __future__ import annotations

import threading
import time

from labrig.bootstrap import bootstrap
from labrig.domain.jobs import JobState
from labrig.jobs.executor import ThreadExecutor
from labrig.store import Store


def test_drain_runs_every_job_including_dependents(store: Store) -> None:
    services = bootstrap(store=store)
    q = services.queue
    first = q.enqueue("labrig.selftest", ["a"], {"steps": 3})
    q.enqueue("labrig.selftest", ["b"], depends_on=[first.id])
    q.enqueue("labrig.selftest", ["c"])
    progress: list[tuple[str, float]] = []
    stats = ThreadExecutor(q, workers=2, on_progress=lambda j, f, m: progress.append((j, f))).run(
        drain=True
    )
    assert stats.finished == 3 and stats.by_state == {"Succeeded": 3}
    assert {v.state for v in q.jobs()} == {JobState.SUCCEEDED}
    assert (first.id, 1.0) in progress


def test_stop_hands_running_jobs_back_for_later(store: Store) -> None:
    services = bootstrap(store=store)
    q = services.queue
    job = q.enqueue("labrig.selftest", config={"steps": 200, "step_seconds": 0.02})
    executor = ThreadExecutor(q, workers=1)
    runner = threading.Thread(target=executor.run)
    runner.start()
    deadline = time.monotonic() + 10
    while q.get(job.id).state is not JobState.RUNNING and time.monotonic() < deadline:
        time.sleep(0.02)
    executor.stop()
    runner.join(10)
    assert not runner.is_alive()
    view = q.get(job.id)
    assert view.state is JobState.RETRY_WAITING and view.error_code == "LABRIG_WORKER_STOPPED"
    assert view.attempts == 0


def test_a_cancel_is_seen_within_about_a_second_whatever_the_lease(store: Store) -> None:
    services = bootstrap(store=store)  # default 30 s lease: renewals alone would take 10 s
    q = services.queue
    job = q.enqueue("labrig.selftest", config={"steps": 1000, "step_seconds": 0.01})
    executor = ThreadExecutor(q, workers=1)
    runner = threading.Thread(target=executor.run, kwargs={"drain": True})
    runner.start()
    while q.get(job.id).state is not JobState.RUNNING:
        time.sleep(0.02)
    asked = time.monotonic()
    q.cancel(job.id)
    runner.join(15)
    assert q.get(job.id).state is JobState.CANCELLED
    assert time.monotonic() - asked < 3.0


def test_drain_ends_when_the_rest_waits_on_a_blocked_job(store: Store) -> None:
    from labrig.errors import QualityBlockedError
    from labrig.jobs.stages import Stage, StageContext, StageOutput

    def gate(ctx: StageContext) -> StageOutput:
        raise QualityBlockedError(["too few markers"])

    services = bootstrap(store=store)
    services.queue.registry.register(Stage("t.gate", 1, True, gate))
    blocked = services.queue.enqueue("t.gate")
    waiting = services.queue.enqueue("labrig.selftest", depends_on=[blocked.id])
    runner = threading.Thread(
        target=ThreadExecutor(services.queue, workers=1).run, kwargs={"drain": True}
    )
    runner.start()
    runner.join(20)
    assert not runner.is_alive(), "drain kept waiting for a job only an operator can release"
    assert services.queue.get(blocked.id).state is JobState.BLOCKED_BY_QUALITY
    assert services.queue.get(waiting.id).state is JobState.INPUTS_PENDING


def test_a_drain_ends_soon_after_another_worker_ends_the_last_job(store: Store) -> None:
    """Another worker's commits do not wake this one (they are not of its store): a drain that
    waits only for jobs another worker holds looks again within a moment, not its poll interval."""
    from labrig.store import open_store

    url = store.engine.url.render_as_string(hide_password=False)
    # another worker's process, on the same catalog: its commits wake only it
    other_store = open_store(store.root, db=url if store.dialect == "postgresql" else None)
    try:
        other = bootstrap(store=other_store).queue
        job = other.enqueue("labrig.selftest", config={"steps": 20, "step_seconds": 0.02})
        held = threading.Thread(target=ThreadExecutor(other, workers=1).run, kwargs={"drain": True})
        held.start()
        queue = bootstrap(store=store).queue
        while queue.get(job.id).state is not JobState.RUNNING:  # held by the other worker
            time.sleep(0.01)
        drain = ThreadExecutor(queue, workers=1, poll_seconds=3600)  # its own wait: an hour
        runner = threading.Thread(target=drain.run, kwargs={"drain": True})
        runner.start()
        held.join(30)
        assert queue.get(job.id).state is JobState.SUCCEEDED
        runner.join(30)
        assert not runner.is_alive(), "the drain waited out its poll interval"
    finally:
        other_store.close()
