"""The queue's hot paths as SQL text run on the driver connection (enqueue, claim, complete).

The queue's frequent writes skip SQLAlchemy's execution layer, which cost more
CPU per job than the database itself: they run prepared SQL through a
:class:`~labrig.store.database.RawTransaction`, either a transaction of their own
(enqueue) or the transaction of the write session they share with the ORM paths
(claim and complete, so rare endings, failures and dependencies stay ORM code).
Column lists come from the models, so the INSERTs follow the schema.

One statement set per database (:func:`queue_sql`), written with ``:name``
parameters and rewritten to the driver's style. They differ where the databases
do: a list parameter is a JSON array opened with ``json_each`` on SQLite and a
native array (``= ANY``) on PostgreSQL; PostgreSQL's claim locks the rows it
leases with ``FOR UPDATE SKIP LOCKED`` (other workstations' workers skip them
instead of waiting); its wall-clock deadlines come from the database clock,
shared by every workstation (:meth:`~labrig.jobs.queue.JobQueue.shared_now`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from operator import itemgetter
from typing import Any

from sqlalchemy import Table

from labrig.domain.events import spec_for
from labrig.domain.ids import time_ordered_id
from labrig.events import payload_text
from labrig.store import RawTransaction, utcnow
from labrig.store.dialects import RawDialect, key_lock_sql, raw_dialect
from labrig.store.models import Job, JobOutput, OutboxEvent, ReproducibilityIncident

JOBS: Table = Job.__table__  # type: ignore[assignment]
OUTPUTS: Table = JobOutput.__table__  # type: ignore[assignment]
INCIDENTS: Table = ReproducibilityIncident.__table__  # type: ignore[assignment]
OUTBOX: Table = OutboxEvent.__table__  # type: ignore[assignment]


_HELD_COLUMNS = "id, lease_host, lease_boot_id, owner, lease_deadline_mono, lease_expires_at"
_HELD = (
    f"SELECT {_HELD_COLUMNS}, 0 AS due FROM jobs "
    "WHERE state IN ('Leased', 'Running', 'Checkpointed')"
)


def _insert(table: Table, skip: Iterable[str] = ()) -> str:
    columns = tuple(c.name for c in table.columns if c.name not in set(skip))
    return (
        f"INSERT INTO {table.name} ({', '.join(columns)}) "
        f"VALUES ({', '.join(':' + c for c in columns)})"
    )


#: the jobs columns in the order of ``QueueSQL.insert_job``'s values
JOB_COLUMNS = tuple(c.name for c in JOBS.columns)


_RETURNING = (
    "RETURNING id, stage_id, fencing_token, attempts, input_digests, config, checkpoint, priority, "
    "created_at, idempotency_key, "
    "EXISTS (SELECT 1 FROM job_dependencies d WHERE d.job_id = jobs.id) AS has_upstream"
)
_LEASE = (
    "UPDATE jobs SET state = :v_state, fencing_token = fencing_token + 1, attempts = attempts + 1, "
    "owner = :v_owner, lease_host = :v_host, lease_boot_id = :v_boot_id, lease_deadline_mono = "
    ":v_mono, next_attempt_at = NULL, updated_at = :v_now, "
)
#: the list parameter ``:ids`` (or ``:stage_ids``) as each database opens it
_IN_LIST = {"sqlite": "IN (SELECT value FROM json_each(:{}))", "postgresql": "= ANY(:{})"}
#: lease the first ``slots`` Ready jobs of the given stages in claim order
#: (partial index ix_jobs_ready)
_CLAIM = {
    # "+state": find the leased rows by id, not by scanning every Ready job through the state's
    # index; "+stage_id": walk the Ready jobs in claim order, not every job of the registered
    # stages through ix_jobs_stage (migration 0021)
    "sqlite": (
        _LEASE + "lease_expires_at = :v_expires_at WHERE +state = 'Ready' AND id IN ("
        "SELECT id FROM jobs WHERE state = 'Ready' AND +stage_id {stages} "
        "ORDER BY priority DESC, created_at, id LIMIT :slots) " + _RETURNING
    ),
    # SKIP LOCKED: never wait for another workstation's claim (the deadline is from the database
    # clock)
    "postgresql": (
        _LEASE + "lease_expires_at = :v_expires_at WHERE id IN ("
        "SELECT id FROM jobs WHERE state = 'Ready' AND stage_id {stages} "
        "ORDER BY priority DESC, created_at, id LIMIT :slots FOR UPDATE SKIP LOCKED) " + _RETURNING
    ),
}


#: what a completion reads of each job: the fence, the key, and what its JobView shows
_FINISHING = (
    "id",
    "stage_id",
    "attempt_id",
    "state",
    "priority",
    "attempts",
    "max_attempts",
    "progress_message",
    "idempotency_key",
    "deterministic",
    "supersedes_job_id",
    "owner",
    "lease_host",
    "lease_boot_id",
    "lease_deadline_mono",
    "lease_expires_at",
    "fencing_token",
    "next_attempt_at",
    "cancel_requested",
    "created_at",
)


@dataclass(frozen=True)
class QueueSQL:
    """The hot paths' statements for one database, in its driver's parameter style."""

    dialect: RawDialect
    #: positional: its values are a tuple in JOB_COLUMNS order (``job_values``)
    insert_job: str
    insert_output: str
    insert_incident: str
    insert_event: str
    #: lease facts of every job a worker holds, to find lapsed leases without loading ORM objects
    held_leases: str
    #: RetryWaiting jobs whose delay has elapsed
    due_retries: str
    #: ``held_leases`` (``due`` 0) and one due retry if any (``due`` 1), in one round trip
    held_or_due: str
    claim_ready: str
    #: committed outputs of the jobs that the given jobs depend on
    upstream_outputs: str
    #: the given jobs, with the first output already committed under each one's key and
    #: whether any job waits for it
    finishing_jobs: str
    #: Running → Succeeded[Degraded], fenced again in the WHERE clause (executemany over the batch)
    complete_job: str
    #: one writer at a time per idempotency key, to the end of the transaction, taken before the
    #: first outputs are read (None: write transactions already are one at a time)
    lock_keys: str | None
    #: the database's clock, where it is the shared one (None: this workstation's clock)
    db_now: str | None


@cache
def queue_sql(dialect_name: str) -> QueueSQL:
    d = raw_dialect(dialect_name)
    in_list = _IN_LIST[dialect_name]
    return QueueSQL(
        dialect=d,
        insert_job=(
            f"INSERT INTO jobs ({', '.join(JOB_COLUMNS)}) VALUES ({d.positional(len(JOB_COLUMNS))})"
        ),
        insert_output=d.sql(_insert(OUTPUTS)),
        insert_incident=d.sql(_insert(INCIDENTS, skip=("id",))),
        insert_event=d.sql(_insert(OUTBOX, skip=("seq", "txid"))),  # txid: the server fills it
        held_leases=_HELD.replace(", 0 AS due", ""),
        due_retries=d.sql(
            "SELECT id FROM jobs WHERE state = 'RetryWaiting' AND next_attempt_at <= :now"
        ),
        held_or_due=d.sql(
            f"{_HELD} UNION ALL SELECT * FROM (SELECT {_HELD_COLUMNS}, 1 FROM jobs "
            "WHERE state = 'RetryWaiting' AND next_attempt_at <= :now LIMIT 1) AS due"
        ),
        claim_ready=d.sql(_CLAIM[dialect_name].format(stages=in_list.format("stage_ids"))),
        upstream_outputs=d.sql(
            "SELECT d.job_id, d.depends_on_job_id, o.body FROM job_dependencies d JOIN jobs u ON "
            "u.id = d.depends_on_job_id JOIN job_outputs o ON o.idempotency_key = "
            f"u.idempotency_key WHERE d.job_id {in_list.format('ids')}"
        ),
        finishing_jobs=d.sql(
            f"SELECT {', '.join('j.' + c for c in _FINISHING)}, o.job_id AS first_job_id, o.digest "
            "AS first_digest, EXISTS (SELECT 1 FROM job_dependencies d WHERE d.depends_on_job_id "
            "= j.id) AS has_dependents FROM jobs j LEFT JOIN job_outputs o ON o.idempotency_key = "
            f"j.idempotency_key WHERE j.id {in_list.format('ids')}"
        ),
        complete_job=d.sql(
            "UPDATE jobs SET state = :v_state, updated_at = :v_now, output_digest = :v_digest, "
            "progress = 1.0, error_code = NULL, error_message = NULL, owner = NULL, lease_host = "
            "NULL, lease_boot_id = NULL, lease_deadline_mono = NULL, lease_expires_at = NULL WHERE "
            "id = :b_id AND owner = :b_owner AND fencing_token = :b_token AND state = 'Running'"
        ),
        lock_keys=key_lock_sql(dialect_name),
        db_now="SELECT now()" if dialect_name == "postgresql" else None,
    )


def event_row(name: str, payload: Mapping[str, Any], recorded_at: Any = None) -> dict[str, Any]:
    """The outbox row :func:`labrig.events.outbox.record_event` would add, validated the same way.

    ``recorded_at``: when, if the caller has already read the clock (now otherwise): an aware
    datetime, or the form the database stores (``RawDialect.to_db_datetime``) when the caller has
    that at hand already."""
    body = payload_text(name, payload)
    spec = spec_for(name)
    return {
        "event_id": time_ordered_id(),
        "name": str(name),
        "schema_version": spec.version if spec else 0,
        "known": spec is not None,
        "payload": body,
        "recorded_at": recorded_at or utcnow(),
    }


def insert_events(tx: RawTransaction, rows: Sequence[dict[str, Any]]) -> None:
    """Insert outbox rows (in order) in ``tx``; commit listeners fire as for record_event."""
    if rows:
        to_db = tx.dialect.to_db_datetime
        tx.executemany(
            queue_sql(tx.dialect.name).insert_event,
            [
                row
                if not isinstance(row["recorded_at"], datetime)
                else {**row, "recorded_at": to_db(row["recorded_at"])}
                for row in rows
            ],
        )
        tx.events_added(len(rows))


#: a jobs row (column -> value) as the tuple ``QueueSQL.insert_job`` takes
job_values = itemgetter(*JOB_COLUMNS)
