"""Marker tracking: bright blobs found in each frame, linked frame to frame into tracks.

Detection thresholds one grey (or colour) plane, or keeps the pixels of one hue, keeps connected
components in an area range and gives each a sub-pixel centroid weighted by brightness above the
local background, so anti-aliased edges count by coverage. The tracking stage gives it grey frames
(:func:`~labrig.capture.media.iter_luma`): for MJPG, decoding straight to the grey plane is what
lets the stage run faster than a plain BGR decode loop. Linking predicts each open track one frame
ahead at constant velocity and assigns detections with the Hungarian method
(``scipy.optimize.linear_sum_assignment``) inside a gating distance. A track survives up to
``max_gap`` frames without a detection (a marker hidden for a moment keeps its identity); a
detection nobody claims starts a new track. Positions are pixels of the image, or of the undistorted
image when a calibration is given (``cv2.undistortPoints`` with ``P=K``), ready for a plane
homography (:func:`labrig.pipeline.kinematics.to_plane_mm`).

Pure computation: no Qt, no database; deterministic for the same frames. Threading: runs on the
caller's thread, which is where it calls its :class:`~labrig.tasks.Task`; a cancel raises from
``task.check_cancelled()``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
from scipy.optimize import linear_sum_assignment

from labrig.pipeline.lens import undistort_px
from labrig.pipeline.media_qc import CHECK_EVERY
from labrig.tasks import UNTRACKED, Task

Array = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]
Detector = Callable[[Image], Array]
# camera matrix K (3×3, px) and distortion coefficients (OpenCV order)
Calibration = tuple[Array, Array]
_FAR = 1e9  # cost of a pairing outside the gate: never chosen over a real one, filtered afterwards

__all__ = ["Track", "Tracks", "detect_markers", "track"]
PROGRESS_MESSAGE = "tracking markers"


def detect_markers(
    frame: Image,
    threshold: float = 100.0,
    min_area: int = 12,
    max_area: int = 20000,
    channel: int | None = None,
    hue: tuple[float, float] | None = None,
    min_saturation: int = 80,
) -> Array:
    """Centroids (N×2, x y in px, sorted by y then x) of blobs brighter than ``threshold``
    (grey levels 0–255) with an area of ``min_area``–``max_area`` px. A grey frame (H×W, e.g.
    from :func:`~labrig.capture.media.iter_luma`) is used as it is. To find markers of one
    colour in a BGR frame: ``channel`` picks one BGR plane (0 B, 1 G, 2 R) instead of grey; or
    ``hue`` = (low, high) in degrees (0–360; low > high wraps through red) keeps the pixels of
    that hue with a saturation of at least ``min_saturation`` (0–255) whose brightest channel
    passes ``threshold``."""
    plane, mask = _plane_and_mask(frame, threshold, channel, hue, min_saturation)
    # outer contours, not connected components: ~25× faster on a sparse 720p mask, the same blobs
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    found = [
        c
        for c in (_centroid(plane, mask, contour, min_area, max_area) for contour in contours)
        if c is not None
    ]
    out = np.array(found, dtype=np.float64).reshape(-1, 2)
    return out[np.lexsort((out[:, 0], out[:, 1]))]


def _plane_and_mask(
    frame: Image,
    threshold: float,
    channel: int | None,
    hue: tuple[float, float] | None,
    min_saturation: int,
) -> tuple[Image, Image]:
    """The plane whose brightness weights the centroids, and the mask (0/255) of the pixels that
    belong to markers."""
    if hue is None:
        plane = np.asarray(
            frame
            if frame.ndim == 2
            else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
            if channel is None
            else np.ascontiguousarray(frame[..., channel]),
            dtype=np.uint8,
        )
        return plane, np.asarray(
            cv2.threshold(plane, threshold, 255, cv2.THRESH_BINARY)[1], dtype=np.uint8
        )
    if frame.ndim != 3:
        raise ValueError("detect_markers: hue needs a BGR frame, not a grey one")
    if not all(0 <= h <= 360 for h in hue):
        raise ValueError(f"detect_markers: hue {hue} must be two angles of 0–360°")
    hsv = cv2.cvtColor(frame, cv2.COLOR_BGR2HSV_FULL)  # hue 0–255 for 0–360° (×256/360)
    low, high = (min(round(h * 256 / 360), 255) for h in hue)
    sat_value = (min_saturation, int(threshold) + 1)
    mask = cv2.inRange(hsv, (low, *sat_value), (high if low <= high else 255, 255, 255))
    if low > high:  # through red: 0° is 360°
        mask = cv2.bitwise_or(mask, cv2.inRange(hsv, (0, *sat_value), (high, 255, 255)))
    return np.ascontiguousarray(hsv[..., 2]), np.asarray(mask, dtype=np.uint8)


def _centroid(
    plane: Image, mask: Image, contour: npt.NDArray[Any], min_area: int, max_area: int
) -> tuple[float, float] | None:
    """Brightness-weighted centroid of one blob, over the blob grown by a pixel (its soft edge);
    None if its area (px) is out of range."""
    x, y, w, h = cv2.boundingRect(contour)
    if w * h < min_area:
        return None
    x0, y0 = max(x - 3, 0), max(y - 3, 0)
    x1, y1 = min(x + w + 3, plane.shape[1]), min(y + h + 3, plane.shape[0])
    blob = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.drawContours(blob, [contour], -1, 1, cv2.FILLED, offset=(-x0, -y0))
    blob &= mask[y0:y1, x0:x1] > 0  # holes inside the outline are not part of it
    if not min_area <= cv2.countNonZero(blob) <= max_area:
        return None
    roi = plane[y0:y1, x0:x1].astype(np.float32)
    support = cv2.dilate(blob, np.ones((3, 3), np.uint8))
    outside = roi[support == 0]
    background = float(np.median(outside)) if outside.size else 0.0
    m = cv2.moments(np.clip(roi - background, 0.0, None) * support)
    if m["m00"] <= 0:  # a blob no brighter than its surroundings (inside a larger bright area)
        return None
    return x0 + m["m10"] / m["m00"], y0 + m["m01"] / m["m00"]


@dataclass(frozen=True)
class Track:
    """One marker's path: the frames it was seen in and its position there (px)."""

    track_id: int  # order of first appearance, from 0
    # frame indices (0 = first frame given), increasing; gaps where it was not seen
    frames: npt.NDArray[np.int64]
    xy: Array  # N×2 positions, px (undistorted image px when a calibration was given)
    # the marker's colour in the video (RGB 0-255), from pipeline/marker_colours; None: not read
    colour_rgb: tuple[int, int, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "track_id": self.track_id,
            "frames": self.frames.tolist(),
            "xy": np.round(self.xy, 4).tolist(),
            "colour_rgb": None if self.colour_rgb is None else list(self.colour_rgb),
        }

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Track:
        colour = body.get("colour_rgb")
        return cls(
            int(body["track_id"]),
            np.asarray(body["frames"], dtype=np.int64),
            np.asarray(body["xy"], dtype=np.float64).reshape(-1, 2),
            None if colour is None else (int(colour[0]), int(colour[1]), int(colour[2])),
        )


@dataclass(frozen=True)
class Tracks:
    """The tracks of one video, with what a quality gate needs."""

    tracks: tuple[Track, ...]
    frames_processed: int  # frames looked at
    expected_markers: int  # markers a good frame shows (given, or the most common count)
    frames_with_expected: int  # frames in which exactly ``expected_markers`` markers were found
    undistorted: bool  # positions are undistorted image px

    @property
    def fraction_expected(self) -> float:
        """Share (0–1) of frames with the expected number of markers; 0 for no frames."""
        return self.frames_with_expected / self.frames_processed if self.frames_processed else 0.0

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types (positions rounded to 1e-4 px)."""
        return {
            "frames_processed": self.frames_processed,
            "expected_markers": self.expected_markers,
            "frames_with_expected": self.frames_with_expected,
            "fraction_expected": self.fraction_expected,
            "undistorted": self.undistorted,
            "tracks": [t.to_json() for t in self.tracks],
        }


class _Open:
    """A track still being linked."""

    def __init__(self, track_id: int, frame: int, xy: Array) -> None:
        self.track_id, self.frames, self.xy = track_id, [frame], [xy]
        self.velocity = np.zeros(2)  # px per frame

    def predict(self, frame: int) -> Array:
        return self.xy[-1] + self.velocity * (frame - self.frames[-1])

    def add(self, frame: int, xy: Array) -> None:
        self.velocity = (xy - self.xy[-1]) / (frame - self.frames[-1])
        self.frames.append(frame)
        self.xy.append(xy)

    def done(self) -> Track:
        return Track(
            self.track_id,
            np.asarray(self.frames, dtype=np.int64),
            np.asarray(self.xy).reshape(-1, 2),
        )


class _Linker:
    def __init__(self, gate_px: float, max_gap: int) -> None:
        self.gate, self.max_gap = gate_px, max_gap
        self.open: list[_Open] = []
        self.closed: list[_Open] = []
        self.next_id = 0

    def step(self, frame: int, points: Array) -> None:
        """Extend the open tracks with this frame's detections (N×2 px); unclaimed detections
        start new tracks."""
        stale = [t for t in self.open if frame - t.frames[-1] > self.max_gap + 1]
        self.closed += stale
        self.open = [t for t in self.open if t not in stale]
        claimed = self._assign(frame, points)
        for col in range(len(points)):
            if col not in claimed:
                self.open.append(_Open(self.next_id, frame, points[col]))
                self.next_id += 1

    def _assign(self, frame: int, points: Array) -> set[int]:
        """Hungarian assignment of detections to the open tracks' predictions, inside the gate;
        the columns used."""
        if not self.open or not len(points):
            return set()
        predicted = np.array([t.predict(frame) for t in self.open])
        cost = np.linalg.norm(predicted[:, None, :] - points[None, :, :], axis=2)
        # the gate widens by half for each frame missed: the prediction grows less certain
        gates = np.array([self.gate * (1 + 0.5 * (frame - t.frames[-1] - 1)) for t in self.open])
        cost[cost > gates[:, None]] = _FAR
        claimed: set[int] = set()
        for row, col in zip(*linear_sum_assignment(cost), strict=True):
            if cost[row, col] < _FAR:
                self.open[row].add(frame, points[col])
                claimed.add(int(col))
        return claimed

    def finish(self, min_length: int) -> tuple[Track, ...]:
        every = sorted(self.closed + self.open, key=lambda t: t.track_id)
        return tuple(t.done() for t in every if len(t.frames) >= min_length)


def _undistort(points: Array, calibration: Calibration | None) -> Array:
    """Image px → px of the undistorted image (same camera matrix), or the points as they are
    without a calibration."""
    return undistort_px(points, calibration)


def track(
    frames: Iterable[Image],
    *,
    detect: Detector = detect_markers,
    expected_markers: int | None = None,
    gate_px: float = 40.0,
    max_gap: int = 5,
    min_length: int = 1,
    undistort: Calibration | None = None,
    total_frames: int | None = None,
    task: Task = UNTRACKED,
) -> Tracks:
    """Track markers through ``frames``. ``detect`` finds them in one frame
    (``functools.partial(detect_markers, threshold=...)`` to tune it); ``gate_px`` is the farthest a
    detection may lie from a track's predicted position (px); tracks shorter than ``min_length``
    detections are dropped. Progress goes to ``task`` only when ``total_frames`` is known; a cancel
    of ``task`` stops it (``task.check_cancelled()`` raises)."""
    linker = _Linker(gate_px, max_gap)
    counts: list[int] = []
    for index, frame in enumerate(frames):
        if index % CHECK_EVERY == 0:
            task.check_cancelled()
            if total_frames:
                task.progress(min(index / total_frames, 1.0), PROGRESS_MESSAGE)
        points = _undistort(detect(frame), undistort)
        counts.append(len(points))
        linker.step(index, points)
    if total_frames:
        task.progress(1.0, PROGRESS_MESSAGE)
    expected = (
        expected_markers
        if expected_markers is not None
        else int(np.bincount(counts or [0]).argmax())
    )
    return Tracks(
        linker.finish(min_length),
        len(counts),
        expected,
        sum(c == expected for c in counts),
        undistort is not None,
    )
