"""Two workstations finishing two runs of one idempotency key at the same moment, on PostgreSQL.

Real world: two ``labrig worker`` processes on different machines share one catalog, and two jobs
with the same stage, inputs and config (a re-run requested twice, two attempts of one recording)
end together. Workers on PostgreSQL commit side by side, so without a lock per key each finds no
first output and both insert one: the second fails on the primary key and its worker dies. The
test makes that moment happen rather than hope for it: a trigger the test adds to the database
holds every output insert until the test lets go, and both finishes are let go only once the
database shows both of them waiting.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import func, select

from labrig.domain.jobs import JobState
from labrig.jobs.fenced import FencedWrites
from labrig.jobs.queue import JobQueue
from labrig.jobs.runner import RunResult, run_claim
from labrig.jobs.stages import Stage, StageOutput, StageRegistry
from labrig.store import Store, open_store
from labrig.store.models import JobOutput
from tests.integration.queue_procs.helpers import wait_until

GATE = 424242  # the advisory lock the test holds while both finishes reach the database
REGISTRY = StageRegistry((Stage("t.same", 1, True, lambda ctx: StageOutput({"v": 1})),))

HOLD_OUTPUTS = f"""
CREATE FUNCTION test_hold_outputs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared({GATE});
    RETURN NEW;
END $$;
CREATE TRIGGER test_hold_outputs BEFORE INSERT ON job_outputs
    FOR EACH ROW EXECUTE FUNCTION test_hold_outputs();
"""
WAITING = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"


@pytest.fixture
def second_store(pg_store: Store, tmp_path: Path) -> Iterator[Store]:
    """Another workstation on the same catalog: its own engine and connections."""
    other = open_store(
        tmp_path / "second", db=pg_store.engine.url.render_as_string(hide_password=False)
    )
    yield other
    other.close()


def test_two_runs_of_one_key_finishing_together_commit_one_output_and_both_succeed(
    pg_store: Store, second_store: Store
) -> None:
    url = pg_store.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    queues = [JobQueue(store, REGISTRY) for store in (pg_store, second_store)]
    first, second = (queues[0].enqueue("t.same", ["recording-1"]) for _ in range(2))
    assert first.idempotency_key == second.idempotency_key
    claims = [queue.claim(1)[0] for queue in queues]
    assert {c.job_id for c in claims} == {first.id, second.id}

    results: list[RunResult] = []
    errors: list[BaseException] = []

    def finish(queue: JobQueue, n: int) -> None:
        try:
            results.append(run_claim(FencedWrites(queue), REGISTRY, claims[n]))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    with psycopg.connect(url, autocommit=True) as gate:
        gate.execute(HOLD_OUTPUTS)
        gate.execute("SELECT pg_advisory_lock(%s)", (GATE,))

        def waiting() -> int:
            return int(gate.execute(WAITING).fetchone()[0])  # type: ignore[index]

        threads = [threading.Thread(target=finish, args=(q, n)) for n, q in enumerate(queues)]
        threads[0].start()
        wait_until(lambda: waiting() == 1, 30, "the first finish to reach its output insert")
        threads[1].start()
        # the second waits either on the key (one writer per key) or, without that, at the same
        # insert, having found no output under the key
        wait_until(lambda: waiting() == 2, 30, "the second finish to wait in the database")
        gate.execute("SELECT pg_advisory_unlock(%s)", (GATE,))
        for thread in threads:
            thread.join(timeout=60)
        gate.execute("DROP TRIGGER test_hold_outputs ON job_outputs")

    assert errors == []
    assert [r.view.state if r.view else None for r in results] == [JobState.SUCCEEDED] * 2
    done = [queues[0].get(first.id), queues[0].get(second.id)]
    assert done[0].output_digest == done[1].output_digest is not None
    assert queues[0].incidents() == []
    with pg_store.read() as s:
        assert s.scalar(select(func.count()).select_from(JobOutput)) == 1
