"""Committing the outputs of finished runs (Qt-free): how a run ended (:class:`Outcome`), and the
raw statements that commit a batch of completions (:func:`complete_rows`) with their events,
each fenced on its own, for :class:`~labrig.jobs.fenced.FencedWrites`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from labrig.domain.events import EventName
from labrig.domain.jobs import JobState
from labrig.errors import LeaseLostError, StageFailure
from labrig.jobs.lease import lease_expired
from labrig.jobs.queue_core import QueueCore
from labrig.jobs.rows import event_row, insert_events
from labrig.jobs.stages import StageOutput
from labrig.jobs.views import Claim, JobView
from labrig.store import RawTransaction, utcnow
from labrig.store.dialects import RawDialect

S = JobState
OutcomeKind = Literal["complete", "fail", "cancelled", "released", "lost"]


@dataclass(frozen=True)
class Outcome:
    """How a run ended, not yet written: what :meth:`FencedWrites.finish` commits."""

    claim: Claim
    kind: OutcomeKind
    output: StageOutput | None = None
    failure: StageFailure | None = None
    #: the completion event, made on the run's own thread (see :func:`completion_event`);
    #: None: made at commit
    completion: dict[str, Any] | None = None


@dataclass(frozen=True)
class RunResult:
    job_id: str
    view: JobView | None  # None when the lease was lost and the result discarded
    lease_lost: bool = False


def complete_rows(
    queue: QueueCore, tx: RawTransaction, outcomes: Sequence[Outcome]
) -> tuple[list[JobView | None], set[str]]:
    """Commit the outputs of finished runs with raw statements; None where the lease was lost.

    Per run, in this transaction: the fence check (owner, token, Running, unexpired
    lease) on the row read here, the output row unless the key already has one (the
    first output is never overwritten; a different digest of a deterministic stage is
    a reproducibility incident), Running → Succeeded[Degraded] (checked) by an UPDATE
    that repeats the fence in its WHERE clause, and the completion events. Also
    returns the completed jobs that other jobs wait for (the caller releases those).
    """
    clock = queue.clock
    rows: dict[str, dict[str, Any]] = {}
    first_outputs: dict[str, tuple[str, str]] = {}
    with_dependents: set[str] = set()
    sql = queue.sql
    keys = sorted({k for o in outcomes if (k := o.claim.idempotency_key) is not None})
    if sql.lock_keys is not None and keys:
        tx.execute(sql.lock_keys, {"keys": keys})
    for found in tx.mappings(
        sql.finishing_jobs, {"ids": tx.dialect.id_list([o.claim.job_id for o in outcomes])}
    ):
        # of its datetimes only the lease's is read here (the view converts the others)
        read = dict(found)
        read["lease_expires_at"] = tx.dialect.from_db_datetime(read["lease_expires_at"])
        first_job, first_digest = read.pop("first_job_id"), read.pop("first_digest")
        if first_job is not None:
            first_outputs[read["idempotency_key"]] = (first_job, first_digest)
        if read.pop("has_dependents"):
            with_dependents.add(read["id"])
        rows[read["id"]] = read
    now = clock.now()
    stored_now, from_db = tx.dialect.to_db_datetime(now), tx.dialect.from_db_datetime
    views: list[JobView | None] = []
    new_outputs: list[dict[str, Any]] = []
    incidents: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    for outcome in outcomes:
        claim, output = outcome.claim, outcome.output
        assert output is not None
        row = rows.get(claim.job_id, {})
        if (
            not row
            or row["owner"] != claim.owner
            or row["fencing_token"] != claim.token
            or row["state"] != S.RUNNING.value
            or lease_expired(
                clock,
                row["lease_host"],
                row["lease_boot_id"],
                row["owner"],
                row["lease_deadline_mono"],
                row["lease_expires_at"],
            )
        ):
            views.append(None)  # taken over, ended, or lapsed: nothing is written for this run
            continue
        key = row["idempotency_key"]
        assert key is not None
        # checked at import
        target = S.SUCCEEDED_DEGRADED if output.degraded_reasons else S.SUCCEEDED
        canonical, digest = output.canonical, output.digest
        first = first_outputs.get(key)
        if first is None:
            new_outputs.append(
                {
                    "idempotency_key": key,
                    "job_id": claim.job_id,
                    "fencing_token": claim.token,
                    "digest": digest,
                    "body": canonical.decode(),
                    "committed_at": stored_now,
                }
            )
            first_outputs[key] = (claim.job_id, digest)
            committed = digest
        else:
            if first[1] != digest and row["deterministic"]:
                incidents.append(
                    {
                        "idempotency_key": key,
                        "stage_id": row["stage_id"],
                        "first_job_id": first[0],
                        "first_digest": first[1],
                        "second_job_id": claim.job_id,
                        "second_digest": digest,
                        "recorded_at": stored_now,
                    }
                )
            committed = first[1]
        # earlier failures' error columns are cleared (they stay in the outbox history), and the
        # lease
        updates.append(
            {
                "b_id": claim.job_id,
                "b_owner": claim.owner,
                "b_token": claim.token,
                "v_state": target.value,
                "v_now": stored_now,
                "v_digest": committed,
            }
        )
        made = outcome.completion
        if made is None or claim.idempotency_key != key or committed != digest:
            made = _completed(claim.job_id, row["stage_id"], key, committed, stored_now)
        events.append(made)
        if output.degraded_reasons and row["attempt_id"]:
            events.append(
                event_row(
                    EventName.QUALITY_DEGRADED,
                    {
                        "attempt_id": row["attempt_id"],
                        "job_id": claim.job_id,
                        "reasons": list(output.degraded_reasons),
                    },
                )
            )
        views.append(
            JobView(
                id=claim.job_id,
                stage_id=row["stage_id"],
                state=target,
                attempt_id=row["attempt_id"],
                priority=row["priority"],
                attempts=row["attempts"],
                max_attempts=row["max_attempts"],
                progress=1.0,
                progress_message=row["progress_message"],
                idempotency_key=key,
                input_digests=list(claim.input_digests),
                supersedes_job_id=row["supersedes_job_id"],
                owner=None,
                lease_expires_at=None,
                next_attempt_at=from_db(row["next_attempt_at"]),
                error_code=None,
                error_message=None,
                output_digest=committed,
                cancel_requested=bool(row["cancel_requested"]),
                created_at=from_db(row["created_at"]) or now,
                updated_at=now,
            )
        )
    if new_outputs:
        tx.executemany(sql.insert_output, new_outputs)
    if incidents:
        tx.executemany(sql.insert_incident, incidents)
    if updates:
        changed = tx.executemany(sql.complete_job, updates)
        # cannot happen under the write lock; never commit half of it
        if changed != len(updates):
            raise LeaseLostError(
                f"{len(updates) - changed} job(s) changed hands inside the transaction"
            )
    insert_events(tx, events)
    return views, {v.id for v in views if v is not None and v.id in with_dependents}


def completion_event(
    claim: Claim, output: StageOutput, dialect: RawDialect
) -> dict[str, Any] | None:
    """The ``analysis.stage.completed`` row of a run whose output is the first under its key
    (the usual case).

    Made where the run ended, on a worker's thread, with the output's digest and
    canonical form computed there too, so the thread that commits (one for every
    worker, holding the write lock) has less to do per run. :meth:`FencedWrites.finish`
    makes the row again when it does not fit (an earlier output under the key).
    """
    if claim.idempotency_key is None:
        return None
    return _completed(
        claim.job_id,
        claim.stage_id,
        claim.idempotency_key,
        output.digest,
        dialect.to_db_datetime(utcnow()),
    )


def _completed(
    job_id: str, stage_id: str, key: str, output_digest: str, recorded_at: Any
) -> dict[str, Any]:
    """The ``analysis.stage.completed`` row of a job whose key's committed output has
    ``output_digest``."""
    return event_row(
        EventName.STAGE_COMPLETED,
        {
            "job_id": job_id,
            "stage_id": stage_id,
            "idempotency_key": key,
            "output_digest": output_digest,
        },
        recorded_at,
    )
