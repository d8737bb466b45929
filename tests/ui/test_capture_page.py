"""The technician's capture flow by clicking: session → verified device → live preview →
record → attempt.

Everything runs on the real services over this test's store and the built-in
virtual camera; what was saved is read back from the store, never from the widgets.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import cv2
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox, QPushButton
from pytestqt.qtbot import QtBot
from sqlalchemy import func, select

from labrig.bootstrap import Services, bootstrap
from labrig.calibration.board_captures import committed_captures
from labrig.calibration.boards import detect, parse_board
from labrig.capture import iter_frames, load_capture
from labrig.capture.integrity import verify_store
from labrig.capture.sources import Image, Mode
from labrig.capture.virtual import VirtualCamera
from labrig.domain.recordings import RecordingPurpose
from labrig.fsutil import sha256_file
from labrig.store import Store
from labrig.store.blobs import BlobStore
from labrig.store.models import (
    Attempt,
    AttemptCapture,
    Capture,
    CaptureSegment,
    CaptureSession,
    OutboxEvent,
)
from labrig.ui.app import Gui
from labrig.ui.capture.page import INTERRUPTED_BY_CLOSING, CapturePage, Phase
from labrig.ui.capture.preview import DEVICE_SILENT
from tests.support.analysis_runs import BOARD as BOARD_SPEC
from tests.support.analysis_runs import calibrate_markers_camera
from tests.ui.capture_helpers import (
    LEFT,
    MARKERS,
    WAIT_MS,
    choose,
    fill_session,
    pick_device,
    shown_capture_page,
    start_recording,
    wait_verified,
)
from tests.ui.jobs_helpers import ANALYSIS_LEASE

pytestmark = pytest.mark.gui
PIPELINE = ["media.qc", "tracking.markers", "kinematics"]


@pytest.fixture
def services(store: Store) -> Iterator[Services]:
    """As tests/ui/conftest.py's, with the lease the analysis stages need (see ANALYSIS_LEASE)."""
    built = bootstrap(store=store, poll_seconds=0.05, lease=ANALYSIS_LEASE)
    yield built
    built.close()


def _committed_captures(services: Services, session_id: str) -> list[Capture]:
    with services.store.read() as db:
        return list(db.scalars(select(Capture).where(Capture.session_id == session_id)))


def _assert_digests_verified(services: Services, capture: Capture) -> None:
    """Re-hash the stored manifest and every segment against the catalog, as ``labrig verify``
    does."""
    assert capture.state == "committed" and capture.manifest_sha256 is not None
    blobs = BlobStore(services.store.media_dir)
    assert sha256_file(blobs.path(capture.manifest_sha256, ".json"))[0] == capture.manifest_sha256
    with services.store.read() as db:
        segments = list(
            db.scalars(select(CaptureSegment).where(CaptureSegment.capture_id == capture.id))
        )
    assert segments and sum(s.frames for s in segments) == capture.frame_count
    for segment in segments:
        assert sha256_file(blobs.path(segment.media_sha256, ".avi"))[0] == segment.media_sha256
    assert verify_store(services.store).problems == []


def _frames_written(page: CapturePage) -> int:
    """Frames the recording in progress has written (0 when none is in progress)."""
    status = page.recording_status
    return status.frames if status is not None else 0


def _attempts(services: Services, session_id: str) -> list[tuple[int, str]]:
    with services.store.read() as db:
        rows = db.execute(
            select(Attempt.number, AttemptCapture.capture_id)
            .join(AttemptCapture, AttemptCapture.attempt_id == Attempt.id)
            .where(Attempt.session_id == session_id)
            .order_by(Attempt.number)
        )
        return [(number, capture_id) for number, capture_id in rows]


def test_a_session_on_the_virtual_camera_records_an_attempt_with_verified_digests(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    services.start()  # the bridge delivers events: the attempt's jobs reach the page through it
    page = shown_capture_page(qtbot, ui)
    assert not page.record_button.isEnabled() and not page.picker.isEnabled()

    fill_session(qtbot, page, "S-014", "gait 10 m", "ana")
    assert page.phase is Phase.READY and page.session is not None
    pick_device(qtbot, page.picker, MARKERS)
    wait_verified(qtbot, page.picker, MARKERS)
    assert "verified" in page.picker.reason.text()

    # live preview: frames keep arriving and the picture changes (the markers move)
    qtbot.waitUntil(lambda: page.view.frames_shown >= 3, timeout=WAIT_MS)
    first_frames, first_key = page.view.frames_shown, page.view.pixmap().cacheKey()
    qtbot.waitUntil(lambda: page.view.frames_shown >= first_frames + 10, timeout=WAIT_MS)
    assert page.view.pixmap().cacheKey() != first_key

    start_recording(qtbot, page)
    assert (
        page.stop_button.isEnabled()
        and not page.record_button.isEnabled()
        and not page.picker.isEnabled()
    )
    recording_frames = page.view.frames_shown
    # a second of recording: 30 frames written and the info bar's clock at 00:01 (a busy machine
    # writes them later)
    qtbot.waitUntil(
        lambda: (
            _frames_written(page) >= 30
            and page.info.elapsed.text().startswith("● REC 00:01")
            and page.view.frames_shown >= recording_frames + 10
        ),
        timeout=WAIT_MS,
    )
    # the preview shows the recorder's frames
    assert page.view.frames_shown >= recording_frames + 10
    assert page.info.elapsed.text().startswith("● REC 00:01")
    assert page.info.frame_rate.text().endswith(" fps") and page.info.dropped.text().endswith(
        " dropped"
    )

    qtbot.mouseClick(page.stop_button, LEFT)
    qtbot.waitUntil(
        lambda: page.attempts.rowCount() == 1 and page.phase is Phase.READY, timeout=WAIT_MS
    )

    [capture] = _committed_captures(services, page.session.id)
    _assert_digests_verified(services, capture)
    assert 30 <= capture.frame_count <= 75 and capture.device_id == MARKERS
    assert _attempts(services, page.session.id) == [(1, capture.id)]
    row = page.attempts.rows[0]
    assert (row.number, row.capture_id, row.manifest_sha256) == (
        1,
        capture.id,
        capture.manifest_sha256,
    )
    assert f"Attempt 1 saved: {capture.frame_count} frames" in page.message.text()
    # no REC mark once it has stopped
    assert page.info.elapsed.text().startswith("Last recording 00:01")
    # its analysis was requested and shows up through the bridge, stage by stage
    assert [j.stage_id for j in services.queue.jobs() if j.attempt_id == row.attempt_id] == PIPELINE
    stages = page.attempts.index(0, page.attempts.columnCount() - 1)
    qtbot.waitUntil(lambda: str(stages.data()).startswith("media.qc queued"), timeout=WAIT_MS)
    assert str(page.attempts.index(0, 4).data()) == "0 of 3 stages done"
    ui.executor.start()  # the stages run; their progress is pushed to the row, never polled
    qtbot.waitUntil(
        lambda: str(page.attempts.index(0, 4).data()) == "3 of 3 stages done", timeout=WAIT_MS
    )
    assert page.attempts.index(0, 4).data(Qt.ItemDataRole.UserRole) == 1.0
    assert not page.attempt_table.grab().isNull()  # the analysis column paints as labelled bars
    # previewing again
    qtbot.waitUntil(lambda: page.view.frames_shown > 0 and page.preview.running, timeout=WAIT_MS)

    ui.window.close()
    assert not page.preview.running


def test_a_board_recording_is_saved_for_calibration_without_an_attempt_or_analysis(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, page, "S-015", "calibration", "ana")
    pick_device(qtbot, page.picker, MARKERS)
    wait_verified(qtbot, page.picker, MARKERS)
    # the virtual camera's scene switch: the board held up; the recording becomes a board one
    assert page.setup.scene.isVisibleTo(page)
    choose(qtbot, page.setup.scene, "board")
    assert page.setup.chosen_purpose() is RecordingPurpose.BOARD
    assert services.capture.scenes.get(MARKERS) == "board"
    assert "not analysed" in page.setup.calibration.text()
    start_recording(qtbot, page)
    assert not page.setup.purpose.isEnabled()  # what the recording is cannot change once it runs
    qtbot.waitUntil(lambda: _frames_written(page) >= 30, timeout=WAIT_MS)  # a second of the camera
    qtbot.mouseClick(page.stop_button, LEFT)
    qtbot.waitUntil(
        lambda: page.attempts.rowCount() == 1 and page.phase is Phase.READY, timeout=WAIT_MS
    )

    assert page.session is not None
    [capture] = _committed_captures(services, page.session.id)
    _assert_digests_verified(services, capture)
    assert capture.purpose == "board"
    # what was recorded is the board: the frames hold its corners
    media = load_capture(services.store, capture.manifest_sha256 or "")
    frame = next(iter_frames(media.segments[0]))
    assert detect(frame, parse_board(BOARD_SPEC)) is not None
    # nothing to analyse
    assert _attempts(services, page.session.id) == [] and services.queue.jobs() == []
    row = page.attempts.rows[0]
    assert row.attempt_id is None and row.capture_id == capture.id
    assert (
        page.message.text().startswith("Board recording saved:")
        and "Calibration screen" in page.message.text()
    )
    assert str(page.attempts.index(0, 4).data()) == "not requested"
    # offered for calibration
    assert capture.id in [c.capture_id for c in committed_captures(services.store)]

    # back to the markers: an attempt again, which is never offered as a board
    choose(qtbot, page.setup.scene, "markers")
    assert page.setup.chosen_purpose() is RecordingPurpose.ATTEMPT
    start_recording(qtbot, page)
    qtbot.waitUntil(lambda: _frames_written(page) >= 30, timeout=WAIT_MS)
    qtbot.mouseClick(page.stop_button, LEFT)
    qtbot.waitUntil(
        lambda: page.attempts.rowCount() == 2 and page.phase is Phase.READY, timeout=WAIT_MS
    )
    assert [number for number, _ in _attempts(services, page.session.id)] == [1]
    assert page.attempts.rows[1].attempt_id is not None and page.message.text().startswith(
        "Attempt 1 saved"
    )
    assert [c.capture_id for c in committed_captures(services.store)] == [capture.id]


def test_before_record_the_page_says_whether_results_will_be_in_mm_or_pixels(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, page, "S-020", "reach", "ana")
    pick_device(qtbot, page.picker, MARKERS)
    wait_verified(qtbot, page.picker, MARKERS)
    qtbot.waitUntil(lambda: "results will be in pixels" in page.setup.calibration.text())
    assert "Calibrate…" in page.setup.calibration.text()
    shown: list[str] = []
    page.navigateRequested.connect(shown.append)
    page.setup.calibration.linkActivated.emit("calibration")
    assert shown == ["calibration"] and ui.window.pages.currentWidget() is ui.window.page(
        "calibration"
    )

    choice = page.picker.choice()
    assert choice is not None and choice.usable_mode is not None
    mode = choice.usable_mode  # the mode the picked device records in
    assert mode.label() in page.setup.calibration.text()
    calibrate_markers_camera(services, mode, plane=False)
    ui.window.show_page("capture")  # shown again: read again
    qtbot.waitUntil(lambda: "without a plane view" in page.setup.calibration.text())
    assert "results stay in pixels" in page.setup.calibration.text()
    calibration = calibrate_markers_camera(services, mode)
    ui.window.show_page("calibration")
    ui.window.show_page("capture")
    qtbot.waitUntil(lambda: "results in mm" in page.setup.calibration.text())
    assert calibration.id[:8] in page.setup.calibration.text()

    # another mode of the same camera is not calibrated: the page offers the one that is
    other = next(
        page.picker.mode_combo.itemText(i)
        for i in range(page.picker.mode_combo.count())
        if page.picker.mode_combo.itemText(i) != mode.label()
    )
    assert page.picker.choose_mode(other)
    qtbot.waitUntil(lambda: f"in {other} has no valid calibration" in page.setup.calibration.text())
    assert f"It gives mm in {mode.label()}" in page.setup.calibration.text()
    page.setup.calibration.linkActivated.emit(f"mode:{mode.label()}")  # "use that mode"
    assert page.picker.mode_combo.currentText() == mode.label()
    qtbot.waitUntil(lambda: "results in mm" in page.setup.calibration.text(), timeout=WAIT_MS)


def test_stop_pressed_while_the_recording_starts_stops_it_once_it_has_begun(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, page, "S-021", "reach", "ana")
    pick_device(qtbot, page.picker, MARKERS)
    qtbot.waitUntil(page.record_button.isEnabled, timeout=WAIT_MS)

    qtbot.mouseClick(page.record_button, LEFT)
    # the device is checked once more before the recorder opens it: Stop is already there
    assert page.phase is Phase.STARTING and page.stop_button.isEnabled()
    qtbot.mouseClick(page.stop_button, LEFT)
    assert page.phase is Phase.STARTING and not page.stop_button.isEnabled()
    assert page.message.text().startswith("Stopping")

    qtbot.waitUntil(
        lambda: page.attempts.rowCount() == 1 and page.phase is Phase.READY, timeout=WAIT_MS
    )
    assert page.session is not None
    [capture] = _committed_captures(services, page.session.id)
    _assert_digests_verified(services, capture)
    assert page.message.text().startswith("Attempt 1 saved")


def test_the_buttons_stay_put_whatever_the_message_under_them_says(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, page, "S-022", "reach", "ana")
    pick_device(qtbot, page.picker, MARKERS)
    wait_verified(qtbot, page.picker, MARKERS)

    def where() -> tuple[int, int]:
        record = page.record_button.mapTo(page, page.record_button.rect().topLeft())
        return record.y(), page.setup.purpose.mapTo(page, page.setup.purpose.rect().topLeft()).y()

    before = where()
    page.message.setText("Recording did not start: " + "the device said no. " * 12)
    qtbot.wait(0)  # let the layout run
    page.layout().activate()
    assert where() == before
    page.message.setText("")
    page.layout().activate()
    assert where() == before


def test_the_data_rate_has_a_figure_before_the_first_segment_closes(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, page, "S-023", "reach", "ana")
    pick_device(qtbot, page.picker, MARKERS)
    start_recording(qtbot, page)
    qtbot.waitUntil(lambda: _frames_written(page) >= 20, timeout=WAIT_MS)
    status = page.recording_status
    assert status is not None and status.segments == 0  # segments are 5 s long
    qtbot.waitUntil(lambda: page.info.data_rate.text() != "MB/s: measuring", timeout=WAIT_MS)
    assert page.info.data_rate.text().endswith(" MB/s") and "—" not in page.info.data_rate.text()
    assert float(page.info.data_rate.text().split()[0]) > 0
    qtbot.mouseClick(page.stop_button, LEFT)
    qtbot.waitUntil(lambda: page.phase is Phase.READY, timeout=WAIT_MS)


def test_an_empty_subject_code_is_refused_in_words_and_nothing_is_stored(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    page = shown_capture_page(qtbot, ui)

    fill_session(qtbot, page, "", "gait 10 m", "ana")

    message = page.form.message.text()
    assert message.startswith("The session was not started. Subject code '' is not valid")
    assert "letters, digits" in message
    assert page.phase is Phase.NO_SESSION and page.session is None
    assert page.focusWidget() is page.form.subject_edit  # where to type the fix
    assert not page.picker.isEnabled() and not page.record_button.isEnabled()
    with services.store.read() as db:
        assert db.scalar(select(func.count()).select_from(CaptureSession)) == 0
        # no device was even probed
        assert db.scalar(select(func.count()).select_from(OutboxEvent)) == 0

    fill_session(qtbot, page, "S-015", "gait 10 m", "ana")  # corrected, it opens
    assert page.phase is Phase.READY and page.form.message.text().startswith(
        "Session S-015 · gait 10 m · ana"
    )


def test_closing_the_window_while_recording_asks_then_saves_the_attempt_marked_interrupted(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, page, "S-016", "reach", "ana")
    pick_device(qtbot, page.picker, MARKERS)
    start_recording(qtbot, page)
    qtbot.waitUntil(lambda: _frames_written(page) >= 20, timeout=WAIT_MS)  # 0.7 s of the camera
    assert page.session is not None
    session_id = page.session.id

    # asked first; keeping on recording leaves everything as it was
    ui.window.close()
    box = _close_question(qtbot, ui)
    assert "is recording" in box.text() and "Stop and save the recording" in box.text()
    qtbot.mouseClick(box.findChild(QPushButton, "keepRecordingButton"), LEFT)
    assert ui.window.isVisible() and page.phase is Phase.RECORDING and page.preview.running
    assert _committed_captures(services, session_id)[0].state == "provisional"

    ui.window.close()
    qtbot.mouseClick(_close_question(qtbot, ui).findChild(QPushButton, "stopSaveCloseButton"), LEFT)

    # the page stopped where it was
    assert not ui.window.isVisible()
    assert not page.preview.running and page.phase is Phase.RECORDING
    [capture] = _committed_captures(services, session_id)
    _assert_digests_verified(services, capture)
    assert _attempts(services, session_id) == [(1, capture.id)]
    with services.store.read() as db:
        [attempt] = db.scalars(select(Attempt).where(Attempt.session_id == session_id))
        assert attempt.note == f"Interrupted: {INTERRUPTED_BY_CLOSING}."


def _close_question(qtbot: QtBot, ui: Gui) -> QMessageBox:
    """The question the window asks before closing during a recording, once it is shown."""

    def shown() -> QMessageBox | None:
        box = ui.window.findChild(QMessageBox, "closeWhileRecordingBox")
        return box if box is not None and box.isVisible() else None

    qtbot.waitUntil(lambda: shown() is not None, timeout=WAIT_MS)
    box = shown()
    assert box is not None
    return box


def test_a_camera_that_goes_silent_during_preview_is_reported_in_words(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    # a camera whose cable is pulled after 2.5 s of pictures: long enough to pass its 1 s
    # verification
    services.capture.open_source = lambda _device: VirtualCamera("markers", fail_after=75)
    page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, page, "S-017", "reach", "ana")
    pick_device(qtbot, page.picker, MARKERS)
    qtbot.waitUntil(lambda: page.view.frames_shown > 0, timeout=WAIT_MS)

    qtbot.waitUntil(lambda: page.message.text() == DEVICE_SILENT, timeout=WAIT_MS)
    assert not page.preview.running and page.view.text() == "No picture."
    # nothing lost: the session stays open, the device can be picked again
    assert page.phase is Phase.READY


class _ThreadNotingCamera(VirtualCamera):
    """The virtual camera, noting the threads it is read on (the preview converts each frame on
    the thread that read it)."""

    def __init__(self) -> None:
        super().__init__("markers")
        self.threads: set[str] = set()

    def read(self, timeout_s: float = 2.0) -> Image | None:
        self.threads.add(threading.current_thread().name)
        return super().read(timeout_s)


def test_preview_frames_are_read_and_converted_off_the_gui_thread_and_keep_up(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    cameras: list[_ThreadNotingCamera] = []
    services.capture.open_source = lambda _device: (
        cameras.append(_ThreadNotingCamera()) or cameras[-1]
    )
    page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, page, "S-018", "reach", "ana")
    pick_device(qtbot, page.picker, MARKERS)
    qtbot.waitUntil(lambda: page.view.frames_shown >= 3, timeout=WAIT_MS)

    # the pictures keep coming at a good share of the camera's 30 a second (the full rate under
    # load is measured in tests/benchmarks/bench_gui_latency.py)
    qtbot.waitUntil(lambda: page.view.rate_fps() >= 15, timeout=WAIT_MS)
    preview = cameras[-1]
    assert preview.threads and threading.main_thread().name not in preview.threads
    pixmap = page.view.pixmap()
    # converted at the size shown, not at the camera's
    assert pixmap.width() <= page.view.width() and pixmap.height() <= page.view.height()


def test_a_refused_camera_shows_why_and_cannot_be_recorded(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    # a dying camera
    services.capture.open_source = lambda _device: VirtualCamera("markers", fail_after=3)
    page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, page, "S-019", "reach", "ana")
    pick_device(qtbot, page.picker, MARKERS)

    qtbot.waitUntil(lambda: page.picker.status_of(MARKERS) == "Refused", timeout=WAIT_MS)
    assert "sent 3 picture(s) and then stopped" in page.picker.reason.text()
    assert "Check the cable or network" in page.picker.reason.text()  # and what to do about it
    assert (
        page.view.text()
        == "Labrig virtual camera was refused; see the reason under the device list."
    )
    assert not page.record_button.isEnabled() and page.view.frames_shown == 0
    assert not page.preview.running


def test_a_camera_unplugged_while_recording_ends_in_a_saved_attempt_that_says_why(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    # every opening of the camera gets 2 s of pictures: enough to verify it, not to finish recording
    services.capture.open_source = lambda _device: VirtualCamera("markers", fail_after=60)
    page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, page, "S-020", "reach", "ana")
    pick_device(qtbot, page.picker, MARKERS)
    start_recording(qtbot, page)

    qtbot.waitUntil(lambda: page.attempts.rowCount() == 1, timeout=WAIT_MS)  # nobody clicked Stop

    assert page.phase is Phase.READY and page.session is not None
    [capture] = _committed_captures(services, page.session.id)
    _assert_digests_verified(services, capture)
    assert 0 < capture.frame_count <= 60
    row = page.attempts.rows[0]
    assert row.capture_id == capture.id and "stopped sending frames" in row.note
    assert "stopped sending frames" in page.message.text()  # the technician reads what happened
    # and its analysis was still requested
    assert _attempts(services, page.session.id) == [(1, capture.id)]


def _video_of_markers(path: Path, frames: int = 30) -> Path:
    """A video file as another program would have written it: the virtual camera's markers."""
    camera = VirtualCamera(paced=False, noise=0.0)
    camera.open(Mode(640, 480, 30.0))
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 30.0, (640, 480))
    for index in range(frames):
        writer.write(camera.render(index))
    writer.release()
    return path


def test_file_import_video_makes_attempts_of_the_session_and_refuses_what_is_not_a_video(
    qtbot: QtBot, services: Services, ui: Gui, tmp_path: Path
) -> None:
    page = shown_capture_page(qtbot, ui)
    # no session yet: it says what to do first
    ui.window.import_action.trigger()
    assert page.message.text().startswith("Start a session first")
    fill_session(qtbot, page, "S-024", "reach", "ana")
    video = _video_of_markers(tmp_path / "trial.avi")
    not_video = tmp_path / "notes.mp4"
    not_video.write_text("not a video")

    ui.window.import_action.trigger()
    dialog = page.findChild(QFileDialog, "importDialog")
    assert dialog is not None and dialog.isVisible()
    assert ui.window.pages.currentWidget() is page
    dialog.filesSelected.emit([str(video), str(not_video)])  # as the dialog does on Open
    dialog.close()

    qtbot.waitUntil(lambda: page.message.text().startswith("Imported"), timeout=WAIT_MS)
    assert page.message.text().startswith("Imported 1 video(s) as attempt(s) 1")
    assert "notes.mp4 was not imported" in page.message.text()
    assert page.session is not None
    [capture] = _committed_captures(services, page.session.id)
    assert capture.origin == "imported" and capture.frame_count == 30
    assert _attempts(services, page.session.id) == [(1, capture.id)]
    assert [j.stage_id for j in services.queue.jobs()] == PIPELINE or sorted(
        j.stage_id for j in services.queue.jobs()
    ) == sorted(PIPELINE)
    assert page.attempts.rows[0].attempt_id is not None
    # the same file again is refused: it was imported before
    page.import_videos([video])
    qtbot.waitUntil(lambda: "trial.avi was not imported" in page.message.text(), timeout=WAIT_MS)
    assert len(_committed_captures(services, page.session.id)) == 1


def test_closing_the_window_during_an_import_waits_for_it_to_end(
    qtbot: QtBot, services: Services, ui: Gui, tmp_path: Path
) -> None:
    page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, page, "S-025", "reach", "ana")
    page.import_videos([_video_of_markers(tmp_path / "trial.avi", frames=60)])

    ui.window.close()

    # joined before the window went: the attempt is whole, and its row was delivered
    assert page.session is not None
    [capture] = _committed_captures(services, page.session.id)
    assert capture.state == "committed"
    assert _attempts(services, page.session.id) == [(1, capture.id)]
    assert [row.capture_id for row in page.attempts.rows] == [capture.id]
