"""What a technician types to find attempts and results: the start of a subject code, protocol or
operator (any letter case), or of an attempt's or result's id. Qt-free.

Each search is written as the ids of what it finds, never as a condition on every row: the
sessions' words are matched in the sessions table (one row for ten attempts or so) and reach the
attempts through their index, and an id prefix is a range of the id's index. So a search on a
catalog of 100,000 attempts reads what it finds, not the catalog (plans pinned by tests).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, CompoundSelect, Select, and_, func, or_, select, union
from sqlalchemy.orm import InstrumentedAttribute

from labrig.errors import UsageError
from labrig.store.models import Attempt, CaptureSession

#: what may begin an id (a UUID's text)
_ID_START = re.compile(r"[0-9a-f][0-9a-f-]*")


def search_words(search: str | None) -> str | None:
    """``search`` without its surrounding spaces, or None when nothing is left."""
    return search.strip() or None if search else None


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


def id_like(text: str) -> bool:
    """Whether ``text`` may begin an id (ids are lower-case hexadecimal with dashes)."""
    return _ID_START.fullmatch(text.lower()) is not None


def starts_with(column: InstrumentedAttribute[str], key: str) -> ColumnElement[bool]:
    """``column`` (an indexed id) starts with ``key``: a range of the index that holds its first
    group of hexadecimal digits (any collation orders those alike, and 'z' after them all), then
    the exact prefix."""
    head = key.split("-", 1)[0]
    return and_(column >= head, column < head + "z", column.like(escaped(key) + "%", escape="\\"))


def escaped(text: str) -> str:
    """``text`` for a LIKE pattern with ``\\`` as its escape: % and _ taken literally."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


#: attempts the Results screen lists on one page
ATTEMPT_PAGE = 200


@dataclass(frozen=True)
class AttemptQuery:
    """A page of attempts, newest first: those ``search`` finds (None: every one)."""

    search: str | None = None
    limit: int = ATTEMPT_PAGE
    offset: int = 0

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise UsageError(f"a page holds at least 1 attempt, not {self.limit}")
        if self.offset < 0:
            raise UsageError(f"a page's offset cannot be negative ({self.offset})")
