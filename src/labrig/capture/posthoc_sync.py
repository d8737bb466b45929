"""Post-hoc sync: the offsets between videos recorded by separate devices with no shared clock
(action cameras, phones), estimated from what they all saw.

Each video's frame ``i`` is taken to show its own time ``i / fps`` from its first frame. The
*offset* of a camera is how much later than the first camera it started: an event at its own time
``τ`` happened at the first camera's time ``τ + offset``, so its frames on the first camera's clock
are at ``i / fps + offset``.

* ``flash``: a lamp switched on (or a clapper board's flash) seen by every camera, as a
  brightness step. In each video the frame the mean brightness rises in is found, and the instant
  the lamp came on within that frame is read from how much of the rise it holds: a frame exposed
  for a whole frame interval that saw the lamp for a fraction ``f`` of it is lit by ``f`` of the
  full step. The offset is the difference of the onsets. Trustworthy when the step stands far
  above the frames' noise (``MIN_STEP_SIGMAS``), is at least ``MIN_STEP_LEVELS`` grey levels,
  and lasts at least two frames in every video.

* ``motion``: markers of distinct colours moving where every camera sees them. Each bright blob is
  told apart by its colour (12 hues, and white); a marker whose image movement is mainly up and
  down in both views (world vertical movement looks vertical from every camera standing upright,
  while horizontal movement looks different from each side) gives its vertical speed, which is
  cross-correlated with the first camera's within ``±max_lag_s``. The best of those markers gives
  the offset, refined between frames. Trustworthy when its correlation is at least
  ``MIN_MOTION_R`` and no other offset within the search matches nearly as well (a movement that
  repeats, as a pendulum's, gives an offset only up to its period). Offsets beyond ``max_lag_s``
  are not searched: start the cameras within that of each other.

The estimate says, for each camera, its offset, a confidence and, when it is not trustworthy, why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt

from labrig.capture.media import iter_frames, iter_luma
from labrig.errors import LabrigError

SyncMethod = Literal["flash", "motion"]
SYNC_METHODS: tuple[SyncMethod, ...] = ("flash", "motion")
MIN_STEP_SIGMAS = 8.0  # a flash's step over the frame-to-frame noise of the brightness
MIN_STEP_LEVELS = 10.0  # and in grey levels: a fainter change may be the camera's own exposure
MIN_MOTION_R = 0.9  # the vertical speeds' correlation at the offset found
MIN_VERTICAL_SHARE = 0.5  # of a marker's image movement, for its vertical speed to be used
REPEAT_SHARE = 0.9  # another peak this close to the best: the movement repeats
Array = npt.NDArray[np.float64]


class PostHocSyncError(LabrigError):
    """The videos cannot be synchronised by the method asked (no flash in one, too short)."""

    code = "LABRIG_SYNC_NOT_FOUND"


@dataclass(frozen=True)
class CameraOffset:
    name: str
    offset_s: float  # how much later than the first camera it started
    confidence: float  # flash: the step in noise sigmas; motion: the correlation at the peak
    trustworthy: bool
    why: str = ""  # when not trustworthy

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "offset_ms": round(self.offset_s * 1e3, 3),
            "confidence": round(self.confidence, 3),
            "trustworthy": self.trustworthy,
            "why": self.why,
        }


@dataclass(frozen=True)
class PostHocSync:
    method: SyncMethod
    cameras: list[CameraOffset] = field(default_factory=list)

    @property
    def trustworthy(self) -> bool:
        return all(c.trustworthy for c in self.cameras)

    def offsets_s(self) -> list[float]:
        return [c.offset_s for c in self.cameras]

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "trustworthy": self.trustworthy,
            "cameras": [c.to_json() for c in self.cameras],
        }

    def summary(self) -> str:
        parts = [f"{c.name} {c.offset_s * 1e3:+.1f} ms" for c in self.cameras[1:]]
        words = f"offsets from {self.method} against {self.cameras[0].name}: {', '.join(parts)}"
        doubts = [f"{c.name}: {c.why}" for c in self.cameras if not c.trustworthy]
        return words + ("; NOT TRUSTWORTHY: " + "; ".join(doubts) if doubts else "")


def brightness(path: Path) -> Array:
    """The mean grey level of each frame of ``path``."""
    return np.array([float(g.mean()) for g in iter_luma(path)], dtype=np.float64)


@dataclass(frozen=True)
class _Onset:
    seconds: float  # the lamp's onset, on the video's own time
    sigmas: float  # the step over the noise
    levels: float  # the step in grey levels
    lit_frames: int  # frames at the full step after the rise


def flash_onset(means: Array, fps: float) -> _Onset | None:
    """The first brightness step in ``means`` (frame means), its sub-frame onset and strength."""
    if len(means) < 4:
        return None
    diffs = np.diff(means)
    noise = max(1.4826 * float(np.median(np.abs(diffs - np.median(diffs)))), 0.05)
    low, high = float(np.percentile(means, 20)), float(means.max())
    lit_at = np.flatnonzero(means > low + (high - low) / 2)
    if high - low < 4 * noise or not len(lit_at):
        return None
    k = int(lit_at[0])  # the first frame lit for over half the step
    before = float(np.median(means[max(0, k - 6) : max(1, k - 1)]))
    full = float(means[k : k + 4].max()) - before  # the lamp stays on: its full step
    # the frame the lamp came on in: this one, or the one before when that one is partly lit
    rise = k - 1 if k >= 1 and means[k - 1] - before > 3 * noise else k
    fraction = float(np.clip((means[rise] - before) / max(full, 1e-6), 0.0, 1.0))
    lit = int(np.count_nonzero(means[k:] > low + (high - low) / 2))
    # frame i is exposed from (i - 0.5) to (i + 0.5) frame intervals; lit for ``fraction`` of it
    return _Onset((rise + 0.5 - fraction) / fps, full / noise, full, lit)


def estimate_offsets(
    videos: Sequence[tuple[str, Path, float]], method: SyncMethod, *, max_lag_s: float = 2.0
) -> PostHocSync:
    """The offset of each of ``videos`` ((name, path, fps), the first the reference) by ``method``.
    Refused (:class:`PostHocSyncError`) when a flash is not found in a video at all, or the videos
    are too short to correlate."""
    if method == "motion":
        return _by_motion(videos, max_lag_s)
    return _by_flash(videos)


def _by_flash(videos: Sequence[tuple[str, Path, float]]) -> PostHocSync:
    onsets = []
    for name, path, fps in videos:
        onset = flash_onset(brightness(path), fps)
        if onset is None:
            raise PostHocSyncError(
                f"no flash was found in {name}'s video ({path.name}): every camera must see the "
                "lamp come on. Record again with the flash in view of all"
            )
        onsets.append(onset)
    cameras = []
    for (name, _, _), onset in zip(videos, onsets, strict=True):
        doubts = []
        if onset.sigmas < MIN_STEP_SIGMAS or onset.levels < MIN_STEP_LEVELS:
            doubts.append(
                f"the flash is faint (a step of {onset.levels:.1f} grey levels, "
                f"{onset.sigmas:.1f} times the noise; at least {MIN_STEP_LEVELS:g} levels and "
                f"{MIN_STEP_SIGMAS:g} times are needed): it may be the camera's own exposure"
            )
        if onset.lit_frames < 2:
            doubts.append("the flash lasts under two frames, so its onset is not sure")
        cameras.append(
            CameraOffset(
                name,
                onsets[0].seconds - onset.seconds,
                onset.sigmas,
                not doubts,
                "; ".join(doubts),
            )
        )
    return PostHocSync("flash", cameras)


# -- motion ----------------------------------------------------------------------------------------

Tracks = dict[str, tuple[Array, Array]]  # colour → (x, y) per frame, NaN where not seen once


def marker_tracks(path: Path) -> Tracks:
    """Each colour of bright marker in ``path``: its image position in each frame (NaN where it is
    not seen, or two blobs share its colour). The top and bottom twentieth, where cameras print
    their clock, are left out."""
    rows: list[dict[str, tuple[float, float]]] = []
    for image in iter_frames(path):
        h = image.shape[0]
        hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)
        mask = (hsv[..., 2] > 150).astype(np.uint8)
        mask[: h // 20] = 0
        mask[h - h // 20 :] = 0
        count, labels, stats, centres = cv2.connectedComponentsWithStats(mask)
        seen: dict[str, tuple[float, float]] = {}
        twice: set[str] = set()
        for i in range(1, count):
            if not 3 <= stats[i, cv2.CC_STAT_AREA] <= 5000:
                continue
            pixels = hsv[labels == i]
            saturation, hue = float(np.median(pixels[:, 1])), float(np.median(pixels[:, 0]))
            key = "white" if saturation < 60 else f"hue{int(((hue + 7.5) % 180) // 15)}"
            if key in seen:
                twice.add(key)
            seen[key] = (float(centres[i][0]), float(centres[i][1]))
        rows.append({k: v for k, v in seen.items() if k not in twice})
    keys = {k for row in rows for k in row}
    return {
        k: (
            np.array([row[k][0] if k in row else np.nan for row in rows]),
            np.array([row[k][1] if k in row else np.nan for row in rows]),
        )
        for k in keys
    }


def _vertical_speed(track: tuple[Array, Array]) -> Array | None:
    """The marker's vertical image speed, when its movement is mainly up and down; else None."""
    vx, vy = np.diff(track[0], prepend=np.nan), np.diff(track[1], prepend=np.nan)
    if np.count_nonzero(~np.isnan(vy)) < 10:
        return None
    sx, sy = float(np.nanvar(vx)), float(np.nanvar(vy))
    return vy if sy > 0 and sy / (sx + sy) >= MIN_VERTICAL_SHARE else None


def _by_motion(videos: Sequence[tuple[str, Path, float]], max_lag_s: float) -> PostHocSync:
    tracks = [(name, marker_tracks(path), fps) for name, path, fps in videos]
    _, ref, fps = tracks[0]
    cameras = [CameraOffset(tracks[0][0], 0.0, 1.0, True)]
    for name, other, own_fps in tracks[1:]:
        if abs(own_fps - fps) > 0.01 * fps:
            raise PostHocSyncError(
                f"{name} was recorded at {own_fps:g} fps and the first camera at {fps:g}: motion "
                "sync needs one frame rate; use --sync flash"
            )
        found = []
        for key in sorted(ref.keys() & other.keys()):
            a, b = _vertical_speed(ref[key]), _vertical_speed(other[key])
            if a is not None and b is not None:
                found.append((*_correlate(a, b, round(max_lag_s * fps)), key))
        if not found:
            cameras.append(
                CameraOffset(
                    name,
                    0.0,
                    0.0,
                    False,
                    "no marker of one colour moves up and down where both cameras see it; use "
                    "markers of distinct colours, moved up and down, or a flash",
                )
            )
            continue
        r, lag, second, key = max(found)
        doubts = []
        if r < MIN_MOTION_R:
            doubts.append(
                f"the vertical movement matches weakly (r = {r:.2f} for the {key} marker, under "
                f"{MIN_MOTION_R:g})"
            )
        if second >= REPEAT_SHARE * r:
            doubts.append(
                f"the {key} marker's movement repeats within ±{max_lag_s:g} s (another offset "
                f"matches with r = {second:.2f}): move it irregularly, or use a flash"
            )
        # ``other[i + lag]`` matches ``ref[i]``: this camera started ``lag`` frames earlier
        cameras.append(CameraOffset(name, -lag / fps, r, not doubts, "; ".join(doubts)))
    return PostHocSync("motion", cameras)


def _correlate(ref: Array, other: Array, max_lag: int) -> tuple[float, float, float]:
    """The best correlation of ``other[i + lag]`` with ``ref[i]`` over ``|lag| <= max_lag``, its
    lag in frames (refined between frames by a parabola through the peak), and the correlation at
    the next best peak (0 without one)."""
    if min(len(ref), len(other)) < 2 * max_lag + 30:
        raise PostHocSyncError(
            f"the videos are too short for motion sync over ±{max_lag} frames; record longer "
            "(several seconds of movement every camera sees)"
        )
    lags = np.arange(-max_lag, max_lag + 1)
    scores = np.array([_r(ref, other, int(k)) for k in lags])
    if np.all(np.isnan(scores)):
        return float("nan"), 0.0, 0.0
    best = int(np.nanargmax(scores))
    filled = np.nan_to_num(scores, nan=-1.0)
    peaks = [
        float(filled[i])
        for i in range(1, len(filled) - 1)
        if abs(i - best) > 2 and filled[i] > filled[i - 1] and filled[i] >= filled[i + 1]
    ]
    lag = float(lags[best])
    if 0 < best < len(lags) - 1 and not np.isnan(scores[best - 1 : best + 2]).any():
        a, b, c = scores[best - 1], scores[best], scores[best + 1]
        if (denominator := a - 2 * b + c) < 0:
            lag += 0.5 * (a - c) / denominator
    return float(scores[best]), lag, max(peaks, default=0.0)


def _r(ref: Array, other: Array, lag: int) -> float:
    """Correlation of ``ref[i]`` with ``other[i + lag]`` where both are known."""
    start, end = max(0, -lag), min(len(ref), len(other) - lag)
    if end - start < 20:
        return float("nan")
    a, b = ref[start:end], other[start + lag : end + lag]
    known = ~np.isnan(a) & ~np.isnan(b)
    if np.count_nonzero(known) < 20 or a[known].std() == 0 or b[known].std() == 0:
        return float("nan")
    return float(np.corrcoef(a[known], b[known])[0, 1])
