"""In which order a list reads its attempts (Qt-free): a page's ORDER BY, each order read from an
index in its order (migration 0023); by a session's column the sessions' index, session by
session, each session's attempts from theirs; and the reads a count starts from its filter's own
rows (a word's sessions, a camera's captures), so it stops at its bound whatever share of the
catalog the filter finds. On SQLite the order written is kept (:class:`LeftFirst`); PostgreSQL's
planner, which keeps statistics, plans these joins itself.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, UnaryExpression, and_, literal, tuple_
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.selectable import Join

from labrig.capture.session_listing import session_matches
from labrig.errors import UsageError
from labrig.results.search import AttemptSort, Source
from labrig.store.models import Attempt, AttemptCapture, Capture, CaptureSession, RigRecording


def order_keys(sort: AttemptSort) -> list[Any]:
    """The columns a page of attempts (joined to their session) is sorted by, in ``sort``'s order:
    its own, then the date and the id (so that no two rows tie)."""
    by: dict[AttemptSort, list[Any]] = {
        AttemptSort.RECORDED: [],
        AttemptSort.SUBJECT: [CaptureSession.subject_code, CaptureSession.id],
        AttemptSort.PROTOCOL: [CaptureSession.protocol, CaptureSession.id],
        AttemptSort.ATTEMPT: [Attempt.number],
        AttemptSort.STATUS: [Attempt.result_status],
    }
    return [*by[sort], Attempt.created_at, Attempt.id]


def attempt_order(sort: AttemptSort, descending: bool) -> list[UnaryExpression[Any]]:
    """The ORDER BY of a page of attempts (joined to their session), each key in one direction so
    that an index read forwards or backwards gives it."""
    return [k.desc() if descending else k.asc() for k in order_keys(sort)]


def position_of(
    sort: AttemptSort, descending: bool, attempt: Attempt, session: CaptureSession
) -> tuple[Any, ...]:
    """Where the attempt (with its session) stands in ``sort``'s order, ``descending`` or not: the
    order named (its sort and direction), then the attempt's values of :func:`order_keys`; what a
    page after it starts from (:func:`after_position`)."""
    values = (
        getattr(session if key.class_ is CaptureSession else attempt, key.key)
        for key in order_keys(sort)
    )
    return (sort.value, descending, *values)


def after_position(
    sort: AttemptSort, descending: bool, position: tuple[Any, ...]
) -> ColumnElement[bool]:
    """The attempts after ``position`` (:func:`position_of`) in ``sort``'s order: a page read from
    there, as the index of that order is, instead of counting the rows before it (the busiest
    camera's page at offset 5,000 walked 10,000 attempts, each tested for the camera: 80 ms; from
    its position, 200 or so). The first key bounds the index's range, the whole key the row.
    ``LABRIG_USAGE`` for a position in another order or direction."""
    keys = order_keys(sort)
    if tuple(position[:2]) != (sort.value, descending) or len(position) != 2 + len(keys):
        raise UsageError(
            f"The page asked for starts after a row of another order than by {sort.value}, "
            f"{'descending' if descending else 'ascending'}: start from the first page again"
        )
    values = position[2:]
    here = tuple_(*(literal(v, k.type) for k, v in zip(keys, values, strict=True)))
    first = literal(values[0], keys[0].type)
    if descending:
        return and_(keys[0] <= first, tuple_(*keys) < here)
    return and_(keys[0] >= first, tuple_(*keys) > here)


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
    return statement.select_from(_sessions_then_attempts())


def from_sessions(statement: Select[Any], text: str) -> Select[Any]:
    """``statement`` over the attempts of the sessions ``text`` matches, read from the sessions (on
    SQLite in the order written, :class:`LeftFirst`): a count of them stops at its bound
    whatever share of the catalog the word finds, where looking them up by key gathered them all
    first (the 72,000 of 's00': 84 ms) and testing each attempt read walked the catalog for a
    word of a few thousand (an operator's 3,970: 97 ms, against 12)."""
    return statement.select_from(_sessions_then_attempts()).where(session_matches(text))


def _sessions_then_attempts() -> LeftFirst:
    """Sessions joined to their attempts, the sessions read first."""
    sessions = CaptureSession.__table__
    return LeftFirst(sessions, Attempt.__table__, sessions.c.id == Attempt.session_id)


def from_recordings(statement: Select[Any], source: Source, *, once: bool = True) -> Select[Any]:
    """``statement`` over the attempts ``source`` recorded, read from its own rows (a device's
    captures through their index, a rig's recordings; on SQLite in the order written,
    :class:`LeftFirst`), each attempt once (``once``: else an attempt with two captures of the
    camera twice, :func:`~labrig.store.search.bounded_count_once`): a count of a camera's attempts
    stops at its bound (its 5,001 of 49,070: 9 ms), where testing each attempt read took 55."""
    attempts = Attempt.__table__
    if source.rig is not None:
        recordings = RigRecording.__table__
        joined = LeftFirst(recordings, attempts, recordings.c.attempt_id == attempts.c.id)
        where = recordings.c.rig_name == source.rig
    else:
        captures, links = Capture.__table__, AttemptCapture.__table__
        joined = LeftFirst(
            LeftFirst(captures, links, links.c.capture_id == captures.c.id),
            attempts,
            attempts.c.id == links.c.attempt_id,
        )
        where = captures.c.device_id == source.device_id
    found = statement.select_from(joined).where(where)
    return found.distinct() if once else found


class LeftFirst(Join):
    """A join whose left side is read first (sessions, then their attempts; a device's captures,
    then their attempts): SQLite's planner, which knows no table's size, would read every attempt
    and sort them; a CROSS JOIN keeps the order written. Other databases plan it themselves."""

    inherit_cache = True


@compiles(LeftFirst, "sqlite")
def _left_first(join: LeftFirst, compiler: Any, **kw: Any) -> str:
    kw["asfrom"] = True
    left, right = compiler.process(join.left, **kw), compiler.process(join.right, **kw)
    return f"{left} CROSS JOIN {right} ON {compiler.process(join.onclause, **kw)}"
