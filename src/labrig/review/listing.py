"""Results as the review list shows them, a page at a time: each with its status, number of
revisions, whether a reprocess superseded it and whether the calibration it was made under changed
since, found by subject, protocol, operator or id and filtered by status and review.

A page is one query served by indexes (``ix_analysis_results_created_at`` for the order, the
revisions' and results' own keys for the counts), so it costs the same on a catalog of 100,000
attempts as on one of ten; only the page's rows are read, and the calibration flags are worked out
for those rows alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    UnaryExpression,
    and_,
    exists,
    func,
    or_,
    select,
    union,
)
from sqlalchemy.orm import Session, aliased

from labrig.errors import UsageError
from labrig.results.flags import CalibrationFlags, used_calibrations
from labrig.results.reading import (
    from_sessions,
    in_session_order,
)
from labrig.results.search import (
    AttemptSort,
    Source,
    few_matched,
    matched_each,
    matching_attempts,
    recorded_by,
)
from labrig.results.search import (
    ReviewFilter as ReviewFilter,  # the review list's filter too
)
from labrig.store import Store
from labrig.store.models import (
    AnalysisResultRecord,
    Attempt,
    CaptureSession,
    Job,
    ResultRevision,
    ResultSignOff,
)
from labrig.store.search import (
    COUNT_AHEAD,
    Tally,
    among,
    bounded_count,
    check_page,
    id_like,
    search_words,
    starts_with,
    unindexed,
)

R = AnalysisResultRecord


class ResultStatusFilter(StrEnum):
    PUBLISHED = "published"  # published, degraded or not
    DEGRADED = "degraded"  # published with limitations
    BLOCKED = "blocked"


#: the orders a page of results may be read in (their attempt's number is not one)
RESULT_SORTS = (AttemptSort.RECORDED, AttemptSort.SUBJECT, AttemptSort.PROTOCOL, AttemptSort.STATUS)


@dataclass(frozen=True)
class ResultQuery:
    """Which results, in which order, which page. Each criterion given must hold.

    ``search``: the start of a subject code, protocol or operator (letter case ignored), or of a
    result or attempt id. ``since``/``until``: when the result was made, ``until`` excluded.
    ``source``: results of the attempts of a device or a rig. ``sort``: by when the result was
    made (:attr:`AttemptSort.RECORDED`), its subject, protocol or status, each then by date;
    ``newest_first``: in reverse (newest, Z, published first).
    """

    search: str | None = None
    status: ResultStatusFilter | None = None
    review: ReviewFilter | None = None
    since: datetime | None = None
    until: datetime | None = None
    newest_first: bool = False
    limit: int | None = None
    offset: int = 0
    sort: AttemptSort = AttemptSort.RECORDED
    source: Source | None = None

    def __post_init__(self) -> None:
        check_page(self.limit, self.offset)
        if self.sort not in RESULT_SORTS:
            raise UsageError(f"results cannot be sorted by {self.sort}")


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
    order = result_order(query.sort, query.newest_first)
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
    with store.read() as session:
        many = not few_matched(session, query.search)
        if query.limit is not None or query.offset:
            # the page's ids first, from the index of the results' dates (what a deep offset
            # passes over is read there, not joined nor counted), then the page's rows
            page = _ordered_ids(query, many).order_by(*order).offset(query.offset)
            if query.limit is not None:
                page = page.limit(query.limit)
            statement = _joined(statement.select_from(R)).where(R.id.in_(page.scalar_subquery()))
        else:
            statement = _filtered(statement, query, many=many)
        rows = session.execute(statement).all()
        configs = _tracking_configs(session, [row[1] for row in rows])
    flags = CalibrationFlags(store)
    used = {a: used_calibrations(c) for a, c in configs.items()}
    flags.prefetch(used.values())

    def flagged(attempt_id: str, status: str) -> tuple[str, ...]:
        if status != "published":
            return ()
        return tuple(f.reason for f in flags.of_ids(*used.get(attempt_id, (None, None))))

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


def count_results(
    store: Store, query: ResultQuery = EVERY_RESULT, ahead: int = COUNT_AHEAD
) -> Tally:
    """How many results ``query`` finds, on every page, counted up to ``ahead`` past the page's
    start."""
    with store.read() as session:
        text = search_words(query.search)
        if text is not None and not id_like(text) and store.dialect == "sqlite":
            # a word's results counted from its sessions on, session by session: the count
            # stops at its bound whatever share of the catalog the word finds (SQLite gathered
            # the 33,000 attempts of 's00' first: 92 ms, against 11; PostgreSQL's planner, which
            # knows how many sessions a word matches, chooses better itself: 15 ms against 26)
            found = _criteria(
                _from_sessions(select(R.id), text), replace(query, search=None), counting=True
            )
        else:
            # every result has one attempt of one session (foreign keys, not null), and a
            # search finds result ids: the count need not join them
            found = _filtered(select(R.id), query, joined=False, counting=True)
        return bounded_count(session, found, query.offset + ahead)


def _from_sessions(statement: Select[Any], text: str) -> Select[Any]:
    """``statement`` over the results of the sessions ``text`` matches, read from the sessions
    (:func:`~labrig.results.reading.from_sessions`)."""
    return from_sessions(statement, text).join(R, R.attempt_id == Attempt.id)


def result_order(sort: AttemptSort, descending: bool) -> list[UnaryExpression[Any]]:
    """The ORDER BY of a page of results (joined to their attempt and session when sorted by a
    session's column), every key in one direction, so that an index read either way gives it."""
    by: dict[AttemptSort, list[Any]] = {
        AttemptSort.RECORDED: [],
        AttemptSort.SUBJECT: [CaptureSession.subject_code, CaptureSession.id, Attempt.id],
        AttemptSort.PROTOCOL: [CaptureSession.protocol, CaptureSession.id, Attempt.id],
        AttemptSort.STATUS: [R.status, R.degraded],
    }
    keys = [*by[sort]]
    keys += [R.created_at, R.id]
    return [k.desc() if descending else k.asc() for k in keys]


def _ordered_ids(query: ResultQuery, many: bool = False) -> Select[Any]:
    """The ids of ``query``'s results, to be put in its order: joined to their session (through
    its index, session by session, on SQLite) when sorted by a session's column. ``many``: its
    search finds many attempts (:func:`~labrig.results.search.few_matched`)."""
    if query.sort not in (AttemptSort.SUBJECT, AttemptSort.PROTOCOL):
        return _filtered(select(R.id), query, joined=False, many=many)
    by_session = in_session_order(
        select(R.id), query.sort, search_words(query.search) is not None, attempts_joined=False
    ).join(R, R.attempt_id == Attempt.id)
    return _criteria(by_session, query, many)


def _filtered(
    statement: Select[Any],
    query: ResultQuery,
    *,
    joined: bool = True,
    many: bool = False,
    counting: bool = False,
) -> Select[Any]:
    """``statement`` over results (``joined``: joined to their attempt and session), with
    ``query``'s criteria (``counting``: for a count, :func:`_criteria`)."""
    statement = _joined(statement.select_from(R)) if joined else statement.select_from(R)
    return _criteria(statement, query, many, counting=counting)


def _criteria(
    statement: Select[Any], query: ResultQuery, many: bool = False, *, counting: bool = False
) -> Select[Any]:
    """``statement`` (over results) with ``query``'s criteria; ``many``: its search finds many
    attempts, and is tested on each result read, in the page's order. ``counting``: for a count,
    which gathers the signed-off results from their own rows, a few in a hundred (SQLite tested
    each of the 100k catalog's results for its 2,771: 40 ms, against 2.4), where a page finds its
    few among the first results read in its order (gathering them and sorting: 14 ms, against 5)."""
    if (text := search_words(query.search)) is not None:
        statement = statement.where(_matched_each(text) if many else _matches(text))
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
    elif query.review is ReviewFilter.SIGNED_OFF and counting:
        statement = statement.where(R.id.in_(select(ResultSignOff.result_id)))
    elif query.review is ReviewFilter.SIGNED_OFF:
        statement = statement.where(exists().where(ResultSignOff.result_id == R.id))
    if query.since is not None:
        statement = statement.where(R.created_at >= query.since)
    if query.until is not None:
        statement = statement.where(R.created_at < query.until)
    if query.source is not None:
        statement = statement.where(R.attempt_id.in_(recorded_by(query.source)))
    return statement


def _joined(statement: Select[Any]) -> Select[Any]:
    """``statement`` over results joined to their attempt and its session."""
    return statement.join(Attempt, Attempt.id == R.attempt_id).join(
        CaptureSession, CaptureSession.id == Attempt.session_id
    )


def _matches(text: str) -> ColumnElement[bool]:
    """A result whose subject code, protocol or operator starts with ``text`` (letter case
    ignored), or whose id or attempt's id does: the results of the attempts found
    (:mod:`labrig.results.search`), so a search reads what it finds, not the 100,000 results
    (whose documents are most of the catalog). Only a text that could be an id also looks among
    the results' ids, in a union; a word's results are read by their attempts' index, so that a
    count can stop (a union is collected whole before it)."""
    by_attempt = R.attempt_id.in_(matching_attempts(text))
    if not id_like(text):  # a word (a subject, a protocol): no result id starts with it
        return by_attempt
    found = [select(R.id).where(by_attempt), select(R.id).where(starts_with(R.id, text.lower()))]
    return R.id.in_(union(*found))


def _matched_each(text: str) -> ColumnElement[bool]:
    """:func:`_matches` looked up from the result at hand: its attempt's session (or id), or its
    own id (SQLite gathered the 33,000 attempts of 's00' and sorted their results: 320 ms)."""
    by_attempt = exists(
        # the result at hand's attempt, whether or not the attempts are joined too
        select(Attempt.id).where(Attempt.id == R.attempt_id, matched_each(text)).correlate(R)
    )
    return or_(by_attempt, starts_with(R.id, text.lower())) if id_like(text) else by_attempt


def _tracking_configs(session: Session, attempt_ids: list[str]) -> dict[str, list[str]]:
    """The tracking jobs' configurations of these attempts (which calibration each used)."""
    configs: dict[str, list[str]] = {}
    if not attempt_ids:
        return configs
    for attempt_id, config in session.execute(
        select(Job.attempt_id, Job.config).where(
            among(Job.attempt_id, attempt_ids),
            # by the attempts' index (10 jobs each), not the stage's (a fifth of every job)
            unindexed(Job.stage_id).in_(("tracking.markers", "tracking.rig")),
        )
    ):
        configs.setdefault(attempt_id or "", []).append(config or "{}")
    return configs
