"""Revisions: a reviewer's changes to a published result, stored beside it, never over it.

A revision names its base (the result, or the revision before it), lists each
changed metric with the value it replaced and the new one, and carries a reason,
the reviewer and the UTC time. It records ``review.revised`` and an audit entry
in the same transaction. The automatic result stays byte-identical (its row is
append-only in the database, and its digest is checked when it is read back);
the effective values are the automatic ones with every revision applied in order. A revision may
instead correct the tracked data (:meth:`RevisionService.correct`), whose values are then
recomputed (:mod:`labrig.review.effective`). The stored revisions are read back by
:mod:`labrig.review.records`; a result as a reviewer reads it is built by
:mod:`labrig.review.reviewed`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

from labrig.access import AccessControl
from labrig.domain.audit import require_reason
from labrig.domain.correction_syntax import (
    CorrectionRefusedError,
    CorrectionSyntaxError,
    Operation,
)
from labrig.domain.events import EventName
from labrig.domain.idempotency import canonical_json, sha256_hex
from labrig.domain.revisions import (
    SCHEMA,
    SCHEMA_CORRECTIONS,
    Change,
    FieldSyntaxError,
    NoChangeError,
    plan_changes,
    sign_off_meaning,
)
from labrig.domain.roles import Action
from labrig.events import record_audit, record_event
from labrig.review.listing import (
    EVERY_RESULT,
    ResultQuery,
    ResultSummary,
    count_results,
    list_results,
)
from labrig.review.records import (
    ResultNotPublishedError,
    RevisionConflictError,
    RevisionView,
    SignOff,
    UndoRefusedError,
    UnknownResultError,
    UnknownRevisionError,
    automatic_of,
    find_result,
    history_of,
    in_force,
)
from labrig.review.reviewed import (
    FieldValue,
    ReviewedResult,
    keep_sign_off,
    reviewed_in,
    sign_off_state,
)
from labrig.store import Store, utcnow
from labrig.store.models import AnalysisResultRecord, ResultRevision
from labrig.store.search import Tally

if TYPE_CHECKING:
    # numpy, the captures and calibrations: imported when a correction is first checked or
    # computed, so the window and the worker open without them
    from labrig.review.effective import EffectiveTracks, TrackedInput

__all__ = [
    "FieldValue",
    "ResultNotPublishedError",
    "ResultSummary",
    "ReviewedResult",
    "RevisionConflictError",
    "RevisionService",
    "RevisionView",
    "UnknownResultError",
    "find_result",
    "reviewed_in",
]


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
        return self._record(result_id, why, base_id, values, ())

    def correct(
        self,
        result_id: str,
        operations: Sequence[Operation],
        reason: str,
        *,
        base_id: str | None = None,
    ) -> RevisionView:
        """Record corrections of the result's tracked data (:mod:`labrig.domain.corrections`) as
        a revision → ``review.revised``; refused, with nothing stored, when one does not apply to
        the tracks as the revisions before it left them. ``base_id`` as for :meth:`revise`."""
        why = require_reason(reason, "a correction")
        if not operations:
            raise CorrectionSyntaxError(
                "a correction names at least one operation (--move, --occlude, --fill, --swap or "
                "--trim)"
            )
        return self._record(result_id, why, base_id, {}, operations)

    def sign_off(
        self, result_id: str, meaning: str, reason: str = "", *, base_id: str | None = None
    ) -> RevisionView:
        """Sign the effective result off as ``meaning`` (``reviewed`` or ``approved``): a revision
        that changes nothing and records who, when, the meaning and the digest of the effective
        result it approves (:func:`effective_digest`) → ``review.revised`` and the audit entry
        ``review.sign_off``. A later revision that changes a value or the tracks clears it.
        ``base_id`` as for :meth:`revise`: a sign-off of a view that is no longer current is
        refused."""
        said = sign_off_meaning(meaning)
        why = require_reason(reason or f"signed off as {said}", "a sign-off")
        return self._record(result_id, why, base_id, {}, (), sign_off=said)

    def undo(
        self, result_id: str, number: int, reason: str, *, base_id: str | None = None
    ) -> RevisionView:
        """Undo revision ``number`` by a new revision (nothing is deleted): its corrections and
        values stop counting in the effective result → ``review.revised`` and the audit entry
        ``review.undo``. Refused when there is no such revision, it was undone already, it is a
        sign-off or an undo, or a later correction needs it (undo that one first).
        ``base_id`` as for :meth:`revise`."""
        why = require_reason(reason, "an undo")
        return self._record(result_id, why, base_id, {}, (), undo=number)

    def _record(
        self,
        result_id: str,
        why: str,
        base_id: str | None,
        values: Mapping[str, Any],
        operations: Sequence[Operation],
        *,
        sign_off: str | None = None,
        undo: int | None = None,
    ) -> RevisionView:
        from labrig.review.effective import (
            effective_metrics,
            effective_tracks,
            operations_of,
            tracked_input,
        )

        with self.store.write() as session:
            actor = self.access.authorize(session, Action.SIGN_OFF if sign_off else Action.REVISE)
            result = find_result(session, result_id)
            if result.status != "published":
                raise ResultNotPublishedError(
                    f"result {result.id} is {result.status}: only published results can be "
                    "revised or signed off. Its analysis did not pass its quality gates; fix the "
                    "cause it names and reprocess the attempt"
                )
            history = history_of(session, result.id)
            head = history[-1].id if history else result.id
            if base_id is not None and base_id != head:
                raise RevisionConflictError(
                    f"result {result.id} was revised since you read it (latest is {head}, "
                    f"not {base_id}); look at 'labrig review show {result.id}' and retry"
                )
            automatic_of(result)  # a stored document that no longer matches its digest: refused
            changes: list[Change] = []
            approval: SignOff | None = None
            if sign_off:
                approval = self._approval(session, result, history, sign_off)
            elif undo is not None:
                self._check_undo(session, result, history, undo)
            elif operations:  # refused here, before anything is stored, if one does not apply
                done = operations_of(history)
                source = tracked_input(self.store, session, result)
                effective_tracks(source, [*done, *operations])
            else:
                effective = effective_metrics(self.store, session, result, history)
                changes = plan_changes(effective, values)
            row = self._add(
                session,
                result,
                head,
                len(history) + 1,
                actor.user,
                why,
                changes,
                operations,
                approval,
                undo,
            )
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
                "review.sign_off" if approval else "review.undo" if undo else "review.revise",
                "result",
                result.id,
                why,
                {
                    "revision_id": row.id,
                    "number": row.number,
                    "base_id": head,
                    "revision_digest": row.digest,
                    "changes": [c.to_json() for c in changes],
                }
                | ({"operations": [o.to_json() for o in operations]} if operations else {})
                | ({"sign_off": approval.to_json()} if approval else {})
                | ({"undoes": undo} if undo is not None else {}),
            )
            return RevisionView.of(row)

    def _check_undo(
        self,
        session: Session,
        result: AnalysisResultRecord,
        history: Sequence[ResultRevision],
        number: int,
    ) -> None:
        """Refuse undoing revision ``number`` when it cannot be (see :meth:`undo`)."""
        from labrig.review.effective import effective_tracks, operations_of, tracked_input

        views = {r.number: RevisionView.of(r) for r in history}
        target = views.get(number)
        if target is None:
            raise UnknownRevisionError(
                f"result {result.id} has no revision {number}; its revisions are 1 to "
                f"{len(history)} ('labrig review show {result.id[:12]}' lists them)"
            )
        later = next((v for v in views.values() if v.undoes == number), None)
        if later is not None:
            raise UndoRefusedError(
                f"revision {number} was undone already, by revision {later.number}"
            )
        if target.sign_off is not None:
            raise UndoRefusedError(
                f"revision {number} is a sign-off: a sign-off is not undone; a correction clears it"
            )
        if target.undoes is not None:
            raise UndoRefusedError(
                f"revision {number} is itself an undo: make the correction again instead"
            )
        kept = [r for r in in_force(history) if r.number != number]
        if target.operations:
            try:
                effective_tracks(tracked_input(self.store, session, result), operations_of(kept))
            except CorrectionRefusedError as refused:
                raise UndoRefusedError(
                    f"undoing revision {number} leaves a later correction that needs it: "
                    f"{refused.message}. Undo that one first"
                ) from refused

    def _approval(
        self,
        session: Session,
        result: AnalysisResultRecord,
        history: Sequence[ResultRevision],
        meaning: str,
    ) -> SignOff:
        """What a sign-off as ``meaning`` records; refused when the same sign-off is in force."""
        from labrig.review.effective import effective_digest, effective_metrics

        state = sign_off_state([RevisionView.of(r) for r in history])
        if state is not None and state.in_force and state.meaning == meaning:
            raise NoChangeError(
                f"result {result.id} is already signed off as {meaning}: "
                f"{state.describe()}; nothing changed since"
            )
        metrics = effective_metrics(self.store, session, result, history)
        return SignOff(meaning, effective_digest(result, metrics, history))

    @staticmethod
    def _add(
        session: Session,
        result: AnalysisResultRecord,
        base_id: str,
        number: int,
        reviewer: str,
        reason: str,
        changes: Sequence[Change],
        operations: Sequence[Operation] = (),
        sign_off: SignOff | None = None,
        undo: int | None = None,
    ) -> ResultRevision:
        revision_id, now = str(uuid.uuid4()), utcnow()
        document = {
            "schema": SCHEMA_CORRECTIONS if operations or sign_off or undo is not None else SCHEMA,
            "revision_id": revision_id,
            "result_id": result.id,
            "result_digest": result.digest,
            "base_id": base_id,
            "number": number,
            "reviewer": reviewer,
            "reason": reason,
            "created_at": now.isoformat(),
            "changes": [c.to_json() for c in changes],
        } | ({"operations": [o.to_json() for o in operations]} if operations else {})
        if sign_off is not None:
            document["sign_off"] = sign_off.to_json()
        if undo is not None:
            document["undoes"] = undo
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
        keep_sign_off(session, result)
        return row

    def effective(self, result_id: str) -> tuple[TrackedInput, EffectiveTracks]:
        """The result's automatic tracks (and what their kinematics were computed from), and its
        effective ones after every correction, with their kinematics."""
        from labrig.review.effective import effective_tracks, operations_of, tracked_input

        with self.store.read() as session:
            result = find_result(session, result_id)
            operations = operations_of(history_of(session, result.id))
            source = tracked_input(self.store, session, result)
        return source, effective_tracks(source, operations)

    def automatic_document(self, result_id: str) -> bytes:
        """The automatic result document exactly as published (its digest is checked)."""
        with self.store.read() as session:
            result = find_result(session, result_id)
        automatic_of(result)
        return result.document.encode()

    def show(self, result_id: str) -> ReviewedResult:
        """The automatic values beside the effective ones, and the revision history."""
        with self.store.read() as session:
            return reviewed_in(session, find_result(session, result_id), self.store)

    def results(self, query: ResultQuery = EVERY_RESULT) -> list[ResultSummary]:
        """The results ``query`` asks for (every one, oldest first, by default), each with its
        number of revisions."""
        return list_results(self.store, query)

    def count(self, query: ResultQuery = EVERY_RESULT) -> Tally:
        """How many results ``query`` finds, on every page."""
        return count_results(self.store, query)
