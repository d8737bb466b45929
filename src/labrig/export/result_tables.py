"""A published result's tables (:mod:`labrig.export.tables`), read from its export snapshot and its
recording as the review player opens it (:func:`labrig.review.player.result_media`).

- The **points** are what the kinematics were computed from: a rig's reconstructed markers (mm, one
  row per reconstruction instant, each point's reprojection error as its residual), or a camera's
  tracks mapped onto its calibrated plane (mm), or, with no calibration, the tracks in px. Where a
  reviewer corrected the tracks, the corrected positions sit beside the automatic ones.
- The **views** are each camera's picture (px, as recorded: tracks measured undistorted are
  distorted back), one row per stored frame: a 2-D result's tracks on its camera, a rig's
  detections of each 3-D marker on every camera.
- The **analog** tables are the attempt's instrument captures, every sample at its own rate.

Every time is in seconds from one zero, the first camera's first frame on the host's monotonic
clock (the player's zero), so the formats' points, views and instruments line up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from labrig.capture import load_capture
from labrig.capture.samples import is_sample_mode, read_chunk, sample_mode_from_json
from labrig.domain.corrections import Track
from labrig.export.snapshot import ResultSnapshot
from labrig.export.tables import (
    AnalogTable,
    Array,
    CameraInfo,
    Channel,
    Marker,
    Mask,
    PointTable,
    ResultTables,
    marker_label,
    safe_name,
    unique_names,
)
from labrig.pipeline.kinematics import to_plane_mm
from labrig.review.effective import EffectiveTracks, TrackedInput
from labrig.review.player import Overlay, ResultMedia, first_mono_s
from labrig.review.rig_overlays import RigSource, rig_streams
from labrig.store import Store


def result_tables(
    store: Store, snap: ResultSnapshot, media: ResultMedia, provenance: Mapping[str, str]
) -> ResultTables | None:
    """``snap``'s tables (None when the result has no tracked markers to write)."""
    source = snap.tracked
    if source is None or not media.cameras:
        return None
    zero_s = first_mono_s(media.media[0])  # the player's zero: its first camera's first frame
    views = tuple(
        _view(media, k, corrected=snap.corrected is not None) for k in range(len(media.cameras))
    )
    if source.dims == 3 and snap.rig is not None:
        points = _rig_points(store, snap, snap.rig, zero_s)
    else:
        points = _camera_points(snap, media)
    return ResultTables(
        result_id=snap.reviewed.result_id,
        attempt_id=snap.reviewed.attempt_id,
        attempt_number=snap.attempt_number,
        session=dict(snap.session) | {"started_at": _started_at(snap, media)},
        created_at=snap.created_at,
        points=points,
        views=views,
        cameras=tuple(
            CameraInfo(c.device_id, c.capture_id, name, c.width, c.height, m.fps, c.frame_count)
            for c, m, name in zip(media.cameras, media.media, _names(snap, media), strict=True)
        ),
        analog=tuple(_instruments(store, snap, zero_s)),
        provenance=dict(provenance),
    )


def _names(snap: ResultSnapshot, media: ResultMedia) -> list[str]:
    """Each camera's safe name: its place in the rig, else its device id; unique (``-2``, ``-3``
    … when two sanitise alike)."""
    wanted = [snap.places.get(c.capture_id) or c.device_id for c in media.cameras]
    return unique_names(wanted, 40, lambda name: safe_name(name, "camera"))


def _started_at(snap: ResultSnapshot, media: ResultMedia) -> str | None:
    """When the attempt's first camera started recording (wall clock, ISO 8601): the attempt's
    zero is its first frame."""
    first = media.cameras[0].capture_id
    return next((c.info.get("started_at") for c in snap.captures if c.capture_id == first), None)


def _rate(times_s: Array, fallback: float) -> float:
    steps = np.diff(times_s)
    steps = steps[steps > 0]
    return float(1.0 / np.median(steps)) if len(steps) else fallback


def _grid(tracks: Sequence[Track | None], rows: int, dims: int) -> tuple[Array, Any]:
    """N×M×D positions of ``tracks`` by row (NaN where not seen), and N×M: filled by a gap fill."""
    out = np.full((rows, len(tracks), dims), np.nan)
    filled = np.zeros((rows, len(tracks)), dtype=bool)
    for m, track in enumerate(tracks):
        if track is None or not len(track.frames):
            continue
        keep = (track.frames >= 0) & (track.frames < rows)
        out[track.frames[keep], m, :] = track.xy[keep][:, :dims]
        for f in track.filled:
            if 0 <= f < rows:
                filled[f, m] = True
    return out, filled


def _positions(
    source: TrackedInput, corrected: EffectiveTracks | None, rows: int
) -> tuple[Array, Array | None, Mask | None]:
    """The automatic positions of ``source``'s tracks by row, and (when corrected) the effective
    ones with the rows a gap fill interpolated."""
    names = list(source.tracks)
    automatic, _ = _grid([source.tracks[n] for n in names], rows, source.dims)
    if corrected is None:
        return automatic, None, None
    effective, filled = _grid([corrected.tracks.get(n) for n in names], rows, source.dims)
    return automatic, effective, filled


def _markers(ids: Sequence[Any], colours: Mapping[str, Any], what: str) -> tuple[Marker, ...]:
    out = []
    for track_id in ids:
        colour = colours.get(str(track_id))
        rgb = None if colour is None else (int(colour[0]), int(colour[1]), int(colour[2]))
        out.append(Marker(marker_label(track_id), track_id, rgb, f"{what} {track_id}"))
    return tuple(out)


def _camera_points(snap: ResultSnapshot, media: ResultMedia) -> PointTable:
    """A 2-D result's tracks: on the calibrated plane (mm), else in px as tracked."""
    source, corrected = snap.tracked, snap.corrected
    assert source is not None
    camera = media.cameras[0]
    rows = camera.frame_count
    names = list(source.tracks)
    automatic, effective, filled = _positions(source, corrected, rows)
    if source.homography is not None:
        automatic = _on_plane(automatic, source.homography)
        effective = None if effective is None else _on_plane(effective, source.homography)
    times = np.asarray(camera.times_s, dtype=np.float64)[:rows]
    return PointTable(
        kind="image" if source.homography is None else "plane",
        camera=camera.device_id,
        units="px" if source.homography is None else "mm",
        rate_hz=_rate(times, source.fps),
        frames=np.arange(rows, dtype=np.int64),
        times_s=times,
        markers=_markers([source.ids[n] for n in names], source.colours, "track"),
        automatic=automatic,
        effective=effective,
        filled=filled,
    )


def _on_plane(grid: Array, homography: Array) -> Array:
    flat = grid.reshape(-1, 2)
    out = np.full_like(flat, np.nan)
    seen = np.isfinite(flat[:, 0])
    if seen.any():
        out[seen] = to_plane_mm(flat[seen], homography)
    return out.reshape(grid.shape)


def _rig_points(store: Store, snap: ResultSnapshot, rig: RigSource, zero_s: float) -> PointTable:
    """A rig's reconstructed markers (mm) by instant, with each point's reprojection error."""
    source, corrected = snap.tracked, snap.corrected
    assert source is not None and source.times_s is not None
    rows = len(source.times_s)
    names = list(source.tracks)
    automatic, effective, filled = _positions(source, corrected, rows)
    residual = np.full((rows, len(names)), np.nan)
    by_id = {str(m["track_id"]): m for m in rig.rebuilt["reconstruction"]["markers"]}
    for m, name in enumerate(names):
        marker = by_id.get(name)
        if marker is not None:
            instants = np.asarray(marker["instants"], dtype=np.int64)
            residual[instants, m] = np.asarray(marker["error_px"], dtype=np.float64)
    times = np.asarray(source.times_s, dtype=np.float64) + _instants_offset_s(store, rig, zero_s)
    return PointTable(
        kind="3d",
        camera=None,
        units="mm",
        rate_hz=_rate(times, source.fps),
        frames=np.arange(rows, dtype=np.int64),
        times_s=times,
        markers=_markers([source.ids[n] for n in names], source.colours, "3-D marker"),
        automatic=automatic,
        effective=effective,
        filled=filled,
        residual_px=residual,
    )


def _instants_offset_s(store: Store, rig: RigSource, zero_s: float) -> float:
    """Where the reconstruction's first instant lies from the attempt's zero: its times count from
    its first camera's frame at that instant."""
    streams, frames_at = rig_streams(store, rig)
    if not frames_at.shape[1] or not len(streams[0].mono_ns):
        return 0.0
    return float(streams[0].mono_ns[int(frames_at[0][0])]) / 1e9 - zero_s


def _view(media: ResultMedia, k: int, *, corrected: bool) -> PointTable:
    """Camera ``k``'s picture: its markers by stored frame (px, as recorded)."""
    camera = media.cameras[k]
    overlays: list[Overlay] = media.overlays_by_camera[k]
    rows = camera.frame_count
    automatic, _ = _grid([o.automatic for o in overlays], rows, 2)
    effective = filled = None
    if corrected and media.rig_overlays is None:  # a rig's corrections are in 3-D
        effective, filled = _grid([o.effective for o in overlays], rows, 2)
    times = np.asarray(camera.times_s, dtype=np.float64)[:rows]
    what = "3-D marker" if media.rig_overlays is not None else "track"
    return PointTable(
        kind="image",
        camera=camera.device_id,
        units="px",
        rate_hz=_rate(times, media.media[k].fps),
        frames=np.arange(rows, dtype=np.int64),
        times_s=times,
        markers=tuple(
            Marker(marker_label(o.track_id), o.track_id, o.colour_rgb, f"{what} {o.track_id}")
            for o in overlays
        ),
        automatic=automatic,
        effective=effective,
        filled=filled,
    )


def _instruments(store: Store, snap: ResultSnapshot, zero_s: float) -> list[AnalogTable]:
    out = []
    for capture in snap.captures:
        media = load_capture(store, capture.info.get("manifest_sha256") or "")
        if not is_sample_mode(media.mode):
            continue
        mode = sample_mode_from_json(media.mode)
        chunks = [read_chunk(path) for path in media.segments]
        width = len(mode.channels)
        values = np.concatenate([c.values for c in chunks]) if chunks else np.zeros((0, width))
        mono = np.concatenate([c.mono_ns for c in chunks]) if chunks else np.zeros(0, np.int64)
        out.append(
            AnalogTable(
                name=safe_name(snap.places.get(media.capture_id) or media.device_id, "instrument"),
                device_id=media.device_id,
                rate_hz=mode.rate_hz,
                times_s=mono.astype(np.float64) / 1e9 - zero_s,
                channels=tuple(Channel(c.name, c.unit) for c in mode.channels),
                values=values.reshape(len(mono), width),
            )
        )
    return out
