"""What a technician types to find attempts and results: the start of a subject code, protocol or
operator (any letter case), or of an attempt's or result's id. Qt-free.

Each search is written as the ids of what it finds, never as a condition on every row: the
sessions' words are matched in the sessions table (one row for ten attempts or so) and reach the
attempts through their index, and an id prefix is a range of the id's index. So a search on a
catalog of 100,000 attempts reads what it finds, not the catalog (plans pinned by tests).

A page of attempts is sorted and filtered in its query, each order read from an index in its order
(migration 0023): by date, attempt number or result status from the attempts' own indexes; by
subject code or protocol from the sessions' index, session by session, each session's attempts from
theirs. A filter is a condition on the rows read in that order, or (a device's or a rig's) the ids
its own index gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    ColumnElement,
    CompoundSelect,
    Select,
    UnaryExpression,
    exists,
    select,
    union,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Session
from sqlalchemy.sql.selectable import Join

from labrig.capture.session_listing import session_matches
from labrig.errors import UsageError
from labrig.store.models import (
    AnalysisResultRecord,
    Attempt,
    AttemptCapture,
    Capture,
    CaptureSession,
    DeviceRecord,
    ResultRevision,
    ResultSignOff,
    RigRecord,
    RigRecording,
)
from labrig.store.search import (
    bounded_count,
    check_page,
    id_like,
    probed_in,
    search_words,
    starts_with,
)


def matching_attempts(text: str) -> Select[Any] | CompoundSelect[Any]:
    """The ids of the attempts whose session's subject code, protocol or operator starts with
    ``text`` (letter case ignored), or whose own id does."""
    sessions = select(CaptureSession.id).where(session_matches(text))
    by_session = select(Attempt.id).where(Attempt.session_id.in_(sessions))
    if not id_like(text):
        return by_session
    return union(by_session, select(Attempt.id).where(starts_with(Attempt.id, text.lower())))


class AttemptSort(StrEnum):
    """The columns a page of attempts (or of results) may be sorted by."""

    RECORDED = "recorded"  # when the attempt was made (a result: when it was made)
    SUBJECT = "subject"  # subject code, then session, then date
    PROTOCOL = "protocol"  # protocol, then session, then date
    ATTEMPT = "attempt"  # number in its session, then date
    STATUS = "status"  # result status (blocked, degraded, pending, published), then date


class StatusFilter(StrEnum):
    """An attempt's result status as kept on it (``attempts.result_status``)."""

    PUBLISHED = "published"
    DEGRADED = "degraded"  # published with limitations
    BLOCKED = "blocked"
    PENDING = "pending"  # no result yet


class ReviewFilter(StrEnum):
    REVISED = "revised"  # at least one revision
    UNREVISED = "unrevised"
    SIGNED_OFF = "signed-off"  # a sign-off in force: no revision after it changed the data


@dataclass(frozen=True)
class Source:
    """Attempts recorded with one device, or by one rig (exactly one of the two)."""

    device_id: str | None = None
    rig: str | None = None


#: attempts the Results screen lists on one page
ATTEMPT_PAGE = 200


@dataclass(frozen=True)
class AttemptQuery:
    """A page of attempts in ``sort`` order (``descending``: newest, Z or highest first): those
    ``search`` finds (None: every one), made at or after ``since`` (None: any time), of a result
    status, revised or not, of a device or rig, of one session (None: any)."""

    search: str | None = None
    limit: int = ATTEMPT_PAGE
    offset: int = 0
    since: datetime | None = None
    sort: AttemptSort = AttemptSort.RECORDED
    descending: bool = True
    status: StatusFilter | None = None
    review: ReviewFilter | None = None
    source: Source | None = None
    session: str | None = None  # one capture session's attempts (its id)

    def __post_init__(self) -> None:
        check_page(self.limit, self.offset)


def attempt_order(sort: AttemptSort, descending: bool) -> list[UnaryExpression[Any]]:
    """The ORDER BY of a page of attempts (joined to their session), each key in one direction so
    that an index read forwards or backwards gives it."""
    by: dict[AttemptSort, list[Any]] = {
        AttemptSort.RECORDED: [],
        AttemptSort.SUBJECT: [CaptureSession.subject_code, CaptureSession.id],
        AttemptSort.PROTOCOL: [CaptureSession.protocol, CaptureSession.id],
        AttemptSort.ATTEMPT: [Attempt.number],
        AttemptSort.STATUS: [Attempt.result_status],
    }
    keys = [*by[sort]]
    keys += [Attempt.created_at, Attempt.id]
    return [k.desc() if descending else k.asc() for k in keys]


#: the sessions' index read in order for a sort by one of their columns (migration 0023)
SESSION_INDEX = {
    AttemptSort.SUBJECT: "ix_sessions_subject",
    AttemptSort.PROTOCOL: "ix_sessions_protocol",
}


def in_session_order(
    statement: Select[Any], sort: AttemptSort, searched: bool, *, attempts_joined: bool = True
) -> Select[Any]:
    """``statement`` over attempts (``attempts_joined``: else, to be joined to them), joined to
    their session when sorted by a session's column: on SQLite through that column's index,
    session by session (unless a search found the attempts: then those few are sorted)."""
    if sort not in SESSION_INDEX:
        return statement
    if searched:
        if not attempts_joined:
            statement = statement.select_from(Attempt)
        return statement.join(CaptureSession, CaptureSession.id == Attempt.session_id)
    sessions = CaptureSession.__table__
    return statement.select_from(
        SessionsFirst(sessions, Attempt.__table__, sessions.c.id == Attempt.session_id)
    )


class SessionsFirst(Join):
    """Sessions joined to their attempts, the sessions read first: SQLite's planner, which knows
    no table's size, would read every attempt and sort them; a CROSS JOIN keeps the order
    written."""

    inherit_cache = True


@compiles(SessionsFirst, "sqlite")
def _sessions_first(join: SessionsFirst, compiler: Any, **kw: Any) -> str:
    kw["asfrom"] = True
    left, right = compiler.process(join.left, **kw), compiler.process(join.right, **kw)
    return f"{left} CROSS JOIN {right} ON {compiler.process(join.onclause, **kw)}"


def attempt_filters(query: AttemptQuery, *, few: bool = False) -> list[ColumnElement[bool]]:
    """``query``'s criteria on attempts; ``few``: its source recorded few of them
    (:func:`few_recorded`), each looked up by its key."""
    found: list[ColumnElement[bool]] = []
    if query.session is not None:
        found.append(Attempt.session_id == query.session)
    if query.since is not None:
        found.append(Attempt.created_at >= query.since)
    if (text := search_words(query.search)) is not None:
        found.append(Attempt.id.in_(matching_attempts(text)))
    if query.status is not None:
        found.append(Attempt.result_status == query.status.value)
    if query.review is ReviewFilter.REVISED:
        # the revised results' attempts (a revision's result, then its attempt: by their keys)
        found.append(Attempt.id.in_(_revised_attempts()))
    elif query.review is ReviewFilter.UNREVISED:
        # most are: a page, or a count that stops (count_attempts), is found among the first
        # rows read
        found.append(
            ~exists(_revised_attempts().where(AnalysisResultRecord.attempt_id == Attempt.id))
        )
    elif query.review is ReviewFilter.SIGNED_OFF:
        found.append(Attempt.id.in_(select(ResultSignOff.attempt_id)))
    if query.source is not None:
        if few:
            found.append(probed_in(Attempt.id, recorded_by(query.source, few=True)))
        else:
            found.append(Attempt.id.in_(recorded_by(query.source)))
    return found


def _revised_attempts() -> Select[Any]:
    return select(AnalysisResultRecord.attempt_id).join(
        ResultRevision, ResultRevision.result_id == AnalysisResultRecord.id
    )


def recorded_by(source: Source, *, few: bool = False) -> Select[Any]:
    """The ids of the attempts of ``source``'s device (from the device's captures) or rig; ``few``:
    a device's captures looked up one by one (:func:`few_recorded`)."""
    if source.rig is not None:
        return select(RigRecording.attempt_id).where(RigRecording.rig_name == source.rig)
    if few:
        captures = select(Capture.id).where(Capture.device_id == source.device_id)
        return select(AttemptCapture.attempt_id).where(
            probed_in(AttemptCapture.capture_id, captures)
        )
    return (
        select(AttemptCapture.attempt_id)
        .join(Capture, Capture.id == AttemptCapture.capture_id)
        .where(Capture.device_id == source.device_id)
    )


#: a source with at most this many recordings has its attempts looked up one by one
FEW_RECORDED = 5_000


def few_recorded(session: Session, source: Source | None, at_most: int = FEW_RECORDED) -> bool:
    """Whether ``source`` recorded at most ``at_most`` captures (a device) or attempts (a rig),
    counted no further. A page of the newest 200 of a source's attempts is then found
    fastest from the source's own rows, each attempt looked up by its key (a rig's 2,740 of
    100,000: 5 ms); PostgreSQL's planner read and hashed every attempt, or every attempt's
    captures, instead (12 and 40 ms). A source that recorded many is found fastest the other way,
    the attempts read newest first until the page is full (a camera's 49,070: 5 ms, where the
    lookups took 200), which the planner chooses itself."""
    if source is None:
        return False
    if source.rig is not None:
        rows = select(RigRecording.id).where(RigRecording.rig_name == source.rig)
    else:
        rows = select(Capture.id).where(Capture.device_id == source.device_id)
    return not bounded_count(session, rows, at_most).more


def catalog_sources(session: Session) -> list[Source]:
    """The rigs, then the devices, the catalog knows (by name, by id): what the attempts may be
    filtered by."""
    rigs = session.scalars(select(RigRecord.name).order_by(RigRecord.name))
    devices = session.scalars(select(DeviceRecord.device_id).order_by(DeviceRecord.device_id))
    return [*(Source(rig=r) for r in rigs), *(Source(device_id=d) for d in devices)]


def check_source(session: Session, source: Source | None) -> None:
    """``LABRIG_USAGE`` for a device that recorded nothing or a rig the catalog does not know (a
    filter by it would find nothing, without saying why)."""
    if source is None:
        return
    if source.rig is not None:
        known = select(RigRecording.id).where(RigRecording.rig_name == source.rig)
        what = f"rig {source.rig!r}"
    else:
        known = select(Capture.id).where(Capture.device_id == source.device_id)
        what = f"device {source.device_id!r}"
    if session.scalar(known.limit(1)) is not None:
        return
    names = ", ".join(s.rig or s.device_id or "" for s in catalog_sources(session))
    raise UsageError(f"The catalog has no recording of the {what}; it knows {names or 'none'}")
