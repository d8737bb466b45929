"""The durable job queue over the store (Qt-free).

Three kinds of callers share it: producers (``enqueue``), workers (``claim`` and
the fenced writes of :mod:`labrig.jobs.fenced`), and operators (``cancel``,
``reprocess``, listings). Every state change goes through
:func:`labrig.domain.jobs.check_transition` and commits with its outbox events.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from labrig.domain.events import EventName
from labrig.domain.idempotency import canonical_json, config_digest, idempotency_key
from labrig.domain.ids import random_id
from labrig.domain.jobs import TERMINAL, JobState, check_transition, is_terminal
from labrig.errors import InvalidTransitionError, UnknownJobError
from labrig.events import record_event
from labrig.jobs.lease import Clock, LeaseTerms, deadlines, lease_expired
from labrig.jobs.listing import JobQuery, read_jobs, unsettled_counts
from labrig.jobs.policy import RetryPolicy
from labrig.jobs.rows import QueueSQL, event_row, insert_events, job_values, queue_sql
from labrig.jobs.stages import StageRegistry
from labrig.jobs.views import Claim, IncidentView, JobView
from labrig.store import RawTransaction, Store
from labrig.store.models import Job, JobDependency, ReproducibilityIncident

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


@dataclass(frozen=True)
class JobSpec:
    """One job for :meth:`JobQueue.enqueue_many` (the arguments of :meth:`JobQueue.enqueue`)."""

    stage_id: str
    input_digests: Sequence[str] = ()
    config: Mapping[str, Any] | None = None
    attempt_id: str | None = None
    priority: int = 0
    depends_on: Sequence[str] = ()
    supersedes_job_id: str | None = None


@dataclass
class JobQueue:
    store: Store
    registry: StageRegistry
    clock: Clock = field(default_factory=Clock)
    terms: LeaseTerms = field(default_factory=LeaseTerms)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    #: True while storage pressure pauses output-heavy stages (see labrig.storage)
    heavy_paused: Callable[[], bool] = lambda: False
    #: True while no job should start here (this workstation is recording): Ready jobs wait
    paused: Callable[[], bool] = lambda: False

    @property
    def sql(self) -> QueueSQL:
        """The hot paths' statements for this store's database."""
        return queue_sql(self.store.dialect)

    # -- transitions and events shared by every caller ------------------------------------------

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

    # -- producers -----------------------------------------------------------------------------

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

    # -- workers: claiming ----------------------------------------------------------------------

    def claim(self, slots: int, start: bool = False) -> list[Claim]:
        """In one short write transaction: reap lost leases, wake due retries, lease up
        to ``slots`` jobs.

        Claims only as many jobs as the caller has free worker slots, so no claimed
        job waits for a thread while its lease runs out. With ``start`` the claim also
        moves each job Leased → Running (the caller starts the stage at once), saving
        the separate start transaction; the attempt is then charged from the claim on.
        """
        if slots <= 0:
            return []
        with self.store.write() as session:
            return self.claim_in(session, slots, start)

    def claim_in(
        self, session: Session, slots: int, start: bool = False, reap: bool = True
    ) -> list[Claim]:
        """:meth:`claim` inside the caller's write transaction (``reap``: reap and wake first)."""
        if reap:
            self._reap_expired(session)
            self._wake_due_retries(session)
        if slots <= 0:
            return []
        return self.lease_ready(self.store.raw_in(session), slots, start)

    def needs_reaping(self, tx: RawTransaction) -> bool:
        """Whether a lease has lapsed or a retry is due: work for :meth:`claim_in`'s ORM paths."""
        now = self.shared_now(tx)
        rows = tx.execute(self.sql.held_or_due, {"now": tx.dialect.to_db_datetime(now)}).fetchall()
        return any(
            due
            or lease_expired(
                self.clock, host, boot_id, owner, mono, tx.dialect.from_db_datetime(expires), now
            )
            for _id, host, boot_id, owner, mono, expires, due in rows
        )

    def shared_now(self, tx: RawTransaction) -> datetime:
        """The wall clock every workstation agrees on: the database's where it has one,
        else this one's."""
        if self.sql.db_now is None or not self.clock.database_time:
            return self.clock.now()
        if tx.db_now is None:  # the transaction's start: the same for each of its statements
            tx.db_now = tx.execute(self.sql.db_now).fetchone()[0]
        value: datetime = tx.db_now
        return value

    def lease_ready(self, tx: RawTransaction, slots: int, start: bool = False) -> list[Claim]:
        """Lease up to ``slots`` Ready jobs in claim order (and start them), in ``tx``: one
        UPDATE … RETURNING."""
        if self.paused():
            return []
        mono, _ = deadlines(self.clock, self.terms)
        now = self.shared_now(tx)  # the wall-clock deadline other workstations judge the lease by
        to_db = tx.dialect.to_db_datetime
        rows = tx.mappings(
            self.sql.claim_ready,
            {
                "stage_ids": tx.dialect.id_list(self.registry.ids(heavy=not self.heavy_paused())),
                "slots": slots,
                "v_state": (S.RUNNING if start else S.LEASED).value,
                "v_owner": self.clock.owner,
                "v_host": self.clock.host,
                "v_boot_id": self.clock.boot_id,
                "v_mono": mono,
                "v_expires_at": to_db(now + timedelta(seconds=self.terms.seconds)),
                "v_now": to_db(now),
            },
        )
        # RETURNING's order is arbitrary
        rows.sort(key=lambda r: (-r["priority"], str(r["created_at"]), r["id"]))
        upstream = self._claimed_upstream(tx, [r["id"] for r in rows if r["has_upstream"]])
        return [
            Claim(
                job_id=r["id"],
                stage_id=r["stage_id"],
                token=r["fencing_token"],
                owner=self.clock.owner,
                attempt=r["attempts"],
                input_digests=json.loads(r["input_digests"]),
                config=json.loads(r["config"]),
                checkpoint=json.loads(r["checkpoint"]) if r["checkpoint"] else None,
                started=start,
                upstream=upstream.get(r["id"], {}),
                idempotency_key=r["idempotency_key"],
            )
            for r in rows
        ]

    def _claimed_upstream(
        self, tx: RawTransaction, job_ids: list[str]
    ) -> dict[str, dict[str, Any]]:
        """Committed outputs of the jobs the claimed ones depend on, by claimed job, then
        upstream job id."""
        if not job_ids:
            return {}
        out: dict[str, dict[str, Any]] = {}
        rows = tx.execute(
            self.sql.upstream_outputs, {"ids": tx.dialect.id_list(job_ids)}
        ).fetchall()
        for job_id, upstream_id, body in rows:
            out.setdefault(job_id, {})[upstream_id] = json.loads(body)
        return out

    def reap(self) -> None:
        """Reap lapsed leases and wake due retries now (claim does this too, on every call)."""
        with self.store.write() as session:
            self._reap_expired(session)
            self._wake_due_retries(session)

    def lease_lapsed(self, job: Job, now: datetime | None = None) -> bool:
        """Whether ``job``'s lease no longer protects its holder (``now``: the shared wall
        clock, if read)."""
        return lease_expired(
            self.clock,
            job.lease_host,
            job.lease_boot_id,
            job.owner,
            job.lease_deadline_mono,
            job.lease_expires_at,
            now,
        )

    def _reap_expired(self, session: Session) -> None:
        tx = self.store.raw_in(session)
        now = self.shared_now(tx)
        held = tx.execute(self.sql.held_leases).fetchall()
        lapsed = [
            job_id
            for job_id, host, boot_id, owner, mono, expires in held
            if lease_expired(
                self.clock, host, boot_id, owner, mono, tx.dialect.from_db_datetime(expires), now
            )
        ]
        if not lapsed:  # the usual case: a cheap column read, no ORM objects
            return
        jobs = session.scalars(
            select(Job).where(Job.id.in_(lapsed), Job.state.in_(LEASE_HELD)).with_for_update()
        )
        for job in [j for j in jobs if self.lease_lapsed(j, now)]:
            if job.state == S.LEASED.value:  # never started: the attempt was not used
                self.move(session, job, S.READY)
                self.clear_lease(job)
                job.attempts = max(job.attempts - 1, 0)
            else:  # the worker died or stalled mid-run: the attempt it used counts
                self.schedule_retry(
                    session, job, WORKER_LOST, f"worker {job.owner} stopped renewing its lease"
                )
        session.flush()  # visible to the Core statements that follow (a due retry is woken at once)

    def _wake_due_retries(self, session: Session) -> None:
        tx = self.store.raw_in(session)
        now = tx.dialect.to_db_datetime(self.shared_now(tx))
        due_ids = [r[0] for r in tx.execute(self.sql.due_retries, {"now": now}).fetchall()]
        if not due_ids:
            return
        # locked, and read again under the lock: on PostgreSQL another worker may have woken and
        # claimed one since the read above (moving it to Ready from its stale state would hand a
        # claimed, even finished, job out again); one another worker is waking now is skipped
        due = session.scalars(
            select(Job)
            .where(Job.id.in_(due_ids), Job.state == S.RETRY_WAITING.value)
            .with_for_update(skip_locked=True)
            .execution_options(populate_existing=True)
        )
        for job in list(due):
            self.move(session, job, S.READY)
        session.flush()

    # -- operators -----------------------------------------------------------------------------

    def cancel(self, job_id: str) -> JobView:
        """Cancel now if no worker holds the job; otherwise ask its worker to stop (cooperative)."""
        with self.store.write() as session:
            job = self._get(session, job_id)
            if job.state in LEASE_HELD:
                job.cancel_requested = True
                job.updated_at = self.clock.now()
            else:
                self.end_failed(session, job, S.CANCELLED, CANCELLED, "cancelled by an operator")
            return JobView.of(job)

    def reprocess(self, job_id: str) -> JobView:
        """A new job over the same inputs and config, linked by ``supersedes_job_id``.

        The old job moves to Superseded where the seed allows it (from Ready or
        BlockedByQuality); terminal jobs never change.
        """
        with self.store.write() as session:
            old = self._get(session, job_id)
            upstream = [u.id for u in self._upstream_jobs(session, old.id)]
            own_inputs = (
                json.loads(old.input_digests)[: len(json.loads(old.input_digests)) - len(upstream)]
                if old.idempotency_key
                else json.loads(old.input_digests)
            )
            new = self.add_job(
                session,
                old.stage_id,
                own_inputs,
                json.loads(old.config),
                attempt_id=old.attempt_id,
                priority=old.priority,
                depends_on=upstream,
                supersedes_job_id=old.id,
            )
            if old.state in (S.READY.value, S.BLOCKED_BY_QUALITY.value):
                self.move(session, old, S.SUPERSEDED)
            return JobView.of(new)

    def release_blocked(self, job_id: str) -> JobView:
        """BlockedByQuality → Ready after new evidence (e.g. a new calibration) was provided."""
        with self.store.write() as session:
            job = self._get(session, job_id)
            state = JobState(job.state)
            if state is not S.BLOCKED_BY_QUALITY:
                if is_terminal(state):
                    check_transition(state, S.READY)  # raises LABRIG_TERMINAL_STATE
                raise InvalidTransitionError(
                    f"job {job.id} is {job.state}, not BlockedByQuality: only a blocked job can be "
                    "released"
                )
            self.move(session, job, S.READY)
            job.error_code = job.error_message = None
            job.attempts = 0
            return JobView.of(job)

    def _get(self, session: Session, job_id: str) -> Job:
        job = session.get(Job, job_id, with_for_update=True)
        if job is None:
            matches = list(session.scalars(select(Job).where(Job.id.startswith(job_id)).limit(2)))
            if len(matches) != 1:
                raise UnknownJobError(f"no job matches '{job_id}'; list them with 'labrig jobs'")
            job = matches[0]
        return job

    # -- reading -------------------------------------------------------------------------------

    def get(self, job_id: str) -> JobView:
        with self.store.read() as session:
            return JobView.of(self._get(session, job_id))

    def jobs(
        self,
        states: Sequence[JobState] | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[JobView]:
        query = JobQuery(tuple(states or ()), newest_first=newest_first, limit=limit)
        with self.store.read() as session:
            return read_jobs(session, query)

    def counts(self) -> dict[JobState, int]:
        """How many jobs are in each state not settled (:data:`~labrig.domain.jobs.UNSETTLED`):
        the live queue and what needs an operator, not the history."""
        with self.store.read() as session:
            return unsettled_counts(session)

    def incidents(self) -> list[IncidentView]:
        with self.store.read() as session:
            rows = session.scalars(
                select(ReproducibilityIncident).order_by(ReproducibilityIncident.id)
            )
            return [IncidentView.of(r) for r in rows]

    def cancel_requested(self, job_id: str) -> bool:
        """A cheap read a running stage's worker polls between lease renewals."""
        with self.store.read() as session:
            return bool(session.scalar(select(Job.cancel_requested).where(Job.id == job_id)))

    def idle(self) -> bool:
        """True when no job can run now or later without an operator (drain is complete).

        InputsPending jobs do not count: each waits on a job that is either active (and
        counted here) or blocked by a quality gate, which only an operator can release.
        """
        waiting = (S.CREATED, S.READY, S.LEASED, S.RUNNING, S.CHECKPOINTED, S.RETRY_WAITING)
        counts = self.counts()
        return not any(counts[s] for s in waiting)
