"""Two workstations finishing the two inputs of one job at the same moment, and a retry woken by
two at once, on PostgreSQL.

Real world: a 3-D stage waits for two cameras' tracking jobs, which two ``labrig worker``
processes finish together. Each finish reads whether the waiting job's other input is done; on
PostgreSQL, where they commit side by side, each would see the other's input unfinished, neither
would release the waiting job, and it would wait for ever. The test makes that moment happen: the
first finish is held just before its commit (after it looked at the waiting job) until the second
has either committed or is seen waiting in the database.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import event

from labrig.domain.jobs import JobState
from labrig.jobs.fenced import FencedWrites
from labrig.jobs.queue import JobQueue
from labrig.jobs.runner import RunResult, run_claim
from labrig.jobs.stages import Stage, StageOutput, StageRegistry
from labrig.store import Store, open_store
from tests.integration.queue_procs.helpers import wait_until

pytestmark = pytest.mark.postgresql

REGISTRY = StageRegistry(
    (Stage("t.echo", 1, True, lambda ctx: StageOutput({"inputs": ctx.input_digests})),)
)
WAITING_ON_A_LOCK = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"


@pytest.fixture
def second_store(pg_store: Store, tmp_path: Path) -> Iterator[Store]:
    """Another workstation on the same catalog: its own engine and connections."""
    other = open_store(
        tmp_path / "second", db=pg_store.engine.url.render_as_string(hide_password=False)
    )
    yield other
    other.close()


def test_two_inputs_finished_together_release_the_job_waiting_for_both(
    pg_store: Store, second_store: Store
) -> None:
    url = pg_store.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    here, there = JobQueue(pg_store, REGISTRY), JobQueue(second_store, REGISTRY)
    left, right = here.enqueue("t.echo", ["left"]), here.enqueue("t.echo", ["right"])
    both = here.enqueue("t.echo", ["own"], depends_on=[left.id, right.id])
    assert both.state is JobState.INPUTS_PENDING
    claims = {c.job_id: c for queue in (here, there) for c in queue.claim(1, start=True)}
    assert set(claims) == {left.id, right.id}
    first_claim, second_claim = claims[left.id], claims[right.id]
    first_queue = here if first_claim.owner == here.clock.owner else there
    second_queue = there if first_queue is here else here

    at_commit, let_go = threading.Event(), threading.Event()

    def hold_first_commit(_conn: Any) -> None:
        if not at_commit.is_set():
            at_commit.set()
            assert let_go.wait(60)

    results: dict[str, RunResult] = {}
    errors: list[BaseException] = []

    def finish(queue: JobQueue, claim: Any) -> None:
        try:
            results[claim.job_id] = run_claim(FencedWrites(queue), REGISTRY, claim)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    engine = first_queue.store.engine
    event.listen(engine, "commit", hold_first_commit)
    first = threading.Thread(target=finish, args=(first_queue, first_claim))
    second = threading.Thread(target=finish, args=(second_queue, second_claim))
    try:
        first.start()
        # the first has completed its input and looked at the waiting job, uncommitted
        assert at_commit.wait(60)
        second.start()
        with psycopg.connect(url, autocommit=True) as watch:

            def second_done_or_waiting() -> bool:
                waiting = int(watch.execute(WAITING_ON_A_LOCK).fetchone()[0])  # type: ignore[index]
                return not second.is_alive() or waiting > 0

            wait_until(second_done_or_waiting, 30, "the second finish to commit or wait")
    finally:
        let_go.set()
        first.join(60)
        second.join(60)
        event.remove(engine, "commit", hold_first_commit)

    assert errors == []
    assert {results[j].view.state for j in (left.id, right.id)} == {JobState.SUCCEEDED}  # type: ignore[union-attr]
    released = here.get(both.id)
    assert released.state is JobState.READY, "the job waiting for both inputs was never released"
    # its own input, then its inputs' outputs in the order of their ids
    outputs = [here.get(j).output_digest for j in sorted((left.id, right.id))]
    assert released.input_digests == ["own", *outputs]
