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

The estimate says, for each camera, its offset, a confidence and, when it is not trustworthy, why.
Sync by motion (cross-correlating movement every camera sees) is not here yet: the movement's
measure must be one every viewpoint shares (tracked points' vertical speeds), which needs the
tracker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from labrig.capture.media import iter_luma
from labrig.errors import LabrigError

SyncMethod = Literal["flash"]
SYNC_METHODS: tuple[SyncMethod, ...] = ("flash",)
MIN_STEP_SIGMAS = 8.0  # a flash's step over the frame-to-frame noise of the brightness
MIN_STEP_LEVELS = 10.0  # and in grey levels: a fainter change may be the camera's own exposure
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


def estimate_offsets(videos: Sequence[tuple[str, Path, float]], method: SyncMethod) -> PostHocSync:
    """The offset of each of ``videos`` ((name, path, fps), the first the reference) by ``method``.
    Refused (:class:`PostHocSyncError`) when a flash is not found in a video at all."""
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
