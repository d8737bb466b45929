"""The durable job queue over the store (Qt-free).

Three kinds of callers share it: producers (``enqueue``, :mod:`labrig.jobs.enqueue`), workers
(``claim``, :mod:`labrig.jobs.claims`, and the fenced writes of :mod:`labrig.jobs.fenced`), and
operators (``cancel``, ``reprocess``, listings, here). Every state change goes through
:func:`labrig.domain.jobs.check_transition` and commits with its outbox events
(:mod:`labrig.jobs.queue_core`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from sqlalchemy import select

from labrig.domain.jobs import JobState, check_transition, is_terminal
from labrig.errors import InvalidTransitionError
from labrig.jobs.claims import Claiming
from labrig.jobs.enqueue import Enqueuing, JobSpec
from labrig.jobs.listing import JobQuery, read_jobs, unsettled_counts
from labrig.jobs.queue_core import (
    CANCELLED,
    INPUT_UNAVAILABLE,
    LEASE_HELD,
    WORKER_LOST,
    WORKER_STOPPED,
    S,
)
from labrig.jobs.views import IncidentView, JobView
from labrig.store.models import Job, ReproducibilityIncident

__all__ = [
    "CANCELLED",
    "INPUT_UNAVAILABLE",
    "WORKER_LOST",
    "WORKER_STOPPED",
    "JobQueue",
    "JobSpec",
]


class Left(Enum):
    """What a drain waits for (:meth:`JobQueue.left_to_drain`)."""

    NOTHING = "nothing"
    HELD = "held"  # jobs a worker holds now: leased, running, checkpointed
    WAITING = "waiting"  # only jobs to be claimed, or retried later


#: the jobs a worker holds
HELD = (S.LEASED, S.RUNNING, S.CHECKPOINTED)
#: the other jobs that can still run without an operator
WAITING = (S.CREATED, S.READY, S.RETRY_WAITING)


@dataclass
class JobQueue(Enqueuing, Claiming):
    """The queue: its producers' part, its workers' claims, and the operators' actions and reads."""

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
        return self.left_to_drain() is Left.NOTHING

    def left_to_drain(self) -> Left:
        """What keeps a drain from being complete (:meth:`idle`): nothing, jobs a worker holds
        now (leased, running: they end soon), or only jobs waiting to be claimed or retried."""
        counts = self.counts()
        if any(counts[s] for s in HELD):
            return Left.HELD
        return Left.WAITING if any(counts[s] for s in WAITING) else Left.NOTHING
