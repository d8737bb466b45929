"""The capture sessions a page at a time, each with its number of attempts, for ``labrig sessions``
and the Results screen's sessions: which (a subject code, protocol or operator's start; a period),
in which order, which page, and how many. A page reads the sessions by date through
``ix_sessions_created_at`` and each one's attempts through ``ix_attempts_session_id``, never the
catalog's attempts. Qt-free."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.orm import Session

from labrig.store.models import Attempt, CaptureSession
from labrig.store.search import check_page, escaped, ordered_page, search_words


@dataclass(frozen=True)
class SessionQuery:
    """Which sessions, in which order, which page. Each criterion given must hold. ``search``: the
    start of the subject code, protocol or operator (letter case ignored)."""

    search: str | None = None
    since: datetime | None = None  # begun at or after
    until: datetime | None = None  # begun before
    newest_first: bool = False
    limit: int | None = None
    offset: int = 0

    def __post_init__(self) -> None:
        check_page(self.limit, self.offset)


@dataclass(frozen=True)
class SessionRow:
    """One session as a list shows it."""

    id: str
    subject_code: str
    protocol: str
    operator: str
    created_at: datetime
    attempts: int


def session_matches(text: str) -> ColumnElement[bool]:
    """A session whose subject code, protocol or operator starts with ``text``, letter case
    ignored (on PostgreSQL each lowered column has its index: migration 0025)."""
    words = escaped(text.lower()) + "%"
    return or_(
        *(
            func.lower(column).like(words, escape="\\")
            for column in (
                CaptureSession.subject_code,
                CaptureSession.protocol,
                CaptureSession.operator,
            )
        )
    )


def _where(query: SessionQuery) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = []
    if (text := search_words(query.search)) is not None:
        conditions.append(session_matches(text))
    if query.since is not None:
        conditions.append(CaptureSession.created_at >= query.since)
    if query.until is not None:
        conditions.append(CaptureSession.created_at < query.until)
    return conditions


def read_sessions(session: Session, query: SessionQuery) -> list[SessionRow]:
    """The page of sessions ``query`` names, in its order, each with its attempts counted."""
    attempts = (
        select(func.count())
        .select_from(Attempt)
        .where(Attempt.session_id == CaptureSession.id)
        .scalar_subquery()
    )
    page = ordered_page(
        select(CaptureSession, attempts).where(*_where(query)),
        CaptureSession.created_at,
        CaptureSession.id,
        newest_first=query.newest_first,
        limit=query.limit,
        offset=query.offset,
    )
    return [
        SessionRow(s.id, s.subject_code, s.protocol, s.operator, s.created_at, int(n))
        for s, n in session.execute(page)
    ]


def count_sessions(session: Session, query: SessionQuery) -> int:
    """How many sessions ``query`` finds, all pages together."""
    total = session.scalar(select(func.count()).select_from(CaptureSession).where(*_where(query)))
    return int(total or 0)
