"""The writes a worker makes under its lease, each fenced by the lease's token.

Every write opens a write transaction, re-reads the job and checks that the
worker still owns it: same owner, same fencing token, an expected state, and a
lease that has not lapsed. Otherwise :class:`~labrig.errors.LeaseLostError` is
raised and nothing is written: the worker must stop and discard its result.

Ending runs can be batched: :meth:`FencedWrites.finish` commits the outcomes of
several runs (and optionally claims the next jobs) in one write transaction.
Each outcome is still fenced on its own; one whose lease was lost is reported
lost and writes nothing, without affecting the others.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from labrig.domain.events import EventName
from labrig.domain.jobs import JobState, check_transition
from labrig.errors import LeaseLostError, QualityBlockedError, StageFailure, TransientStageError
from labrig.events import record_event
from labrig.fsutil import disk_full
from labrig.jobs.completions import (
    Outcome,
    RunResult,
    complete_rows,
)
from labrig.jobs.lease import deadlines
from labrig.jobs.queue import CANCELLED, WORKER_STOPPED, JobQueue
from labrig.jobs.stages import StageOutput
from labrig.jobs.views import Claim, JobView
from labrig.store.models import Job, JobDependency, JobOutput

S = JobState
log = logging.getLogger(__name__)
NOT_RECORDED = (
    "the outcome of the jobs that ended is not recorded; the next 'labrig worker' runs them again"
)
for _target in (S.SUCCEEDED, S.SUCCEEDED_DEGRADED):
    # the edges a raw completion takes, checked against seed 000's table once
    check_transition(S.RUNNING, _target)


class FencedWrites:
    def __init__(self, queue: JobQueue) -> None:
        self.queue = queue
        self.store = queue.store

    def _held(self, session: Session, claim: Claim, *states: JobState) -> Job:
        job = session.get(Job, claim.job_id, with_for_update=True)
        if job is None or job.owner != claim.owner or job.fencing_token != claim.token:
            raise LeaseLostError(
                f"job {claim.job_id} was taken over by another worker; this result is discarded"
            )
        if job.state not in {s.value for s in states} or self.queue.lease_lapsed(job):
            raise LeaseLostError(
                f"job {claim.job_id} is no longer leased to this worker (state {job.state})"
            )
        return job

    def start(self, claim: Claim) -> None:
        """Leased → Running."""
        with self.store.write() as session:
            self.queue.move(session, self._held(session, claim, S.LEASED), S.RUNNING)

    def renew(
        self, claim: Claim, progress: float | None = None, message: str | None = None
    ) -> bool:
        """Extend the lease (and store progress); returns whether a cancel was requested."""
        with self.store.write() as session:
            job = self._held(session, claim, S.RUNNING)
            job.lease_deadline_mono, job.lease_expires_at = deadlines(
                self.queue.clock, self.queue.terms
            )
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
            job.lease_deadline_mono, job.lease_expires_at = deadlines(
                self.queue.clock, self.queue.terms
            )

    def upstream_outputs(self, claim: Claim) -> dict[str, Mapping[str, Any]]:
        with self.store.read() as session:
            ids = session.scalars(
                select(JobDependency.depends_on_job_id).where(JobDependency.job_id == claim.job_id)
            )
            out: dict[str, Mapping[str, Any]] = {}
            for upstream_id in ids:
                key = session.scalar(select(Job.idempotency_key).where(Job.id == upstream_id))
                row = session.get(JobOutput, key) if key else None
                if row is not None:
                    out[upstream_id] = json.loads(row.body)
            return out

    def complete(self, claim: Claim, output: StageOutput) -> JobView:
        """Commit the output under the idempotency key: the first committer wins, forever."""
        return self._single(Outcome(claim, "complete", output=output))

    def complete_many(self, items: Sequence[tuple[Claim, StageOutput]]) -> list[JobView | None]:
        """:meth:`complete` for several runs in one transaction; None for a run
        whose lease was lost."""
        results, _ = self.finish([Outcome(c, "complete", output=o) for c, o in items])
        return [r.view for r in results]

    def fail(self, claim: Claim, error: StageFailure) -> JobView:
        """End the run with a typed failure: retry later, block on quality, or fail for good."""
        return self._single(Outcome(claim, "fail", failure=error))

    def acknowledge_cancel(self, claim: Claim) -> JobView:
        """The stage stopped on request: Running → RetryWaiting → Cancelled (the seed's
        only way there)."""
        return self._single(Outcome(claim, "cancelled"))

    def release(self, claim: Claim) -> JobView:
        """The worker is shutting down: hand the job back for another worker, without
        charging an attempt."""
        return self._single(Outcome(claim, "released"))

    def _single(self, outcome: Outcome) -> JobView:
        """One outcome in its own transaction; raises LeaseLostError (nothing written) if
        the lease is gone."""
        with self.store.write() as session:
            return self._end_one(session, outcome)

    # -- batched endings -----------------------------------------------------------------------

    def finish(
        self,
        outcomes: Sequence[Outcome],
        claim_slots: int = 0,
        start: bool = True,
        early: EarlyStart | None = None,
    ) -> tuple[list[RunResult], list[Claim]]:
        """Commit ``outcomes`` and then claim up to ``claim_slots`` jobs, all in one
        write transaction.

        Each outcome is fenced on its own (owner, token, state, unexpired lease): one
        whose lease was lost gets ``RunResult(view=None, lease_lost=True)`` and writes
        nothing, while the others commit. If anything else fails the transaction rolls
        back and every outcome is retried in a transaction of its own, so one bad outcome
        cannot sink the others; its error is then raised after the rest are written.

        With ``early``, claims leased on the usual (raw) path are handed to
        ``early.start`` before the commit instead of being returned, so their runs
        overlap the commit's fsync; if the commit then fails they go to ``early.void``
        and nothing more is claimed in this call.
        """
        if not outcomes and claim_slots <= 0:
            return [], []
        voided = False
        try:
            fast = self._finish_raw(outcomes, claim_slots, start, early)
            if fast is not None:
                return fast
            with self.store.write() as session:
                results = self._end_many(session, outcomes)
                claims = self.queue.claim_in(session, claim_slots, start) if claim_slots > 0 else []
            return results, claims
        except _VoidedClaims as exc:
            voided = True
            cause = exc.__cause__
            if cause is not None and (full := disk_full(cause, NOT_RECORDED)):
                raise full from cause  # one by one would fail the same way
            if len(outcomes) <= 1 and claim_slots <= 0 and cause is not None:
                raise cause from None
            log.warning(
                "a batch of %d outcome(s) failed to commit; retrying them one by one",
                len(outcomes),
                exc_info=cause,
            )
        except Exception as exc:
            if full := disk_full(exc, NOT_RECORDED):
                raise full from exc  # one by one would fail the same way
            if len(outcomes) <= 1 and claim_slots <= 0:
                raise
            log.warning(
                "a batch of %d outcome(s) failed to commit; retrying them one by one",
                len(outcomes),
                exc_info=True,
            )
        results, error = [], None
        for outcome in outcomes:
            try:
                results.append(self._finish_alone(outcome))
            except Exception as exc:  # noqa: BLE001 - raised below, after the others are written
                error = error or exc
        if error is not None:
            raise error
        # voided runs may still be going under their (rolled back) tokens: claim again once they
        # have ended
        return results, [] if voided else self.queue.claim(claim_slots, start)

    def _finish_raw(
        self, outcomes: Sequence[Outcome], claim_slots: int, start: bool, early: EarlyStart | None
    ) -> tuple[list[RunResult], list[Claim]] | None:
        """:meth:`finish` without a Session when only raw statements are needed; None (nothing
        written) if not.

        The usual batch: completions (and lost leases) whose outputs no job waits for,
        and no lapsed lease or due retry to handle. Anything else takes the ORM paths.
        """
        if any(o.kind not in ("complete", "lost") for o in outcomes):
            return None
        started: list[Claim] = []
        try:
            with self.store.raw_write() as tx:
                completes = [o for o in outcomes if o.kind == "complete"]
                views, waited_for = (
                    complete_rows(self.queue, tx, completes) if completes else ([], set())
                )
                if waited_for or (claim_slots > 0 and self.queue.needs_reaping(tx)):
                    raise _NeedsSession
                claims = self.queue.lease_ready(tx, claim_slots, start) if claim_slots > 0 else []
                if early is not None and claims:
                    started, claims = claims, []
                    early.start(started)
        except _NeedsSession:
            return None  # rolled back: the session path does it all
        except Exception as exc:
            if started:
                assert early is not None
                early.void(started)
                raise _VoidedClaims from exc
            raise
        found = iter(views)
        results = [
            RunResult(o.claim.job_id, None, lease_lost=True)
            if o.kind == "lost"
            else _result(o, next(found))
            for o in outcomes
        ]
        return results, claims

    def _finish_alone(self, outcome: Outcome) -> RunResult:
        try:
            if outcome.kind == "lost":
                return RunResult(outcome.claim.job_id, None, lease_lost=True)
            return RunResult(outcome.claim.job_id, self._single(outcome))
        except LeaseLostError:
            return RunResult(outcome.claim.job_id, None, lease_lost=True)

    def _end_many(self, session: Session, outcomes: Sequence[Outcome]) -> list[RunResult]:
        results: dict[int, RunResult] = {}
        completes = [(i, o) for i, o in enumerate(outcomes) if o.kind == "complete"]
        for i, outcome in enumerate(outcomes):
            if outcome.kind == "lost":
                results[i] = RunResult(outcome.claim.job_id, None, lease_lost=True)
            elif outcome.kind != "complete":  # the rare endings: through the ORM, each fenced
                try:
                    results[i] = RunResult(outcome.claim.job_id, self._end_one(session, outcome))
                except LeaseLostError:
                    results[i] = RunResult(outcome.claim.job_id, None, lease_lost=True)
        if completes:
            views = self._complete_in(session, [o for _, o in completes])
            for (i, outcome), view in zip(completes, views, strict=True):
                results[i] = _result(outcome, view)
        return [results[i] for i in range(len(outcomes))]

    def _end_one(self, session: Session, outcome: Outcome) -> JobView:
        claim = outcome.claim
        if outcome.kind == "complete":
            assert outcome.output is not None
            [view] = self._complete_in(session, [outcome])
            if view is None:
                raise LeaseLostError(
                    f"job {claim.job_id} is no longer leased to this worker; "
                    "this result is discarded"
                )
            return view
        job = self._held(session, claim, S.RUNNING)
        if outcome.kind == "fail":
            assert outcome.failure is not None
            error = outcome.failure
            if isinstance(error, QualityBlockedError):
                self.queue.end_failed(session, job, S.BLOCKED_BY_QUALITY, error.code, error.message)
                if job.attempt_id:
                    record_event(
                        session,
                        EventName.QUALITY_BLOCKED,
                        {"attempt_id": job.attempt_id, "job_id": job.id, "reasons": error.reasons},
                    )
            elif isinstance(error, TransientStageError):
                self.queue.schedule_retry(session, job, error.code, error.message)
            else:
                self.queue.end_failed(session, job, S.PERMANENT_FAILURE, error.code, error.message)
        elif outcome.kind == "cancelled":
            self.queue.move(session, job, S.RETRY_WAITING)
            self.queue.end_failed(
                session, job, S.CANCELLED, CANCELLED, "cancelled by an operator while running"
            )
        elif outcome.kind == "released":
            self.queue.end_failed(
                session, job, S.RETRY_WAITING, WORKER_STOPPED, "the worker was shut down"
            )
            job.attempts = max(job.attempts - 1, 0)
            job.next_attempt_at = self.queue.clock.now()
        else:  # pragma: no cover - "lost" never reaches a write
            raise LeaseLostError(f"job {claim.job_id}: nothing to write for a lost lease")
        return JobView.of(job)

    def _complete_in(self, session: Session, outcomes: Sequence[Outcome]) -> list[JobView | None]:
        """:func:`~labrig.jobs.completions.complete_rows` in a session's transaction, then the
        release of the jobs waiting for them."""
        views, waited_for = complete_rows(self.queue, self.store.raw_in(session), outcomes)
        if waited_for:  # through the ORM, after the rows above
            session.expire_all()
            for job_id in sorted(waited_for):
                job = session.get(Job, job_id)
                assert job is not None
                self.queue.release_dependents(session, job)
        return views


class EarlyStart(Protocol):
    """Where :meth:`FencedWrites.finish` hands claims before the transaction that
    leased them commits."""

    def start(self, claims: list[Claim]) -> None:
        """Run these claims (called under the store's write lock: only hand them to threads)."""

    def void(self, claims: list[Claim]) -> None:
        """The transaction did not commit: these claims were never held; their runs'
        outcomes are lost."""


class _VoidedClaims(Exception):
    """The commit failed after claims were started early (the cause is chained)."""


class _NeedsSession(Exception):
    """The raw path of :meth:`FencedWrites.finish` met work for the ORM paths; its
    transaction rolls back."""


def _result(outcome: Outcome, view: JobView | None) -> RunResult:
    return RunResult(outcome.claim.job_id, view, lease_lost=view is None)
