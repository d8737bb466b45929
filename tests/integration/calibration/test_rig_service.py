"""What the Calibration screen's rig mode reads and does: the rig recordings on offer with what
each was recorded for, the stored rig calibrations judged (in use, superseded, expired, made of
cameras the rig no longer has, never valid), one in detail, drawn to any size, and the refusals of
recordings that cannot calibrate a rig, nothing stored."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from labrig.bootstrap import Services, bootstrap
from labrig.calibration.camera import Reason
from labrig.calibration.rig import RigCalibration
from labrig.calibration.rig_captures import NotARigRecordingError
from labrig.calibration.rig_checks import RigChecks, RigThresholds
from labrig.calibration.rig_plot import rig_views_image
from labrig.calibration.rig_stored import RigCalibrationMismatchError, save_rig_calibration
from labrig.calibration.views import Validity
from labrig.capture import create_session
from labrig.capture.rig_camera import rig_device_id
from labrig.capture.rigs import DeviceSpec, get_rig
from labrig.capture.sources import Mode
from labrig.domain.recordings import RecordingPurpose
from labrig.pipeline import save_rig_attempt
from labrig.store import Store, utcnow
from labrig.store.models import RigCalibrationRecord
from labrig.tasks import TaskCancelledError, TaskControl
from tests.integration.conftest import BOARD, NAMES
from tests.integration.recording.test_rig_recording import record_frames

HD = Mode(1280, 720, 30.0, "any")
SMALL = Mode(640, 360, 30.0, "any")


@pytest.fixture
def services(store: Store) -> Services:
    built = bootstrap(store=store)
    yield built  # type: ignore[misc]
    built.close()


def _rig(services: Services, name: str, mode: Mode = HD, cameras: int = 4) -> None:
    services.capture.add_rig(name, [DeviceSpec(rig_device_id(i), mode) for i in range(cameras)])


def _recorded(services: Services, rig: str, purpose: RecordingPurpose, scene: str) -> str:
    services.capture.virtual_rig.scene = scene  # type: ignore[assignment]
    session = create_session(services.queue, "S", "calibration", "ana")
    recording = services.capture.start_rig_recording(rig, session)
    record_frames(recording, 5)
    return save_rig_attempt(services.queue, recording.stop(), purpose=purpose)


def _stored_count(store: Store) -> int:
    with store.read() as db:
        return int(db.scalar(select(func.count()).select_from(RigCalibrationRecord)) or 0)


def test_the_rig_recordings_are_offered_with_what_each_was_recorded_for(
    services: Services,
) -> None:
    _rig(services, "small", SMALL, cameras=2)
    board = _recorded(services, "small", RecordingPurpose.BOARD, "board")
    floor = _recorded(services, "small", RecordingPurpose.PLANE, "floor")
    attempt = _recorded(services, "small", RecordingPurpose.ATTEMPT, "markers")
    offered = services.calibration.rig.recordings()
    assert [(r.attempt_id, r.purpose) for r in offered] == [
        (attempt, RecordingPurpose.ATTEMPT),
        (floor, RecordingPurpose.PLANE),
        (board, RecordingPurpose.BOARD),
    ]
    assert offered[2].places == ("front", "right") and offered[2].rig_name == "small"
    assert offered[2].devices == offered[1].devices
    assert offered[2].describe().startswith("small, attempt 1: ")
    assert offered[2].describe().endswith(", 2 cameras")


def test_recordings_that_cannot_calibrate_the_rig_are_refused_and_nothing_is_stored(
    services: Services,
) -> None:
    _rig(services, "small", SMALL, cameras=2)
    _rig(services, "other", SMALL, cameras=3)
    board = _recorded(services, "small", RecordingPurpose.BOARD, "board")
    floor_of_other = _recorded(services, "other", RecordingPurpose.PLANE, "floor")
    service = services.calibration.rig
    with pytest.raises(RigCalibrationMismatchError, match="record the floor board with the same"):
        service.calibrate(BOARD.name, board, floor_of_other)
    with pytest.raises(NotARigRecordingError, match="is not a rig recording"):
        service.calibrate(BOARD.name, "no-such-attempt")
    # the rig changes after its board was recorded: record the board again
    services.capture.remove_rig("small")
    _rig(services, "small", SMALL, cameras=3)
    with pytest.raises(RigCalibrationMismatchError, match="a device or a mode changed since"):
        service.calibrate(BOARD.name, board)
    assert _stored_count(services.store) == 0


def test_stored_rig_calibrations_are_judged_and_shown_with_their_picture(
    services: Services, solved: RigCalibration
) -> None:
    _rig(services, "lab")
    rig = get_rig(services.store, "lab")
    assert [d.place for d in rig.devices] == NAMES
    now = utcnow()
    older = save_rig_calibration(services.store, solved, rig, now - timedelta(hours=2))
    # a second, different valid calibration of the same rig, newer
    newer_result = replace(solved, instants=solved.instants + 1)
    newer = save_rig_calibration(services.store, newer_result, rig, now - timedelta(hours=1))
    failed = replace(
        solved,
        instants=solved.instants + 2,
        thresholds=RigThresholds(),
        checks=RigChecks(
            solved.checks.shared, solved.checks.board_length, (Reason("X_TEST", "do this"),)
        ),
    )
    never = save_rig_calibration(services.store, failed, rig, now)
    service = services.calibration.rig
    judged = {s.calibration_id: s.validity for s in service.calibrations()}
    assert judged == {
        never.id: Validity.NOT_VALID,
        newer.id: Validity.IN_USE,
        older.id: Validity.SUPERSEDED,
    }
    assert [s.calibration_id for s in service.calibrations()] == [never.id, newer.id, older.id]
    aged = {s.calibration_id: s.validity for s in service.calibrations(now + timedelta(days=31))}
    assert aged[newer.id] is Validity.EXPIRED and aged[older.id] is Validity.EXPIRED

    detail = service.detail(newer.id)
    assert detail.summary.validity is Validity.IN_USE and detail.summary.cameras == tuple(NAMES)
    assert [b["device_id"] for b in detail.binding] == [rig_device_id(i) for i in range(4)]
    picture = rig_views_image(detail.document, (400, 300))  # drawn to the room it is given
    assert picture.shape == (300, 800, 3)
    assert service.detail(never.id).reasons == [{"code": "X_TEST", "message": "do this"}]

    # a camera of the rig is swapped for another: none of its calibrations is used any more
    services.capture.remove_rig("lab")
    services.capture.add_rig(
        "lab",
        [DeviceSpec(rig_device_id(i), HD) for i in (0, 1, 2)] + [DeviceSpec(rig_device_id(5), HD)],
    )
    assert [d.place for d in get_rig(services.store, "lab").devices][:3] == NAMES[:3]
    changed = {s.calibration_id: s.validity for s in service.calibrations()}
    assert changed[newer.id] is Validity.DEVICE_CHANGED
    assert changed[older.id] is Validity.DEVICE_CHANGED
    assert changed[never.id] is Validity.NOT_VALID


def test_a_rig_calibration_cancelled_while_the_board_is_searched_stores_nothing(
    services: Services,
) -> None:
    _rig(services, "duo", HD, cameras=2)
    board = _recorded(services, "duo", RecordingPurpose.BOARD, "board")
    seen: list[str] = []

    def on_progress(fraction: float, message: str) -> None:
        seen.append(message)
        if message.startswith("board found in 1 of"):
            task.cancel()  # as the Cancel button does, from the window's thread

    task = TaskControl(on_progress)
    with pytest.raises(TaskCancelledError):
        services.calibration.rig.calibrate(BOARD.name, board, every=1, task=task)
    assert any(m.startswith("board found in 1 of 2") for m in seen), seen
    assert _stored_count(services.store) == 0
