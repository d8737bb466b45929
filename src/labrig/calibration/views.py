"""What the Calibration screen reads: stored calibrations with their device binding, age and
validity, each view's detected corners, where they fell on the coverage grid, and the frame
a view came from.

Read-only and Qt-free; every function opens its own read session (or media file), so it may run on
any thread. A ``labrig.calibration/2`` document keeps every view's corners and, when it was made
from a stored recording, that recording (its ``source``). A ``labrig.calibration/1`` document,
stored before Labrig kept corners, has per-view errors and the *fraction* of the grid its corners
reached but not where they fell: its corner accessors give None.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
from sqlalchemy import select

from labrig.calibration.camera import COVERAGE_GRID, CaptureSource, Counts, coverage_counts
from labrig.calibration.stored import UnknownCalibrationError
from labrig.capture import load_capture, open_video
from labrig.errors import LabrigError
from labrig.store import Store, utcnow
from labrig.store.models import CalibrationRecord

Array = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]


class ViewFrameUnavailableError(LabrigError):
    """The frame a view came from cannot be read again: its media file is gone or damaged."""

    code = "LABRIG_VIEW_FRAME_UNAVAILABLE"


CALIBRATION_LIMIT = 500  # newest calibrations listed


class Validity(StrEnum):
    IN_USE = (
        "in use"  # valid, unexpired, the newest for its device and mode: analysis uses this one
    )
    SUPERSEDED = (
        "superseded"  # valid and unexpired, but a newer one of the same device and mode is used
    )
    EXPIRED = "expired"  # was valid; older than its thresholds' max_age_days
    NOT_VALID = "not valid"  # did not validate: never used
    # was valid; the devices or modes it was bound to changed since (a rig calibration): never used
    # again
    DEVICE_CHANGED = "device changed"


@dataclass(frozen=True)
class CalibrationSummary:
    """One row of the Calibration list."""

    calibration_id: str
    device_id: str
    mode: str  # e.g. "1280x720@30 BGR"
    created_at: datetime
    rms_px: float
    valid_until: datetime | None  # None when it never validated
    validity: Validity
    has_plane: bool  # a plane homography is stored: analysis outputs are in mm

    def age(self, now: datetime | None = None) -> str:
        return age_words((now or utcnow()) - self.created_at)


@dataclass(frozen=True)
class ViewError:
    """One view the solve saw: its RMS reprojection error, the limit it broke if it was rejected,
    and (since ``labrig.calibration/2``) its detected corners."""

    name: str
    error_px: float
    rejected: bool
    limit_px: float | None
    ids: tuple[int, ...] = ()  # board corner ids, in the order of corners
    # N×2 image px; None in a v1 document
    corners: Array | None = field(default=None, compare=False, repr=False)
    order: int | None = None  # its place among the views as they were read; None in a v1 document

    @classmethod
    def of(cls, raw: dict[str, Any], rejected: bool) -> ViewError:
        corners = (
            np.asarray(raw["corners"], dtype=np.float64).reshape(-1, 2)
            if "corners" in raw
            else None
        )
        return cls(
            raw["name"],
            float(raw["error_px"]),
            rejected,
            float(raw["limit_px"]) if rejected else None,
            tuple(int(i) for i in raw.get("ids", ())),
            corners,
            int(raw["order"]) if "order" in raw else None,
        )


@dataclass(frozen=True)
class CalibrationDetail:
    summary: CalibrationSummary
    document: dict[str, Any]  # labrig.calibration/2, or /1 from before corners were kept

    @cached_property
    def views(self) -> list[ViewError]:
        """Used and rejected views together, in the order they were read (a v1 document's by name,
        its numbers compared as numbers)."""
        doc = self.document
        views = [ViewError.of(v, False) for v in doc.get("views", [])]
        views += [ViewError.of(v, True) for v in doc.get("rejected", [])]
        if all(v.order is not None for v in views):
            return sorted(views, key=lambda v: v.order or 0)
        return sorted(views, key=lambda v: _natural(v.name))

    def view(self, name: str) -> ViewError:
        """The view of this name (KeyError when the calibration has none)."""
        for view in self.views:
            if view.name == name:
                return view
        raise KeyError(name)

    @property
    def has_corners(self) -> bool:
        """False for a document stored before Labrig kept where the corners fell
        (``labrig.calibration/1``)."""
        return bool(self.views) and all(v.corners is not None for v in self.views)

    @property
    def image_size(self) -> tuple[int, int]:
        width, height = self.document["image_size"]
        return int(width), int(height)

    @property
    def coverage_grid(self) -> tuple[int, int]:
        cols, rows = self.document.get("coverage_grid") or COVERAGE_GRID
        return int(cols), int(rows)

    @property
    def source(self) -> CaptureSource | None:
        """The stored recording the views came from; None for files given by name,
        or a v1 document."""
        raw = self.document.get("source")
        return CaptureSource.from_json(raw) if raw else None

    def used_corners(self) -> Array | None:
        """Every corner of every view the solve used, N×2 image px (what coverage
        counts); None for v1."""
        if not self.has_corners:
            return None
        used = [v.corners for v in self.views if not v.rejected and v.corners is not None]
        return np.concatenate(used) if used else np.zeros((0, 2))

    def coverage_counts(self) -> Counts | None:
        """Corners of the used views in each coverage grid cell (rows × cols), as the coverage was
        judged; None for v1."""
        corners = self.used_corners()
        return (
            None
            if corners is None
            else coverage_counts(corners, self.image_size, self.coverage_grid)
        )

    @property
    def reasons(self) -> list[tuple[str, str]]:
        """(code, message) of each reason it did not validate; empty when valid."""
        return [(r["code"], r["message"]) for r in self.document.get("reasons", [])]

    @property
    def thresholds(self) -> dict[str, Any]:
        return dict(self.document.get("thresholds") or {})


def age_words(delta: timedelta) -> str:
    """A duration as a technician says it: "just now", "12 min", "5 h", "3 d"."""
    seconds = max(delta.total_seconds(), 0.0)
    if seconds < 60:
        return "just now"
    for unit, size in (("d", 86400), ("h", 3600)):
        if seconds >= size:
            return f"{seconds // size:.0f} {unit}"
    return f"{seconds // 60:.0f} min"


def list_calibrations(
    store: Store, now: datetime | None = None, limit: int = CALIBRATION_LIMIT
) -> list[CalibrationSummary]:
    """The newest ``limit`` calibrations, newest first, each judged at ``now``."""
    now = now or utcnow()
    columns = (
        CalibrationRecord.id,
        CalibrationRecord.device_id,
        CalibrationRecord.mode,
        CalibrationRecord.valid,
        CalibrationRecord.rms_px,
        CalibrationRecord.created_at,
        CalibrationRecord.valid_until,
        CalibrationRecord.plane_homography.is_not(None),
    )
    with store.read() as session:
        rows = session.execute(
            select(*columns).order_by(CalibrationRecord.created_at.desc()).limit(limit)
        ).all()
    used: set[tuple[str, str]] = set()
    out = []
    for (
        cid,
        device,
        mode,
        valid,
        rms,
        created,
        until,
        plane,
    ) in rows:  # newest first: the first current one is used
        validity = _validity(bool(valid), until, now, (device, mode) in used)
        if validity is Validity.IN_USE:
            used.add((device, mode))
        out.append(
            CalibrationSummary(
                calibration_id=cid,
                device_id=device,
                mode=mode,
                created_at=created,
                rms_px=float(rms),
                valid_until=until,
                validity=validity,
                has_plane=bool(plane),
            )
        )
    return out


def load_calibration_detail(
    store: Store, calibration_id: str, now: datetime | None = None
) -> CalibrationDetail:
    """One calibration with its document; raises :class:`UnknownCalibrationError` when
    it is not stored."""
    now = now or utcnow()
    with store.read() as session:
        row = session.get(CalibrationRecord, calibration_id)
        if row is None:
            raise UnknownCalibrationError(f"no calibration {calibration_id[:12]}… in this store")
        in_use = session.scalar(  # the rule of calibrations.current_calibration
            select(CalibrationRecord.id)
            .where(
                CalibrationRecord.device_id == row.device_id,
                CalibrationRecord.mode == row.mode,
                CalibrationRecord.valid.is_(True),
                CalibrationRecord.valid_until > now,
            )
            .order_by(CalibrationRecord.created_at.desc())
            .limit(1)
        )
        summary = CalibrationSummary(
            calibration_id=row.id,
            device_id=row.device_id,
            mode=row.mode,
            created_at=row.created_at,
            rms_px=row.rms_px,
            valid_until=row.valid_until,
            validity=_validity(row.valid, row.valid_until, now, in_use != row.id),
            has_plane=row.plane_homography is not None,
        )
        return CalibrationDetail(summary, json.loads(row.document))


def _validity(valid: bool, until: datetime | None, now: datetime, newer_in_use: bool) -> Validity:
    if not valid:
        return Validity.NOT_VALID
    if until is None or until <= now:
        return Validity.EXPIRED
    return Validity.SUPERSEDED if newer_in_use else Validity.IN_USE


def _natural(name: str) -> list[Any]:
    """``board-90`` before ``board-120``: digit runs compare as numbers."""
    return [
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name)
    ]


def load_view_frame(store: Store, detail: CalibrationDetail, view_name: str) -> Image | None:
    """The frame (BGR) that ``view_name`` of this calibration came from, decoded from its stored
    recording; None when the calibration has no ``source`` (its views were files given by name,
    which Labrig does not keep).

    Raises :class:`ViewFrameUnavailableError` when the media file is gone or cannot be decoded, and
    ``CaptureMissingError`` when the recording itself is no longer in the store. Blocking (one
    decode); any thread.
    """
    source = detail.source
    if source is None:
        return None
    segment, _, index = view_name.rpartition("#")
    if not segment or not index.isdigit():
        raise ViewFrameUnavailableError(
            f"{view_name} is not a frame of a recording (segment#frame); this "
            "calibration's document is not one Labrig wrote: calibrate again"
        )
    media = load_capture(store, source.manifest_sha256)
    path = next((p for p in media.segments if p.name == segment), None)
    if path is None or not path.is_file():
        raise ViewFrameUnavailableError(
            f"the frame of view {view_name} cannot be shown: the media file of recording "
            f"{source.capture_id[:8]} is missing from the media store; run 'labrig verify' to list "
            "what is missing and restore the recording from the archive"
        )
    return read_video_frame(path, int(index))


def read_video_frame(path: Path, index: int) -> Image:
    """Frame ``index`` (0-based) of a video file, BGR, as
    :func:`~labrig.calibration.images.frames_from_video` decoded it: MJPG (every frame a key frame)
    by seeking, other codecs by reading up to it."""
    cap = open_video(path)
    try:
        fourcc = (
            int(cap.get(cv2.CAP_PROP_FOURCC)).to_bytes(4, "little").upper()
            if cap.isOpened()
            else b""
        )
        at = index if fourcc in _INTRA_FOURCCS and cap.set(cv2.CAP_PROP_POS_FRAMES, index) else 0
        ok = cap.isOpened()
        while ok and at < index:
            ok, at = cap.grab(), at + 1
        ok, frame = cap.read() if ok else (False, None)
    finally:
        cap.release()
    if not ok or frame is None:
        raise ViewFrameUnavailableError(
            f"frame {index} of {path.name} cannot be decoded (the file is damaged or "
            "shorter than when it was calibrated); run 'labrig verify' and restore the "
            "recording from the archive"
        )
    return np.asarray(frame, dtype=np.uint8)


# seeking lands exactly on the frame: no frame depends on another
_INTRA_FOURCCS = frozenset({b"MJPG", b"JPEG"})
