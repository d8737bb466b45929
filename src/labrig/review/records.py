"""Stored revisions read back: a result found by id or prefix, its revisions in order (each as a
:class:`RevisionView`), its automatic document checked against its digest, and the refusals of
the review package."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from labrig.domain.correction_syntax import Operation
from labrig.domain.idempotency import sha256_hex
from labrig.domain.revisions import Change
from labrig.errors import DatabaseCorruptError, LabrigError
from labrig.store.models import AnalysisResultRecord, ResultRevision


class UnknownResultError(LabrigError):
    code = "LABRIG_UNKNOWN_RESULT"


class ResultNotPublishedError(LabrigError):
    code = "LABRIG_RESULT_NOT_PUBLISHED"


class RevisionConflictError(LabrigError):
    code = "LABRIG_REVISION_CONFLICT"


class UnknownRevisionError(LabrigError):
    code = "LABRIG_UNKNOWN_REVISION"


class UndoRefusedError(LabrigError):
    code = "LABRIG_UNDO_REFUSED"


@dataclass(frozen=True)
class SignOff:
    """A reviewer's sign-off of the effective result: what it means and the digest of what it
    approved (:func:`labrig.review.effective.effective_digest`)."""

    meaning: str
    approved_digest: str

    def to_json(self) -> dict[str, Any]:
        return {"meaning": self.meaning, "approved_digest": self.approved_digest}


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
    operations: list[Operation] = field(default_factory=list)  # corrections of the tracked data
    sign_off: SignOff | None = None
    undoes: int | None = None  # the number of the revision it undoes

    @property
    def changes_data(self) -> bool:
        """Whether it changed a value or the tracks, or undid a revision that did (a sign-off
        alone does not)."""
        return bool(self.changes or self.operations or self.undoes is not None)

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
            operations=[Operation.of(o) for o in doc.get("operations", [])],
            sign_off=SignOff(**doc["sign_off"]) if doc.get("sign_off") else None,
            undoes=doc.get("undoes"),
        )

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self)) | {
            "changes": [c.to_json() for c in self.changes],
            "operations": [o.to_json() | {"text": o.describe()} for o in self.operations],
            "sign_off": self.sign_off.to_json() if self.sign_off else None,
        }


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


def history_of(session: Session, result_id: str) -> list[ResultRevision]:
    return list(
        session.scalars(
            select(ResultRevision)
            .where(ResultRevision.result_id == result_id)
            .order_by(ResultRevision.number)
        )
    )


def automatic_of(result: AnalysisResultRecord) -> dict[str, Any]:
    if sha256_hex(result.document.encode()) != result.digest:
        raise DatabaseCorruptError(
            f"the stored automatic document of result {result.id} no longer matches its "
            "digest; restore the database from a backup and report this"
        )
    return json.loads(result.document)  # type: ignore[no-any-return]


def in_force(history: Sequence[ResultRevision]) -> list[ResultRevision]:
    """The revisions of ``history`` that no later revision undid (an undo itself included: it
    changes nothing but is part of the record), in order."""
    undone = {json.loads(r.document).get("undoes") for r in history} - {None}
    return [r for r in history if r.number not in undone]
