"""What the review player draws over each camera of a rig's 3-D result, and its frames to look at.
Qt-free.

For every marker the reconstruction made (``reconstruction.3d``'s output), in every camera of the
reconstruction: the 2-D detections of its member tracks in that camera (``tracking.rig``'s
output, px of the undistorted picture, distorted back through that camera's lens onto the
recorded picture; none in a camera that never matched it), and its 3-D position at each instant
projected into that camera through the rig calibration the reconstruction used
(:func:`labrig.calibration.project`), at the frame of that camera the reconstruction paired with
the instant (:func:`labrig.calibration.pair_instants` over the same frame times and post-hoc
offsets, as ``pipeline.rig_runs.reconstruction`` pairs them). Each camera's distance between the
two is measured as the reconstruction measures it
(:func:`labrig.calibration.triangulation.view_errors_px`, px of the undistorted picture), so over
the cameras a point was solved from, their RMS is the ``error_px`` the result reports.

Frames to look at (:func:`labrig.domain.corrections.rig_suspicious_frames`), on the player's first
camera: a marker's reprojection error over :data:`LOOK_REPROJECTION_PX`, naming the camera that
fits worst, and each gap of a marker's 3-D positions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy.orm import Session

from labrig.calibration import CalibratedCamera, load_rig_calibration, pair_instants, project
from labrig.calibration.triangulation import view_errors_px
from labrig.capture.rig_sync import Stream, capture_stream
from labrig.domain.corrections import Suspicious, Track, rig_suspicious_frames
from labrig.domain.frame_times import nearest_frames
from labrig.pipeline.lens import distort_px
from labrig.store import Store
from labrig.store.models import Job, JobOutput

Array = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

#: a marker's reprojection error (px, RMS over its cameras) over this is a frame to look at
LOOK_REPROJECTION_PX = 2.0


@dataclass(frozen=True)
class RigMarkerView:
    """One reconstructed marker as one camera saw it, by that camera's stored frame, in the
    recorded picture's px: its detections and its 3-D position reprojected, and at each
    reprojected frame the camera's distance between the two as the reconstruction measures it
    (px; NaN where the camera has no detection then)."""

    track_id: str
    colour_rgb: tuple[int, int, int] | None
    detected: Track
    reprojected: Track
    view_error_px: Array


@dataclass(frozen=True)
class RigOverlays:
    cameras: list[list[RigMarkerView]]  # per capture, in the order asked for
    looks: list[Suspicious]  # on the first capture's frames


@dataclass(frozen=True)
class RigSource:
    """What a rig result's 3-D positions were made from: the tracking and reconstruction jobs'
    outputs, and the reconstruction's post-hoc offsets with the captures they are ordered by."""

    tracked: dict[str, Any]
    rebuilt: dict[str, Any]
    offsets_ms: list[float] | None
    digests: list[str]

    def offset_of(self, digest: str) -> float | None:
        if not self.offsets_ms or digest not in self.digests:
            return None
        return float(self.offsets_ms[self.digests.index(digest)])


def rig_source(session: Session, document: Mapping[str, Any]) -> RigSource | None:
    """``document``'s rig reconstruction read back in ``session`` (None: not a rig's 3-D result,
    or its jobs' outputs are not in the catalog)."""
    if document.get("reconstruction") is None:
        return None
    jobs = {j["stage_id"]: j for j in document["provenance"]["jobs"]}
    tracking, building = jobs.get("tracking.rig"), jobs.get("reconstruction.3d")
    if tracking is None or building is None:
        return None
    outputs = [session.get(JobOutput, j.get("idempotency_key") or "") for j in (tracking, building)]
    job = session.get(Job, building["job_id"])
    if outputs[0] is None or outputs[1] is None or job is None:
        return None
    config = json.loads(job.config) if job.config else {}
    digests = [d for d in json.loads(job.input_digests) if d != tracking.get("output_digest")]
    return RigSource(
        json.loads(outputs[0].body),
        json.loads(outputs[1].body),
        config.get("offsets_ms"),
        digests,
    )


def rig_streams(store: Store, source: RigSource) -> tuple[list[Stream], Ints]:
    """The frame times of the cameras the reconstruction used (in its order, with its post-hoc
    offsets), and each camera's frame at each of its instants (K×M, -1: none), paired as the
    reconstruction paired them."""
    streams = [
        capture_stream(
            store, c["manifest_sha256"], c["camera"], source.offset_of(c["manifest_sha256"])
        )
        for c in source.tracked["cameras"]
    ]
    return streams, pair_instants([s.mono_ns for s in streams], [s.fps for s in streams])


def rig_overlays(
    store: Store, source: RigSource, captures: Sequence[str], times_s: Sequence[Array]
) -> RigOverlays:
    """Each marker in each of ``captures`` (capture ids, the player's cameras; ``times_s``: their
    frames' times on the player's clock), and the frames to look at on the first's frames."""
    calibration = load_rig_calibration(store, source.rebuilt["rig_calibration_id"])
    by_name = {c.name: c for c in calibration.cameras()}
    cams = source.tracked["cameras"]
    _, frames_at = rig_streams(store, source)
    place = [captures.index(c["capture_id"]) if c["capture_id"] in captures else -1 for c in cams]
    out: list[list[RigMarkerView]] = [[] for _ in captures]
    fits: dict[str, tuple[Ints, Array, list[str]]] = {}
    gaps: dict[str, list[tuple[int, int]]] = {}
    names = [c["camera"] for c in cams]
    lead = _lead_frames(frames_at[0], times_s, place[0])
    for marker in source.rebuilt["reconstruction"]["markers"]:
        track_id = str(marker["track_id"])
        colour = marker.get("colour_rgb")
        instants = np.asarray(marker["instants"], dtype=np.int64)
        xyz = np.asarray(marker["xyz"], dtype=np.float64).reshape(-1, 3)
        errors = np.full((len(cams), len(instants)), np.nan)
        for k, cam in enumerate(cams):
            members = {m["track_id"] for m in marker["members"] if m["camera"] == cam["camera"]}
            tracks = [t for t in cam["tracks"]["tracks"] if t["track_id"] in members]
            detected, reprojected, view_error, errors[k] = _camera_view(
                by_name[cam["camera"]], _joined(tracks), xyz, frames_at[k][instants]
            )
            if place[k] >= 0:  # one it never matched still shows where it should be
                rgb = None if colour is None else (int(colour[0]), int(colour[1]), int(colour[2]))
                out[place[k]].append(
                    RigMarkerView(track_id, rgb, detected, reprojected, view_error)
                )
        used = _used(marker, len(cams), errors)
        worst = np.where(used, np.nan_to_num(errors, nan=-1.0), -np.inf).argmax(axis=0)
        error_px = np.asarray(marker["error_px"], dtype=np.float64)
        fits[track_id] = (lead[instants], error_px, [names[k] for k in worst])
        gaps[track_id] = [(int(lead[a]), int(lead[b])) for a, b in marker.get("gaps") or []]
    looks = rig_suspicious_frames(fits, gaps, limit_px=LOOK_REPROJECTION_PX)
    return RigOverlays(out, looks)


def _lead_frames(frames: Ints, times_s: Sequence[Array], place: int) -> Ints:
    """The player's first camera's frame at each instant: nearest in time to the reconstruction's
    first camera's frame at it (that frame itself when the two cameras are one)."""
    if place == 0 or place < 0 or not len(times_s[0]):
        return np.asarray(frames, dtype=np.int64)
    at = times_s[place][np.clip(frames, 0, len(times_s[place]) - 1)]
    return nearest_frames(times_s[0], at)


def _joined(tracks: Sequence[Mapping[str, Any]]) -> Track:
    """One camera's member tracks of a marker as one track (undistorted px), by frame."""
    frames = np.zeros(0, dtype=np.int64)
    xy = np.zeros((0, 2))
    for t in tracks:
        frames = np.concatenate([frames, np.asarray(t["frames"], dtype=np.int64)])
        xy = np.concatenate([xy, np.asarray(t["xy"], dtype=np.float64).reshape(-1, 2)])
    order = np.argsort(frames, kind="stable")
    return Track(frames[order], xy[order])


def _camera_view(
    camera: CalibratedCamera, detected: Track, xyz: Array, frames: Ints
) -> tuple[Track, Track, Array, Array]:
    """The detections and the reprojections in ``camera``'s recorded picture, the view's error
    at each reprojected frame, and its error at each instant (NaN where it has no detection)."""
    lens = (camera.matrix, camera.dist)
    obs = np.full((len(frames), 2), np.nan)
    if len(detected.frames):
        k = np.clip(np.searchsorted(detected.frames, frames), 0, len(detected.frames) - 1)
        hit = (frames >= 0) & (detected.frames[k] == frames)
        obs[hit] = detected.xy[k[hit]]
    # normalised as the reconstruction normalises a track's positions (its camera matrix)
    homog = np.column_stack([obs, np.ones(len(obs))]) @ np.linalg.inv(camera.matrix).T
    seen = np.isfinite(obs[:, 0])
    errors = view_errors_px(
        xyz, (homog[:, :2] / homog[:, 2:3])[None], seen[None], [camera.pose], [camera.focal_px]
    )[0]
    depth = xyz @ camera.pose.rotation[2] + camera.pose.translation_mm[2]
    shown = (frames >= 0) & (depth > 0)
    _, first = np.unique(frames[shown], return_index=True)  # one instant per frame
    pick = np.flatnonzero(shown)[first]
    reprojected = Track(frames[pick], project(xyz[pick], camera.pose, camera.matrix, camera.dist))
    picture = Track(detected.frames, distort_px(detected.xy, lens))
    return picture, reprojected, errors[pick], errors


def _used(marker: Mapping[str, Any], cameras: int, errors: Array) -> Any:
    """K×N: the cameras each point was solved from (the reconstruction's ``views`` bits; where
    a result does not keep them, every camera that saw the marker)."""
    views = marker.get("views")
    if views is None:
        return np.isfinite(errors)
    bits = np.asarray(views, dtype=np.int64)
    return (bits[None, :] >> np.arange(cameras, dtype=np.int64)[:, None]) & 1 == 1
