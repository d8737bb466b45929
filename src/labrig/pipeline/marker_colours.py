"""Each track's colour as the video shows it, for plots that match what the technician saw.

The tracker finds markers on the grey plane; their colour is read afterwards from a few colour
frames: the mean BGR of a small patch at the track's position in each of its first
:data:`SAMPLES` frames, returned as RGB. Positions undistorted with a calibration are distorted
back to the image first. Only the frames up to the last one sampled are decoded, so a recording
whose markers are all in view from the start costs a handful of colour decodes.

Pure computation: no Qt, no database; deterministic for the same frames.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np

from labrig.pipeline.lens import distort_px
from labrig.pipeline.tracking import Array, Calibration, Image, Track, Tracks

SAMPLES = 5  # frames sampled per track
PATCH = 1  # half-size of the square patch sampled (px): 3×3, inside the smallest marker


def with_colours(
    frames: Iterable[Image], tracks: Tracks, undistort: Calibration | None = None
) -> Tracks:
    """``tracks`` with each track's ``colour_rgb`` read from ``frames`` (BGR, the frames tracked,
    in order)."""
    wanted: dict[int, list[tuple[Track, int]]] = {}
    for t in tracks.tracks:
        for k in range(min(SAMPLES, len(t.frames))):
            wanted.setdefault(int(t.frames[k]), []).append((t, k))
    sums: dict[int, list[Array]] = {t.track_id: [] for t in tracks.tracks}
    last = max(wanted, default=-1)
    for index, frame in enumerate(frames):
        for t, k in wanted.get(index, []):
            sums[t.track_id].append(_patch(frame, _distort(t.xy[k : k + 1], undistort)[0]))
        if index >= last:
            break
    return dataclasses.replace(
        tracks,
        tracks=tuple(
            dataclasses.replace(t, colour_rgb=_rgb(sums[t.track_id])) for t in tracks.tracks
        ),
    )


def _patch(frame: Image, xy: Array) -> Array:
    """Mean BGR of the patch around ``xy`` (clipped to the frame)."""
    h, w = frame.shape[:2]
    x, y = round(float(xy[0])), round(float(xy[1]))
    x0, x1 = max(x - PATCH, 0), min(x + PATCH + 1, w)
    y0, y1 = max(y - PATCH, 0), min(y + PATCH + 1, h)
    patch = frame[y0:y1, x0:x1].reshape(-1, 3)
    return np.asarray(patch.mean(axis=0) if len(patch) else np.zeros(3), dtype=np.float64)


def _rgb(samples: list[Array]) -> tuple[int, int, int] | None:
    if not samples:
        return None
    b, g, r = np.mean(samples, axis=0).tolist()
    return round(r), round(g), round(b)


def _distort(points: Array, calibration: Calibration | None) -> Array:
    """Undistorted image px (``cv2.undistortPoints`` with ``P=K``) back to the image's px."""
    return points if calibration is None else distort_px(points, calibration)
