"""The effective series an export carries beside the automatic one: a result's per-sample positions
and velocities recomputed from its tracks as a reviewer corrected them
(:mod:`labrig.review.effective`), each sample tied to the stored frame at its time and marked when
a gap fill interpolated that frame.

Read in the export's one read transaction (:mod:`labrig.export.snapshot`); a result whose
revisions hold no correction has no effective series (None), since its series is the automatic one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from labrig.domain.frame_times import nearest_frames
from labrig.review.effective import EffectiveTracks, TrackedInput
from labrig.review.records import in_force
from labrig.store.models import ResultRevision


@dataclass(frozen=True)
class CorrectedTrack:
    """One corrected track's smoothed samples, as the result document's ``series`` holds them."""

    track_id: Any  # as the result document spells it
    t: list[float]
    xy: list[list[float]]
    velocity: list[list[float]] | None  # None: too few samples for speeds
    frames: list[int]  # the stored frame at each sample's time
    filled: list[bool]  # whether a gap fill interpolated that frame
    filled_frames: list[int]  # every frame of the track a gap fill interpolated

    def document(self) -> dict[str, Any]:
        """The track as the result document's ``series`` spells one."""
        return {"track_id": self.track_id, "t": self.t, "xy": self.xy, "velocity": self.velocity}


@dataclass(frozen=True)
class EffectiveSeries:
    """The series of the tracks as the corrections of ``revisions`` left them."""

    revisions: tuple[int, ...]  # the numbers of the revisions whose corrections it applies
    units: dict[str, str]
    tracks: tuple[CorrectedTrack, ...]


def read_effective_series(
    source: TrackedInput, effective: EffectiveTracks, history: Sequence[ResultRevision]
) -> EffectiveSeries:
    """The effective series of ``effective``, the tracks of ``source`` after every correction in
    ``history``."""
    return EffectiveSeries(
        revisions=tuple(
            r.number for r in in_force(history) if json.loads(r.document).get("operations")
        ),
        units=dict(effective.units),
        tracks=tuple(_track_series(doc, source) for doc in effective.kinematics),
    )


def _track_series(doc: Mapping[str, Any], source: TrackedInput) -> CorrectedTrack:
    t = [float(v) for v in doc.get("t") or []]
    frames = sample_frames(t, source.times_s, source.fps)
    filled = set(doc.get("filled_frames") or [])
    return CorrectedTrack(
        track_id=doc.get("track_id"),
        t=t,
        xy=[list(p) for p in doc.get("xy") or doc.get("xyz") or []],
        velocity=None if doc.get("velocity") is None else [list(v) for v in doc["velocity"]],
        frames=frames,
        filled=[f in filled for f in frames],
        filled_frames=sorted(filled),
    )


def sample_frames(
    t: Sequence[float], times_s: npt.NDArray[np.float64] | None, fps: float
) -> list[int]:
    """The stored frame nearest each sample time ``t``, timed as the kinematics stage timed them:
    ``t`` in frames when the recording has no frame times, else in seconds by the recorded times
    (by ``fps`` when they are missing)."""
    times = np.asarray(t, dtype=np.float64)
    if times_s is None:
        return [int(v) for v in np.rint(times)]
    if len(times_s) < 2 or (len(times) and times.max() > times_s[-1] + 1.0 / fps):
        return [int(v) for v in np.rint(times * fps)]
    return [int(v) for v in nearest_frames(times_s, times)]
