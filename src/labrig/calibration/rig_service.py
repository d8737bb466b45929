"""What the Calibration screen's rig mode asks of the core: the rigs, their board and floor
recordings, the stored rig calibrations with their verdicts, one in detail, and calibrating a rig
from its recordings.

Every call opens its own reads (or media files) and blocks, so it may run on any thread; the screen
calls them on pool threads. Qt-free.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Row, select

from labrig.calibration.boards import parse_board
from labrig.calibration.rig import RigCalibration, calibrate_rig
from labrig.calibration.rig_captures import as_bound, recorded_cameras, recorded_rig
from labrig.calibration.rig_checks import RigThresholds
from labrig.calibration.rig_stored import (
    StoredRigCalibration,
    binding_digest,
    current_rig_calibration,
    load_rig_calibration,
    rig_binding,
    rig_calibrations,
    save_rig_calibration,
)
from labrig.calibration.views import Validity, age_words
from labrig.capture.rigs import Rig, list_rigs
from labrig.domain.recordings import RecordingPurpose, rig_recording_purpose
from labrig.store import Store, utcnow
from labrig.store.models import Attempt, RigCalibrationRecord, RigRecording
from labrig.tasks import UNTRACKED, Task

LISTED = 200  # newest rig recordings and rig calibrations listed


@dataclass(frozen=True)
class RigRecordingChoice:
    """A saved rig recording a rig calibration may be made from."""

    attempt_id: str
    number: int
    rig_name: str
    purpose: RecordingPurpose
    recorded_at: datetime
    places: tuple[str, ...]  # its cameras, by the rig's places
    devices: tuple[dict[str, str], ...] = field(compare=False)  # place, device id, mode label

    def describe(self) -> str:
        at = self.recorded_at.astimezone()
        cameras = len(self.places)
        return f"{self.rig_name}, attempt {self.number}: {at:%Y-%m-%d %H:%M}, {cameras} cameras"


@dataclass(frozen=True)
class RigCalibrationSummary:
    """One row of the rig calibrations list."""

    calibration_id: str
    rig_name: str
    cameras: tuple[str, ...]
    created_at: datetime
    rms_px: float
    valid_until: datetime | None
    validity: Validity

    def age(self, now: datetime | None = None) -> str:
        return age_words((now or utcnow()) - self.created_at)


@dataclass(frozen=True)
class RigCalibrationDetail:
    summary: RigCalibrationSummary
    document: dict[str, Any]  # labrig.rig-calibration/1, as stored
    binding: tuple[dict[str, Any], ...]

    @property
    def reasons(self) -> list[dict[str, str]]:
        """Each failed threshold: its code and what to do."""
        return [dict(r) for r in self.document.get("reasons", [])]


@dataclass(frozen=True)
class RigReadiness:
    """What the rig's next recording would be analysed with: its current rig calibration, or
    why there is none."""

    rig_name: str
    cameras: int
    current: StoredRigCalibration | None
    ever_calibrated: bool  # a rig calibration was stored for it once: its recordings go 3-D

    def words(self) -> str:
        if self.cameras < 2:
            return "One camera: its recordings are analysed as that camera's."
        if self.current is not None:
            until = self.current.valid_until
            return (
                f"Rig calibration {self.current.id[:12]}…, valid until "
                f"{until.astimezone():%Y-%m-%d}: attempts are analysed in 3-D, in mm."
                if until is not None
                else f"Rig calibration {self.current.id[:12]}…: attempts are analysed in 3-D."
            )
        if self.ever_calibrated:
            return (
                "No valid rig calibration for the rig as it is now (expired, or a device or mode "
                "changed): 3-D analysis of its attempts is blocked until it is calibrated again "
                "on Calibration ▸ A rig."
            )
        return (
            "Not calibrated as a rig: each camera's attempts are analysed on their own, in 2-D. "
            "Record the board and calibrate on Calibration ▸ A rig for 3-D in mm."
        )


@dataclass(frozen=True)
class RigCalibrationOutcome:
    result: RigCalibration
    stored: StoredRigCalibration


_Listed = Row[str, str, str, str, bool, float, datetime, datetime | None]
_COLUMNS = (
    RigCalibrationRecord.id,
    RigCalibrationRecord.rig_name,
    RigCalibrationRecord.binding,
    RigCalibrationRecord.binding_digest,
    RigCalibrationRecord.valid,
    RigCalibrationRecord.rms_px,
    RigCalibrationRecord.created_at,
    RigCalibrationRecord.valid_until,
)


class RigCalibrationService:
    """Rig calibrations over one store: what there is, and making a new one."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def rigs(self) -> list[Rig]:
        """The rigs with two or more cameras: those a rig calibration is made for."""
        return [r for r in list_rigs(self.store) if sum(not d.instrument for d in r.devices) >= 2]

    def readiness(self, rig: Rig) -> RigReadiness:
        """What ``rig``'s next recording would be analysed with."""
        cameras = sum(not d.instrument for d in rig.devices)
        return RigReadiness(
            rig.name,
            cameras,
            current_rig_calibration(self.store, rig),
            bool(rig_calibrations(self.store, rig.name)),
        )

    def recordings(self) -> list[RigRecordingChoice]:
        """Saved rig recordings, newest first, each with what it was recorded for."""
        with self.store.read() as session:
            rows = session.execute(
                select(RigRecording, Attempt)
                .join(Attempt, Attempt.id == RigRecording.attempt_id)
                .order_by(Attempt.created_at.desc())
                .limit(LISTED)
            ).all()
        out = []
        for recording, attempt in rows:
            devices = recorded_cameras(recording)
            out.append(
                RigRecordingChoice(
                    attempt.id,
                    attempt.number,
                    recording.rig_name,
                    rig_recording_purpose(attempt.note),
                    attempt.created_at,
                    tuple(d["place"] for d in devices),
                    tuple(as_bound(devices)),
                )
            )
        return out

    def calibrations(self, now: datetime | None = None) -> list[RigCalibrationSummary]:
        """Stored rig calibrations of every rig, newest first, each judged at ``now``."""
        with self.store.read() as session:
            rows = session.execute(
                select(*_COLUMNS).order_by(RigCalibrationRecord.created_at.desc()).limit(LISTED)
            ).all()
        return self._judged(rows, now or utcnow())

    def detail(self, calibration_id: str) -> RigCalibrationDetail:
        """One stored rig calibration, judged now."""
        stored = load_rig_calibration(self.store, calibration_id)
        with self.store.read() as session:
            rows = session.execute(
                select(*_COLUMNS).where(RigCalibrationRecord.id == calibration_id)
            ).all()
        (summary,) = self._judged(rows, utcnow())
        return RigCalibrationDetail(summary, stored.document, stored.binding)

    def _judged(self, rows: Sequence[_Listed], now: datetime) -> list[RigCalibrationSummary]:
        """Each row as listed: in use, superseded by a newer one, expired, made of cameras the
        rig no longer has (or of a rig deleted since), or never valid."""
        rigs = {r.name: r for r in list_rigs(self.store)}
        current = {}
        for name in {row.rig_name for row in rows} & rigs.keys():
            found = current_rig_calibration(self.store, rigs[name], now)
            current[name] = found.id if found is not None else None
        out = []
        for row in rows:
            rig = rigs.get(row.rig_name)
            if not row.valid:
                validity = Validity.NOT_VALID
            elif rig is None or row.binding_digest != binding_digest(rig_binding(rig)):
                validity = Validity.DEVICE_CHANGED
            elif row.valid_until is None or row.valid_until <= now:
                validity = Validity.EXPIRED
            elif current.get(row.rig_name) == row.id:
                validity = Validity.IN_USE
            else:
                validity = Validity.SUPERSEDED
            out.append(
                RigCalibrationSummary(
                    row.id,
                    row.rig_name,
                    tuple(b["place"] for b in json.loads(row.binding)),
                    row.created_at,
                    row.rms_px,
                    row.valid_until,
                    validity,
                )
            )
        return out

    def calibrate(
        self,
        board_spec: str,
        board_attempt: str,
        floor_attempt: str | None = None,
        every: int = 10,
        thresholds: RigThresholds | None = None,
        task: Task = UNTRACKED,
    ) -> RigCalibrationOutcome:
        """Calibrate the rig that recorded ``board_attempt`` from every ``every``-th instant of it
        (the world's origin and axes from the ``floor_attempt`` recording, else the first camera)
        and store it for that rig, valid or not; progress goes to ``task``, and a cancel of it
        stores nothing."""
        board = parse_board(board_spec)
        task.progress(0.0, "reading the recordings")
        cameras, rig = recorded_rig(self.store, board_attempt, floor_attempt, every)
        result = calibrate_rig(cameras, board, thresholds, task)
        task.check_cancelled()
        return RigCalibrationOutcome(result, save_rig_calibration(self.store, result, rig))
