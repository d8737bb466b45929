"""Revisions: a reviewer's changes to a published result, stored beside it, never over it.

A revision names its base (the result, or the revision before it), lists each
changed metric with the value it replaced and the new one, and carries a reason,
the reviewer and the UTC time. It records ``review.revised`` and an audit entry
in the same transaction. The automatic result stays byte-identical (its row is
append-only in the database, and its digest is checked when it is read back);
the effective values are the automatic ones with every revision applied in order.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from labrig.access import AccessControl
from labrig.domain.audit import require_reason
from labrig.domain.events import EventName
from labrig.domain.idempotency import canonical_json, sha256_hex
from labrig.domain.revisions import (
    REVISABLE,
    SCHEMA,
    Change,
    FieldSyntaxError,
    apply_changes,
    plan_changes,
)
from labrig.domain.roles import Action
from labrig.errors import DatabaseCorruptError, LabrigError
from labrig.events import record_audit, record_event
from labrig.results import CalibrationFlags, used_calibrations
from labrig.store import Store, utcnow
from labrig.store.models import AnalysisResultRecord, Job, ResultRevision


class UnknownResultError(LabrigError):
    code = "LABRIG_UNKNOWN_RESULT"


class ResultNotPublishedError(LabrigError):
    code = "LABRIG_RESULT_NOT_PUBLISHED"


class RevisionConflictError(LabrigError):
    code = "LABRIG_REVISION_CONFLICT"


@dataclass(frozen=True)
class RevisionView:
    id: str
    result_id: str
    number: int
    base_id: str
    reviewer: str
    reason: str
    created_at: str
    changes: list[Change]
    digest: str

    @classmethod
    def of(cls, row: ResultRevision) -> RevisionView:
        doc = json.loads(row.document)
        return cls(
            id=row.id,
            result_id=row.result_id,
            number=row.number,
            base_id=row.base_id,
            reviewer=row.reviewer,
            reason=row.reason,
            created_at=doc["created_at"],
            changes=[Change.of(c) for c in doc["changes"]],
            digest=row.digest,
        )

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self)) | {"changes": [c.to_json() for c in self.changes]}


@dataclass(frozen=True)
class FieldValue:
    """One revisable metric: the machine's value, the value in force,
    and the revision that set it."""

    field: str
    automatic: float | None
    effective: float | None
    revision: int | None  # number of the revision that set the effective value (None: automatic)


@dataclass(frozen=True)
class ReviewedResult:
    result_id: str
    attempt_id: str
    status: str
    degraded: bool
    units: dict[str, str] | None
    automatic_digest: str  # SHA-256 of the automatic document, as published
    automatic_intact: bool  # the stored automatic document still hashes to that digest
    superseded_by: str | None  # a newer result of the same attempt (after a reprocess), if any
    fields: list[FieldValue]
    revisions: list[RevisionView]

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self)) | {
            "fields": [vars(f) for f in self.fields],
            "revisions": [r.to_json() for r in self.revisions],
        }


@dataclass(frozen=True)
class ResultSummary:
    result_id: str
    attempt_id: str
    status: str
    degraded: bool
    created_at: str
    revisions: int
    superseded: bool
    # its calibration changed since (superseded, or the rig's cameras changed): why, one each
    flags: tuple[str, ...] = ()


def find_result(session: Session, ref: str) -> AnalysisResultRecord:
    """A result by id or by a unique prefix of at least 4 characters; else
    :class:`UnknownResultError`."""
    ref = ref.strip()
    row = session.get(AnalysisResultRecord, ref) if ref else None
    if row is not None:
        return row
    rows = (
        list(
            session.scalars(
                select(AnalysisResultRecord)
                .where(AnalysisResultRecord.id.startswith(ref, autoescape=True))
                .limit(2)
            )
        )
        if len(ref) >= 4
        else []
    )
    if len(rows) == 1:
        return rows[0]
    why = "matches several results; give more of its id" if rows else "is not the id of a result"
    raise UnknownResultError(f"'{ref}' {why}. List results with 'labrig review list'")


def _history(session: Session, result_id: str) -> list[ResultRevision]:
    return list(
        session.scalars(
            select(ResultRevision)
            .where(ResultRevision.result_id == result_id)
            .order_by(ResultRevision.number)
        )
    )


def _automatic(result: AnalysisResultRecord) -> dict[str, Any]:
    if sha256_hex(result.document.encode()) != result.digest:
        raise DatabaseCorruptError(
            f"the stored automatic document of result {result.id} no longer matches its "
            "digest; restore the database from a backup and report this"
        )
    return json.loads(result.document)  # type: ignore[no-any-return]


class RevisionService:
    """Revising published results and reading them back with their history."""

    def __init__(self, store: Store, access: AccessControl) -> None:
        self.store, self.access = store, access

    def revise(
        self, result_id: str, values: Mapping[str, Any], reason: str, *, base_id: str | None = None
    ) -> RevisionView:
        """Record a revision of ``values`` (``track:ID.metric`` → number) → ``review.revised``.

        ``base_id``, when given, must be the latest revision (or the result itself when
        it has none): a reviewer who read an older state is refused instead of silently
        overriding a colleague's revision.
        """
        why = require_reason(reason, "a revision")
        if not values:
            raise FieldSyntaxError(
                "a revision changes at least one field (--set track:ID.metric=VALUE)"
            )
        with self.store.write() as session:
            actor = self.access.authorize(session, Action.REVISE)
            result = find_result(session, result_id)
            if result.status != "published":
                raise ResultNotPublishedError(
                    f"result {result.id} is {result.status}: only published results can be "
                    "revised. Its analysis did not pass its quality gates; fix the cause it names "
                    "and reprocess the attempt"
                )
            history = _history(session, result.id)
            head = history[-1].id if history else result.id
            if base_id is not None and base_id != head:
                raise RevisionConflictError(
                    f"result {result.id} was revised since you read it (latest is {head}, "
                    f"not {base_id}); look at 'labrig review show {result.id}' and retry"
                )
            effective = self._effective(_automatic(result), history)
            changes = plan_changes(effective, values)
            row = self._add(session, result, head, len(history) + 1, actor.user, why, changes)
            record_event(
                session,
                EventName.REVIEW_REVISED,
                {
                    "revision_id": row.id,
                    "result_id": result.id,
                    "reviewer": actor.user,
                    "reason": why,
                },
            )
            record_audit(
                session,
                actor,
                "review.revise",
                "result",
                result.id,
                why,
                {
                    "revision_id": row.id,
                    "number": row.number,
                    "base_id": head,
                    "revision_digest": row.digest,
                    "changes": [c.to_json() for c in changes],
                },
            )
            return RevisionView.of(row)

    @staticmethod
    def _add(
        session: Session,
        result: AnalysisResultRecord,
        base_id: str,
        number: int,
        reviewer: str,
        reason: str,
        changes: Sequence[Change],
    ) -> ResultRevision:
        revision_id, now = str(uuid.uuid4()), utcnow()
        document = {
            "schema": SCHEMA,
            "revision_id": revision_id,
            "result_id": result.id,
            "result_digest": result.digest,
            "base_id": base_id,
            "number": number,
            "reviewer": reviewer,
            "reason": reason,
            "created_at": now.isoformat(),
            "changes": [c.to_json() for c in changes],
        }
        body = canonical_json(document)
        row = ResultRevision(
            id=revision_id,
            result_id=result.id,
            number=number,
            base_id=base_id,
            reviewer=reviewer,
            reason=reason,
            document=body.decode(),
            digest=sha256_hex(body),
            created_at=now,
        )
        session.add(row)
        session.flush()
        return row

    @staticmethod
    def _effective(
        document: Mapping[str, Any], history: Sequence[ResultRevision]
    ) -> list[dict[str, Any]]:
        metrics = list(document.get("metrics") or [])
        for revision in history:
            metrics = apply_changes(metrics, RevisionView.of(revision).changes)
        return metrics

    def automatic_document(self, result_id: str) -> bytes:
        """The automatic result document exactly as published (its digest is checked)."""
        with self.store.read() as session:
            result = find_result(session, result_id)
        _automatic(result)
        return result.document.encode()

    def show(self, result_id: str) -> ReviewedResult:
        """The automatic values beside the effective ones, and the revision history."""
        with self.store.read() as session:
            return reviewed_in(session, find_result(session, result_id))

    def results(self) -> list[ResultSummary]:
        """Every result, oldest first, with its number of revisions."""
        with self.store.read() as session:
            counts = {
                result_id: n
                for result_id, n in session.execute(
                    select(ResultRevision.result_id, func.count()).group_by(
                        ResultRevision.result_id
                    )
                )
            }
            rows = list(
                session.scalars(
                    select(AnalysisResultRecord).order_by(AnalysisResultRecord.created_at)
                )
            )
            configs: dict[str, list[str]] = {}
            for attempt_id, config in session.execute(
                select(Job.attempt_id, Job.config).where(
                    Job.stage_id.in_(("tracking.markers", "tracking.rig"))
                )
            ):
                configs.setdefault(attempt_id or "", []).append(config or "{}")
        latest = {r.attempt_id: r.id for r in rows}
        flags = CalibrationFlags(self.store)

        def flagged(r: AnalysisResultRecord) -> tuple[str, ...]:
            if r.status != "published":
                return ()
            used = used_calibrations(configs.get(r.attempt_id, []))
            return tuple(f.reason for f in flags.of_ids(*used))

        return [
            ResultSummary(
                r.id,
                r.attempt_id,
                r.status,
                r.degraded,
                r.created_at.isoformat(),
                counts.get(r.id, 0),
                latest[r.attempt_id] != r.id,
                flagged(r),
            )
            for r in rows
        ]


def reviewed_in(session: Session, result: AnalysisResultRecord) -> ReviewedResult:
    """``result`` with its history and effective values, read in ``session`` (so in one snapshot
    with whatever else the caller reads there, e.g. an export's audit chain head)."""
    revisions = [RevisionView.of(r) for r in _history(session, result.id)]
    newer = session.scalar(
        select(AnalysisResultRecord.id)
        .where(
            AnalysisResultRecord.attempt_id == result.attempt_id,
            AnalysisResultRecord.created_at > result.created_at,
        )
        .order_by(AnalysisResultRecord.created_at.desc())
        .limit(1)
    )
    document = json.loads(result.document)
    return ReviewedResult(
        result_id=result.id,
        attempt_id=result.attempt_id,
        status=result.status,
        degraded=result.degraded,
        units=document.get("units"),
        automatic_digest=result.digest,
        automatic_intact=sha256_hex(result.document.encode()) == result.digest,
        superseded_by=newer,
        fields=_field_values(document.get("metrics") or [], revisions),
        revisions=revisions,
    )


def _field_values(
    metrics: Sequence[Mapping[str, Any]], revisions: Sequence[RevisionView]
) -> list[FieldValue]:
    set_by: dict[str, tuple[float, int]] = {}
    for revision in revisions:
        for change in revision.changes:
            set_by[change.field] = (change.new, revision.number)
    out = []
    for track in metrics:
        for metric in REVISABLE:
            key = f"track:{track.get('track_id')}.{metric}"
            automatic = track.get(metric)
            effective, number = set_by.get(key, (automatic, None))
            out.append(FieldValue(key, automatic, effective, number))
    return out
