"""What the review player shows of a result: every camera of its attempt, frame-accurate, in step,
and the tracked markers to draw over the cameras' pictures. Qt-free.

The player's position is a frame of the first camera (the one a 2-D result was tracked on), by its
stored index. Every other camera shows its frame nearest in recorded time, within half a frame
period (none past its ends), as a rig's analysis pairs them. Frames are read by
:class:`~labrig.capture.FrameReader` (one per camera, opened by :meth:`ResultMedia.readers` on the
thread that decodes). The overlays are the effective tracks (after every correction) and the
automatic ones, in picture px: tracks measured on an undistorted picture are distorted back
through the calibration's lens so they sit on the markers as recorded. A rig's 3-D result has
no tracks to correct (``overlays`` is empty); over every camera it draws each marker's detections
there and its 3-D position reprojected into it (:mod:`labrig.review.rig_overlays`), and lists its
own frames to look at (reprojection errors, gaps).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import select

from labrig.calibration import load_calibration
from labrig.capture import CaptureMedia, FrameReader, load_capture, read_timestamps
from labrig.capture.samples import is_sample_mode
from labrig.domain.corrections import Suspicious, Track
from labrig.domain.frame_times import nearest_frames
from labrig.pipeline.lens import Lens, distort_px, undistort_px
from labrig.results import TrackSeries, track_series
from labrig.review.effective import CorrectionUnsupportedError
from labrig.review.records import find_result
from labrig.review.revisions import RevisionService
from labrig.review.rig_overlays import RigSource, rig_overlays, rig_source
from labrig.store import Store
from labrig.store.models import AttemptCapture, Capture, Job

Array = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PlayerCamera:
    capture_id: str
    device_id: str
    frame_count: int
    width: int
    height: int
    times_s: Array  # each frame's time from the first camera's first frame


@dataclass(frozen=True)
class Overlay:
    """One track drawn over a camera: its id and colour, and its positions (picture px) by that
    camera's frame, automatic and effective (whose ``filled`` frames a correction interpolated).
    A rig's 3-D marker: its detections in the camera (automatic and effective alike), its 3-D
    position reprojected into it, and the camera's distance between the two at each reprojected
    frame as the reconstruction measures it (px of the undistorted picture; NaN: no detection)."""

    track_id: str
    colour_rgb: tuple[int, int, int] | None
    automatic: Track
    effective: Track | None  # None when the corrections removed it
    reprojected: Track | None = None  # a rig's 3-D marker, projected into this camera
    view_error_px: Array | None = None  # by ``reprojected``'s frames


@dataclass(frozen=True)
class Curves:
    """Each track's speed as the kinematics stage computed it (automatic) and as the corrected
    tracks give it (in force), in the result's units (length, time)."""

    units: tuple[str, str]
    automatic: list[TrackSeries]
    effective: list[TrackSeries]


@dataclass(frozen=True)
class ResultMedia:
    result_id: str
    cameras: list[PlayerCamera]
    media: list[CaptureMedia]
    overlays: list[Overlay]
    # the lens the tracks were undistorted through (camera matrix, distortion), None: not
    lens: Lens | None = None
    curves: Curves | None = None  # the tracks' speeds, automatic and in force
    # a rig's 3-D result: each camera's markers (as ``cameras``); None: ``overlays`` on the first
    rig_overlays: list[list[Overlay]] | None = None
    # a rig's 3-D result: its frames to look at; None: found on the tracks in force
    rig_looks: list[Suspicious] | None = None

    @property
    def overlays_by_camera(self) -> list[list[Overlay]]:
        """What to draw over each camera (as ``cameras``)."""
        if self.rig_overlays is not None:
            return self.rig_overlays
        return [list(self.overlays) if n == 0 else [] for n in range(len(self.cameras))]

    def frame_at_time(self, t: float) -> int:
        """The first camera's frame nearest the time ``t`` (its times, or frame numbers when the
        result's time is counted in frames)."""
        if self.curves is not None and self.curves.units[1] == "frames":
            return min(max(round(t), 0), max(self.frame_count - 1, 0))
        times = self.cameras[0].times_s if self.cameras else np.zeros(0)
        return int(nearest_frames(times, t)) if len(times) else 0

    def time_of(self, index: int) -> float:
        """The first camera's frame ``index`` on the curves' time axis."""
        if self.curves is not None and self.curves.units[1] == "frames":
            return float(index)
        times = self.cameras[0].times_s if self.cameras else np.zeros(0)
        return float(times[min(max(index, 0), len(times) - 1)]) if len(times) else 0.0

    def tracked_px(self, x: float, y: float) -> tuple[float, float]:
        """A point of the first camera's recorded picture in the tracks' px (undistorted through
        the lens when they were): where a marker dragged there is stored by a ``move``."""
        out = undistort_px([[x, y]], self.lens)[0]
        return float(out[0]), float(out[1])

    @property
    def frame_count(self) -> int:
        """The first camera's frames: the player's positions."""
        return self.cameras[0].frame_count if self.cameras else 0

    @property
    def fps(self) -> float:
        return self.media[0].fps if self.media else 30.0

    def frames_at(self, index: int) -> list[int | None]:
        """Each camera's frame at the first camera's frame ``index`` (nearest in time, within half
        a frame period; None where that camera has none)."""
        lead = self.cameras[0].times_s
        at = float(lead[min(max(index, 0), len(lead) - 1)]) if len(lead) else 0.0
        out: list[int | None] = [index]
        for camera, media in zip(self.cameras[1:], self.media[1:], strict=True):
            times = camera.times_s
            if not len(times):
                out.append(None)
                continue
            k = int(nearest_frames(times, at))
            out.append(k if abs(times[k] - at) <= 0.5 / media.fps else None)
        return out

    def readers(self) -> list[FrameReader]:
        """A frame reader per camera, for the one thread that decodes."""
        return [FrameReader(m) for m in self.media]


def result_media(store: Store, revisions: RevisionService, result_id: str) -> ResultMedia:
    """The cameras of ``result_id``'s attempt and the tracks to draw (a rig's 3-D result: its
    markers over every camera; none for a result whose tracks cannot be read back: its pictures
    still play)."""
    with store.read() as session:
        result = find_result(session, result_id)
        rows = session.execute(
            select(Capture.manifest_sha256)
            .join(AttemptCapture, AttemptCapture.capture_id == Capture.id)
            .where(AttemptCapture.attempt_id == result.attempt_id)
            .order_by(AttemptCapture.position)
        ).all()
        result_id = result.id
        document = json.loads(result.document)
        lens = _tracking_lens(store, session, document)
        rig = rig_source(session, document)
    media = [load_capture(store, digest) for (digest,) in rows if digest]
    media = [m for m in media if not is_sample_mode(m.mode)]
    starts = [m.times_s() for m in media]
    cameras = []
    origin = first_mono_s(media[0]) if media else 0.0
    for m, relative in zip(media, starts, strict=True):
        offset = first_mono_s(m) - origin
        cameras.append(
            PlayerCamera(
                m.capture_id,
                m.device_id,
                m.frame_count,
                int(m.mode.get("width") or 0),
                int(m.mode.get("height") or 0),
                relative + offset,
            )
        )
    overlays, curves = _tracks(revisions, result_id, lens, document)
    if rig is None:
        return ResultMedia(result_id, cameras, media, overlays, lens, curves)
    by_camera, looks = _rig(store, rig, cameras)
    return ResultMedia(result_id, cameras, media, overlays, lens, curves, by_camera, looks)


def _rig(
    store: Store, source: RigSource, cameras: list[PlayerCamera]
) -> tuple[list[list[Overlay]], list[Suspicious]]:
    """A rig's 3-D markers over each camera, and its frames to look at."""
    rig = rig_overlays(store, source, [c.capture_id for c in cameras], [c.times_s for c in cameras])
    by_camera = [
        [
            Overlay(
                m.track_id,
                m.colour_rgb,
                m.detected,
                m.detected,
                m.reprojected,
                m.view_error_px,
            )
            for m in markers
        ]
        for markers in rig.cameras
    ]
    return by_camera, rig.looks


def first_mono_s(media: CaptureMedia) -> float:
    """The first frame's recorded monotonic time (s), 0 when the frames' times are not recorded:
    the cameras of a rig share the host's clock, so their frames line up by it."""
    first = media.timestamps[0] if media.timestamps else None
    if first is None:
        return 0.0
    stamps = read_timestamps(first)
    return stamps[0] / 1e9 if stamps else 0.0


def _tracking_lens(store: Store, session: Any, document: dict[str, Any]) -> tuple[Any, Any] | None:
    """The lens the tracks were undistorted through (camera matrix, distortion), or None."""
    job = next(
        (j for j in document["provenance"]["jobs"] if j["stage_id"] == "tracking.markers"), None
    )
    row = session.get(Job, job["job_id"]) if job else None
    config = json.loads(row.config) if row is not None and row.config else {}
    calibration_id = config.get("calibration_id")
    if not calibration_id:
        return None
    calibration = load_calibration(store, calibration_id)
    return np.asarray(calibration.camera_matrix), np.asarray(calibration.dist)


def _tracks(
    revisions: RevisionService, result_id: str, lens: Lens | None, document: dict[str, Any]
) -> tuple[list[Overlay], Curves | None]:
    """The overlays (picture px) and the speed curves of the result's tracks: automatic (the
    published ``document``'s series) and in force (none for a result whose tracks cannot be read
    back)."""
    try:
        source, effective = revisions.effective(result_id)
    except CorrectionUnsupportedError:
        return [], None
    curves = Curves(
        (effective.units.get("length", ""), effective.units.get("time", "")),
        [track_series(s) for s in document.get("series") or []],
        [track_series(k) for k in effective.kinematics],
    )
    if source.dims == 3:  # a rig's markers are drawn by its rig overlays, over every camera
        return [], curves
    out = []
    for name, track in source.tracks.items():
        corrected = effective.tracks.get(name)
        colour = source.colours.get(name)
        out.append(
            Overlay(
                name,
                None if colour is None else (int(colour[0]), int(colour[1]), int(colour[2])),
                _in_picture(track, lens),
                None if corrected is None else _in_picture(corrected, lens),
            )
        )
    return out, curves


def _in_picture(track: Track, lens: tuple[Any, Any] | None) -> Track:
    """``track`` in the recorded picture's px: undistorted positions distorted back."""
    if lens is None or not len(track.frames):
        return track
    return Track(track.frames, distort_px(track.xy, lens), track.filled)
