"""Rig calibrations stored bound to a rig's cameras: announced when valid, current only while the
rig keeps the same devices and modes, and refused for another rig."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from labrig.calibration.rig import RigCalibration
from labrig.calibration.rig_stored import (
    RigCalibrationMismatchError,
    current_rig_calibration,
    rig_calibrations,
    save_rig_calibration,
)
from labrig.capture.rig_camera import rig_device_id
from labrig.capture.rigs import RigDevice, builtin_rig, delete_rig, get_rig, store_rig
from labrig.capture.sources import Mode
from labrig.domain.events import EventName
from labrig.store import Store, utcnow
from labrig.store.models import OutboxEvent, RigCalibrationRecord
from tests.integration.conftest import NAMES

MODE = Mode(1280, 720, 30.0)


def _lab(store: Store, mode: Mode = MODE, places: list[str] = NAMES, name: str = "lab") -> None:
    store_rig(
        store,
        name,
        [RigDevice(rig_device_id(i), mode, place) for i, place in enumerate(places)],
        "tech",
    )


def test_a_valid_rig_calibration_is_stored_announced_and_current(
    store: Store, solved: RigCalibration
) -> None:
    assert solved.valid, solved.checks.reasons
    _lab(store)
    rig = get_rig(store, "lab")
    now = utcnow()
    saved = save_rig_calibration(store, solved, rig, now)
    assert saved.id == solved.digest() and saved.valid
    assert saved.valid_until == now + timedelta(days=30)
    assert saved.document["cameras"][0]["name"] == "front"
    current = current_rig_calibration(store, rig)
    assert current is not None and current.id == saved.id
    assert current_rig_calibration(store, rig, now + timedelta(days=31)) is None  # aged out
    with store.read() as session:
        events = [
            json.loads(e.payload)
            for e in session.scalars(
                select(OutboxEvent).where(OutboxEvent.name == EventName.CALIBRATION_VALIDATED)
            )
        ]
    assert events == [
        {
            "calibration_id": saved.id,
            "device_id": "rig:lab",
            "rms_px": solved.rms_px,
            "valid_until": saved.valid_until.isoformat(),
        }
    ]
    # the built-in virtual rig has the same places and modes: it can be calibrated too
    assert save_rig_calibration(store, solved, builtin_rig()).id == saved.id


def test_a_device_or_mode_change_leaves_the_rig_uncalibrated(
    store: Store, solved: RigCalibration
) -> None:
    _lab(store)
    save_rig_calibration(store, solved, get_rig(store, "lab"))
    delete_rig(store, "lab")
    _lab(store, Mode(1280, 720, 60.0))  # the same cameras, recording at 60 fps now
    assert current_rig_calibration(store, get_rig(store, "lab")) is None
    assert len(rig_calibrations(store, "lab")) == 1  # kept, no longer current


@pytest.mark.parametrize(
    ("places", "mode", "says"),
    [
        (["front", "right"], MODE, "rig pair has cameras front, right"),
        (NAMES, Mode(640, 360, 30.0), "camera front's pictures are 1280x720"),
    ],
)
def test_a_rig_calibration_for_another_rig_is_refused_and_nothing_is_stored(
    store: Store, solved: RigCalibration, places: list[str], mode: Mode, says: str
) -> None:
    _lab(store, mode, places, "pair")
    with pytest.raises(RigCalibrationMismatchError) as caught:
        save_rig_calibration(store, solved, get_rig(store, "pair"))
    assert caught.value.code == "LABRIG_RIG_CALIBRATION_MISMATCH"
    assert says in caught.value.message
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(RigCalibrationRecord)) == 0
        assert not session.scalar(
            select(func.count())
            .select_from(OutboxEvent)
            .where(OutboxEvent.name == EventName.CALIBRATION_VALIDATED)
        )
