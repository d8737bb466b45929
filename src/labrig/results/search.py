"""What a technician types to find attempts and results: the start of a subject code, protocol or
operator (any letter case), or of an attempt's or result's id. Qt-free.

Each search is written as the ids of what it finds, never as a condition on every row: the
sessions' words are matched in the sessions table (one row for ten attempts or so) and reach the
attempts through their index, and an id prefix is a range of the id's index. So a search on a
catalog of 100,000 attempts reads what it finds, not the catalog (plans pinned by tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import CompoundSelect, Select, func, or_, select, union

from labrig.store.models import Attempt, CaptureSession
from labrig.store.search import check_page, escaped, id_like, starts_with


def matching_attempts(text: str) -> Select[Any] | CompoundSelect[Any]:
    """The ids of the attempts whose session's subject code, protocol or operator starts with
    ``text`` (letter case ignored), or whose own id does."""
    words = escaped(text.lower()) + "%"
    sessions = select(CaptureSession.id).where(
        or_(
            func.lower(CaptureSession.subject_code).like(words, escape="\\"),
            func.lower(CaptureSession.protocol).like(words, escape="\\"),
            func.lower(CaptureSession.operator).like(words, escape="\\"),
        )
    )
    by_session = select(Attempt.id).where(Attempt.session_id.in_(sessions))
    if not id_like(text):
        return by_session
    return union(by_session, select(Attempt.id).where(starts_with(Attempt.id, text.lower())))


#: attempts the Results screen lists on one page
ATTEMPT_PAGE = 200


@dataclass(frozen=True)
class AttemptQuery:
    """A page of attempts, newest first: those ``search`` finds (None: every one), made at or
    after ``since`` (None: any time)."""

    search: str | None = None
    limit: int = ATTEMPT_PAGE
    offset: int = 0
    since: datetime | None = None

    def __post_init__(self) -> None:
        check_page(self.limit, self.offset)
