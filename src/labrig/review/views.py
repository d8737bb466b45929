"""What the Review and Results screens read about results and reviewers' revisions (no Qt here).

Every function opens its own read through the services, so it may run on any thread: the pages call
them on a pool thread. The revision service stays the authority on who may revise and on what a
revision does; these functions only shape what it returns for display. :class:`ReviewedResults` is
the one service both screens get.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from labrig.access import AccessControl
from labrig.capture.session_listing import (
    SessionQuery,
    SessionRow,
    count_sessions,
    read_sessions,
)
from labrig.domain.correction_syntax import Operation
from labrig.domain.roles import Action, RoleRequiredError
from labrig.errors import UsageError
from labrig.results import AttemptSummary, ResultDetail, load_result
from labrig.results.attempt_list import count_attempts, list_attempts
from labrig.results.search import AttemptQuery, Source, catalog_sources
from labrig.review.listing import ResultQuery, ResultStatusFilter
from labrig.review.reprocess import Reprocessed, ReprocessService
from labrig.review.reviewed import SignOffState
from labrig.review.revisions import FieldValue, ReviewedResult, RevisionService, RevisionView
from labrig.store.search import Tally

if TYPE_CHECKING:
    from labrig.review.player import ResultMedia

#: published results the Review screen lists on one page
REVIEW_PAGE = 200


@dataclass(frozen=True)
class ReviewListRow:
    """One published result in the Review list."""

    result_id: str
    attempt_id: str
    subject_code: str | None  # None when the attempt is older than the Results list reaches
    protocol: str | None
    attempt_number: int | None
    created_at: str  # ISO-8601, UTC
    degraded: bool
    revisions: int
    superseded: bool  # a reprocess published a newer result for the same attempt


@dataclass(frozen=True)
class ReviewerState:
    """The signed-in user, their role, and whether they may revise (with the service's
    words when not)."""

    user: str
    role: str | None
    enforced: bool  # False until an admin exists: everyone may revise
    refusal: str | None  # the access service's own message when revising is not allowed

    def describe(self) -> str:
        # while roles are not enforced the window says so on a banner of its own
        role = f"{self.role} role" if self.role else "no role"
        return f"Signed in as {self.user} ({role})."


@dataclass(frozen=True)
class RevisedValue:
    """One field a reviewer changed: the machine's value, the value in force, and who set
    it, when and why."""

    field: str
    automatic: float | None
    effective: float | None
    number: int  # the revision that set the effective value
    reviewer: str
    created_at: str  # ISO-8601, UTC
    reason: str

    def describe(self) -> str:
        """One line for a tooltip or the Last change column."""
        return (
            f"revision {self.number} by {self.reviewer}, "
            f"{local_time(self.created_at)}: {self.reason}"
        )


def local_time(iso: str) -> str:
    """A stored UTC time as the workstation's local minute."""
    try:
        return f"{datetime.fromisoformat(iso).astimezone():%Y-%m-%d %H:%M}"
    except ValueError:  # written by another version: show it as stored
        return iso


def head_of(reviewed: ReviewedResult) -> str:
    """What a new revision is made on: the latest revision,
    or the result itself when it has none."""
    return reviewed.revisions[-1].id if reviewed.revisions else reviewed.result_id


def read_review_list(
    revisions: RevisionService, query: ResultQuery | None = None
) -> list[ReviewListRow]:
    """A page of published results (``query``'s search and page; the newest :data:`REVIEW_PAGE`
    by default), newest first, with their subject and attempt: read through the date index."""
    return [
        ReviewListRow(
            result_id=summary.result_id,
            attempt_id=summary.attempt_id,
            subject_code=summary.subject_code,
            protocol=summary.protocol,
            attempt_number=summary.attempt_number,
            created_at=summary.created_at,
            degraded=summary.degraded,
            revisions=summary.revisions,
            superseded=summary.superseded,
        )
        for summary in revisions.results(query or published_page())
    ]


def published_page(
    search: str | None = None, offset: int = 0, since: datetime | None = None
) -> ResultQuery:
    """The Review screen's page of published results, newest first (made at or after ``since``)."""
    return ResultQuery(
        search=search,
        status=ResultStatusFilter.PUBLISHED,
        since=since,
        newest_first=True,
        limit=REVIEW_PAGE,
        offset=offset,
    )


def read_reviewer(access: AccessControl) -> ReviewerState:
    """Who is signed in and whether the access service lets them revise now."""
    roster = access.roster()
    role = next((u.role for u in roster.users if u.user == roster.current_user), None)
    try:
        access.require(Action.REVISE)
    except RoleRequiredError as refusal:
        return ReviewerState(roster.current_user, role, roster.enforced, refusal.message)
    return ReviewerState(roster.current_user, role, roster.enforced, None)


def revised_values(
    fields: Sequence[FieldValue], history: Sequence[RevisionView]
) -> dict[str, RevisedValue]:
    """The fields a revision set, by field name (``track:ID.metric``)."""
    by_number = {r.number: r for r in history}
    out = {}
    for field in fields:
        revision = by_number.get(field.revision) if field.revision is not None else None
        if revision is not None:
            out[field.field] = RevisedValue(
                field.field,
                field.automatic,
                field.effective,
                revision.number,
                revision.reviewer,
                revision.created_at,
                revision.reason,
            )
    return out


def read_revised(
    revisions: RevisionService, result_id: str | None
) -> tuple[dict[str, RevisedValue], SignOffState | None]:
    """The revised fields of ``result_id`` and its latest sign-off (none for no result)."""
    if result_id is None:
        return {}, None
    reviewed = revisions.show(result_id)
    return revised_values(reviewed.fields, reviewed.revisions), reviewed.sign_off


Shown = tuple[ResultDetail | None, dict[str, RevisedValue], SignOffState | None]


class ReviewedResults:
    """Results as the screens show them: every attempt with its result, a result with the values
    reviewers revised in it, the published results a reviewer may pick, who is signed in, and
    revising (through the revision service, which decides). Every call blocks on the store: call it
    off the GUI thread."""

    def __init__(
        self, revisions: RevisionService, reprocessing: ReprocessService | None = None
    ) -> None:
        self.revisions, self.reprocessing = revisions, reprocessing

    def attempts(self, query: AttemptQuery | None = None) -> list[AttemptSummary]:
        """The page of attempts ``query`` asks for (newest first) with the status of each one's
        result."""
        return list_attempts(self.revisions.store, query)

    def count_attempts(self, query: AttemptQuery | None = None) -> Tally:
        """How many attempts ``query`` finds, on every page."""
        return count_attempts(self.revisions.store, query)

    def sources(self) -> list[Source]:
        """The rigs and devices the catalog knows: what the attempts may be filtered by."""
        with self.revisions.store.read() as session:
            return catalog_sources(session)

    def sessions(self, query: SessionQuery) -> tuple[list[SessionRow], int]:
        """The page of capture sessions ``query`` asks for, each with its attempts counted, and
        how many sessions it finds on every page."""
        with self.revisions.store.read() as session:
            return read_sessions(session, query), count_sessions(session, query)

    def attempt_result(self, attempt_id: str) -> Shown:
        """The attempt's result (None when the attempt is gone), the values reviewers revised in
        it and its latest sign-off."""
        detail = load_result(self.revisions.store, attempt_id)
        result_id = (
            detail.summary.result_id if detail is not None and detail.document is not None else None
        )
        return detail, *read_revised(self.revisions, result_id)

    def published(self, query: ResultQuery | None = None) -> list[ReviewListRow]:
        """A page of published results, newest first (see :func:`read_review_list`)."""
        return read_review_list(self.revisions, query)

    def count(self, query: ResultQuery) -> Tally:
        """How many results ``query`` finds, on every page."""
        return self.revisions.count(query)

    def reviewer(self) -> ReviewerState:
        """Who is signed in and whether they may revise now."""
        return read_reviewer(self.revisions.access)

    def show(self, result_id: str) -> ReviewedResult:
        return self.revisions.show(result_id)

    def media(self, result_id: str) -> ResultMedia:
        """The cameras of the result's attempt and the tracks to draw over them, for the player."""
        from labrig.review.player import result_media  # the media readers: when a screen plays

        return result_media(self.revisions.store, self.revisions, result_id)

    def reprocess(self, result_id: str) -> Reprocessed:
        """Analyse the result's attempt again under the current calibrations (a new attempt)."""
        if self.reprocessing is None:
            raise UsageError("reprocessing is not offered here")
        return self.reprocessing.reprocess(result_id)

    def revise(
        self, result_id: str, values: dict[str, str], reason: str, base_id: str
    ) -> RevisionView:
        """A new revision of ``result_id`` made on ``base_id`` (refused when a newer one exists)."""
        return self.revisions.revise(result_id, values, reason, base_id=base_id)

    def correct(
        self, result_id: str, operations: Sequence[Operation], reason: str, base_id: str
    ) -> RevisionView:
        """Corrections of ``result_id``'s tracks made on ``base_id``, as one revision."""
        return self.revisions.correct(result_id, operations, reason, base_id=base_id)

    def undo(self, result_id: str, number: int, reason: str, base_id: str) -> RevisionView:
        """Revision ``number`` of ``result_id`` undone by a new one made on ``base_id``."""
        return self.revisions.undo(result_id, number, reason, base_id=base_id)

    def sign_off(self, result_id: str, meaning: str, note: str, base_id: str) -> RevisionView:
        """A sign-off of ``result_id``'s effective result as it stood at ``base_id``."""
        return self.revisions.sign_off(result_id, meaning, note, base_id=base_id)
