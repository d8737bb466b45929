"""Rig calibrations in the catalog: saved with their verdict, bound to a rig's cameras (each one's
place, device and mode), found again.

A rig calibration is stored only for the rig it was made of: its cameras must be named after the
rig's places and pictured in the rig's modes, or it is refused. A valid one records
``calibration.validated`` and is current until it ages out, and only while the rig still has the
same cameras, devices and modes: change one and the rig is uncalibrated again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import select

from labrig.calibration.geometry import Pose
from labrig.calibration.rig import RigCalibration
from labrig.capture.rigs import Rig
from labrig.capture.sources import Mode
from labrig.domain.events import EventName
from labrig.errors import LabrigError
from labrig.events import record_event
from labrig.store import Store, utcnow
from labrig.store.models import RigCalibrationRecord


class RigCalibrationMismatchError(LabrigError):
    code = "LABRIG_RIG_CALIBRATION_MISMATCH"


def rig_binding(rig: Rig) -> list[dict[str, Any]]:
    """The rig's cameras as a rig calibration is bound to them: place, device, mode, in order."""
    return [
        {"place": d.place, "device_id": d.device_id, "mode": d.mode.label()}
        for d in rig.devices
        if not d.instrument
    ]


def binding_digest(binding: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(binding, sort_keys=True).encode()).hexdigest()


def check_for_rig(result: RigCalibration, rig: Rig) -> None:
    """Refuse a rig calibration of other cameras, or of other image sizes, than ``rig``'s."""
    cameras = [d for d in rig.devices if not d.instrument]
    places = [d.place for d in cameras]
    names = [c.name for c in result.cameras]
    if sorted(names) != sorted(places):
        raise RigCalibrationMismatchError(
            f"this rig calibration is of cameras {', '.join(names)} but rig {rig.name} has cameras "
            f"{', '.join(places)}: calibrate rig {rig.name} with one --camera per place, named "
            "after it"
        )
    for device in cameras:
        assert isinstance(device.mode, Mode)
        size = result.camera(device.place).intrinsics.image_size
        if size != (device.mode.width, device.mode.height):
            raise RigCalibrationMismatchError(
                f"camera {device.place}'s pictures are {size[0]}x{size[1]} but rig {rig.name} "
                f"records it at {device.mode.width}x{device.mode.height}: take the pictures in "
                "the rig's own modes"
            )


class RigCalibrationNotFoundError(LabrigError):
    code = "LABRIG_RIG_CALIBRATION_NOT_FOUND"


@dataclass(frozen=True)
class CalibratedCamera:
    """One camera of a stored rig calibration, as triangulation needs it."""

    name: str  # the rig's place
    device_id: str
    mode: str  # the mode's label
    image_size: tuple[int, int]
    matrix: npt.NDArray[np.float64]
    dist: npt.NDArray[np.float64]
    pose: Pose  # world → camera, mm

    @property
    def focal_px(self) -> float:
        return float((self.matrix[0, 0] + self.matrix[1, 1]) / 2)


@dataclass(frozen=True)
class StoredRigCalibration:
    id: str
    rig_name: str
    valid: bool
    rms_px: float
    document: dict[str, Any]
    created_at: datetime
    valid_until: datetime | None
    binding: tuple[dict[str, Any], ...] = ()  # each camera's place, device and mode

    @classmethod
    def of(cls, row: RigCalibrationRecord) -> StoredRigCalibration:
        return cls(
            row.id,
            row.rig_name,
            row.valid,
            row.rms_px,
            json.loads(row.document),
            row.created_at,
            row.valid_until,
            tuple(json.loads(row.binding)),
        )

    @property
    def reasons(self) -> list[str]:
        """Why it is not valid (each failed threshold's message)."""
        return [r.get("message", str(r)) for r in self.document.get("reasons", [])]

    def cameras(self) -> list[CalibratedCamera]:
        """The calibrated cameras, in the rig's order, each with the device it is bound to."""
        bound = {b["place"]: b for b in self.binding}
        out = []
        for cam in self.document["cameras"]:
            b = bound.get(cam["name"], {})
            d = cam["distortion"]
            out.append(
                CalibratedCamera(
                    cam["name"],
                    b.get("device_id", ""),
                    b.get("mode", ""),
                    (int(cam["image_size"][0]), int(cam["image_size"][1])),
                    np.asarray(cam["camera_matrix"], dtype=np.float64),
                    np.asarray([d[k] for k in ("k1", "k2", "p1", "p2", "k3")], dtype=np.float64),
                    Pose.of(cam["rotation_vector_rad"], cam["translation_mm"]),
                )
            )
        return out


def load_rig_calibration(store: Store, calibration_id: str) -> StoredRigCalibration:
    """The stored rig calibration ``calibration_id``; refused when there is none."""
    with store.read() as session:
        row = session.get(RigCalibrationRecord, calibration_id)
        if row is None:
            raise RigCalibrationNotFoundError(
                f"no rig calibration {calibration_id[:12]} in this data folder; calibrate the rig "
                "('labrig calibrate-rig --rig NAME …') and reprocess"
            )
        return StoredRigCalibration.of(row)


def save_rig_calibration(
    store: Store, result: RigCalibration, rig: Rig, now: datetime | None = None
) -> StoredRigCalibration:
    """Store ``result`` (valid or not) bound to ``rig``'s cameras; a valid one is announced."""
    check_for_rig(result, rig)
    now = now or utcnow()
    binding = rig_binding(rig)
    until = now + timedelta(days=result.thresholds.max_age_days) if result.valid else None
    calibration_id = result.digest()
    with store.write() as session:
        row = session.get(RigCalibrationRecord, calibration_id)
        if row is None:
            row = RigCalibrationRecord(
                id=calibration_id,
                rig_name=rig.name,
                binding=json.dumps(binding, sort_keys=True),
                binding_digest=binding_digest(binding),
                valid=result.valid,
                rms_px=result.rms_px,
                document=json.dumps(result.to_json(), sort_keys=True),
                created_at=now,
                valid_until=until,
            )
            session.add(row)
            if until is not None:
                record_event(
                    session,
                    EventName.CALIBRATION_VALIDATED,
                    {
                        "calibration_id": calibration_id,
                        "device_id": f"rig:{rig.name}",
                        "rms_px": result.rms_px,
                        "valid_until": until.isoformat(),
                    },
                )
        session.flush()
        return StoredRigCalibration.of(row)


def current_rig_calibration(
    store: Store, rig: Rig, now: datetime | None = None
) -> StoredRigCalibration | None:
    """The newest valid, unexpired rig calibration of ``rig`` as its cameras are now, or None."""
    now = now or utcnow()
    with store.read() as session:
        row = session.scalars(
            select(RigCalibrationRecord)
            .where(
                RigCalibrationRecord.rig_name == rig.name,
                RigCalibrationRecord.binding_digest == binding_digest(rig_binding(rig)),
                RigCalibrationRecord.valid.is_(True),
                RigCalibrationRecord.valid_until > now,
            )
            .order_by(RigCalibrationRecord.created_at.desc())
            .limit(1)
        ).first()
        return StoredRigCalibration.of(row) if row is not None else None


def rig_calibrations(store: Store, rig_name: str) -> list[StoredRigCalibration]:
    """Every rig calibration stored for ``rig_name``, newest first."""
    with store.read() as session:
        rows = session.scalars(
            select(RigCalibrationRecord)
            .where(RigCalibrationRecord.rig_name == rig_name)
            .order_by(RigCalibrationRecord.created_at.desc())
        ).all()
        return [StoredRigCalibration.of(r) for r in rows]
