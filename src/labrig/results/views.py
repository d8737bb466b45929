"""What the Results screen reads: a page of attempts with their result status (searched and
paged through the whole catalog), and one attempt's result in full.

Read-only and Qt-free. Every function opens its own read session, so it may run on any thread (the
GUI calls them on a pool thread). The status of an attempt follows the publisher's rule
(``analysis/results.py``): its newest ``labrig.result/1`` document decides, unless a reprocess
added a job that has not ended (pending); before the publisher has written a document, a stage that
was blocked, failed or cancelled already makes the attempt blocked, with the same reasons the
document will carry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from labrig.domain.events import EventName
from labrig.domain.jobs import JobState
from labrig.results.flags import CalibrationFlag, CalibrationFlags, used_calibrations
from labrig.results.publish import FINISHED
from labrig.results.search import (
    AttemptQuery,
    ReviewFilter,
    attempt_filters,
    attempt_order,
    in_session_order,
)
from labrig.store import Store
from labrig.store.models import AnalysisResultRecord, Attempt, CaptureSession, Job
from labrig.store.search import search_words

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Array = npt.NDArray[np.float64]

S = JobState
STOPPED = frozenset({S.BLOCKED_BY_QUALITY.value, S.PERMANENT_FAILURE.value, S.CANCELLED.value})
# Events after which an attempt's status may read differently. stage.failed carries no attempt id,
# and only its final form (not retryable) can stop an attempt.
REFRESHING = frozenset(
    {
        EventName.ATTEMPT_CREATED,
        EventName.STAGE_REQUESTED,
        EventName.STAGE_FAILED,
        EventName.QUALITY_BLOCKED,
        EventName.RESULT_PUBLISHED,
    }
)
ADVICE = {
    "LABRIG_NO_RIG_CALIBRATION": (
        "Calibrate the rig as it records now: record the board moving through the volume and "
        "run 'labrig calibrate-rig --rig NAME --capture-attempt ID' until every threshold passes "
        "(docs/rig-calibration.md), then record the attempt again: it is analysed in 3-D under "
        "the new rig calibration."
    ),
    "LABRIG_RIG_TOO_FEW_CAMERAS": (
        "Fewer than two of this attempt's cameras are in the rig calibration: calibrate the rig "
        "with its cameras as they are now, then record the attempt again."
    ),
    "LABRIG_TOO_FEW_MARKERS": (
        "Check the lighting and that every marker stays in view, then record the attempt again. "
        "If the markers were visible, lower min_marker_fraction or set marker_hue and reprocess "
        "the tracking job from the Queue page."
    ),
    "LABRIG_MEDIA_UNDECODABLE": (
        "The recording cannot be decoded: record the attempt again, "
        "and check the free disk space and the camera's cable."
    ),
    "LABRIG_CANCELLED": (
        "A stage was cancelled by an operator: "
        "reprocess it from the Queue page to finish the analysis."
    ),
}
GENERAL_ADVICE = (
    "Fix what the reason says, then reprocess the stopped job from the Queue page (Reprocess), or "
    "record the attempt again."
)


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


@dataclass(frozen=True)
class StageState:
    """One live (not superseded) job of an attempt."""

    stage_id: str
    state: str
    error_code: str | None
    error_message: str | None


@dataclass(frozen=True)
class TrackSeries:
    """One track's smoothed positions and speed on its time grid, in the result's units."""

    track_id: int
    t: Array
    x: Array
    y: Array
    speed: Array | None  # None when the track was too short for speeds
    # the marker's colour in the video (RGB 0-255); None in results published before it was read
    colour_rgb: tuple[int, int, int] | None = None
    z: Array | None = None  # the height, for a rig's 3-D result (x, y, z in the rig's world)


def units_words(units: Mapping[str, Any] | None) -> str:
    """A result document's ``units`` as a person reads them: ``"mm, s"`` (length, then time), or
    ``"none (no kinematics ran)"``."""
    if not units:
        return "none (no kinematics ran)"
    return ", ".join(str(units[k]) for k in ("length", "time") if k in units)


@dataclass(frozen=True)
class ResultDetail:
    """One attempt's result: the stored document when there is one, and its jobs as they are now."""

    summary: AttemptSummary
    stages: tuple[StageState, ...]
    document: Mapping[str, Any] | None  # labrig.result/1; None before the publisher wrote one
    digest: str | None
    created_at: datetime | None
    previous: bool  # the document predates a reprocess that is still running
    reanalysed_as: tuple[int, ...] = ()  # attempts (by number) that analyse this one again

    @property
    def units(self) -> tuple[str, str] | None:
        """(length, time) units, e.g. ("mm", "s") or ("px", "frames");
        None when no kinematics ran."""
        units = (self.document or {}).get("units")
        return (str(units["length"]), str(units["time"])) if units else None

    @property
    def metrics(self) -> list[Mapping[str, Any]]:
        return list((self.document or {}).get("metrics") or [])

    @property
    def reconstruction(self) -> Mapping[str, Any] | None:
        """A rig's 3-D reconstruction summary (per marker: frames, gaps, cameras used and
        reprojection error over time); None for a single camera's result."""
        return (self.document or {}).get("reconstruction")

    @property
    def tracks(self) -> list[TrackSeries]:
        return [track_series(s) for s in (self.document or {}).get("series") or []]

    @property
    def advice(self) -> list[str]:
        """What to do about a blocked result, one sentence per cause; empty unless blocked."""
        if self.summary.status is not ResultStatus.BLOCKED:
            return []
        codes = [s.error_code or "" for s in self.stages if s.state in STOPPED]
        codes += [
            j.get("error_code") or ""
            for j in ((self.document or {}).get("provenance") or {}).get("jobs", [])
            if j.get("state") in STOPPED
        ]
        said = list(dict.fromkeys(ADVICE[c] for c in codes if c in ADVICE))
        return said or [GENERAL_ADVICE]


def refreshes_results(name: str, payload: Mapping[str, Any]) -> bool:
    """Whether an event may change what the Results screen shows."""
    if name == EventName.STAGE_FAILED:
        return not payload.get("retryable", False)
    if name == EventName.STAGE_REQUESTED:
        return payload.get("attempt_id") is not None
    return name in REFRESHING


def list_attempts(store: Store, query: AttemptQuery | None = None) -> list[AttemptSummary]:
    """The page of attempts ``query`` asks for (the newest ``ATTEMPT_PAGE`` by default), in its
    order, each with its result status. The page's ids come from the index of that order (or from
    what the search found) before anything else is read."""
    query = query or AttemptQuery()
    order = attempt_order(query.sort, query.descending)
    searched = search_words(query.search) is not None
    page = (
        in_session_order(select(Attempt.id), query.sort, searched)
        .where(*attempt_filters(query))
        .order_by(*order)
        .offset(query.offset)
        .limit(query.limit)
    )
    with store.read() as session:
        rows = session.execute(
            select(Attempt, CaptureSession)
            .join(CaptureSession, CaptureSession.id == Attempt.session_id)
            .where(Attempt.id.in_(page.scalar_subquery()))
            .order_by(*order)
        ).all()
        ids = [attempt.id for attempt, _ in rows]
        results = _newest_results(session, ids)
        jobs = _live_jobs(session, ids)
    flags = CalibrationFlags(store)
    return [_summary(a, s, results.get(a.id), jobs.get(a.id, []), flags) for a, s in rows]


def count_attempts(store: Store, query: AttemptQuery | None = None) -> int:
    """How many attempts ``query`` finds, on every page. The unrevised ones are counted as all
    of them less the revised ones: both read an index, where a count of those without a revision
    would look for one for every attempt."""
    query = query or AttemptQuery()
    if query.review is ReviewFilter.UNREVISED:
        every = replace(query, review=None)
        return _count(store, every) - _count(store, replace(query, review=ReviewFilter.REVISED))
    return _count(store, query)


def _count(store: Store, query: AttemptQuery) -> int:
    with store.read() as session:
        statement = select(func.count()).select_from(Attempt).where(*attempt_filters(query))
        return int(session.scalar(statement) or 0)


def load_result(store: Store, attempt_id: str) -> ResultDetail | None:
    """The attempt's newest result document and its jobs;
    None when the store has no such attempt."""
    with store.read() as session:
        row = session.execute(
            select(Attempt, CaptureSession)
            .join(CaptureSession, CaptureSession.id == Attempt.session_id)
            .where(Attempt.id == attempt_id)
        ).first()
        if row is None:
            return None
        record = session.scalars(
            select(AnalysisResultRecord)
            .where(AnalysisResultRecord.attempt_id == attempt_id)
            .order_by(AnalysisResultRecord.created_at.desc())
            .limit(1)
        ).first()
        jobs = _live_jobs(session, [attempt_id]).get(attempt_id, [])
    summary = _summary(row[0], row[1], record, jobs, CalibrationFlags(store))
    document = json.loads(record.document) if record is not None else None
    stages = tuple(StageState(j.stage_id, j.state, j.error_code, j.error_message) for j in jobs)
    return ResultDetail(
        summary,
        stages,
        document,
        record.digest if record else None,
        record.created_at if record else None,
        previous=record is not None and not _current(jobs),
        reanalysed_as=_reanalyses(store, attempt_id) if summary.flags else (),
    )


def _reanalyses(store: Store, attempt_id: str) -> tuple[int, ...]:
    # the pipeline's modules (capture, rigs) load here, not with the publisher a worker runs
    from labrig.pipeline import reanalyses_of

    return tuple(reanalyses_of(store, attempt_id))


def _newest_results(
    session: Session, attempt_ids: Sequence[str]
) -> dict[str, AnalysisResultRecord]:
    newest: dict[str, AnalysisResultRecord] = {}
    query = (
        select(AnalysisResultRecord)
        .where(AnalysisResultRecord.attempt_id.in_(attempt_ids))
        .order_by(AnalysisResultRecord.created_at)
    )
    for record in session.scalars(query):
        newest[record.attempt_id] = record  # later rows overwrite earlier ones
    return newest


def _live_jobs(session: Session, attempt_ids: Sequence[str]) -> dict[str, list[Job]]:
    grouped: dict[str, list[Job]] = {}
    query = (
        select(Job)
        .where(Job.attempt_id.in_(attempt_ids), Job.state != S.SUPERSEDED.value)
        .order_by(Job.created_at)
    )
    for job in session.scalars(query):
        grouped.setdefault(job.attempt_id or "", []).append(job)
    return grouped


def _current(jobs: Sequence[Job]) -> bool:
    """Whether the newest document still describes the attempt: true when its live jobs are in a
    state the publisher writes a document for (all ended, or one blocked). A reprocess adds a job
    that has not ended, so the older document is then only the previous result. Job states, not
    timestamps, decide: the publisher and the queue may run on workstations whose clocks differ."""
    return any(j.state == S.BLOCKED_BY_QUALITY.value for j in jobs) or all(
        j.state in FINISHED for j in jobs
    )


def _summary(
    attempt: Attempt,
    session: CaptureSession,
    record: AnalysisResultRecord | None,
    jobs: Sequence[Job],
    flags: CalibrationFlags,
) -> AttemptSummary:
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
        flags=flags.of_ids(*used_calibrations(j.config for j in jobs)) if published else (),
    )


def _status(
    record: AnalysisResultRecord | None, jobs: Sequence[Job]
) -> tuple[ResultStatus, list[str]]:
    if record is not None and _current(jobs):
        reasons = [str(r) for r in json.loads(record.reasons)]
        if record.status == "blocked":
            return ResultStatus.BLOCKED, reasons
        return (ResultStatus.DEGRADED, reasons) if record.degraded else (ResultStatus.PUBLISHED, [])
    stopped = [j for j in jobs if j.state in STOPPED]
    if stopped:  # the publisher's document will say the same (analysis/results.py, build_document)
        return ResultStatus.BLOCKED, [f"{j.stage_id}: {j.error_message}" for j in stopped]
    return ResultStatus.PENDING, []


def track_series(raw: Mapping[str, Any]) -> TrackSeries:
    """One kinematics document (a result's ``series`` item) as the plots draw it."""
    import numpy as np  # when a result is shown: the list of attempts opens without it

    dims = 3 if raw.get("xyz") else 2
    xy = np.asarray(raw.get("xyz") or raw.get("xy") or [], dtype=np.float64).reshape(-1, dims)
    t = np.asarray(raw.get("t") or [], dtype=np.float64)
    velocity = raw.get("velocity")
    speed = None
    if velocity:
        speed = np.linalg.norm(np.asarray(velocity, dtype=np.float64).reshape(-1, dims), axis=1)
    colour = raw.get("colour_rgb")
    rgb = (int(colour[0]), int(colour[1]), int(colour[2])) if colour else None
    z = xy[:, 2] if dims == 3 else None
    return TrackSeries(int(raw["track_id"]), t, xy[:, 0], xy[:, 1], speed, rgb, z)
