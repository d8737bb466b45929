"""The Capture page's rig mode: a technician picks a rig, records it, sees every camera's picture,
its counts and the sync spread, and gets one attempt with all the captures."""

from __future__ import annotations

import json
import re

from pytestqt.qtbot import QtBot
from sqlalchemy import select

from labrig.bootstrap import Services
from labrig.capture.rig_camera import CameraTiming
from labrig.capture.rigs import DeviceSpec
from labrig.capture.sources import Mode
from labrig.store.models import AttemptCapture, RigRecording
from labrig.ui.app import Gui
from labrig.ui.capture.instrument_tile import InstrumentTile
from labrig.ui.capture.page import Phase
from tests.ui.capture_helpers import LEFT, WAIT_MS, choose, fill_session, shown_capture_page

SMALL = Mode(640, 360, 30.0, "any")


def test_a_rig_is_recorded_from_the_capture_page_into_one_attempt(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    services.capture.add_rig("bench", [DeviceSpec(f"virtual:rig-{n}", SMALL) for n in (1, 2, 3)])
    services.capture.virtual_rig.timing = {1: CameraTiming(offset_ms=3.0)}
    page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, page, "RIG-UI", "gait", "ana")
    page.device_tabs.setCurrentIndex(1)  # "A rig"
    chooser = page.rig_flow.chooser
    qtbot.waitUntil(lambda: chooser.combo.count() == 2, timeout=WAIT_MS)  # virtual, bench
    choose(qtbot, chooser.combo, "bench")
    assert "right: virtual:rig-2 at 640x360@30" in chooser.devices.text()
    grid = page.rig_flow.grid
    assert [t.place for t in grid.tiles] == ["front", "right", "back"]
    assert page.pictures.currentWidget() is grid and not page.info.isVisible()

    qtbot.waitUntil(page.record_button.isEnabled, timeout=WAIT_MS)
    qtbot.mouseClick(page.record_button, LEFT)
    qtbot.waitUntil(lambda: page.phase is Phase.RECORDING, timeout=WAIT_MS)
    assert page.device_tabs.tabBar().isEnabled() is False  # no switching while it records
    # what closing the window would interrupt, in words
    assert (page.recording_in_progress() or "").startswith("The rig bench is recording (")
    # every camera's picture, its counts, and the spread the offset gives
    qtbot.waitUntil(lambda: all(t.view.frames_shown > 3 for t in grid.tiles), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "sync spread p99 3." in grid.summary.text(), timeout=WAIT_MS)
    caption = re.compile(r"^back · \d\d\.\d fps · 0 dropped$")
    qtbot.waitUntil(
        lambda: caption.match(grid.tiles[2].caption.text()) is not None, timeout=WAIT_MS
    )
    qtbot.mouseClick(page.stop_button, LEFT)
    qtbot.waitUntil(lambda: page.phase is Phase.READY, timeout=WAIT_MS * 2)

    assert "Attempt 1 saved from the rig" in page.message.text(), page.message.text()
    assert "3 cameras; sync spread p50 3.00 ms" in page.message.text()
    [row] = page.attempts.rows
    with services.store.read() as db:
        linked = list(
            db.scalars(
                select(AttemptCapture.capture_id).where(AttemptCapture.attempt_id == row.attempt_id)
            )
        )
        recording = db.scalars(select(RigRecording)).one()
    assert len(linked) == 3 and recording.attempt_id == row.attempt_id
    assert json.loads(recording.sync or "{}")["cameras"] == ["front", "right", "back"]


def test_a_rig_that_cannot_start_says_why_and_the_page_is_ready_again(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    services.capture.add_rig("bench", [DeviceSpec(f"virtual:rig-{n}", SMALL) for n in (1, 2)])
    page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, page, "RIG-UI2", "gait", "ana")
    page.device_tabs.setCurrentIndex(1)
    chooser = page.rig_flow.chooser
    qtbot.waitUntil(lambda: chooser.combo.count() == 2, timeout=WAIT_MS)
    choose(qtbot, chooser.combo, "bench")
    # another program records the rig's second camera now
    from labrig.capture.recorder import device_lock

    held = device_lock(services.store, "virtual:rig-2")
    assert held.acquire()
    try:
        qtbot.mouseClick(page.record_button, LEFT)
        qtbot.waitUntil(lambda: page.phase is Phase.READY, timeout=WAIT_MS)
    finally:
        held.release()
    assert page.message.text().startswith("The rig did not start:")
    assert "is being recorded already" in page.message.text()
    assert not page.attempts.rows and page.record_button.isEnabled()


def test_a_rig_with_a_force_plate_shows_its_samples_scrolling_beside_the_cameras(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    services.capture.add_rig(
        "jump", [DeviceSpec("virtual:rig-1", SMALL), DeviceSpec("virtual:plate-1")]
    )
    ui.window.resize(1280, 800)
    page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, page, "RIG-PL", "jump", "ana")
    page.device_tabs.setCurrentIndex(1)
    chooser = page.rig_flow.chooser
    qtbot.waitUntil(lambda: chooser.combo.count() == 2, timeout=WAIT_MS)
    choose(qtbot, chooser.combo, "jump")
    assert "plate: virtual:plate-1 at 6 ch @ 1000 Hz" in chooser.devices.text()
    grid = page.rig_flow.grid
    plate = grid.tiles[1]
    assert isinstance(plate, InstrumentTile) and plate.place == "plate"
    assert grid.summary.text().startswith("1 cameras and 1 instrument")

    qtbot.waitUntil(page.record_button.isEnabled, timeout=WAIT_MS)
    qtbot.mouseClick(page.record_button, LEFT)
    qtbot.waitUntil(lambda: page.phase is Phase.RECORDING, timeout=WAIT_MS)
    plate = grid.tiles[1]  # the grid's tiles are made again for the recording
    assert isinstance(plate, InstrumentTile)
    # the plot fills with the plate's last seconds; its caption counts its rate and lost samples
    qtbot.waitUntil(lambda: plate.points() > 200, timeout=WAIT_MS)
    caption = re.compile(r"^plate · \d{3,4} Hz · 0 lost$")
    qtbot.waitUntil(lambda: caption.match(plate.caption.text()) is not None, timeout=WAIT_MS)
    x, y = plate.curves[2].getData()  # Fz: someone standing on it, newest at the right edge
    assert x is not None and y is not None and -5.5 < x[0] < x[-1] <= 0.1
    assert 600 < float(y.mean()) < 1700
    qtbot.mouseClick(page.stop_button, LEFT)
    qtbot.waitUntil(lambda: page.phase is Phase.READY, timeout=WAIT_MS * 2)
    assert "1 cameras and 1 instrument; sync" in page.message.text(), page.message.text()
    [row] = page.attempts.rows
    with services.store.read() as db:
        linked = list(
            db.scalars(
                select(AttemptCapture.capture_id).where(AttemptCapture.attempt_id == row.attempt_id)
            )
        )
    assert len(linked) == 2
