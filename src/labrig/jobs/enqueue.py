"""Producing jobs (Qt-free): one or many at once, Ready at once or waiting for the jobs they
depend on, inside a transaction of their own (raw inserts, the usual case) or the caller's (an
attempt and its jobs commit together).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from labrig.domain.events import EventName
from labrig.domain.idempotency import canonical_json, config_digest, idempotency_key
from labrig.domain.ids import random_id
from labrig.domain.jobs import TERMINAL
from labrig.jobs.queue_core import INPUT_UNAVAILABLE, READY, SUCCESS, QueueCore, S
from labrig.jobs.rows import event_row, insert_events, job_values
from labrig.jobs.views import JobView
from labrig.store import RawTransaction
from labrig.store.models import Job, JobDependency


@dataclass(frozen=True)
class JobSpec:
    """One job for :meth:`Enqueuing.enqueue_many` (the arguments of :meth:`Enqueuing.enqueue`)."""

    stage_id: str
    input_digests: Sequence[str] = ()
    config: Mapping[str, Any] | None = None
    attempt_id: str | None = None
    priority: int = 0
    depends_on: Sequence[str] = ()
    supersedes_job_id: str | None = None


class Enqueuing(QueueCore):
    """The producers' part of :class:`~labrig.jobs.queue.JobQueue`."""

    def enqueue(
        self,
        stage_id: str,
        input_digests: Sequence[str] = (),
        config: Mapping[str, Any] | None = None,
        *,
        attempt_id: str | None = None,
        priority: int = 0,
        depends_on: Sequence[str] = (),
        supersedes_job_id: str | None = None,
    ) -> JobView:
        """Create a job; it is Ready at once, or InputsPending until ``depends_on`` jobs commit."""
        [view] = self.enqueue_many(
            [
                JobSpec(
                    stage_id,
                    input_digests,
                    config,
                    attempt_id,
                    priority,
                    depends_on,
                    supersedes_job_id,
                )
            ]
        )
        return view

    def enqueue_many(self, specs: Sequence[JobSpec]) -> list[JobView]:
        """Create several jobs in one transaction (all or none), in order; ``depends_on`` may
        name earlier ones."""
        if not any(spec.depends_on for spec in specs):  # the usual case: raw inserts, no Session
            with self.store.raw_write() as tx:
                return [self._insert_ready(tx, spec) for spec in specs]
        with self.store.write() as session:
            views: list[JobView] = []
            for spec in specs:
                if spec.depends_on:
                    views.append(
                        JobView.of(
                            self.add_job(
                                session,
                                spec.stage_id,
                                spec.input_digests,
                                spec.config,
                                attempt_id=spec.attempt_id,
                                priority=spec.priority,
                                depends_on=spec.depends_on,
                                supersedes_job_id=spec.supersedes_job_id,
                            )
                        )
                    )
                else:
                    views.append(self._insert_ready(self.store.raw_in(session), spec))
            return views

    def _insert_ready(self, tx: RawTransaction, spec: JobSpec) -> JobView:
        """A job without dependencies: inserted Ready (Created → Ready, an edge checked as this
        module loads) with its request event.

        One INSERT instead of an ORM object flushed as Created and then updated.
        """
        stage = self.registry.get(spec.stage_id)
        config_text, cfg_digest = stage.settle(spec.config)
        inputs = list(spec.input_digests)
        now = self.clock.now()
        stored_now = tx.dialect.to_db_datetime(now)
        # random, not time-ordered: people type a job by its first 8 characters
        job_id = random_id()
        key = idempotency_key(
            spec.stage_id, inputs, stage.model_manifest_digest, cfg_digest, stage.schema_version
        )
        tx.execute(
            self.sql.insert_job,
            job_values(
                {
                    "id": job_id,
                    "stage_id": spec.stage_id,
                    "attempt_id": spec.attempt_id,
                    "state": READY,
                    "priority": spec.priority,
                    "created_at": stored_now,
                    "updated_at": stored_now,
                    "input_digests": json.dumps(inputs),
                    "config": config_text,
                    "config_digest": cfg_digest,
                    "model_manifest_digest": stage.model_manifest_digest,
                    "schema_version": stage.schema_version,
                    "idempotency_key": key,
                    "deterministic": stage.deterministic,
                    "supersedes_job_id": spec.supersedes_job_id,
                    "owner": None,
                    "lease_host": None,
                    "lease_boot_id": None,
                    "lease_deadline_mono": None,
                    "lease_expires_at": None,
                    "fencing_token": 0,
                    "attempts": 0,
                    "max_attempts": stage.max_attempts,
                    "next_attempt_at": None,
                    "progress": 0.0,
                    "progress_message": "",
                    "checkpoint": None,
                    "cancel_requested": False,
                    "error_code": None,
                    "error_message": None,
                    "output_digest": None,
                }
            ),
        )
        insert_events(
            tx,
            [
                event_row(
                    EventName.STAGE_REQUESTED,
                    {
                        "job_id": job_id,
                        "stage_id": spec.stage_id,
                        "idempotency_key": key,
                        "attempt_id": spec.attempt_id,
                    },
                    recorded_at=stored_now,
                )
            ],
        )
        return JobView(
            id=job_id,
            stage_id=spec.stage_id,
            state=S.READY,
            attempt_id=spec.attempt_id,
            priority=spec.priority,
            attempts=0,
            max_attempts=stage.max_attempts,
            progress=0.0,
            progress_message="",
            idempotency_key=key,
            input_digests=inputs,
            supersedes_job_id=spec.supersedes_job_id,
            owner=None,
            lease_expires_at=None,
            next_attempt_at=None,
            error_code=None,
            error_message=None,
            output_digest=None,
            cancel_requested=False,
            created_at=now,
            updated_at=now,
        )

    def add_job(
        self,
        session: Session,
        stage_id: str,
        input_digests: Sequence[str],
        config: Mapping[str, Any] | None,
        *,
        attempt_id: str | None = None,
        priority: int = 0,
        depends_on: Sequence[str] = (),
        supersedes_job_id: str | None = None,
    ) -> Job:
        """Enqueue inside the caller's transaction (so an attempt and its jobs commit together)."""
        stage = self.registry.get(stage_id)
        merged = stage.configure(config)
        now = self.clock.now()
        job = Job(
            id=random_id(),
            stage_id=stage_id,
            attempt_id=attempt_id,
            state=S.CREATED.value,
            priority=priority,
            created_at=now,
            updated_at=now,
            input_digests=json.dumps(list(input_digests)),
            config=canonical_json(merged).decode(),
            config_digest=config_digest(merged),
            model_manifest_digest=stage.model_manifest_digest,
            schema_version=stage.schema_version,
            deterministic=stage.deterministic,
            supersedes_job_id=supersedes_job_id,
            fencing_token=0,
            attempts=0,
            max_attempts=stage.max_attempts,
            progress=0.0,
            progress_message="",
            cancel_requested=False,
        )
        session.add(job)
        for upstream in depends_on:
            session.add(
                JobDependency(job_id=job.id, depends_on_job_id=self._get(session, upstream).id)
            )
        session.flush()
        self._advance_created(session, job)
        return job

    def _advance_created(self, session: Session, job: Job) -> None:
        upstream = self._upstream_jobs(session, job.id)
        if any(u.state in {s.value for s in TERMINAL} - set(SUCCESS) for u in upstream):
            self.move(session, job, S.INPUTS_PENDING)
            self.end_failed(
                session,
                job,
                S.PERMANENT_FAILURE,
                INPUT_UNAVAILABLE,
                "an input job ended without output",
            )
        elif all(u.output_digest is not None and u.state in SUCCESS for u in upstream):
            self._make_ready(session, job, [u.output_digest for u in upstream if u.output_digest])
        else:
            self.move(session, job, S.INPUTS_PENDING)
