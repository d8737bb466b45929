"""The effective tracked data of a published result: its automatic tracks with a reviewer's
corrections applied (:mod:`labrig.domain.corrections`), and their kinematics computed exactly as
the kinematics stage computed the automatic ones (``pipeline.kinematics.tracks_kinematics``, with
the same frame times, plane calibration and window). The automatic document is only read.

What a result's tracks were computed from is read back through its provenance: the tracking job's
committed output (the tracks, in px), the kinematics job's configuration (its window, the
calibration) and the capture's recorded frame times. A rig's 3-D result is corrected on its
reconstructed markers (mm, by the reconstruction's instants), whose kinematics are computed as
``kinematics.3d`` computed them (``pipeline.rig_runs.markers_kinematics``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy.orm import Session

from labrig.calibration import load_calibration
from labrig.capture import load_capture
from labrig.domain.corrections import Operation, Track, apply
from labrig.domain.idempotency import canonical_json, sha256_hex
from labrig.domain.revisions import Change, apply_changes
from labrig.errors import LabrigError
from labrig.pipeline.kinematics import tracks_kinematics
from labrig.pipeline.rig_runs import markers_kinematics
from labrig.results.publish import METRICS
from labrig.review.records import in_force
from labrig.store import Store
from labrig.store.models import AnalysisResultRecord, Job, JobOutput, ResultRevision

Array = npt.NDArray[np.float64]


class CorrectionUnsupportedError(LabrigError):
    code = "LABRIG_CORRECTION_UNSUPPORTED"


@dataclass(frozen=True)
class TrackedInput:
    """What a result's kinematics were computed from."""

    tracks: dict[str, Track]  # the automatic tracks (px), by track id as text
    ids: dict[str, Any]  # track id as text → as the documents spell it
    colours: dict[str, Any]
    times_s: Array | None  # each stored frame's time (None: lengths per frame)
    fps: float
    homography: Array | None  # image px → plane mm (None: px)
    window_s: float | None
    dims: int = 2  # 3: a rig's reconstructed markers (frames are the reconstruction's instants)


@dataclass(frozen=True)
class EffectiveTracks:
    """The corrected tracks and their kinematics documents (as the result's ``metrics`` and
    ``series`` hold them), each track's ``filled`` frames named."""

    units: dict[str, str]
    tracks: dict[str, Track]
    kinematics: list[dict[str, Any]]

    def metrics(self) -> list[dict[str, Any]]:
        return [{k: t.get(k) for k in METRICS} for t in self.kinematics]


def tracked_input(store: Store, session: Session, result: AnalysisResultRecord) -> TrackedInput:
    """What ``result``'s kinematics were computed from, read in ``session``: a rig's reconstructed
    markers, or a camera's tracks."""
    doc = json.loads(result.document)
    jobs = {j["stage_id"]: j for j in doc["provenance"]["jobs"]}
    if "reconstruction.3d" in jobs and "kinematics.3d" in jobs:
        return _reconstructed_input(session, jobs)
    if "tracking.markers" not in jobs or "kinematics" not in jobs:
        raise CorrectionUnsupportedError(
            f"result {result.id} has no tracked markers to correct (its stages: "
            f"{', '.join(sorted(jobs)) or 'none'})"
        )
    tracking = _output(session, jobs["tracking.markers"])
    kin_job = session.get(Job, jobs["kinematics"]["job_id"])
    config = json.loads(kin_job.config) if kin_job is not None and kin_job.config else {}
    media = load_capture(store, doc["provenance"]["inputs"][0])
    calibration_id = config.get("calibration_id")
    homography = None
    if calibration_id:
        plane = load_calibration(store, calibration_id).plane_homography
        homography = None if plane is None else np.asarray(plane, dtype=np.float64)
    items = tracking["tracks"]["tracks"]
    return TrackedInput(
        tracks={
            str(t["track_id"]): Track(
                np.asarray(t["frames"], dtype=np.int64),
                np.asarray(t["xy"], dtype=np.float64).reshape(-1, 2),
            )
            for t in items
        },
        ids={str(t["track_id"]): t["track_id"] for t in items},
        colours={str(t["track_id"]): t.get("colour_rgb") for t in items},
        times_s=media.times_s() if media.timed else None,
        fps=media.fps,
        homography=homography,
        window_s=config.get("window_s"),
    )


def _reconstructed_input(session: Session, jobs: Mapping[str, Any]) -> TrackedInput:
    """What a rig result's 3-D kinematics were computed from: the reconstruction's markers (mm, by
    instant) and the instants' times, with the kinematics job's window."""
    rebuilt = _output(session, jobs["reconstruction.3d"])
    kin_job = session.get(Job, jobs["kinematics.3d"]["job_id"])
    config = json.loads(kin_job.config) if kin_job is not None and kin_job.config else {}
    markers = rebuilt["reconstruction"]["markers"]
    times = np.asarray(rebuilt["times_s"], dtype=np.float64)
    steps = np.diff(times)
    return TrackedInput(
        tracks={
            str(m["track_id"]): Track(
                np.asarray(m["instants"], dtype=np.int64),
                np.asarray(m["xyz"], dtype=np.float64).reshape(-1, 3),
            )
            for m in markers
        },
        ids={str(m["track_id"]): m["track_id"] for m in markers},
        colours={str(m["track_id"]): m.get("colour_rgb") for m in markers},
        times_s=times,
        fps=float(1.0 / np.median(steps)) if len(steps) and np.median(steps) > 0 else 30.0,
        homography=None,
        window_s=config.get("window_s"),
        dims=3,
    )


def _output(session: Session, job: Mapping[str, Any]) -> dict[str, Any]:
    row = session.get(JobOutput, job.get("idempotency_key") or "")
    if row is None:
        raise CorrectionUnsupportedError(
            f"the output of job {job.get('job_id')} ({job.get('stage_id')}) is not in the "
            "catalog; reprocess the attempt"
        )
    return json.loads(row.body)  # type: ignore[no-any-return]


def effective_tracks(source: TrackedInput, operations: Sequence[Operation]) -> EffectiveTracks:
    """The tracks after ``operations`` (refused, as :func:`apply` refuses, when one does not
    apply) and their kinematics; a track the corrections emptied is left out."""
    tracks = apply(source.tracks, operations)
    kept = {name: t for name, t in tracks.items() if len(t.frames)}
    if source.dims == 3:
        docs = markers_kinematics(
            (
                {
                    "track_id": source.ids.get(name, name),
                    "colour_rgb": source.colours.get(name),
                    "instants": t.frames,
                    "xyz": t.xy,
                }
                for name, t in kept.items()
            ),
            source.times_s,
            source.window_s,
        )
        for doc, t in zip(docs, kept.values(), strict=True):
            doc["filled_frames"] = sorted(t.filled)
        return EffectiveTracks({"length": "mm", "time": "s"}, kept, docs)
    units, docs = tracks_kinematics(
        (
            {
                "track_id": source.ids.get(name, name),
                "colour_rgb": source.colours.get(name),
                "frames": t.frames,
                "xy": t.xy,
            }
            for name, t in kept.items()
        ),
        source.times_s,
        source.fps,
        source.homography,
        source.window_s,
    )
    for doc, t in zip(docs, kept.values(), strict=True):
        doc["filled_frames"] = sorted(t.filled)
    return EffectiveTracks(units, kept, docs)


def operations_of(history: Sequence[ResultRevision]) -> list[Operation]:
    """Every correction of the revisions ``history`` that is in force (not undone), in order."""
    return [
        Operation.of(o)
        for r in in_force(history)
        for o in json.loads(r.document).get("operations", [])
    ]


def corrected_metrics(
    store: Store, session: Session, result: AnalysisResultRecord, history: Sequence[ResultRevision]
) -> tuple[list[dict[str, Any]], int | None]:
    """The metrics of the tracks as the corrections in ``history`` left them, and the number of
    the last revision with a correction; the automatic metrics and None when there is none."""
    operations = operations_of(history)
    if not operations:
        return list(json.loads(result.document).get("metrics") or []), None
    last = max(r.number for r in in_force(history) if json.loads(r.document).get("operations"))
    return effective_tracks(tracked_input(store, session, result), operations).metrics(), last


def effective_metrics(
    store: Store, session: Session, result: AnalysisResultRecord, history: Sequence[ResultRevision]
) -> list[dict[str, Any]]:
    """The metrics in force: those of the corrected tracks, with every value a reviewer set
    (``labrig review revise --set``) applied in order over them."""
    metrics, _ = corrected_metrics(store, session, result, history)
    changes = [Change.of(c) for r in in_force(history) for c in json.loads(r.document)["changes"]]
    return apply_changes(metrics, changes)


def effective_digest(
    result: AnalysisResultRecord,
    metrics: Sequence[Mapping[str, Any]],
    history: Sequence[ResultRevision],
) -> str:
    """SHA-256 of what a sign-off approves: the automatic document's digest, every correction of
    the tracks in order and the metrics in force. Any later correction or value set changes it."""
    body = {
        "result_digest": result.digest,
        "operations": [o.to_json() for o in operations_of(history)],
        "metrics": list(metrics),
    }
    return sha256_hex(canonical_json(body))
