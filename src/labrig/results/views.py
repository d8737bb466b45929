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
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from labrig.domain.events import EventName
from labrig.domain.jobs import JobState
from labrig.results.attempt_list import (
    STOPPED,
    AttemptSummary,
    ResultStatus,
    attempt_summary,
    document_is_current,
)
from labrig.results.flags import CalibrationFlags
from labrig.store import Store
from labrig.store.models import AnalysisResultRecord, Attempt, CaptureSession, Job

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Array = npt.NDArray[np.float64]

S = JobState
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
    summary = attempt_summary(row[0], row[1], record, jobs, CalibrationFlags(store))
    document = json.loads(record.document) if record is not None else None
    stages = tuple(StageState(j.stage_id, j.state, j.error_code, j.error_message) for j in jobs)
    return ResultDetail(
        summary,
        stages,
        document,
        record.digest if record else None,
        record.created_at if record else None,
        previous=record is not None and not document_is_current(jobs),
        reanalysed_as=_reanalyses(store, attempt_id) if summary.flags else (),
    )


def _reanalyses(store: Store, attempt_id: str) -> tuple[int, ...]:
    # the pipeline's modules (capture, rigs) load here, not with the publisher a worker runs
    from labrig.pipeline import reanalyses_of

    return tuple(reanalyses_of(store, attempt_id))


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
