"""Core (non-ORM) statements for the queue's hot paths: outbox rows written in the caller's transaction.

The queue's frequent writes (enqueue, claim, complete) use SQLAlchemy Core
statements on the session's connection instead of loading and flushing ORM
objects, which cost most of a job's CPU. Rare paths (failures, dependencies,
operators) keep the ORM. Everything still runs in the caller's session, so
in the caller's transaction.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Table, bindparam, exists, insert, select, update
from sqlalchemy.orm import Session

from labrig.domain.events import spec_for
from labrig.errors import InvalidEventPayloadError
from labrig.store.database import EVENTS_IN_TRANSACTION
from labrig.store.models import Job, JobDependency, JobOutput, OutboxEvent, ReproducibilityIncident
from labrig.store.types import UTCDateTime, utcnow

JOBS: Table = Job.__table__  # type: ignore[assignment]
OUTPUTS: Table = JobOutput.__table__  # type: ignore[assignment]
INCIDENTS: Table = ReproducibilityIncident.__table__  # type: ignore[assignment]
OUTBOX: Table = OutboxEvent.__table__  # type: ignore[assignment]


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
            "known": spec is not None, "payload": body, "recorded_at": utcnow()}


def insert_events(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Insert outbox rows (in order) into ``session``'s transaction; commit listeners fire as for record_event."""
    if not rows:
        return
    session.connection().execute(INSERT_EVENT, list(rows))
    session.info[EVENTS_IN_TRANSACTION] = session.info.get(EVENTS_IN_TRANSACTION, 0) + len(rows)


# -- prebuilt statements: built once, so a call pays neither construction nor cache-key generation ----------

_c = JOBS.c
_dep = JobDependency.__table__.c
_LEASE_HELD = ("Leased", "Running", "Checkpointed")

INSERT_JOB = insert(JOBS)
INSERT_OUTPUT = insert(OUTPUTS)
INSERT_INCIDENT = insert(INCIDENTS)
INSERT_EVENT = insert(OUTBOX)

#: lease facts of every job a worker holds, to find lapsed leases without loading ORM objects
HELD_LEASES = select(_c.id, _c.lease_host, _c.lease_boot_id, _c.owner, _c.lease_deadline_mono,
                     _c.lease_expires_at).where(_c.state.in_(_LEASE_HELD))
#: RetryWaiting jobs whose delay has elapsed
DUE_RETRIES = select(_c.id).where(_c.state == "RetryWaiting",
                                  _c.next_attempt_at <= bindparam("now", type_=UTCDateTime()))

#: lease the first ``slots`` Ready jobs of the given stages (claim order), in one statement
CLAIM_READY = (
    update(JOBS)
    .where(_c.id.in_(select(_c.id).where(_c.state == "Ready", _c.stage_id.in_(bindparam("stage_ids", expanding=True)))
                     .order_by(_c.priority.desc(), _c.created_at, _c.id).limit(bindparam("slots"))
                     .scalar_subquery()),
           _c.state == "Ready")
    .values(state=bindparam("v_state"), fencing_token=_c.fencing_token + 1, attempts=_c.attempts + 1,
            owner=bindparam("v_owner"), lease_host=bindparam("v_host"), lease_boot_id=bindparam("v_boot_id"),
            lease_deadline_mono=bindparam("v_mono"), lease_expires_at=bindparam("v_expires_at", type_=UTCDateTime()),
            next_attempt_at=None, updated_at=bindparam("v_now", type_=UTCDateTime()))
    .returning(_c.id, _c.stage_id, _c.fencing_token, _c.attempts, _c.input_digests, _c.config, _c.checkpoint,
               _c.priority, _c.created_at))

#: committed outputs of the jobs that the given jobs depend on
UPSTREAM_OUTPUTS = (select(_dep.job_id, _dep.depends_on_job_id, OUTPUTS.c.body)
                    .join(JOBS, _c.id == _dep.depends_on_job_id)
                    .join(OUTPUTS, OUTPUTS.c.idempotency_key == _c.idempotency_key)
                    .where(_dep.job_id.in_(bindparam("ids", expanding=True))))

#: the given jobs, with the first output already committed under each one's key and whether any job waits for it
FINISHING_JOBS = (
    select(JOBS, OUTPUTS.c.job_id.label("first_job_id"), OUTPUTS.c.digest.label("first_digest"),
           exists().where(_dep.depends_on_job_id == _c.id).label("has_dependents"))
    .outerjoin(OUTPUTS, OUTPUTS.c.idempotency_key == _c.idempotency_key)
    .where(_c.id.in_(bindparam("ids", expanding=True))))

#: Running → Succeeded[Degraded], fenced again in the WHERE clause (executemany over the batch)
COMPLETE_JOB = (
    update(JOBS)
    .where(_c.id == bindparam("b_id"), _c.owner == bindparam("b_owner"), _c.fencing_token == bindparam("b_token"),
           _c.state == "Running")
    .values(state=bindparam("v_state"), updated_at=bindparam("v_now", type_=UTCDateTime()),
            output_digest=bindparam("v_digest"), progress=1.0, error_code=None, error_message=None, owner=None,
            lease_host=None, lease_boot_id=None, lease_deadline_mono=None, lease_expires_at=None))
