"""Calibrations in the catalog: saved with their verdict, bound to a device in one
mode, found again.

A calibration that validates records ``calibration.validated``; only a valid,
unexpired calibration of the same device and mode is ever used for metric output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt
from sqlalchemy import select

from labrig.calibration.camera import CalibrationResult, bind
from labrig.domain.events import EventName
from labrig.errors import LabrigError
from labrig.events import record_event
from labrig.store import Store, utcnow
from labrig.store.models import CalibrationRecord

Array = npt.NDArray[np.float64]


class UnknownCalibrationError(LabrigError):
    code = "LABRIG_UNKNOWN_CALIBRATION"


@dataclass(frozen=True)
class StoredCalibration:
    """What analysis needs of a calibration: intrinsics, distortion, and the plane
    homography if any."""

    id: str
    device_id: str
    mode: str
    valid: bool
    rms_px: float
    camera_matrix: Array
    dist: Array
    plane_homography: Array | None  # undistorted image px -> plane mm
    valid_until: datetime | None

    @classmethod
    def of(cls, row: CalibrationRecord) -> StoredCalibration:
        doc = json.loads(row.document)
        d = doc["distortion"]
        h = (
            np.asarray(json.loads(row.plane_homography), dtype=np.float64)
            if row.plane_homography
            else None
        )
        return cls(
            id=row.id,
            device_id=row.device_id,
            mode=row.mode,
            valid=row.valid,
            rms_px=row.rms_px,
            camera_matrix=np.asarray(doc["camera_matrix"], dtype=np.float64),
            dist=np.asarray([d["k1"], d["k2"], d["p1"], d["p2"], d["k3"]], dtype=np.float64),
            plane_homography=h,
            valid_until=row.valid_until,
        )


def save_calibration(
    store: Store,
    result: CalibrationResult,
    device_id: str,
    mode: str,
    plane_homography: Array | None = None,
    now: datetime | None = None,
) -> StoredCalibration:
    """Store the result (valid or not); a valid one is bound to ``device_id`` in
    ``mode`` and announced."""
    now = now or utcnow()
    binding = bind(result, device_id, now) if result.valid else None
    calibration_id = result.digest()
    with store.write() as session:
        row = session.get(CalibrationRecord, calibration_id)
        if row is None:
            row = CalibrationRecord(
                id=calibration_id,
                device_id=device_id,
                mode=mode,
                valid=result.valid,
                rms_px=result.rms_px,
                document=json.dumps(result.to_json(), sort_keys=True),
                created_at=now,
                valid_until=binding.valid_until if binding else None,
            )
            session.add(row)
            if binding is not None:
                record_event(session, EventName.CALIBRATION_VALIDATED, binding.event_payload())
        if plane_homography is not None:
            row.plane_homography = json.dumps(np.asarray(plane_homography).tolist())
        session.flush()
        return StoredCalibration.of(row)


def current_calibration(
    store: Store, device_id: str, mode: str, now: datetime | None = None
) -> StoredCalibration | None:
    """The newest valid, unexpired calibration of this device in this mode, or None."""
    now = now or utcnow()
    with store.read() as session:
        row = session.scalars(
            select(CalibrationRecord)
            .where(
                CalibrationRecord.device_id == device_id,
                CalibrationRecord.mode == mode,
                CalibrationRecord.valid.is_(True),
                CalibrationRecord.valid_until > now,
            )
            .order_by(CalibrationRecord.created_at.desc())
            .limit(1)
        ).first()
        return StoredCalibration.of(row) if row is not None else None


def load_calibration(store: Store, calibration_id: str) -> StoredCalibration:
    with store.read() as session:
        row = session.get(CalibrationRecord, calibration_id)
        if row is None:
            raise UnknownCalibrationError(f"no calibration {calibration_id[:12]}… in this store")
        return StoredCalibration.of(row)


@dataclass(frozen=True)
class Readiness:
    """What a recording by ``device_id`` in ``mode`` would be analysed with, said before Record:
    the current calibration (None: no valid, unexpired one) and so the unit of its results."""

    device_id: str
    mode: str
    calibration: StoredCalibration | None
    # other modes of the device with a valid calibration and a plane view (results in mm)
    metric_modes: tuple[str, ...] = ()

    @property
    def metric(self) -> bool:
        """Results in millimetres: a valid calibration with a plane view."""
        return self.calibration is not None and self.calibration.plane_homography is not None

    def sentence(self, device_name: str) -> str:
        """One sentence for the technician about to record."""
        c = self.calibration
        if c is None:
            return (
                f"Not calibrated: {device_name} in {self.mode} has no valid calibration, so "
                "results will be in pixels."
            )
        until = f", valid until {c.valid_until:%Y-%m-%d}" if c.valid_until else ""
        if c.plane_homography is None:
            return (
                f"Calibrated without a plane view (calibration {c.id[:8]}, RMS {c.rms_px:.2f} px"
                f"{until}): the lens is corrected but results stay in pixels."
            )
        return (
            f"Calibrated: results in mm on the measurement plane (calibration {c.id[:8]}, RMS "
            f"{c.rms_px:.2f} px{until})."
        )


def readiness(store: Store, device_id: str, mode: str, now: datetime | None = None) -> Readiness:
    """What recordings of ``device_id`` in ``mode`` (a mode label) would be analysed with now, and
    in which other modes the device would give millimetres."""
    now = now or utcnow()
    with store.read() as session:
        others = session.scalars(
            select(CalibrationRecord.mode)
            .where(
                CalibrationRecord.device_id == device_id,
                CalibrationRecord.mode != mode,
                CalibrationRecord.valid.is_(True),
                CalibrationRecord.valid_until > now,
                CalibrationRecord.plane_homography.is_not(None),
            )
            .order_by(CalibrationRecord.created_at.desc())
        ).all()
    metric_modes = tuple(dict.fromkeys(others))
    return Readiness(
        device_id, mode, current_calibration(store, device_id, mode, now), metric_modes
    )
