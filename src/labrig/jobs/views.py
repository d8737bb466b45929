"""Frozen snapshots of jobs for front ends (CLI, GUI); never live ORM objects."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any

from labrig.domain.jobs import JobState
from labrig.store.models import Job, ReproducibilityIncident


@dataclass(frozen=True)
class JobView:
    id: str
    stage_id: str
    state: JobState
    attempt_id: str | None
    priority: int
    attempts: int
    max_attempts: int
    progress: float
    progress_message: str
    idempotency_key: str | None
    input_digests: list[str]
    supersedes_job_id: str | None
    owner: str | None
    lease_expires_at: datetime | None
    next_attempt_at: datetime | None
    error_code: str | None
    error_message: str | None
    output_digest: str | None
    cancel_requested: bool
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, job: Job) -> JobView:
        return cls.from_row({name: getattr(job, name) for name in _COLUMNS})

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> JobView:
        """From a ``jobs`` row read (and possibly updated) with Core statements,
        as column → value."""
        values = {name: row[name] for name in _COLUMNS}
        values.update(
            state=JobState(row["state"]),
            input_digests=json.loads(row["input_digests"]),
            cancel_requested=bool(row["cancel_requested"]),
        )
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["state"] = self.state.value
        return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in data.items()}


# every field of a JobView is a column of ``jobs``
_COLUMNS = tuple(f.name for f in fields(JobView))


@dataclass(frozen=True)
class IncidentView:
    id: int
    idempotency_key: str
    stage_id: str
    first_job_id: str
    first_digest: str
    second_job_id: str
    second_digest: str
    recorded_at: datetime

    @classmethod
    def of(cls, row: ReproducibilityIncident) -> IncidentView:
        return cls(
            id=row.id,
            idempotency_key=row.idempotency_key,
            stage_id=row.stage_id,
            first_job_id=row.first_job_id,
            first_digest=row.first_digest,
            second_job_id=row.second_job_id,
            second_digest=row.second_digest,
            recorded_at=row.recorded_at,
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["recorded_at"] = self.recorded_at.isoformat()
        return data


@dataclass(frozen=True)
class Claim:
    """A job a worker holds: valid only while ``token`` is the job's fencing token."""

    job_id: str
    stage_id: str
    token: int
    owner: str
    attempt: int
    input_digests: list[str]
    config: dict[str, Any]
    checkpoint: dict[str, Any] | None
    #: True when the claim already moved the job Leased → Running (``JobQueue.claim(start=True)``)
    started: bool = False
    #: committed outputs of the jobs it depends on, read in the claim's transaction;
    #: None: not read yet
    upstream: Mapping[str, Mapping[str, Any]] | None = None
    #: the job's idempotency key as claimed (None: not read), so a run's completion event
    #: can be made on its thread
    idempotency_key: str | None = None
