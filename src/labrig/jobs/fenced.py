"""The writes a worker makes under its lease, each fenced by the lease's token.

Every write opens a write transaction, re-reads the job and checks that the
worker still owns it: same owner, same fencing token, an expected state, and a
lease that has not lapsed. Otherwise :class:`~labrig.errors.LeaseLostError` is
raised and nothing is written: the worker must stop and discard its result.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from labrig.domain.events import EventName
from labrig.domain.jobs import JobState
from labrig.errors import LeaseLostError, QualityBlockedError, StageFailure, TransientStageError
from labrig.events.outbox import record_event
from labrig.jobs.lease import deadlines
from labrig.jobs.queue import CANCELLED, WORKER_STOPPED, JobQueue
from labrig.jobs.stages import StageOutput
from labrig.jobs.views import Claim, JobView
from labrig.store.models import Job, JobDependency, JobOutput, ReproducibilityIncident

S = JobState


class FencedWrites:
    def __init__(self, queue: JobQueue) -> None:
        self.queue = queue
        self.store = queue.store

    def _held(self, session: Session, claim: Claim, *states: JobState) -> Job:
        job = session.get(Job, claim.job_id, with_for_update=True)
        if job is None or job.owner != claim.owner or job.fencing_token != claim.token:
            raise LeaseLostError(f"job {claim.job_id} was taken over by another worker; this result is discarded")
        if job.state not in {s.value for s in states} or self.queue.lease_lapsed(job):
            raise LeaseLostError(f"job {claim.job_id} is no longer leased to this worker (state {job.state})")
        return job

    def start(self, claim: Claim) -> None:
        """Leased → Running."""
        with self.store.write() as session:
            self.queue.move(session, self._held(session, claim, S.LEASED), S.RUNNING)

    def renew(self, claim: Claim, progress: float | None = None, message: str | None = None) -> bool:
        """Extend the lease (and store progress); returns whether a cancel was requested."""
        with self.store.write() as session:
            job = self._held(session, claim, S.RUNNING)
            job.lease_deadline_mono, job.lease_expires_at = deadlines(self.queue.clock, self.queue.terms)
            if progress is not None:
                job.progress = max(0.0, min(1.0, progress))
            if message is not None:
                job.progress_message = message
            return job.cancel_requested

    def checkpoint(self, claim: Claim, state: Mapping[str, Any]) -> None:
        """Running → Checkpointed (state saved) → Running; a restarted job resumes from it."""
        with self.store.write() as session:
            job = self._held(session, claim, S.RUNNING)
            job.checkpoint = json.dumps(dict(state), sort_keys=True)
            self.queue.move(session, job, S.CHECKPOINTED)
            self.queue.move(session, job, S.RUNNING)
            job.lease_deadline_mono, job.lease_expires_at = deadlines(self.queue.clock, self.queue.terms)

    def upstream_outputs(self, claim: Claim) -> dict[str, Mapping[str, Any]]:
        with self.store.read() as session:
            ids = session.scalars(select(JobDependency.depends_on_job_id)
                                  .where(JobDependency.job_id == claim.job_id))
            out: dict[str, Mapping[str, Any]] = {}
            for upstream_id in ids:
                key = session.scalar(select(Job.idempotency_key).where(Job.id == upstream_id))
                row = session.get(JobOutput, key) if key else None
                if row is not None:
                    out[upstream_id] = json.loads(row.body)
            return out

    def complete(self, claim: Claim, output: StageOutput) -> JobView:
        """Commit the output under the idempotency key: the first committer wins, forever."""
        with self.store.write() as session:
            job = self._held(session, claim, S.RUNNING)
            assert job.idempotency_key is not None
            committed = self._commit_output(session, job, claim, output)
            degraded = bool(output.degraded_reasons)
            self.queue.move(session, job, S.SUCCEEDED_DEGRADED if degraded else S.SUCCEEDED)
            job.output_digest, job.progress = committed, 1.0
            job.error_code = job.error_message = None  # earlier failures stay in the outbox history
            self.queue.clear_lease(job)
            record_event(session, EventName.STAGE_COMPLETED, {
                "job_id": job.id, "stage_id": job.stage_id, "idempotency_key": job.idempotency_key,
                "output_digest": committed})
            if degraded and job.attempt_id:
                record_event(session, EventName.QUALITY_DEGRADED, {
                    "attempt_id": job.attempt_id, "job_id": job.id, "reasons": list(output.degraded_reasons)})
            self.queue.release_dependents(session, job)
            return JobView.of(job)

    def _commit_output(self, session: Session, job: Job, claim: Claim, output: StageOutput) -> str:
        assert job.idempotency_key is not None
        first = session.get(JobOutput, job.idempotency_key, with_for_update=True)
        if first is None:
            session.add(JobOutput(idempotency_key=job.idempotency_key, job_id=job.id, fencing_token=claim.token,
                                  digest=output.digest, body=output.canonical.decode(),
                                  committed_at=self.queue.clock.now()))
            return output.digest
        if first.digest != output.digest and job.deterministic:
            session.add(ReproducibilityIncident(
                idempotency_key=job.idempotency_key, stage_id=job.stage_id, first_job_id=first.job_id,
                first_digest=first.digest, second_job_id=job.id, second_digest=output.digest,
                recorded_at=self.queue.clock.now()))
        return first.digest

    def fail(self, claim: Claim, error: StageFailure) -> JobView:
        """End the run with a typed failure: retry later, block on quality, or fail for good."""
        with self.store.write() as session:
            job = self._held(session, claim, S.RUNNING)
            if isinstance(error, QualityBlockedError):
                self.queue.end_failed(session, job, S.BLOCKED_BY_QUALITY, error.code, error.message)
                if job.attempt_id:
                    record_event(session, EventName.QUALITY_BLOCKED,
                                 {"attempt_id": job.attempt_id, "job_id": job.id, "reasons": error.reasons})
            elif isinstance(error, TransientStageError):
                self.queue.schedule_retry(session, job, error.code, error.message)
            else:
                self.queue.end_failed(session, job, S.PERMANENT_FAILURE, error.code, error.message)
            return JobView.of(job)

    def acknowledge_cancel(self, claim: Claim) -> JobView:
        """The stage stopped on request: Running → RetryWaiting → Cancelled (the seed's only way there)."""
        with self.store.write() as session:
            job = self._held(session, claim, S.RUNNING)
            self.queue.move(session, job, S.RETRY_WAITING)
            self.queue.end_failed(session, job, S.CANCELLED, CANCELLED, "cancelled by an operator while running")
            return JobView.of(job)

    def release(self, claim: Claim) -> JobView:
        """The worker is shutting down: hand the job back for another worker, without charging an attempt."""
        with self.store.write() as session:
            job = self._held(session, claim, S.RUNNING)
            self.queue.end_failed(session, job, S.RETRY_WAITING, WORKER_STOPPED, "the worker was shut down")
            job.attempts = max(job.attempts - 1, 0)
            job.next_attempt_at = self.queue.clock.now()
            return JobView.of(job)
