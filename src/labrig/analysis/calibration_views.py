"""What the Calibration screen reads: stored calibrations with their device binding, age and validity.

Read-only and Qt-free; every function opens its own read session, so it may run on any thread. A stored
calibration keeps its ``labrig.calibration/1`` document: per-view errors, rejected and skipped views, and the
*fraction* of the coverage grid its corners reached, but not the corners themselves, so no map of where they fell
can be drawn afterwards.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import select

from labrig.analysis.calibrations import UnknownCalibrationError
from labrig.store.database import Store
from labrig.store.models import CalibrationRecord
from labrig.store.types import utcnow

CALIBRATION_LIMIT = 500  # newest calibrations listed


class Validity(StrEnum):
    IN_USE = "in use"  # valid, unexpired, the newest for its device and mode: analysis uses this one
    SUPERSEDED = "superseded"  # valid and unexpired, but a newer one of the same device and mode is used
    EXPIRED = "expired"  # was valid; older than its thresholds' max_age_days
    NOT_VALID = "not valid"  # did not validate: never used


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
    """One view the solve saw: its RMS reprojection error, and the limit it broke if it was rejected."""

    name: str
    error_px: float
    rejected: bool
    limit_px: float | None


@dataclass(frozen=True)
class CalibrationDetail:
    summary: CalibrationSummary
    document: dict[str, Any]  # labrig.calibration/1

    @property
    def views(self) -> list[ViewError]:
        """Used and rejected views together, in capture order (names compared with their numbers as numbers)."""
        doc = self.document
        views = [ViewError(v["name"], float(v["error_px"]), False, None) for v in doc.get("views", [])]
        views += [ViewError(v["name"], float(v["error_px"]), True, float(v["limit_px"]))
                  for v in doc.get("rejected", [])]
        return sorted(views, key=lambda v: _natural(v.name))

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


def list_calibrations(store: Store, now: datetime | None = None,
                      limit: int = CALIBRATION_LIMIT) -> list[CalibrationSummary]:
    """The newest ``limit`` calibrations, newest first, each judged at ``now``."""
    now = now or utcnow()
    columns = (CalibrationRecord.id, CalibrationRecord.device_id, CalibrationRecord.mode, CalibrationRecord.valid,
               CalibrationRecord.rms_px, CalibrationRecord.created_at, CalibrationRecord.valid_until,
               CalibrationRecord.plane_homography.is_not(None))
    with store.read() as session:
        rows = session.execute(select(*columns).order_by(CalibrationRecord.created_at.desc()).limit(limit)).all()
    used: set[tuple[str, str]] = set()
    out = []
    for cid, device, mode, valid, rms, created, until, plane in rows:  # newest first: the first current one is used
        validity = _validity(bool(valid), until, now, (device, mode) in used)
        if validity is Validity.IN_USE:
            used.add((device, mode))
        out.append(CalibrationSummary(cid, device, mode, created, float(rms), until, validity, bool(plane)))
    return out


def load_calibration_detail(store: Store, calibration_id: str, now: datetime | None = None) -> CalibrationDetail:
    """One calibration with its document; raises :class:`UnknownCalibrationError` when it is not stored."""
    now = now or utcnow()
    with store.read() as session:
        row = session.get(CalibrationRecord, calibration_id)
        if row is None:
            raise UnknownCalibrationError(f"no calibration {calibration_id[:12]}… in this store")
        in_use = session.scalar(  # the rule of calibrations.current_calibration
            select(CalibrationRecord.id)
            .where(CalibrationRecord.device_id == row.device_id, CalibrationRecord.mode == row.mode,
                   CalibrationRecord.valid.is_(True), CalibrationRecord.valid_until > now)
            .order_by(CalibrationRecord.created_at.desc()).limit(1))
        summary = CalibrationSummary(row.id, row.device_id, row.mode, row.created_at, row.rms_px, row.valid_until,
                                     _validity(row.valid, row.valid_until, now, in_use != row.id),
                                     row.plane_homography is not None)
        return CalibrationDetail(summary, json.loads(row.document))


def _validity(valid: bool, until: datetime | None, now: datetime, newer_in_use: bool) -> Validity:
    if not valid:
        return Validity.NOT_VALID
    if until is None or until <= now:
        return Validity.EXPIRED
    return Validity.SUPERSEDED if newer_in_use else Validity.IN_USE


def _natural(name: str) -> list[Any]:
    """``board-90`` before ``board-120``: digit runs compare as numbers."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name)]
