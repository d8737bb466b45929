"""A result as a reviewer reads it: its automatic values beside the values in force (the tracks as
corrected, then every value set by hand), and its revision history."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from labrig.domain.idempotency import sha256_hex
from labrig.domain.revisions import REVISABLE
from labrig.review.records import RevisionView, history_of
from labrig.store import Store
from labrig.store.models import AnalysisResultRecord, ResultSignOff


@dataclass(frozen=True)
class FieldValue:
    """One revisable metric: the machine's value, the value in force,
    and the revision that set it."""

    field: str
    automatic: float | None
    effective: float | None
    revision: int | None  # number of the revision that set the effective value (None: automatic)


@dataclass(frozen=True)
class SignOffState:
    """The latest sign-off of a result, and the revision that cleared it (one after it that
    changed a value or the tracks), if any."""

    number: int  # the sign-off's revision
    meaning: str
    reviewer: str
    created_at: str
    approved_digest: str
    cleared_by: int | None = None
    cleared_reviewer: str | None = None

    @property
    def in_force(self) -> bool:
        return self.cleared_by is None

    def describe(self) -> str:
        when = self.created_at[:16].replace("T", " ")
        said = f"{self.meaning} by {self.reviewer} at {when} UTC (revision {self.number})"
        if self.in_force:
            return said[0].upper() + said[1:]
        return (
            f"Sign-off cleared: {said}, then revision {self.cleared_by} by "
            f"{self.cleared_reviewer} changed the data; sign it off again"
        )

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self)) | {"in_force": self.in_force, "text": self.describe()}


def sign_off_state(revisions: Sequence[RevisionView]) -> SignOffState | None:
    """The latest sign-off in ``revisions`` and whether a later revision cleared it."""
    state: SignOffState | None = None
    for r in revisions:
        if r.sign_off is not None:
            state = SignOffState(
                r.number, r.sign_off.meaning, r.reviewer, r.created_at, r.sign_off.approved_digest
            )
        elif state is not None and state.in_force and r.changes_data:
            state = replace(state, cleared_by=r.number, cleared_reviewer=r.reviewer)
    return state


def keep_sign_off(session: Session, result: AnalysisResultRecord) -> None:
    """Write down whether ``result``'s latest sign-off is in force (``result_sign_offs``, what the
    "signed off" filters read), after a revision of it, in the revision's transaction."""
    state = sign_off_state([RevisionView.of(r) for r in history_of(session, result.id)])
    row = session.get(ResultSignOff, result.id)
    if state is None or not state.in_force:
        if row is not None:
            session.delete(row)
    elif row is None:
        session.add(
            ResultSignOff(
                result_id=result.id,
                attempt_id=result.attempt_id,
                meaning=state.meaning,
                number=state.number,
            )
        )
    else:
        row.meaning, row.number = state.meaning, state.number


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
    sign_off: SignOffState | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self)) | {
            "fields": [vars(f) for f in self.fields],
            "revisions": [r.to_json() for r in self.revisions],
            "sign_off": self.sign_off.to_json() if self.sign_off else None,
        }


def reviewed_in(
    session: Session, result: AnalysisResultRecord, store: Store | None = None
) -> ReviewedResult:
    """``result`` with its history and effective values, read in ``session`` (so in one snapshot
    with whatever else the caller reads there, e.g. an export's audit chain head). With ``store``
    (where its media and calibrations are), the values of tracks a reviewer corrected are
    recomputed from them; without, a correction's values read as the automatic ones."""
    history = history_of(session, result.id)
    revisions = [RevisionView.of(r) for r in history]
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
    from labrig.review.effective import corrected_metrics  # numpy: when a result is shown

    corrected: tuple[Sequence[Mapping[str, Any]], int | None] = (
        corrected_metrics(store, session, result, history)
        if store is not None
        else (document.get("metrics") or [], None)
    )
    return ReviewedResult(
        result_id=result.id,
        attempt_id=result.attempt_id,
        status=result.status,
        degraded=result.degraded,
        units=document.get("units"),
        automatic_digest=result.digest,
        automatic_intact=sha256_hex(result.document.encode()) == result.digest,
        superseded_by=newer,
        fields=_field_values(document.get("metrics") or [], corrected, revisions),
        revisions=revisions,
        sign_off=sign_off_state(revisions),
    )


def _field_values(
    metrics: Sequence[Mapping[str, Any]],
    corrected: tuple[Sequence[Mapping[str, Any]], int | None],
    revisions: Sequence[RevisionView],
) -> list[FieldValue]:
    """Each revisable metric: automatic, in force, and the revision that set it (a value set by
    hand, or else the last correction of the tracks when it changed the value)."""
    set_by: dict[str, tuple[float, int]] = {}
    undone = {r.undoes for r in revisions if r.undoes is not None}
    for revision in revisions:
        if revision.number in undone:
            continue
        for change in revision.changes:
            set_by[change.field] = (change.new, revision.number)
    recomputed, corrected_by = corrected
    by_track = {str(t.get("track_id")): t for t in recomputed}
    out = []
    for track in metrics:
        now = by_track.get(str(track.get("track_id")), {})
        for metric in REVISABLE:
            key = f"track:{track.get('track_id')}.{metric}"
            automatic = track.get(metric)
            base = now.get(metric)
            number = corrected_by if corrected_by is not None and base != automatic else None
            effective, number = set_by.get(key, (base, number))
            out.append(FieldValue(key, automatic, effective, number))
    return out
