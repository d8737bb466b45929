"""The Devices page: every discovered device with its verification verdict and the
reason, by clicking."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from labrig.bootstrap import Services
from labrig.store.models import Capture, DeviceRecord
from labrig.ui.app import Gui
from labrig.ui.shell.device_checks import IN_USE
from tests.ui.capture_helpers import (
    LEFT,
    MARKERS,
    fill_session,
    pick_device,
    shown_capture_page,
    shown_devices_page,
    start_recording,
    wait_verified,
)

pytestmark = pytest.mark.gui


def test_every_device_is_listed_with_its_verdict_and_the_reason(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    page = shown_devices_page(qtbot, ui)
    picker = page.picker

    # the virtual camera is always present, and gets verified
    wait_verified(qtbot, picker, MARKERS)
    pick_device(qtbot, picker, MARKERS)

    # named once (it was "Labrig virtual camera (markers) (markers)")
    assert picker.reason.text().startswith("Labrig virtual camera verified: 640×480 at")
    assert picker.mode_combo.currentText() == "640x480@30 BGR" and picker.mode_combo.count() == 4
    with services.store.read() as db:  # the verdicts shown are the ones stored
        rows = {r.device_id: r for r in db.scalars(select(DeviceRecord))}
    assert rows[MARKERS].verified and rows[MARKERS].reason == picker.reason.text()

    # verify again: the verdict is dropped and made anew (next, or now if no other check runs)
    qtbot.mouseClick(picker.verify_button, LEFT)
    assert picker.status_of(MARKERS) in ("Checking…", "Waiting")
    wait_verified(qtbot, picker, MARKERS)


def test_a_device_being_recorded_is_verified_only_after_its_recording_is_saved(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    capture_page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, capture_page, "S-021", "reach", "ana")
    pick_device(qtbot, capture_page.picker, MARKERS)
    start_recording(qtbot, capture_page)
    devices = shown_devices_page(qtbot, ui)
    pick_device(qtbot, devices.picker, MARKERS)

    qtbot.mouseClick(devices.picker.verify_button, LEFT)  # the same camera, from the other page
    assert devices.picker.status_of(MARKERS) == "In use"
    assert devices.picker.reason.text() == IN_USE
    qtbot.wait(300)
    assert devices.picker.status_of(MARKERS) == "In use"  # not probed under the recorder

    ui.window.show_page("capture")
    qtbot.mouseClick(capture_page.stop_button, LEFT)
    wait_verified(qtbot, devices.picker, MARKERS)
    with services.store.read() as db:
        committed = db.scalar(select(Capture.committed_at))
        checked = db.get(DeviceRecord, MARKERS)
    assert committed is not None and checked is not None and checked.checked_at > committed
