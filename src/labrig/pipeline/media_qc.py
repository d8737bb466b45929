"""Media quality control: decode every frame of a recording and report what a technician should know
before analysis.

Checks frame counts (decoded vs the manifest and vs each container header), timestamp gaps from the
``frame,mono_ns,utc_ns`` sidecars written by :mod:`labrig.capture.sink`, and per-frame blur and
exposure. Pure computation: no Qt, no database. The result is deterministic for the same files (no
wall-clock values) and :meth:`MediaQC.to_json` gives plain JSON types (no NaN, so it passes
``canonical_json``).

Threading: runs on the caller's thread, which is where it calls its :class:`~labrig.tasks.Task`.
Cancellation: every few frames it calls ``task.check_cancelled()``, which raises (it never returns a
partial result).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from labrig.capture import iter_frames, open_video, read_timestamps
from labrig.errors import LabrigError
from labrig.tasks import UNTRACKED, Task

PROGRESS_MESSAGE = "checking frames"
CHECK_EVERY = 16  # frames between progress reports and cancel checks: tens of milliseconds at 720p


class TimestampsUnreadableError(LabrigError):
    """A timestamp sidecar that is listed but cannot be read."""

    code = "LABRIG_TIMESTAMPS_UNREADABLE"


@dataclass(frozen=True)
class Thresholds:
    """Limits that decide which frames count as suspect."""

    # A frame counts as blurred below max(blur_min, blur_relative × the recording's median blur):
    # sharpness measured this way depends on the scene (a sparse scene scores low however sharp), so
    # by default only frames much softer than the rest of their own recording (motion blur, focus
    # hunting) are flagged.
    blur_min: float = 0.0  # variance of the Laplacian (grey levels²)
    blur_relative: float = 0.5  # fraction of the median
    dark_mean: float = 15.0  # mean grey level (0–255) below which a frame counts as too dark
    # fraction of pixels at 0–1 or 254–255 above which a frame counts as clipped
    clipped_max: float = 0.05
    gap_factor: float = 1.5  # a timestamp interval above this many nominal intervals is a gap


@dataclass(frozen=True)
class Stat:
    """min / median / max of one per-frame measure (None when no frame decoded) and how many
    frames were flagged."""

    min: float | None
    median: float | None
    max: float | None
    flagged: int


@dataclass(frozen=True)
class FileQC:
    """One media file: what its container header claims and what actually decoded."""

    name: str  # file name (no folder, so the result does not depend on where the data root lives)
    # frame count in the container header; None if it would not open or gives none
    header_frames: int | None
    decoded_frames: int  # frames that decoded
    timestamp_rows: int | None  # rows in its timestamp sidecar; None without a sidecar
    undecodable: bool  # no frame decoded (missing, garbage or empty file)


@dataclass(frozen=True)
class MediaQC:
    """The quality report of one recording (all files in order)."""

    files: tuple[FileQC, ...]
    decoded_frames: int  # frames decoded over all files
    expected_frames: int | None  # frames the manifest says were recorded
    expected_fps: float  # nominal frame rate (frames/s) the gaps are measured against
    gaps: int  # timestamp intervals longer than gap_factor nominal intervals
    missing_frames: int  # frames the gaps account for (round(interval / nominal) − 1, summed)
    largest_interval_s: float | None  # longest interval between consecutive timestamps (s)
    blur: (
        Stat  # variance of the Laplacian of the grey image (grey levels²); flagged: see Thresholds
    )
    brightness: Stat  # mean grey level (0–255); flagged: below dark_mean
    clipped: Stat  # fraction of pixels clipped (0–1); flagged: above clipped_max
    thresholds: Thresholds

    @property
    def undecodable(self) -> bool:
        """Some file decoded to no frame at all."""
        return any(f.undecodable for f in self.files)

    @property
    def header_mismatch(self) -> bool:
        """Some file decoded to a different number of frames than its header claims (a
        truncated write)."""
        return any(
            f.header_frames is not None and f.header_frames != f.decoded_frames for f in self.files
        )

    @property
    def count_mismatch(self) -> bool:
        """Decoded frames differ from the manifest's count."""
        return self.expected_frames is not None and self.expected_frames != self.decoded_frames

    def problems(self) -> list[str]:
        """Findings in words a technician can act on; empty when the media look sound."""
        out = [
            f"{f.name} could not be decoded (missing, damaged or not a video)"
            for f in self.files
            if f.undecodable
        ]
        out += [
            f"{f.name}: header says {f.header_frames} frames but {f.decoded_frames} decoded "
            "(truncated write?)"
            for f in self.files
            if not f.undecodable and f.header_frames not in (None, f.decoded_frames)
        ]
        if self.count_mismatch:
            out.append(
                f"the manifest lists {self.expected_frames} frames but {self.decoded_frames} "
                "decoded"
            )
        if self.gaps:
            out.append(
                f"{self.gaps} timestamp gap(s), about {self.missing_frames} frame(s) missing"
            )
        return out

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types: the fields plus the derived flags and problems."""
        body = asdict(self)
        body.update(
            files=[asdict(f) for f in self.files],
            undecodable=self.undecodable,
            header_mismatch=self.header_mismatch,
            count_mismatch=self.count_mismatch,
            problems=self.problems(),
        )
        return body


def media_qc(
    paths: Sequence[Path],
    timestamps: Sequence[Path | None],
    expected_frames: int | None,
    expected_fps: float,
    task: Task = UNTRACKED,
    thresholds: Thresholds | None = None,
) -> MediaQC:
    """Decode every frame of ``paths`` (in recording order) and check them; ``timestamps[i]`` is the
    sidecar CSV of ``paths[i]`` or None; ``expected_fps`` (frames/s) is what gaps are measured
    against. Reports its progress to ``task`` and stops when it is cancelled."""
    if len(timestamps) != len(paths):
        raise ValueError("media_qc needs one timestamps entry (a path or None) per media file")
    limits = thresholds or Thresholds()
    headers = [_header_frames(p) for p in paths]
    total = expected_frames or sum(h or 0 for h in headers) or 1
    stamps = [None if ts is None else _read_mono_ns(ts) for ts in timestamps]
    measures: list[tuple[float, float, float]] = []  # (blur, brightness, clipped) per frame
    files = []
    for path, mono, header in zip(paths, stamps, headers, strict=True):
        decoded = _measure_file(path, measures, total, task)
        files.append(
            FileQC(path.name, header, decoded, None if mono is None else len(mono), decoded == 0)
        )
    gaps, missing, largest = _timestamp_gaps(stamps, expected_fps, limits.gap_factor)
    task.progress(1.0, PROGRESS_MESSAGE)
    blur, brightness, clipped = (
        np.asarray([m[k] for m in measures], dtype=np.float64) for k in range(3)
    )
    soft = max(limits.blur_min, limits.blur_relative * float(np.median(blur))) if len(blur) else 0.0
    return MediaQC(
        files=tuple(files),
        decoded_frames=len(measures),
        expected_frames=expected_frames,
        expected_fps=expected_fps,
        gaps=gaps,
        missing_frames=missing,
        largest_interval_s=largest,
        blur=_stat(blur, blur < soft),
        brightness=_stat(brightness, brightness < limits.dark_mean),
        clipped=_stat(clipped, clipped > limits.clipped_max),
        thresholds=limits,
    )


def _measure_file(
    path: Path, into: list[tuple[float, float, float]], total: int, task: Task
) -> int:
    """Measure every frame of one file into ``into``; the number of frames decoded."""
    decoded = 0
    for frame in iter_frames(path):
        into.append(frame_measures(frame))
        decoded += 1
        if len(into) % CHECK_EVERY == 0:
            task.check_cancelled()
            task.progress(min(len(into) / total, 1.0), PROGRESS_MESSAGE)
    return decoded


def frame_measures(frame: npt.NDArray[np.uint8]) -> tuple[float, float, float]:
    """(variance of the Laplacian in grey levels², mean grey level 0–255, fraction of pixels
    clipped) of one frame."""
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    # 16-bit holds a 3×3 Laplacian of 8-bit exactly
    _, std = cv2.meanStdDev(cv2.Laplacian(grey, cv2.CV_16S))
    hist = cv2.calcHist([grey], [0], None, [256], [0, 256]).ravel().astype(np.float64)
    mean = float(hist @ np.arange(256)) / grey.size
    clipped = float(hist[:2].sum() + hist[254:].sum()) / grey.size
    return round(float(std[0, 0]) ** 2, 6), round(mean, 6), round(clipped, 8)


def _header_frames(path: Path) -> int | None:
    cap = open_video(path)
    try:
        count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) if cap.isOpened() else 0
        return count if count > 0 else None
    finally:
        cap.release()


def _read_mono_ns(path: Path) -> list[int]:
    """The ``mono_ns`` column of a sidecar;
    a row that is cut short (a killed writer) ends the list."""
    try:
        return read_timestamps(path)
    except OSError as exc:
        raise TimestampsUnreadableError(
            f"cannot read the timestamps {path.name} ({exc}); run 'labrig verify' "
            "to check the capture, or pass None for a file without timestamps"
        ) from exc


def _timestamp_gaps(
    stamps: Sequence[list[int] | None], fps: float, factor: float
) -> tuple[int, int, float | None]:
    """(gaps, frames missing, longest interval s) over the files' ``mono_ns`` lists in order; a file
    without a sidecar breaks the chain rather than counting as a gap."""
    nominal_ns = 1e9 / fps
    chains: list[list[int]] = [[]]
    for mono in stamps:
        if mono is None:
            chains.append([])
        else:
            chains[-1].extend(mono)
    intervals = np.concatenate(
        [np.diff(np.asarray(c, dtype=np.int64)) for c in chains if len(c) > 1]
        or [np.zeros(0, np.int64)]
    )
    if intervals.size == 0:
        return 0, 0, None
    long = intervals[intervals > factor * nominal_ns]
    missing = int(np.maximum(np.rint(long / nominal_ns) - 1, 1).sum())
    return int(long.size), missing, round(float(intervals.max()) / 1e9, 9)


def _stat(values: npt.NDArray[np.float64], flagged: npt.NDArray[np.bool_]) -> Stat:
    if not len(values):
        return Stat(None, None, None, 0)
    return Stat(
        float(values.min()), float(np.median(values)), float(values.max()), int(flagged.sum())
    )
