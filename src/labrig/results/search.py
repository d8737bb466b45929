"""What a technician types to find attempts and results: the start of a subject code, protocol or
operator (any letter case), or of an attempt's or result's id. Qt-free.

Each search is written as the ids of what it finds, never as a condition on every row: the
sessions' words are matched in the sessions table (one row for ten attempts or so) and reach the
attempts through their index, and an id prefix is a range of the id's index. So a search on a
catalog of 100,000 attempts reads what it finds, not the catalog (plans pinned by tests).

A page of attempts is sorted and filtered in its query, each order read from an index in its order
(:mod:`labrig.results.reading`). A filter is a condition on the rows read in that order, or (a
device's or a rig's) the ids its own index gives.
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
    exists,
    or_,
    select,
    union,
)
from sqlalchemy.orm import Session

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
    unindexed,
)


def matched_each(text: str, session_joined: bool = False) -> ColumnElement[bool]:
    """Whether the attempt at hand is one :func:`matching_attempts` finds, looked up from it (its
    session, its id): for a search that finds many, tested on each attempt read in a page's order
    (SQLite gathered the 33,000 attempts of 's00' and sorted their results: 320 ms).
    ``session_joined``: the statement reads each attempt with its session, which is tested as
    it is (a page by subject read 7,000 attempts of 's00' past offset 5,000: 64 ms with a lookup
    of the session for each, 26 without)."""
    by_session: ColumnElement[bool] = (
        session_matches(text)
        if session_joined
        else exists(
            select(CaptureSession.id)
            .where(CaptureSession.id == Attempt.session_id, session_matches(text))
            .correlate(Attempt)  # the attempt at hand, whether or not its session is joined too
        )
    )
    return or_(by_session, starts_with(Attempt.id, text.lower())) if id_like(text) else by_session


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
    status, revised or not, of a device or rig, of one session (None: any).

    ``after``: the page starts after the row at this position in ``sort``'s order and direction
    (:func:`~labrig.results.reading.position_of` of the previous page's last row), read from there;
    ``offset`` then only says how many rows come before it (for the count and the words).
    """

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
    after: tuple[Any, ...] | None = None

    def __post_init__(self) -> None:
        check_page(self.limit, self.offset)


@dataclass(frozen=True)
class Sizes:
    """What the plan of a page of attempts needs to know of how much its filters find
    (:func:`sizes_of`): a source's attempts and the revised ones, each either few (looked up by
    their keys, then sorted) or many (the attempts read in the page's order, each tested, until
    the page is full)."""

    few_recorded: bool = False
    few_revised: bool = True
    few_matched: bool = True  # a search's


def attempt_filters(
    query: AttemptQuery, sizes: Sizes = Sizes(), *, session_joined: bool = False
) -> list[ColumnElement[bool]]:
    """``query``'s criteria on attempts, each written for how much it finds (``sizes``);
    ``session_joined``: the statement joins each attempt's session (:func:`matched_each`)."""
    found: list[ColumnElement[bool]] = []
    if query.session is not None:
        found.append(Attempt.session_id == query.session)
    if query.since is not None:
        found.append(Attempt.created_at >= query.since)
    if (text := search_words(query.search)) is not None and sizes.few_matched:
        found.append(Attempt.id.in_(matching_attempts(text)))
    elif text is not None:
        found.append(matched_each(text, session_joined))
    if query.status is not None:
        found.append(Attempt.result_status == query.status.value)
    revised = _revised_attempts()
    if query.review is ReviewFilter.REVISED and sizes.few_revised:
        # a revision's result, then its attempt: by their keys
        found.append(Attempt.id.in_(revised))
    elif query.review is ReviewFilter.REVISED:
        # many: tested on each attempt read (SQLite gathered 13,000 and sorted them: 63 ms)
        found.append(exists(revised.where(AnalysisResultRecord.attempt_id == Attempt.id)))
    elif query.review is ReviewFilter.UNREVISED:
        # most are: a page, or a count that stops (count_attempts), is found among the first
        # rows read
        found.append(~exists(revised.where(AnalysisResultRecord.attempt_id == Attempt.id)))
    elif query.review is ReviewFilter.SIGNED_OFF:
        found.append(Attempt.id.in_(select(ResultSignOff.attempt_id)))
    if query.source is not None and sizes.few_recorded:
        found.append(probed_in(Attempt.id, recorded_by(query.source, few=True)))
    elif query.source is not None:
        # many: tested on each attempt read (SQLite gathered the walkway's 49,000 and sorted
        # them: 68 ms)
        found.append(_recorded_each(query.source))
    return found


def _recorded_each(source: Source) -> ColumnElement[bool]:
    """Whether ``source`` recorded the attempt at hand, looked up from the attempt: its rig
    recording, or its captures and then their device (SQLite, kept from the device's index,
    read the device's 49,070 captures for each attempt)."""
    if source.rig is not None:
        return exists(
            select(RigRecording.id).where(
                RigRecording.attempt_id == Attempt.id, RigRecording.rig_name == source.rig
            )
        )
    return exists(
        select(AttemptCapture.capture_id)
        .join(Capture, Capture.id == AttemptCapture.capture_id)
        .where(
            AttemptCapture.attempt_id == Attempt.id,
            unindexed(Capture.device_id) == source.device_id,
        )
    )


def _revised_attempts() -> Select[Any]:
    return select(AnalysisResultRecord.attempt_id).join(
        ResultRevision, ResultRevision.result_id == AnalysisResultRecord.id
    )


def recorded_by(source: Source, *, few: bool = False) -> Select[Any]:
    """The ids of the attempts of ``source``'s device (from the device's captures) or rig; ``few``:
    a device's captures looked up one by one (:func:`sizes_of`)."""
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


#: a filter that finds at most this many attempts has them looked up by key (:class:`Sizes`)
FEW = 5_000


def sizes_of(
    session: Session, query: AttemptQuery, at_most: int = FEW, *, counting: bool = False
) -> Sizes:
    """How much ``query``'s source and review filters find, each counted no further than
    ``at_most`` (and only when the query has it). ``counting``: for a count, which gathers the
    revised attempts, a few in ten, whatever their number (it reads up to its bound, and walking
    the attempts to find 5,000 of them read 38,000: 118 ms on SQLite, against 32).

    A page of the newest 200 of a few thousand attempts is found fastest from the filter's own
    rows, each attempt looked up by its key (a rig's 2,740 of 100,000: 5 ms on PostgreSQL, whose
    planner read and hashed every attempt or every attempt's captures instead: 12 and 40 ms). A
    filter that finds many is found fastest the other way, the attempts read newest first until
    the page is full (a camera's 49,070: 5 ms, where the lookups took 200)."""
    few_recorded = query.source is not None and _few(session, _recordings(query.source), at_most)
    few_revised = (
        counting
        or query.review is not ReviewFilter.REVISED
        or _few(session, select(ResultRevision.id), at_most)
    )
    return Sizes(
        few_recorded=few_recorded,
        few_revised=few_revised,
        few_matched=few_matched(session, query.search, min(at_most, FEW_MATCHED)),
    )


#: a search that finds at most this many attempts has them looked up by key. Read in a page's
#: order, the review list's 50 results of a search are found among about 50 × catalog / matches
#: results read; gathered, they cost about the matches: even at √(50 × 100,000) ≈ 2,200 (an
#: operator's 3,960 attempts on SQLite: 35 ms gathered, 13 read in order)
FEW_MATCHED = 2_000


def few_matched(session: Session, search: str | None, at_most: int = FEW_MATCHED) -> bool:
    """Whether ``search`` finds at most ``at_most`` attempts, counted no further (true without
    one): its attempts are then looked up by key, else tested on each one read (:class:`Sizes`,
    :func:`matched_each`)."""
    text = search_words(search)
    return text is None or _few(session, matching_attempts(text), at_most)


def _recordings(source: Source) -> Select[Any]:
    """The rows ``source`` recorded: a device's captures, a rig's recordings."""
    if source.rig is not None:
        return select(RigRecording.id).where(RigRecording.rig_name == source.rig)
    return select(Capture.id).where(Capture.device_id == source.device_id)


def _few(session: Session, rows: Select[Any] | CompoundSelect[Any], at_most: int) -> bool:
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
