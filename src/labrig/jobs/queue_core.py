"""What every part of the job queue shares (Qt-free): the queue's parts (store, stages, clocks,
lease terms, retry policy), the state changes with their events and the failure codes, and the
jobs that wait for others (released when their inputs are committed, failed when one ends
without output). :class:`~labrig.jobs.queue.JobQueue` adds producing (``enqueue``), claiming
(``claims``) and the operators' actions to it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from labrig.domain.events import EventName
from labrig.domain.idempotency import idempotency_key
from labrig.domain.jobs import TERMINAL, JobState, check_transition
from labrig.errors import UnknownJobError
from labrig.events import record_event
from labrig.jobs.lease import Clock, LeaseTerms
from labrig.jobs.policy import RetryPolicy
from labrig.jobs.rows import QueueSQL, queue_sql
from labrig.jobs.stages import StageRegistry
from labrig.store import RawTransaction, Store
from labrig.store.models import Job, JobDependency

S = JobState
SUCCESS = (S.SUCCEEDED.value, S.SUCCEEDED_DEGRADED.value)
LEASE_HELD = (S.LEASED.value, S.RUNNING.value, S.CHECKPOINTED.value)
READY = S.READY.value
for _edge in ((S.CREATED, S.READY), (S.READY, S.LEASED), (S.LEASED, S.RUNNING)):
    # the edges the raw statements take, checked against seed 000's table once, here
    check_transition(*_edge)
WORKER_LOST = "LABRIG_WORKER_LOST"
WORKER_STOPPED = "LABRIG_WORKER_STOPPED"
INPUT_UNAVAILABLE = "LABRIG_INPUT_UNAVAILABLE"
CANCELLED = "LABRIG_CANCELLED"
#: how often a worker's commits look for lapsed leases and due retries (seconds, real time): a
#: lease lasts tens of seconds and a retry waits seconds, so twice a second finds them in time,
#: while a look at every commit (hundreds a second) was a tenth of a busy worker's work
REAP_CHECK_SECONDS = 0.5


@dataclass
class QueueCore:
    """The queue's parts and the state changes every caller makes."""

    store: Store
    registry: StageRegistry
    clock: Clock = field(default_factory=Clock)
    terms: LeaseTerms = field(default_factory=LeaseTerms)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    #: True while storage pressure pauses output-heavy stages (see labrig.storage)
    heavy_paused: Callable[[], bool] = lambda: False
    #: True while no job should start here (this workstation is recording): Ready jobs wait
    paused: Callable[[], bool] = lambda: False
    #: see :data:`REAP_CHECK_SECONDS` (0: at every commit)
    reap_check_seconds: float = REAP_CHECK_SECONDS
    #: ``time.monotonic()`` before which the commits' look for reaping is skipped
    _reap_check_due: float = field(default=0.0, init=False, repr=False, compare=False)

    @property
    def sql(self) -> QueueSQL:
        """The hot paths' statements for this store's database."""
        return queue_sql(self.store.dialect)

    def move(self, session: Session, job: Job, target: JobState) -> None:
        check_transition(JobState(job.state), target)
        job.state = target.value
        job.updated_at = self.clock.now()

    def emit_failed(self, session: Session, job: Job, code: str, retryable: bool) -> None:
        if job.idempotency_key is not None:
            record_event(
                session,
                EventName.STAGE_FAILED,
                {
                    "job_id": job.id,
                    "stage_id": job.stage_id,
                    "idempotency_key": job.idempotency_key,
                    "error_code": code,
                    "retryable": retryable,
                },
            )

    def end_failed(
        self, session: Session, job: Job, target: JobState, code: str, message: str
    ) -> None:
        """Move ``job`` to a failure state, record why, and fail the jobs waiting for its output."""
        self.move(session, job, target)
        job.error_code, job.error_message = code, message
        self.clear_lease(job)
        self.emit_failed(session, job, code, retryable=target is S.RETRY_WAITING)
        if target.value in {s.value for s in TERMINAL}:
            self._fail_dependents(session, job)

    @staticmethod
    def clear_lease(job: Job) -> None:
        job.owner = job.lease_host = job.lease_boot_id = None
        job.lease_deadline_mono = None
        job.lease_expires_at = None

    def schedule_retry(self, session: Session, job: Job, code: str, message: str) -> None:
        """Running/Checkpointed → RetryWaiting with a jittered delay, or PermanentFailure when
        attempts are spent."""
        if job.state == S.CHECKPOINTED.value:
            self.move(session, job, S.RETRY_WAITING)
        if job.attempts >= job.max_attempts:
            self.end_failed(
                session,
                job,
                S.PERMANENT_FAILURE,
                code,
                f"{message} (gave up after {job.attempts} attempts)",
            )
            return
        self.end_failed(session, job, S.RETRY_WAITING, code, message)
        # any workstation's worker compares it with the same clock
        now = self.shared_now(self.store.raw_in(session))
        job.next_attempt_at = now + timedelta(seconds=self.retry.delay(job.attempts))

    def shared_now(self, tx: RawTransaction) -> datetime:
        """The wall clock every workstation agrees on: the database's where it has one,
        else this one's."""
        if self.sql.db_now is None or not self.clock.database_time:
            return self.clock.now()
        if tx.db_now is None:  # the transaction's start: the same for each of its statements
            tx.db_now = tx.execute(self.sql.db_now).fetchone()[0]
        value: datetime = tx.db_now
        return value

    def _get(self, session: Session, job_id: str) -> Job:
        job = session.get(Job, job_id, with_for_update=True)
        if job is None:
            matches = list(session.scalars(select(Job).where(Job.id.startswith(job_id)).limit(2)))
            if len(matches) != 1:
                raise UnknownJobError(f"no job matches '{job_id}'; list them with 'labrig jobs'")
            job = matches[0]
        return job

    def _upstream_jobs(self, session: Session, job_id: str) -> list[Job]:
        """The jobs ``job_id`` depends on, as committed now (not as this session first read
        them)."""
        ids = select(JobDependency.depends_on_job_id).where(JobDependency.job_id == job_id)
        return list(
            session.scalars(
                select(Job)
                .where(Job.id.in_(ids))
                .order_by(Job.id)
                .execution_options(populate_existing=True)
            )
        )

    def _make_ready(self, session: Session, job: Job, upstream_digests: list[str]) -> None:
        """Fix the inputs (own digests, then upstream outputs) and the idempotency key; → Ready."""
        inputs = json.loads(job.input_digests) + upstream_digests
        job.input_digests = json.dumps(inputs)
        job.idempotency_key = idempotency_key(
            job.stage_id, inputs, job.model_manifest_digest, job.config_digest, job.schema_version
        )
        self.move(session, job, S.READY)
        record_event(
            session,
            EventName.STAGE_REQUESTED,
            {
                "job_id": job.id,
                "stage_id": job.stage_id,
                "idempotency_key": job.idempotency_key,
                "attempt_id": job.attempt_id,
            },
        )

    def release_dependents(self, session: Session, job: Job) -> None:
        """InputsPending jobs that waited for ``job`` become Ready once all their
        inputs are committed."""
        for dependent in self._dependents(session, job.id):
            if dependent.state != S.INPUTS_PENDING.value:
                continue
            upstream = self._upstream_jobs(session, dependent.id)
            if all(u.state in SUCCESS and u.output_digest for u in upstream):
                self._make_ready(
                    session, dependent, [u.output_digest for u in upstream if u.output_digest]
                )

    def _fail_dependents(self, session: Session, job: Job) -> None:
        for dependent in self._dependents(session, job.id):
            if dependent.state == S.INPUTS_PENDING.value:
                self.end_failed(
                    session,
                    dependent,
                    S.PERMANENT_FAILURE,
                    INPUT_UNAVAILABLE,
                    f"input job {job.id} ended {job.state} without output",
                )

    def _dependents(self, session: Session, job_id: str) -> list[Job]:
        """The jobs waiting for ``job_id``, locked (in id order) and read as committed now. On
        PostgreSQL two workers finishing two inputs of one job at once would each see the other's
        input unfinished and neither release it: the lock makes the second wait for the first's
        commit, then read its input finished."""
        ids = select(JobDependency.job_id).where(JobDependency.depends_on_job_id == job_id)
        return list(
            session.scalars(
                select(Job)
                .where(Job.id.in_(ids))
                .order_by(Job.id)
                .with_for_update()
                .execution_options(populate_existing=True)
            )
        )
