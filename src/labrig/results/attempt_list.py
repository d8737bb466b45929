"""The Results screen's list of attempts, a page at a time: each attempt with the status of its
result, worked out from its newest result's own columns and its live jobs' states (never from the
documents), as ``list_attempts`` and ``count_attempts`` read them for the screen and the command
line. Qt-free."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from labrig.domain.jobs import JobState
from labrig.results.flags import CalibrationFlag, CalibrationFlags, used_calibrations
from labrig.results.publish import FINISHED
from labrig.results.reading import (
    SESSION_INDEX,
    after_position,
    attempt_order,
    from_recordings,
    from_sessions,
    in_session_order,
    position_of,
)
from labrig.results.search import (
    AttemptQuery,
    Sizes,
    attempt_filters,
    sizes_of,
)
from labrig.store import Store
from labrig.store.models import AnalysisResultRecord, Attempt, CaptureSession, Job
from labrig.store.search import (
    COUNT_AHEAD,
    Tally,
    among,
    bounded_count,
    bounded_count_once,
    id_like,
    search_words,
)

S = JobState
STOPPED = frozenset({S.BLOCKED_BY_QUALITY.value, S.PERMANENT_FAILURE.value, S.CANCELLED.value})


class ResultStatus(StrEnum):
    PUBLISHED = "published"
    DEGRADED = (
        "degraded"  # published with limitations (pixels without a calibration, dropped frames, …)
    )
    BLOCKED = "blocked"  # a quality gate or a failure forbids publication
    PENDING = "pending"  # analysis still running, or not started


@dataclass(frozen=True)
class AttemptSummary:
    """One row of the Results list."""

    attempt_id: str
    number: int  # within its session
    subject_code: str
    protocol: str
    created_at: datetime
    status: ResultStatus
    reasons: tuple[str, ...]  # why degraded or blocked; empty otherwise
    result_id: str | None  # the newest result document, if any (while pending: the previous one)
    note: str | None = None  # why the attempt is not a normal one (its recording was interrupted)
    # its published result was made under a calibration that has changed since (results/flags.py)
    flags: tuple[CalibrationFlag, ...] = ()
    # where it stands in the order it was listed in: what the page after it starts from
    # (AttemptQuery.after)
    position: tuple[Any, ...] | None = field(default=None, compare=False)


def list_attempts(store: Store, query: AttemptQuery | None = None) -> list[AttemptSummary]:
    """The page of attempts ``query`` asks for (the newest ``ATTEMPT_PAGE`` by default), in its
    order, each with its result status and its position in that order. The page's ids come from
    the index of that order (or from what the search found), from ``query.after`` on if given,
    before anything else is read."""
    query = query or AttemptQuery()
    order = attempt_order(query.sort, query.descending)
    with store.read() as session:
        page = page_of_attempts(query, sizes_of(session, query))
        rows = session.execute(
            select(Attempt, CaptureSession)
            .join(CaptureSession, CaptureSession.id == Attempt.session_id)
            .where(Attempt.id.in_(page.scalar_subquery()))
            .order_by(*order)
        ).all()
        ids = [attempt.id for attempt, _ in rows]
        results = _newest_result_facts(session, ids)
        jobs = _live_job_facts(session, ids)
    flags = CalibrationFlags(store)
    used = {i: used_calibrations(j.config for j in jobs.get(i, [])) for i in ids}
    flags.prefetch(used.values())
    return [
        attempt_summary(
            a,
            s,
            results.get(a.id),
            jobs.get(a.id, []),
            flags,
            used[a.id],
            position_of(query.sort, query.descending, a, s),
        )
        for a, s in rows
    ]


def page_of_attempts(query: AttemptQuery, sizes: Sizes) -> Select[Any]:
    """The ids of ``query``'s page in its order, its filters written for how much they find: read
    from the index of that order (the few attempts a search found are sorted instead), from
    ``query.after`` on if given, else past ``query.offset`` rows."""
    searched = search_words(query.search) is not None and sizes.few_matched
    found = attempt_filters(query, sizes, session_joined=query.sort in SESSION_INDEX)
    if query.after is not None:
        found.append(after_position(query.sort, query.descending, query.after))
    return (
        in_session_order(select(Attempt.id), query.sort, searched)
        .where(*found)
        .order_by(*attempt_order(query.sort, query.descending))
        .offset(None if query.after is not None else query.offset)
        .limit(query.limit)
    )


def count_attempts(
    store: Store, query: AttemptQuery | None = None, ahead: int = COUNT_AHEAD
) -> Tally:
    """How many attempts ``query`` finds, on every page, counted up to ``ahead`` past the page's
    start."""
    query = query or AttemptQuery()
    with store.read() as session:
        text = search_words(query.search)
        sqlite = store.dialect == "sqlite"  # PostgreSQL's planner knows the sizes itself
        if sqlite and text is not None and not id_like(text):
            # a word's attempts counted from its sessions on, as the review list counts its
            # results
            rest = replace(query, search=None)
            found = from_sessions(select(Attempt.id), text).where(
                *attempt_filters(rest, sizes_of(session, rest, counting=True))
            )
            return bounded_count(session, found, query.offset + ahead)
        sizes = sizes_of(session, query, counting=True)
        if query.source is not None and not sizes.few_recorded:
            # a camera's many attempts counted from its captures on, each once (without DISTINCT
            # over them all, so the count stops at its bound)
            found = from_recordings(select(Attempt.id), query.source, once=False).where(
                *attempt_filters(replace(query, source=None), sizes)
            )
            return bounded_count_once(session, found, query.offset + ahead)
        found = select(Attempt.id).where(*attempt_filters(query, sizes))
        return bounded_count(session, found, query.offset + ahead)


class JobFacts(Protocol):
    """What a row's status is worked out from, of each of its attempt's live jobs (a job's ORM
    row, or just these columns)."""

    @property
    def stage_id(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def error_message(self) -> str | None: ...
    @property
    def config(self) -> str: ...


class ResultFacts(Protocol):
    """What a row shows of its attempt's newest result (not its document)."""

    @property
    def id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def degraded(self) -> bool: ...
    @property
    def reasons(self) -> str: ...


@dataclass(frozen=True)
class _Job:
    stage_id: str
    state: str
    error_message: str | None
    config: str


@dataclass(frozen=True)
class _Result:
    id: str
    status: str
    degraded: bool
    reasons: str


def _live_job_facts(session: Session, attempt_ids: Sequence[str]) -> dict[str, list[JobFacts]]:
    """Of the list's attempts' live jobs, the columns a row's status needs (a page of 200 attempts
    has 2,000 jobs: ORM objects of their full rows were most of its read)."""
    grouped: dict[str, list[JobFacts]] = {}
    if not attempt_ids:
        return grouped
    query = (
        select(Job.attempt_id, Job.stage_id, Job.state, Job.error_message, Job.config)
        .where(among(Job.attempt_id, attempt_ids), Job.state != S.SUPERSEDED.value)
        .order_by(Job.created_at)
    )
    for attempt_id, stage_id, state, error_message, config in session.execute(query):
        grouped.setdefault(attempt_id or "", []).append(
            _Job(stage_id, state, error_message, config)
        )
    return grouped


def _newest_result_facts(session: Session, attempt_ids: Sequence[str]) -> dict[str, ResultFacts]:
    """Each attempt's newest result, without its document."""
    newest: dict[str, ResultFacts] = {}
    if not attempt_ids:
        return newest
    R = AnalysisResultRecord
    query = (
        select(R.attempt_id, R.id, R.status, R.degraded, R.reasons)
        .where(among(R.attempt_id, attempt_ids))
        .order_by(R.created_at)
    )
    for attempt_id, result_id, status, degraded, reasons in session.execute(query):
        newest[attempt_id] = _Result(result_id, status, degraded, reasons)  # the newest stays
    return newest


def document_is_current(jobs: Sequence[JobFacts]) -> bool:
    """Whether the newest document still describes the attempt: true when its live jobs are in a
    state the publisher writes a document for (all ended, or one blocked). A reprocess adds a job
    that has not ended, so the older document is then only the previous result. Job states, not
    timestamps, decide: the publisher and the queue may run on workstations whose clocks differ."""
    return any(j.state == S.BLOCKED_BY_QUALITY.value for j in jobs) or all(
        j.state in FINISHED for j in jobs
    )


def attempt_summary(
    attempt: Attempt,
    session: CaptureSession,
    record: ResultFacts | None,
    jobs: Sequence[JobFacts],
    flags: CalibrationFlags,
    used: tuple[str | None, str | None] | None = None,
    position: tuple[Any, ...] | None = None,
) -> AttemptSummary:
    """``used``: the calibrations ``jobs`` ran under, if already read from them
    (:func:`used_calibrations`); ``position``: the attempt's place in the order it was listed in
    (:func:`~labrig.results.reading.position_of`)."""
    status, reasons = _status(record, jobs)
    published = status in (ResultStatus.PUBLISHED, ResultStatus.DEGRADED)
    return AttemptSummary(
        attempt_id=attempt.id,
        number=attempt.number,
        subject_code=session.subject_code,
        protocol=session.protocol,
        created_at=attempt.created_at,
        status=status,
        reasons=tuple(reasons),
        result_id=record.id if record is not None else None,
        note=attempt.note,
        flags=flags.of_ids(*(used or used_calibrations(j.config for j in jobs)))
        if published
        else (),
        position=position,
    )


def _status(record: ResultFacts | None, jobs: Sequence[JobFacts]) -> tuple[ResultStatus, list[str]]:
    if record is not None and document_is_current(jobs):
        reasons = [str(r) for r in json.loads(record.reasons)]
        if record.status == "blocked":
            return ResultStatus.BLOCKED, reasons
        return (ResultStatus.DEGRADED, reasons) if record.degraded else (ResultStatus.PUBLISHED, [])
    stopped = [j for j in jobs if j.state in STOPPED]
    if stopped:  # the publisher's document will say the same (analysis/results.py, build_document)
        return ResultStatus.BLOCKED, [f"{j.stage_id}: {j.error_message}" for j in stopped]
    return ResultStatus.PENDING, []
