"""What the queue_procs tests share: waiting, enqueuing, and reading the store once the
workers are gone."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import select

from labrig.domain.events import EventName
from labrig.jobs.queue import JobQueue
from labrig.store import open_store
from labrig.store.models import Job, JobOutput, OutboxEvent, ReproducibilityIncident
from tests.integration.queue_procs.worker_child import STAGE_ID, make_registry


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.005)


def enqueue(store_root: Path, inputs: Sequence[str], config: dict[str, Any]) -> list[str]:
    """Enqueue one ``procs.work`` job per input (in order); returns the job ids."""
    store = open_store(store_root)
    try:
        queue = JobQueue(store, make_registry())
        return [queue.enqueue(STAGE_ID, [digest], config).id for digest in inputs]
    finally:
        store.close()


def snapshot(store_root: Path) -> dict[str, Any]:
    """Everything the assertions need, read once from the store after the workers are gone."""
    store = open_store(store_root)
    try:
        with store.read() as s:
            jobs = {
                j.id: (j.state, j.idempotency_key, j.output_digest, j.fencing_token, j.attempts)
                for j in s.scalars(select(Job))
            }
            outputs = {
                o.idempotency_key: (o.job_id, o.fencing_token, o.digest, json.loads(o.body))
                for o in s.scalars(select(JobOutput))
            }
            events = [(e.name, json.loads(e.payload)) for e in s.scalars(select(OutboxEvent))]
            incidents = list(s.scalars(select(ReproducibilityIncident.idempotency_key)))
    finally:
        store.close()
    completed = Counter(p["job_id"] for name, p in events if name == EventName.STAGE_COMPLETED)
    failed = [p for name, p in events if name == EventName.STAGE_FAILED]
    return {
        "jobs": jobs,
        "outputs": outputs,
        "completed": completed,
        "failed": failed,
        "incidents": incidents,
    }
