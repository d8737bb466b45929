"""The queue a page at a time, for the Queue screen and ``labrig jobs``: which jobs (states, a
stage, the start of a job's or an attempt's id), in which order, which page, and how many.

Each page reads a range of an index, never every job (plans pinned by tests): by date through
``ix_jobs_created_at``; the live queue's states, and their counts, through ``ix_jobs_unsettled``,
which holds only the jobs not settled (:data:`~labrig.domain.jobs.UNSETTLED`, migration 0020), the
settled states through ``ix_jobs_settled`` (migration 0021); a stage through ``ix_jobs_stage``; an
id's start through the id's index. Qt-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, and_, func, or_, select, text
from sqlalchemy.orm import Session

from labrig.domain.jobs import SETTLED, UNSETTLED, JobState
from labrig.jobs.views import JobView
from labrig.store.models import Job
from labrig.store.search import (
    COUNT_AHEAD,
    Tally,
    bounded_count,
    check_page,
    id_like,
    ordered_page,
    search_words,
    starts_with,
)


def _is_in(states: tuple[JobState, ...]) -> ColumnElement[bool]:
    """A partial index's own term, word for word (SQLite uses a partial index only for a query
    whose WHERE clause contains it): what a query of those states says besides its states."""
    return and_(text("jobs.state IN (" + ", ".join(f"'{s.value}'" for s in states) + ")"))


#: the term of ix_jobs_unsettled (migration 0020), and of ix_jobs_settled (migration 0021)
IS_UNSETTLED, IS_SETTLED = _is_in(UNSETTLED), _is_in(SETTLED)


@dataclass(frozen=True)
class JobQuery:
    """Which jobs, in which order, which page. Each criterion given must hold.

    ``states``: any of these (none: every state); ``stage``: this stage's id; ``search``: the start
    of the job's id or of its attempt's id (ids are hexadecimal: other text finds nothing);
    ``since``/``until``: when the job was created, ``until`` excluded.
    """

    states: tuple[JobState, ...] = ()
    stage: str | None = None
    search: str | None = None
    newest_first: bool = False
    limit: int | None = None
    offset: int = 0
    since: datetime | None = None  # created at or after
    until: datetime | None = None  # created before

    def __post_init__(self) -> None:
        check_page(self.limit, self.offset)


#: every job, oldest first, on one page
EVERY_JOB = JobQuery()


def _where(query: JobQuery) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = []
    if query.states:
        if set(query.states) <= set(UNSETTLED):
            conditions.append(IS_UNSETTLED)
        elif set(query.states) <= set(SETTLED):
            conditions.append(IS_SETTLED)
        conditions.append(Job.state.in_([s.value for s in query.states]))
    if query.stage:
        conditions.append(Job.stage_id == query.stage)
    if query.since is not None:
        conditions.append(Job.created_at >= query.since)
    if query.until is not None:
        conditions.append(Job.created_at < query.until)
    if (words := search_words(query.search)) is not None:
        key = words.lower()
        if not id_like(key):
            conditions.append(Job.id.is_(None))  # no id starts so: nothing matches
        else:
            by_attempt = Job.attempt_id.is_not(None) & starts_with(Job.attempt_id, key)
            conditions.append(or_(starts_with(Job.id, key), by_attempt))
    return conditions


def read_jobs(session: Session, query: JobQuery = EVERY_JOB) -> list[JobView]:
    """The page of jobs ``query`` names, in its order."""
    page = ordered_page(
        select(Job).where(*_where(query)),
        Job.created_at,
        Job.id,
        newest_first=query.newest_first,
        limit=query.limit,
        offset=query.offset,
    )
    return [JobView.of(job) for job in session.scalars(page)]


def count_jobs(session: Session, query: JobQuery = EVERY_JOB, ahead: int = COUNT_AHEAD) -> Tally:
    """How many jobs ``query`` finds, all pages together, counted up to ``ahead`` past the page's
    start."""
    return bounded_count(session, select(Job.id).where(*_where(query)), query.offset + ahead)


def unsettled_counts(session: Session) -> dict[JobState, int]:
    """How many jobs are in each state not settled (the live queue, and what needs an operator):
    one read of ``ix_jobs_unsettled``, however long the history."""
    rows = session.execute(
        select(Job.state, func.count()).where(IS_UNSETTLED).group_by(Job.state)
    ).all()
    found = {JobState(state): int(n) for state, n in rows}
    return {state: found.get(state, 0) for state in UNSETTLED}
