"""The queue's hot paths as SQL text run on the driver connection (enqueue, claim, complete).

The queue's frequent writes skip SQLAlchemy's execution layer, which cost more
CPU per job than SQLite itself: they run prepared SQL through a
:class:`~labrig.store.database.RawTransaction`, either a transaction of their own
(enqueue) or the transaction of the write session they share with the ORM paths
(claim and complete, so rare endings, failures and dependencies stay ORM code).
Column lists come from the models, so the INSERTs follow the schema.

The SQL is SQLite's: named ``:parameters``, lists passed as one JSON array and
opened with ``json_each``, datetimes as SQLAlchemy's SQLite text
(:func:`~labrig.store.dialects.sqlite.to_db_datetime`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Table

from labrig.domain.events import spec_for
from labrig.errors import InvalidEventPayloadError
from labrig.store.database import RawTransaction
from labrig.store.dialects.sqlite import from_db_datetime, to_db_datetime
from labrig.store.models import Job, JobOutput, OutboxEvent, ReproducibilityIncident
from labrig.store.types import utcnow

JOBS: Table = Job.__table__  # type: ignore[assignment]
OUTPUTS: Table = JobOutput.__table__  # type: ignore[assignment]
INCIDENTS: Table = ReproducibilityIncident.__table__  # type: ignore[assignment]
OUTBOX: Table = OutboxEvent.__table__  # type: ignore[assignment]

#: the jobs columns that hold datetimes (text in the database, aware UTC datetimes in Python)
JOB_DATETIMES = ("created_at", "updated_at", "lease_expires_at", "next_attempt_at")


def _insert(table: Table, skip: Iterable[str] = ()) -> tuple[str, tuple[str, ...]]:
    columns = tuple(c.name for c in table.columns if c.name not in set(skip))
    sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join(':' + c for c in columns)})"
    return sql, columns


INSERT_JOB, JOB_COLUMNS = _insert(JOBS)
INSERT_OUTPUT, _ = _insert(OUTPUTS)
INSERT_INCIDENT, _ = _insert(INCIDENTS, skip=("id",))
INSERT_EVENT, _ = _insert(OUTBOX, skip=("seq",))

#: lease facts of every job a worker holds, to find lapsed leases without loading ORM objects
HELD_LEASES = ("SELECT id, lease_host, lease_boot_id, owner, lease_deadline_mono, lease_expires_at FROM jobs "
               "WHERE state IN ('Leased', 'Running', 'Checkpointed')")
#: RetryWaiting jobs whose delay has elapsed
DUE_RETRIES = "SELECT id FROM jobs WHERE state = 'RetryWaiting' AND next_attempt_at <= :now"

#: lease the first ``slots`` Ready jobs of the given stages (claim order, index ix_jobs_claim_order), in one statement
CLAIM_READY = (
    "UPDATE jobs SET state = :v_state, fencing_token = fencing_token + 1, attempts = attempts + 1, "
    "owner = :v_owner, lease_host = :v_host, lease_boot_id = :v_boot_id, lease_deadline_mono = :v_mono, "
    "lease_expires_at = :v_expires_at, next_attempt_at = NULL, updated_at = :v_now "
    "WHERE +state = 'Ready' AND id IN ("  # "+": find the rows by id, not by scanning every Ready job
    "SELECT id FROM jobs WHERE state = 'Ready' AND stage_id IN (SELECT value FROM json_each(:stage_ids)) "
    "ORDER BY priority DESC, created_at, id LIMIT :slots) "
    "RETURNING id, stage_id, fencing_token, attempts, input_digests, config, checkpoint, priority, created_at, "
    "EXISTS (SELECT 1 FROM job_dependencies d WHERE d.job_id = jobs.id) AS has_upstream")

#: committed outputs of the jobs that the given jobs depend on
UPSTREAM_OUTPUTS = (
    "SELECT d.job_id, d.depends_on_job_id, o.body FROM job_dependencies d "
    "JOIN jobs u ON u.id = d.depends_on_job_id JOIN job_outputs o ON o.idempotency_key = u.idempotency_key "
    "WHERE d.job_id IN (SELECT value FROM json_each(:ids))")

#: the given jobs, with the first output already committed under each one's key and whether any job waits for it
FINISHING_JOBS = (
    "SELECT j.*, o.job_id AS first_job_id, o.digest AS first_digest, "
    "EXISTS (SELECT 1 FROM job_dependencies d WHERE d.depends_on_job_id = j.id) AS has_dependents "
    "FROM jobs j LEFT JOIN job_outputs o ON o.idempotency_key = j.idempotency_key "
    "WHERE j.id IN (SELECT value FROM json_each(:ids))")

#: Running → Succeeded[Degraded], fenced again in the WHERE clause (executemany over the batch)
COMPLETE_JOB = (
    "UPDATE jobs SET state = :v_state, updated_at = :v_now, output_digest = :v_digest, progress = 1.0, "
    "error_code = NULL, error_message = NULL, owner = NULL, lease_host = NULL, lease_boot_id = NULL, "
    "lease_deadline_mono = NULL, lease_expires_at = NULL "
    "WHERE id = :b_id AND owner = :b_owner AND fencing_token = :b_token AND state = 'Running'")


def id_list(ids: Sequence[str]) -> str:
    """A list parameter: one JSON array, opened by ``json_each`` in the statement."""
    return json.dumps(list(ids))


def job_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A ``jobs`` row read raw, with its datetimes as aware UTC datetimes (as the ORM reads them)."""
    out = dict(row)
    for name in JOB_DATETIMES:
        out[name] = from_db_datetime(out[name])
    return out


def event_row(name: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The outbox row :func:`labrig.events.outbox.record_event` would add, validated the same way."""
    spec = spec_for(name)
    if spec is not None:
        spec.validate(payload)
    try:
        body = json.dumps(dict(payload), sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidEventPayloadError(f"{name} payload is not plain JSON data: {exc}") from exc
    return {"event_id": str(uuid.uuid4()), "name": str(name), "schema_version": spec.version if spec else 0,
            "known": spec is not None, "payload": body, "recorded_at": to_db_datetime(utcnow())}


def insert_events(tx: RawTransaction, rows: Sequence[dict[str, Any]]) -> None:
    """Insert outbox rows (in order) in ``tx``; commit listeners fire as for record_event."""
    if rows:
        tx.executemany(INSERT_EVENT, rows)
        tx.events_added(len(rows))
