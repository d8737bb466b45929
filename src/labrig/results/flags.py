"""Whether a result's calibration still holds: the flags a reviewer sees on a published result made
under a calibration that has since changed, with the reason and the calibration to reprocess under.

A single camera's calibration is **superseded** when a newer valid one of the same device and mode
was stored after it. A rig calibration is superseded when a newer valid one of the same rig was;
it **no longer fits** when the rig's cameras, devices or modes changed since (its binding differs
from the rig's), or the rig was removed. Expiry alone flags nothing: a calibration valid when the
result was made stays the right one for it. Computed when read, never stored; the result itself
is never changed. Read-only and Qt-free.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from labrig.store import Store, utcnow
from labrig.store.models import CalibrationRecord, RigCalibrationRecord

if TYPE_CHECKING:
    from labrig.capture.rigs import Rig


@dataclass(frozen=True)
class CalibrationFlag:
    calibration_id: str
    reason: str  # a sentence a reviewer reads
    current_id: str | None  # the calibration a reprocess would use now (None: no valid one)

    def to_json(self) -> dict[str, Any]:
        return {
            "calibration_id": self.calibration_id,
            "reason": self.reason,
            "current_id": self.current_id,
        }


def used_calibrations(configs: Iterable[str | None]) -> tuple[str | None, str | None]:
    """The calibration and the rig calibration an attempt's jobs ran under, from their (small)
    JSON configurations rather than the result document."""
    single = rig = None
    for text in configs:
        config = json.loads(text or "{}")
        single = single or config.get("calibration_id")
        rig = rig or config.get("rig_calibration_id")
    return single, rig


class CalibrationFlags:
    """Flags for many documents read together (one read of the rigs, each calibration looked up
    once)."""

    def __init__(self, store: Store, now: datetime | None = None) -> None:
        self.store, self.now = store, now or utcnow()
        self._rigs: dict[str, Rig] | None = None
        self._seen: dict[str, tuple[CalibrationFlag, ...]] = {}

    def of(self, document: Mapping[str, Any] | None) -> tuple[CalibrationFlag, ...]:
        """The flags of a published result document (none for a blocked one or one without a
        calibration)."""
        if not document or document.get("status") != "published":
            return ()
        provenance = document.get("provenance") or {}
        return self.of_ids(provenance.get("calibration_id"), provenance.get("rig_calibration_id"))

    def of_ids(
        self, calibration_id: str | None, rig_calibration_id: str | None
    ) -> tuple[CalibrationFlag, ...]:
        """The flags of a published result made under these calibrations."""
        if rig_calibration_id:
            rig_id = rig_calibration_id
            return self._cached(f"rig:{rig_id}", lambda s: self._rig(s, rig_id))
        if calibration_id:
            single = calibration_id
            return self._cached(single, lambda s: self._single(s, single))
        return ()

    def _cached(self, key: str, work: Any) -> tuple[CalibrationFlag, ...]:
        if key not in self._seen:
            with self.store.read() as session:
                self._seen[key] = tuple(work(session))
        return self._seen[key]

    def _single(self, session: Session, calibration_id: str) -> list[CalibrationFlag]:
        used = session.get(CalibrationRecord, calibration_id)
        if used is None:
            return []
        newer = session.scalars(
            select(CalibrationRecord)
            .where(
                CalibrationRecord.device_id == used.device_id,
                CalibrationRecord.mode == used.mode,
                CalibrationRecord.valid.is_(True),
                CalibrationRecord.valid_until > self.now,
                CalibrationRecord.created_at > used.created_at,
            )
            .order_by(CalibrationRecord.created_at.desc())
            .limit(1)
        ).first()
        if newer is None:
            return []
        return [
            CalibrationFlag(
                calibration_id,
                f"calibration {calibration_id[:8]} of {used.device_id} ({used.mode}) was "
                f"superseded by calibration {newer.id[:8]}, stored {_when(newer.created_at)}: "
                "reprocess to see this attempt under it",
                newer.id,
            )
        ]

    def _rig(self, session: Session, calibration_id: str) -> list[CalibrationFlag]:
        used = session.get(RigCalibrationRecord, calibration_id)
        if used is None:
            return []
        rig = self._rig_named(used.rig_name)
        short = calibration_id[:8]
        if rig is None:
            return [
                CalibrationFlag(
                    calibration_id,
                    f"rig {used.rig_name}, which rig calibration {short} is of, was removed",
                    None,
                )
            ]
        from labrig.calibration.rig_stored import binding_digest, rig_binding

        bound = binding_digest(rig_binding(rig))
        current = session.scalars(
            select(RigCalibrationRecord)
            .where(
                RigCalibrationRecord.rig_name == rig.name,
                RigCalibrationRecord.binding_digest == bound,
                RigCalibrationRecord.valid.is_(True),
                RigCalibrationRecord.valid_until > self.now,
            )
            .order_by(RigCalibrationRecord.created_at.desc())
            .limit(1)
        ).first()
        now_id = current.id if current is not None else None
        if used.binding_digest != bound:
            return [
                CalibrationFlag(
                    calibration_id,
                    f"rig {rig.name}'s cameras changed (a device or a mode) after rig calibration "
                    f"{short} was made, so it no longer holds for the rig"
                    + (
                        f"; rig calibration {now_id[:8]} is current: reprocess under it"
                        if now_id
                        else ": calibrate the rig again"
                    ),
                    now_id,
                )
            ]
        if (
            current is not None
            and current.id != calibration_id
            and (current.created_at > used.created_at)
        ):
            return [
                CalibrationFlag(
                    calibration_id,
                    f"rig calibration {short} of rig {rig.name} was superseded by rig calibration "
                    f"{current.id[:8]}, stored {_when(current.created_at)}: reprocess to see "
                    "this attempt under it",
                    current.id,
                )
            ]
        return []

    def _rig_named(self, name: str) -> Rig | None:
        if self._rigs is None:
            # imported here: the rig modules load OpenCV, which a page of results without a rig
            # calibration (and the command line's list) does not need
            from labrig.capture.rigs import list_rigs

            self._rigs = {r.name: r for r in list_rigs(self.store)}
        return self._rigs.get(name)


def _when(at: datetime) -> str:
    return f"{at.astimezone():%Y-%m-%d %H:%M}"
