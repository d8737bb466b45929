"""The captures a page at a time, for ``labrig captures``: which (states, a device, a session, a
period), in which order, which page, and how many. Each page reads the captures by date through
``ix_captures_started_at`` (migration 0020), never sorting every capture. Qt-free."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from labrig.store.models import Capture
from labrig.store.search import check_page, ordered_page

#: a capture's states (labrig.store.models.Capture)
CAPTURE_STATES = ("provisional", "committed", "salvaged", "quarantined", "abandoned")


@dataclass(frozen=True)
class CaptureQuery:
    """Which captures, in which order, which page. Each criterion given must hold."""

    states: tuple[str, ...] = ()
    device: str | None = None
    session: str | None = None
    since: datetime | None = None  # started at or after
    until: datetime | None = None  # started before
    newest_first: bool = False
    limit: int | None = None
    offset: int = 0

    def __post_init__(self) -> None:
        check_page(self.limit, self.offset)


def _where(query: CaptureQuery) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = []
    if query.states:
        conditions.append(Capture.state.in_(query.states))
    if query.device:
        conditions.append(Capture.device_id == query.device)
    if query.session:
        conditions.append(Capture.session_id == query.session)
    if query.since is not None:
        conditions.append(Capture.started_at >= query.since)
    if query.until is not None:
        conditions.append(Capture.started_at < query.until)
    return conditions


def read_captures(session: Session, query: CaptureQuery) -> list[Capture]:
    """The page of captures ``query`` names, in its order."""
    page = ordered_page(
        select(Capture).where(*_where(query)),
        Capture.started_at,
        Capture.id,
        newest_first=query.newest_first,
        limit=query.limit,
        offset=query.offset,
    )
    return list(session.scalars(page))


def count_captures(session: Session, query: CaptureQuery) -> int:
    """How many captures ``query`` finds, all pages together."""
    total = session.scalar(select(func.count()).select_from(Capture).where(*_where(query)))
    return int(total or 0)
