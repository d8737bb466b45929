"""Results as the review list shows them, a page at a time: each with its status, number of
revisions, whether a reprocess superseded it and whether the calibration it was made under changed
since, found by subject, protocol, operator or id and filtered by status and review.

A page is one query served by indexes (``ix_analysis_results_created_at`` for the order, the
revisions' and results' own keys for the counts), so it costs the same on a catalog of 100,000
attempts as on one of ten; only the page's rows are read, and the calibration flags are worked out
for those rows alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, exists, func, or_, select, union
from sqlalchemy.orm import Session, aliased

from labrig.results.flags import CalibrationFlags, used_calibrations
from labrig.results.search import matching_attempts
from labrig.store import Store
from labrig.store.models import (
    AnalysisResultRecord,
    Attempt,
    CaptureSession,
    Job,
    ResultRevision,
)
from labrig.store.search import check_page, id_like, search_words, starts_with, unindexed

R = AnalysisResultRecord


class ResultStatusFilter(StrEnum):
    PUBLISHED = "published"  # published, degraded or not
    DEGRADED = "degraded"  # published with limitations
    BLOCKED = "blocked"


class ReviewFilter(StrEnum):
    REVISED = "revised"  # at least one revision
    UNREVISED = "unrevised"


@dataclass(frozen=True)
class ResultQuery:
    """Which results, in which order, which page. Each criterion given must hold.

    ``search``: the start of a subject code, protocol or operator (letter case ignored), or of a
    result or attempt id. ``since``/``until``: when the result was made, ``until`` excluded.
    """

    search: str | None = None
    status: ResultStatusFilter | None = None
    review: ReviewFilter | None = None
    since: datetime | None = None
    until: datetime | None = None
    newest_first: bool = False
    limit: int | None = None
    offset: int = 0

    def __post_init__(self) -> None:
        check_page(self.limit, self.offset)


#: every result, oldest first, on one page
EVERY_RESULT = ResultQuery()


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
    subject_code: str | None = None
    protocol: str | None = None
    operator: str | None = None
    attempt_number: int | None = None


def list_results(store: Store, query: ResultQuery = EVERY_RESULT) -> list[ResultSummary]:
    """The page of results ``query`` asks for (every result, oldest first, by default)."""
    newer = aliased(R)
    revisions = select(func.count()).where(ResultRevision.result_id == R.id).scalar_subquery()
    superseded = exists().where(
        newer.attempt_id == R.attempt_id,
        or_(
            newer.created_at > R.created_at, and_(newer.created_at == R.created_at, newer.id > R.id)
        ),
    )
    order = (R.created_at.desc(), R.id.desc()) if query.newest_first else (R.created_at, R.id)
    statement: Select[Any] = select(
        R.id,
        R.attempt_id,
        R.status,
        R.degraded,
        R.created_at,
        revisions,
        superseded,
        CaptureSession.subject_code,
        CaptureSession.protocol,
        CaptureSession.operator,
        Attempt.number,
    ).order_by(*order)
    if query.limit is not None or query.offset:
        # the page's ids first, from the index of the results' dates (what a deep offset passes
        # over is read there, not joined nor counted), then the page's rows
        page = _filtered(select(R.id), query, joined=False).order_by(*order).offset(query.offset)
        if query.limit is not None:
            page = page.limit(query.limit)
        statement = _joined(statement.select_from(R)).where(R.id.in_(page.scalar_subquery()))
    else:
        statement = _filtered(statement, query)
    with store.read() as session:
        rows = session.execute(statement).all()
        configs = _tracking_configs(session, [row[1] for row in rows])
    flags = CalibrationFlags(store)

    def flagged(attempt_id: str, status: str) -> tuple[str, ...]:
        if status != "published":
            return ()
        used = used_calibrations(configs.get(attempt_id, []))
        return tuple(f.reason for f in flags.of_ids(*used))

    return [
        ResultSummary(
            result_id,
            attempt_id,
            status,
            degraded,
            created_at.isoformat(),
            count or 0,
            bool(newer_exists),
            flagged(attempt_id, status),
            subject,
            protocol,
            operator,
            number,
        )
        for (
            result_id,
            attempt_id,
            status,
            degraded,
            created_at,
            count,
            newer_exists,
            subject,
            protocol,
            operator,
            number,
        ) in rows
    ]


def count_results(store: Store, query: ResultQuery = EVERY_RESULT) -> int:
    """How many results ``query`` finds, on every page."""
    with store.read() as session:
        # every result has one attempt of one session (foreign keys, not null), and a search
        # finds result ids: the count need not join them
        return int(session.scalar(_filtered(select(func.count()), query, joined=False)) or 0)


def _filtered(statement: Select[Any], query: ResultQuery, *, joined: bool = True) -> Select[Any]:
    """``statement`` over results (``joined``: joined to their attempt and session), with
    ``query``'s criteria."""
    statement = _joined(statement.select_from(R)) if joined else statement.select_from(R)
    if (text := search_words(query.search)) is not None:
        statement = statement.where(_matches(text))
    if query.status is ResultStatusFilter.PUBLISHED:
        statement = statement.where(R.status == "published")
    elif query.status is ResultStatusFilter.DEGRADED:
        statement = statement.where(R.status == "published", R.degraded.is_(True))
    elif query.status is ResultStatusFilter.BLOCKED:
        statement = statement.where(R.status == "blocked")
    revised = exists().where(ResultRevision.result_id == R.id)
    if query.review is ReviewFilter.REVISED:
        statement = statement.where(revised)
    elif query.review is ReviewFilter.UNREVISED:
        statement = statement.where(~revised)
    if query.since is not None:
        statement = statement.where(R.created_at >= query.since)
    if query.until is not None:
        statement = statement.where(R.created_at < query.until)
    return statement


def _joined(statement: Select[Any]) -> Select[Any]:
    """``statement`` over results joined to their attempt and its session."""
    return statement.join(Attempt, Attempt.id == R.attempt_id).join(
        CaptureSession, CaptureSession.id == Attempt.session_id
    )


def _matches(text: str) -> ColumnElement[bool]:
    """A result whose subject code, protocol or operator starts with ``text`` (letter case
    ignored), or whose id or attempt's id does: the ids of the results found
    (:mod:`labrig.results.search`), so a search reads what it finds, not the 100,000 results
    (whose documents are most of the catalog)."""
    found = [select(R.id).where(R.attempt_id.in_(matching_attempts(text)))]
    if id_like(text):
        found.append(select(R.id).where(starts_with(R.id, text.lower())))
    return R.id.in_(union(*found))


def _tracking_configs(session: Session, attempt_ids: list[str]) -> dict[str, list[str]]:
    """The tracking jobs' configurations of these attempts (which calibration each used)."""
    configs: dict[str, list[str]] = {}
    if not attempt_ids:
        return configs
    for attempt_id, config in session.execute(
        select(Job.attempt_id, Job.config).where(
            Job.attempt_id.in_(attempt_ids),
            # by the attempts' index (10 jobs each), not the stage's (a fifth of every job)
            unindexed(Job.stage_id).in_(("tracking.markers", "tracking.rig")),
        )
    ):
        configs.setdefault(attempt_id or "", []).append(config or "{}")
    return configs
