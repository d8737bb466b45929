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
        if not text or "calibration_id" not in text:  # most stages' (a page reads thousands)
            continue
        config = json.loads(text)
        single = single or config.get("calibration_id")
        rig = rig or config.get("rig_calibration_id")
    return single, rig


#: what a flag is worked out from, of a calibration: its id and when it was stored
Stored = tuple[str, datetime]


class CalibrationFlags:
    """Flags for many documents read together: the calibrations of a page looked up at once
    (:meth:`prefetch`), the rigs read once, each calibration's flags worked out once."""

    def __init__(self, store: Store, now: datetime | None = None) -> None:
        self.store, self.now = store, now or utcnow()
        self._rigs: dict[str, Rig] | None = None
        self._seen: dict[str, tuple[CalibrationFlag, ...]] = {}
        # the newest valid calibration of a device and mode, and of a rig as it is bound now
        self._newest: dict[tuple[str, str], Stored | None] = {}
        self._current: dict[str, Stored | None] = {}

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
        key = _key(calibration_id, rig_calibration_id)
        if key is not None and key not in self._seen:
            self.prefetch([(calibration_id, rig_calibration_id)])
        return self._seen.get(key, ()) if key is not None else ()

    def prefetch(self, used: Iterable[tuple[str | None, str | None]]) -> None:
        """Work out the flags of every pair of ``used`` (as :meth:`of_ids` takes them) not yet
        seen, in one read: the calibrations by their keys, then what superseded them, once for
        each device and mode or rig (a page of 200 results had one read of its own for each
        calibration it named)."""
        rig_ids, single_ids = set(), set()
        for calibration_id, rig_calibration_id in used:
            key = _key(calibration_id, rig_calibration_id)
            if key is None or key in self._seen:
                continue
            if rig_calibration_id:
                rig_ids.add(rig_calibration_id)
            elif calibration_id:
                single_ids.add(calibration_id)
        if not rig_ids and not single_ids:
            return
        with self.store.read() as session:
            rigs = _by_id(session, RigCalibrationRecord, rig_ids)
            for rig_id in sorted(rig_ids):
                self._seen[f"rig:{rig_id}"] = tuple(self._rig(session, rig_id, rigs.get(rig_id)))
            singles = _by_id(session, CalibrationRecord, single_ids)
            for single in sorted(single_ids):
                self._seen[single] = tuple(self._single(session, single, singles.get(single)))

    def _single(
        self, session: Session, calibration_id: str, used: CalibrationRecord | None
    ) -> list[CalibrationFlag]:
        if used is None:
            return []
        key = (used.device_id, used.mode)
        if key not in self._newest:
            self._newest[key] = _stored(
                session.scalars(
                    select(CalibrationRecord)
                    .where(
                        CalibrationRecord.device_id == used.device_id,
                        CalibrationRecord.mode == used.mode,
                        CalibrationRecord.valid.is_(True),
                        CalibrationRecord.valid_until > self.now,
                    )
                    .order_by(CalibrationRecord.created_at.desc())
                    .limit(1)
                ).first()
            )
        newer = self._newest[key]
        if newer is None or newer[1] <= used.created_at:
            return []
        newer_id, stored_at = newer
        return [
            CalibrationFlag(
                calibration_id,
                f"calibration {calibration_id[:8]} of {used.device_id} ({used.mode}) was "
                f"superseded by calibration {newer_id[:8]}, stored {_when(stored_at)}: "
                "reprocess to see this attempt under it",
                newer_id,
            )
        ]

    def _rig(
        self, session: Session, calibration_id: str, used: RigCalibrationRecord | None
    ) -> list[CalibrationFlag]:
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
        if rig.name not in self._current:
            self._current[rig.name] = _stored(
                session.scalars(
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
            )
        current = self._current[rig.name]
        now_id = current[0] if current is not None else None
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
        if current is not None and current[0] != calibration_id and current[1] > used.created_at:
            return [
                CalibrationFlag(
                    calibration_id,
                    f"rig calibration {short} of rig {rig.name} was superseded by rig calibration "
                    f"{current[0][:8]}, stored {_when(current[1])}: reprocess to see "
                    "this attempt under it",
                    current[0],
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


def _key(calibration_id: str | None, rig_calibration_id: str | None) -> str | None:
    """Where the flags of a result made under these calibrations are kept (None: it had none)."""
    if rig_calibration_id:
        return f"rig:{rig_calibration_id}"
    return calibration_id or None


def _by_id(session: Session, record: Any, ids: set[str]) -> dict[str, Any]:
    if not ids:
        return {}
    return {r.id: r for r in session.scalars(select(record).where(record.id.in_(sorted(ids))))}


def _stored(record: CalibrationRecord | RigCalibrationRecord | None) -> Stored | None:
    return (record.id, record.created_at) if record is not None else None


def _when(at: datetime) -> str:
    return f"{at.astimezone():%Y-%m-%d %H:%M}"
