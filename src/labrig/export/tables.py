"""What the interchange formats (C3D, TRC/MOT/STO, NWB, tidy CSV, overlay video) are written from:
one published result's marker trajectories on a frame grid, automatic and as a reviewer corrected
them, each camera's 2-D view of them, and the attempt's instrument samples, all timed from one
zero (the first camera's first frame on the host's monotonic clock). Pure data: every writer in
:mod:`labrig.export.formats` reads only these, never the catalog.

Missing samples are NaN. Labels are already safe for every format (:func:`marker_label`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
PointKind = Literal["3d", "plane", "image"]
LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,29}$")


def marker_label(track_id: Any) -> str:
    """A marker's label in every format: ``M`` and its track id (letters, digits and ``_`` only,
    at most 30 characters: what C3D, TRC, OpenSim and NWB names all hold)."""
    text = re.sub(r"[^A-Za-z0-9_]", "_", str(track_id))[:29]
    return f"M{text}"


def safe_name(text: str, fallback: str = "device") -> str:
    """A camera's or an instrument's name as files and formats can hold it: letters, digits and
    ``_.-`` (anything else becomes ``_``), at most 40 characters."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:40].strip("._-") or fallback


def unique_names(
    names: list[str], width: int, clean: Callable[[str], str], separator: str = "-"
) -> list[str]:
    """``names`` each made safe by ``clean`` and kept within ``width`` characters, a repeat ending
    in ``-2``, ``-3`` … (``separator`` and a count) so that no two are alike."""
    out: list[str] = []
    for name in names:
        base = clean(name)[:width]
        label, n = base, 1
        while label in out:
            n += 1
            label = f"{base[: width - len(str(n)) - 1]}{separator}{n}"
        out.append(label)
    return out


@dataclass(frozen=True)
class Marker:
    label: str  # format-safe (:func:`marker_label`)
    track_id: Any  # as the result document spells it
    colour_rgb: tuple[int, int, int] | None
    description: str  # one line: what the marker is, where it came from


@dataclass(frozen=True)
class PointTable:
    """Markers on a grid of frames: a rig's reconstruction instants (3-D, mm), a camera's stored
    frames on a calibrated plane (2-D, mm; z is 0 where a format needs three), or a camera's
    picture (2-D, px). Row ``i`` is frame (or instant) ``frames[i]`` at ``times_s[i]``."""

    kind: PointKind
    camera: str | None  # the camera (device id) of a 2-D table; None for 3-D
    units: str  # "mm" or "px"
    rate_hz: float  # the frame rate (from the median frame interval)
    frames: npt.NDArray[np.int64]  # N stored frame indices (or reconstruction instants)
    times_s: Array  # N, seconds from the attempt's zero
    markers: tuple[Marker, ...]  # M
    automatic: Array  # N×M×D positions as published (NaN: not seen)
    effective: Array | None = None  # N×M×D as the corrections in force leave them (None: none)
    filled: Mask | None = None  # N×M: effective positions a gap fill interpolated
    residual_px: Array | None = None  # N×M: a 3-D point's reprojection error (NaN: not solved)

    @property
    def dims(self) -> int:
        return int(self.automatic.shape[2])

    @property
    def in_force(self) -> Array:
        """The positions in force: the effective ones where a reviewer corrected the tracks."""
        return self.automatic if self.effective is None else self.effective

    def xyz_in_force(self) -> Array:
        """N×M×3 positions in force, as formats of three coordinates hold them: z = 0 for a 2-D
        table; a point missing any coordinate is missing in all three."""
        pts = np.asarray(self.in_force, dtype=np.float64)
        if pts.shape[2] == 2:
            pts = np.concatenate([pts, np.zeros((*pts.shape[:2], 1))], axis=2)
        else:
            pts = pts.copy()
        pts[np.isnan(pts).any(axis=2)] = np.nan
        return pts


@dataclass(frozen=True)
class Channel:
    name: str  # letters, digits, ``_.-``; at most 16 characters
    unit: str


@dataclass(frozen=True)
class AnalogTable:
    """One instrument's samples at its own rate."""

    name: str  # the instrument's device id as a safe name (:func:`safe_name`)
    device_id: str
    rate_hz: float  # nominal (from the capture's mode)
    times_s: Array  # S, seconds from the attempt's zero (host clock)
    channels: tuple[Channel, ...]  # C
    values: Array  # S×C


@dataclass(frozen=True)
class CameraInfo:
    device_id: str
    capture_id: str
    name: str  # its device id as a safe name (:func:`safe_name`), unique in the result
    width: int
    height: int
    fps: float
    frame_count: int


@dataclass(frozen=True)
class ResultTables:
    """Everything the formats hold of one published result."""

    result_id: str
    attempt_id: str
    attempt_number: int
    session: dict[str, Any]  # session_id, subject_code, protocol, operator, started_at
    created_at: str  # when the result was published (ISO 8601, UTC)
    points: PointTable  # what C3D and TRC hold: 3-D (rig), plane mm, or picture px
    views: tuple[PointTable, ...]  # each camera's picture px (for NWB's 2-D and the video)
    cameras: tuple[CameraInfo, ...]
    analog: tuple[AnalogTable, ...] = ()
    # result id, digests, calibration, release, revisions, sign-off: flat text for a format's
    # parameter group or notes (every value a str)
    provenance: dict[str, str] = field(default_factory=dict)
