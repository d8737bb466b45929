"""Issue 18 by clicking: on the Capture screen's rig mode a technician records the virtual rig's
board carried through the volume and then lying on the floor (what the recording is for picks the
virtual rig's scene), calibrates the rig on the Calibration screen's rig mode and reads the
verdict, each camera's figures, its coverage and where the cameras stand, checked here against the
virtual rig's true cameras; the rig's next recording is analysed in 3-D under that calibration.
The same recordings calibrate the rig from the command line (``labrig calibrate-rig
--capture-attempt``). When the rig's cameras change, the calibration is listed as no longer used,
and the old recording is refused, on the screen and by the command line, with what to do, nothing
stored.

The board is recorded for 900 frames (30 s of the 30 fps cameras: the board wanders slowly, and
with every 30th instant camera back shares only 3 views, 4 needed); every 15th instant is used.
Recordings stop once they hold their frames, not after a time, so a loaded machine only takes
longer.
"""

from __future__ import annotations

import json

import numpy as np
from pytestqt.qtbot import QtBot
from sqlalchemy import func, select

from labrig.bootstrap import Services
from labrig.calibration.views import Validity
from labrig.capture.rig_world import rig_camera
from labrig.capture.rigs import DeviceSpec
from labrig.capture.sources import Mode
from labrig.domain.recordings import RecordingPurpose
from labrig.store.models import Attempt, Job, RigCalibrationRecord
from labrig.ui.app import Gui
from labrig.ui.calibration.rig_form import NO_FLOOR
from labrig.ui.calibration.rig_page import RigCalibrationPage
from labrig.ui.calibration.screen import CalibrationScreen
from labrig.ui.capture.page import CapturePage, Phase
from tests.e2e.test_cli_calibrate_rig import BOARD as BOARD_ARG
from tests.e2e.test_cli_calibrate_rig import labrig
from tests.ui.capture_helpers import LEFT, WAIT_MS, choose, fill_session, shown_capture_page

HD = Mode(1280, 720, 30.0, "any")
PLACES = ("front", "right", "back")
BOARD_FRAMES, FLOOR_FRAMES, ATTEMPT_FRAMES = 900, 10, 20
SOLVE_MS = 180_000  # finding the board in 90 pictures and solving, on a busy 2-core machine


def _record(qtbot: QtBot, page: CapturePage, purpose: RecordingPurpose, frames: int) -> str:
    """Record the rig for ``purpose`` until every camera has ``frames``; what the page said."""
    chooser = page.rig_flow.chooser
    choose(qtbot, chooser.purpose, purpose.value)
    qtbot.waitUntil(page.record_button.isEnabled, timeout=WAIT_MS)
    qtbot.mouseClick(page.record_button, LEFT)
    qtbot.waitUntil(lambda: page.phase is Phase.RECORDING, timeout=WAIT_MS)
    assert not chooser.purpose.isEnabled(), "what it is for is fixed while it records"

    def recorded() -> bool:
        recording = page.rig_flow.recording
        return recording is not None and all(
            c.status.frames >= frames for c in recording.status().cameras
        )

    qtbot.waitUntil(recorded, timeout=WAIT_MS + frames * 150)
    qtbot.mouseClick(page.stop_button, LEFT)
    qtbot.waitUntil(lambda: page.phase is Phase.READY, timeout=WAIT_MS * 4)
    return page.message.text()


def _rig_mode(qtbot: QtBot, gui: Gui) -> RigCalibrationPage:
    gui.window.show_page("calibration")
    screen = gui.window.pages.currentWidget()
    assert isinstance(screen, CalibrationScreen)
    bar = screen.modes.tabBar()
    qtbot.mouseClick(bar, LEFT, pos=bar.tabRect(screen.modes.indexOf(screen.rig)).center())
    assert screen.modes.currentWidget() is screen.rig
    return screen.rig


def test_a_rig_is_calibrated_by_clicking_and_its_cameras_stand_where_they_truly_are(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    services.capture.add_rig("trio", [DeviceSpec(f"virtual:rig-{n}", HD) for n in (1, 2, 3)])
    capture = shown_capture_page(qtbot, ui)
    ui.window.resize(1280, 800)
    fill_session(qtbot, capture, "CAL-RIG", "calibration", "ana")
    capture.device_tabs.setCurrentIndex(1)  # "A rig"
    chooser = capture.rig_flow.chooser
    qtbot.waitUntil(lambda: chooser.combo.findData("trio") >= 0, timeout=WAIT_MS)
    choose(qtbot, chooser.combo, "trio")
    qtbot.waitUntil(
        lambda: chooser.calibration.text().startswith("Not calibrated as a rig"), timeout=WAIT_MS
    )

    said = _record(qtbot, capture, RecordingPurpose.BOARD, BOARD_FRAMES)
    assert services.capture.virtual_rig.scene == "board", "the virtual rig shows the board"
    assert "Kept for rig calibration, not analysed" in said and "Calibration ▸ A rig" in said
    said = _record(qtbot, capture, RecordingPurpose.PLANE, FLOOR_FRAMES)
    assert services.capture.virtual_rig.scene == "floor" and "world's origin" in said
    with services.store.read() as db:
        assert db.scalar(select(func.count()).select_from(Job)) == 0, "neither is analysed"

    page = _rig_mode(qtbot, ui)
    form = page.form
    qtbot.waitUntil(
        lambda: form.recording.count() == 1 and form.floor.count() == 2, timeout=WAIT_MS
    )
    board, floor = form.recording.currentData(), form.floor.currentData()
    assert board.rig_name == "trio" and board.places == PLACES
    assert floor is not None and floor.purpose is RecordingPurpose.PLANE, "the floor is picked"
    assert form.floor.itemText(0) == NO_FLOOR
    assert form.board.currentText() == "virtual-rig-9x6-80", "the virtual rig's own board"
    # the board crossing the middle of the volume for 30 s covers a fifth of each picture (19-21 %
    # with the instants the recording pairs): what the README says to set
    form.every.setValue(15)
    form.lens_coverage.setValue(15)
    form.shared_coverage.setValue(15)
    qtbot.mouseClick(form.button, LEFT)
    qtbot.waitUntil(lambda: not form.button.isEnabled(), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: page.detail.current is not None, timeout=SOLVE_MS)

    detail = page.detail.current
    assert detail is not None
    assert detail.summary.validity is Validity.IN_USE, form.status.text() + str(detail.reasons)
    assert "valid: the rig's recordings are analysed in 3-D" in form.status.text()
    assert page.detail.verdict.text().startswith("<b style='color:#1d7a1d'>VALID</b>")
    assert "in use: recordings of rig trio are analysed in 3-D" in page.detail.verdict.text()
    assert "the floor board" in page.detail.figures["rigWorld"].text()
    assert "mm nominal over" in page.detail.figures["boardCheck"].text()
    table = page.detail.cameras
    assert table.rowCount() == 3
    for c, place in enumerate(PLACES):
        assert table.item(c, 0).text() == place
        assert f"{place} = virtual:rig-{c + 1} in 1280x720@30" in page.detail.binding.text()
        assert table.item(c, 6).toolTip().startswith(f"views camera {place} shares with: ")
        # where each camera stands, against the virtual rig's truth, 3-5 m away, from 60 instants
        # of three cameras (the millimetre targets are the benchmark's, on four)
        solved = detail.document["cameras"][c]["centre_mm"]
        off = np.linalg.norm(np.subtract(solved, rig_camera(c).centre_mm))
        assert off < 5.0, f"camera {place} solved {off:.1f} mm from where it stands"  # 1.2-1.5
    assert page.detail.pairs.rowCount() == 3
    maps = [plot for _, plot in page.detail.coverage_maps if not plot.isHidden()]
    assert len(maps) == 3 and all(m.counts is not None and m.counts.sum() > 0 for m in maps)
    assert page.detail.picture.pixmap() is not None and not page.detail.picture.pixmap().isNull()
    row = page.model.row_of(detail.summary.calibration_id)
    assert row is not None and page.table.currentIndex().row() == row

    # back on Capture the rig is calibrated, and its next recording is analysed in 3-D under it
    capture = capture_page(ui)
    qtbot.waitUntil(
        lambda: (
            f"Rig calibration {detail.summary.calibration_id[:12]}…, valid until"
            in chooser.calibration.text()
        ),
        timeout=WAIT_MS,
    )
    assert chooser.calibration.text().endswith("attempts are analysed in 3-D, in mm.")
    _record(qtbot, capture, RecordingPurpose.ATTEMPT, ATTEMPT_FRAMES)
    assert services.capture.virtual_rig.scene == "markers"
    with services.store.read() as db:
        tracking = db.scalars(select(Job).where(Job.stage_id == "tracking.rig")).one()
    assert json.loads(tracking.config)["rig_calibration_id"] == detail.summary.calibration_id

    # the same recordings calibrate the rig from the command line too (every 30th instant: the
    # screen's solve above is the one held to the truth; this one reads the same recordings)
    cli = labrig(
        *BOARD_ARG,
        *("--capture-attempt", board.attempt_id, "--floor-attempt", floor.attempt_id),
        *("--every", "30", "--min-views", "6", "--json"),
        store=services.store.root,
    )
    assert cli.returncode in (0, 1), cli.stderr  # solved and stored, valid or not
    doc = json.loads(cli.stdout)
    assert doc["world"] == "floor" and doc["stored"]["rig"] == "trio"
    # every 30th of ~900 frames paired across the cameras; a busy machine drops a few
    assert doc["instants"] >= 27
    assert [cam["name"] for cam in doc["cameras"]] == list(PLACES)

    # the rig loses a camera: the calibration is no longer used, and its recording is refused
    services.capture.remove_rig("trio")
    services.capture.add_rig("trio", [DeviceSpec(f"virtual:rig-{n}", HD) for n in (1, 2)])
    page = _rig_mode(qtbot, ui)
    page.refresh()
    qtbot.waitUntil(
        lambda: (
            page.model.find(detail.summary.calibration_id) is not None
            and page.model.find(detail.summary.calibration_id).validity  # type: ignore[union-attr]
            is Validity.DEVICE_CHANGED
        ),
        timeout=WAIT_MS,
    )
    qtbot.mouseClick(page.form.button, LEFT)
    qtbot.waitUntil(lambda: page.form.button.isEnabled(), timeout=WAIT_MS * 2)
    said = page.form.status.text()
    assert said.startswith("Not calibrated: "), said
    assert "a device or a mode changed since" in said, said
    again = labrig(*BOARD_ARG, "--capture-attempt", board.attempt_id, store=services.store.root)
    assert again.returncode == 2 and "LABRIG_RIG_CALIBRATION_MISMATCH" in again.stderr
    assert "a device or a mode changed since" in again.stderr
    with services.store.read() as db:
        assert db.scalar(select(func.count()).select_from(RigCalibrationRecord)) == 2
        assert db.scalar(select(func.count()).select_from(Attempt)) == 3
    capture_page(ui)
    qtbot.waitUntil(
        lambda: chooser.calibration.text().startswith("No valid rig calibration for the rig"),
        timeout=WAIT_MS,
    )


def capture_page(gui: Gui) -> CapturePage:
    gui.window.show_page("capture")
    page = gui.window.pages.currentWidget()
    assert isinstance(page, CapturePage)
    return page
