"""The Capture page: the technician's flow from a new session to recorded attempts under analysis.

New session (subject code, protocol, operator) → pick a verified device and its
mode → live preview, what the recording is for (an attempt, or the calibration
board moving or lying on the plane), what a virtual camera shows, and whether the
device and mode are calibrated (results in mm or px) → Record / Stop, with
elapsed time, frame rate, MB/s and dropped frames in an info bar → the attempt
appears below with the progress of its analysis. Stop works from the moment
Record is pressed: a stop during start-up stops the recording once it has begun.

Threading contract: GUI thread only. Blocking calls (start a recording, stop and
commit it) run through :class:`~labrig.ui.shell.background.BackgroundCalls`; frames
are converted on the preview thread; the analysis progress comes from the
:class:`~labrig.ui.shell.queue_monitor.QueueMonitor` (bridge events and executor
progress). The info-bar timer reads only the recorder's in-memory counters. The
calibration line is read on a pool thread of its own, newest request wins.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtGui import QImage, QShowEvent
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from labrig.calibration import CalibrationService
from labrig.capture import (
    CaptureService,
    Recorder,
    RecorderStatus,
    create_session,
)
from labrig.domain.recordings import RecordingPurpose
from labrig.errors import LabrigError
from labrig.jobs import JobQueue
from labrig.pipeline import SavedRecording, stop_and_save
from labrig.ui.capture.attempts_model import AttemptTableModel
from labrig.ui.capture.device_preview import DevicePreview, why_no_picture
from labrig.ui.capture.importing import VideoImport
from labrig.ui.capture.rig_flow import RigFlow
from labrig.ui.capture.setup import RecordingSetup
from labrig.ui.capture.widgets import AttemptTable, InfoBar, PreviewView, SessionForm, clock
from labrig.ui.common.device_picker import DevicePicker
from labrig.ui.common.widgets import fixed_lines, message_label, named_button
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.device_checks import RELEASE_TIMEOUT_S, DeviceChecks
from labrig.ui.shell.queue_monitor import QueueMonitor

log = logging.getLogger(__name__)

INFO_INTERVAL_MS = 250
# the note an attempt gets when the window was closed while it was recording
INTERRUPTED_BY_CLOSING = "the window was closed during the recording, which was stopped and saved"


@dataclass(frozen=True)
class SessionInfo:
    """The open session as the technician typed it (already accepted by ``create_session``)."""

    id: str
    subject_code: str
    protocol: str
    operator: str

    def label(self) -> str:
        return f"Session {self.subject_code} · {self.protocol} · {self.operator}"


class Phase(StrEnum):
    NO_SESSION = "no session"
    READY = "ready"  # a session is open; previewing the picked device when it is verified
    STARTING = "starting"  # the device is checked once more and the recorder opens it
    RECORDING = "recording"
    SAVING = "saving"  # the recorder is stopped and its capture committed


class CapturePage(QWidget):
    """Sessions (in ``queue``'s store), devices (from the window's ``checks``), preview and
    recording through ``capture``; analysis progress from ``monitor``; whether the picked device
    and mode are calibrated from ``calibration``. A
    :class:`~labrig.ui.shell.device_checks.DeviceUser` of ``checks``."""

    navigateRequested = Signal(str)  # a page key: the calibration line's link

    def __init__(
        self,
        capture: CaptureService,
        queue: JobQueue,
        monitor: QueueMonitor,
        checks: DeviceChecks,
        calibration: CalibrationService,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._capture, self._queue, self._monitor, self._checks = capture, queue, monitor, checks
        self._calibration = calibration
        self._phase = Phase.NO_SESSION
        self._stop_requested = False  # Stop was pressed while the recording was starting
        self._session: SessionInfo | None = None
        self._recorder: Recorder | None = None
        self._recording_id: str | None = None  # the device recorded, from Record until saved
        # what the recording in progress is for, fixed from Record until saved
        self._purpose = RecordingPurpose.ATTEMPT
        self._closing = False
        self._calls = BackgroundCalls(1, self)
        self.preview = DevicePreview(self)
        self.rig_flow = RigFlow(capture, queue, calibration.rig, self)
        self.attempts = AttemptTableModel(self)
        self._info_timer = QTimer(self)
        self._info_timer.setInterval(INFO_INTERVAL_MS)
        self._build()
        self.form.button.clicked.connect(self._on_form_button_clicked)
        self.record_button.clicked.connect(self._on_record_button_clicked)
        self.stop_button.clicked.connect(self._on_stop_button_clicked)
        self.preview.frameReady.connect(self._on_preview_frame_ready)
        self.preview.previewEnded.connect(self._on_preview_preview_ended)
        self.picker.choiceChanged.connect(self._on_picker_choice_changed)
        self.setup.calibrateRequested.connect(lambda: self.navigateRequested.emit("calibration"))
        self.setup.modeRequested.connect(self.picker.choose_mode)
        self._info_timer.timeout.connect(self._on_info_timer_timeout)
        self.device_tabs.currentChanged.connect(self._on_device_tabs_current_changed)
        self.rig_flow.chooser.rigChanged.connect(self._on_rig_changed)
        self.rig_flow.started.connect(self._on_rig_started)
        self.rig_flow.refused.connect(self._on_rig_refused)
        self.rig_flow.ended.connect(self._on_rig_ended)
        monitor.snapshotChanged.connect(self._on_monitor_snapshot_changed)
        monitor.jobProgressed.connect(self._on_monitor_job_progressed)
        monitor.follow_jobs()  # the attempts' analysis, from the newest jobs
        checks.add_user(self)
        self._set_phase(Phase.NO_SESSION)
        self.view.show_text("Start a session to preview a camera.")

    def _build(self) -> None:
        self.form = SessionForm()
        self.picker = DevicePicker(self._checks)
        self.view = PreviewView()
        self.info = InfoBar()
        self.record_button = named_button("recordButton", "● Record")
        self.stop_button = named_button("stopButton", "■ Stop")
        self.setup = RecordingSetup(self._capture, self._calibration)
        # three lines whatever it says: the buttons above it never move
        self.message = fixed_lines(message_label("captureMessage"), 3)
        self.attempt_table = AttemptTable(self.attempts)
        self.importer = VideoImport(self._queue, self._capture.access, self)
        self.importer.imported.connect(self._on_importer_imported)
        self.importer.picked.connect(self.import_videos)
        # one device, or a rig of several recorded together
        self.device_tabs = QTabWidget()
        self.device_tabs.setObjectName("deviceTabs")
        self.device_tabs.addTab(self.picker, "One device")
        self.device_tabs.addTab(self.rig_flow.chooser, "A rig")
        self.pictures = QStackedWidget()
        self.pictures.addWidget(self.view)
        self.pictures.addWidget(self.rig_flow.grid)
        left = QVBoxLayout()
        left.addWidget(self.form)
        left.addWidget(self._box("2. Device", self.device_tabs), 1)
        recording = QVBoxLayout()
        recording.addWidget(self.pictures, 1)
        recording.addWidget(self.info)
        recording.addWidget(self.setup)
        buttons = QHBoxLayout()
        buttons.addWidget(self.record_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        recording.addLayout(buttons)
        recording.addWidget(self.message)
        top = QHBoxLayout()
        top.addLayout(left, 2)
        top.addWidget(self._box("3. Preview and recording", recording), 3)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Capture</h2>"))
        layout.addLayout(top, 3)
        layout.addWidget(self._box("4. Attempts in this session", self.attempt_table), 1)

    @staticmethod
    def _box(title: str, content: QWidget | QVBoxLayout) -> QGroupBox:
        box = QGroupBox(title)
        if isinstance(content, QWidget):
            QVBoxLayout(box).addWidget(content)
        else:
            box.setLayout(content)
        return box

    # -- state ---------------------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def recording_status(self) -> RecorderStatus | None:
        """The recording in progress's counters (frames, drops, rate),
        or None when not recording."""
        return self._recorder.status() if self._recorder is not None else None

    @property
    def session(self) -> SessionInfo | None:
        return self._session

    @property
    def rig_mode(self) -> bool:
        """Whether Record records the rig chosen in "A rig" rather than one device."""
        return self.device_tabs.currentIndex() == 1

    def _set_phase(self, phase: Phase) -> None:
        self._phase = phase
        self.form.show_open(phase is not Phase.NO_SESSION, phase in (Phase.NO_SESSION, Phase.READY))
        self.picker.setEnabled(phase is Phase.READY)
        self.device_tabs.tabBar().setEnabled(phase in (Phase.NO_SESSION, Phase.READY))
        self.rig_flow.chooser.setEnabled(phase is Phase.READY)
        choice = self.picker.choice()
        ready = (
            self.rig_flow.rig() is not None
            if self.rig_mode
            else choice is not None and choice.previewable
        )
        self.record_button.setEnabled(phase is Phase.READY and ready)
        # from the moment Record is pressed: a stop during start-up stops it once it has begun
        self.stop_button.setEnabled(
            phase is Phase.RECORDING or (phase is Phase.STARTING and not self._stop_requested)
        )
        self.setup.set_recording(phase not in (Phase.NO_SESSION, Phase.READY))
        # the rig's grid has its own counters; the purpose, scene and calibration are one device's
        self.info.setVisible(not self.rig_mode)
        self.setup.setVisible(not self.rig_mode)
        if phase in (Phase.READY, Phase.RECORDING):
            self._info_timer.start()
        else:
            self._info_timer.stop()

    # -- session -------------------------------------------------------------------------------

    @Slot()
    def _on_form_button_clicked(self) -> None:
        if self._session is None:
            self._start_session()
        elif self._phase is Phase.READY:
            self._end_session()

    def _start_session(self) -> None:
        texts = self.form.texts()
        try:
            session_id = create_session(self._queue, *texts)
        except LabrigError as exc:  # the form's words are refused: say which and why, store nothing
            self.form.message.setText(f"The session was not started. {exc.message}.")
            self.form.focus_named(exc.message)
            return
        subject, protocol, operator = (t.strip() for t in texts)
        self._session = SessionInfo(session_id, subject, protocol, operator)
        self.form.message.setText(f"{self._session.label()} is open. Pick a device, then record.")
        self._set_phase(Phase.READY)
        self.picker.search()  # the first time the window needs the devices
        self.rig_flow.load()
        self._sync_preview()

    def _end_session(self) -> None:
        self.preview.stop()
        self._session = None
        self.attempts.clear()
        self.message.setText("")
        self.form.message.setText("Session ended. Its attempts stay in the store and in the Queue.")
        self._set_phase(Phase.NO_SESSION)
        self.view.show_text("Start a session to preview a camera.")

    # -- preview -------------------------------------------------------------------------------

    @Slot()
    def _on_picker_choice_changed(self) -> None:
        if self._phase is Phase.READY:
            self.message.setText("")  # it spoke of the device picked before
            self._sync_preview()
            self._set_phase(Phase.READY)  # Record follows the picked device's verdict
        self._show_setup()

    def _show_setup(self) -> None:
        self.setup.follow(self.picker.choice())

    def showEvent(self, event: QShowEvent) -> None:
        """Back from the Calibration screen: the device, or the rig, may be calibrated now."""
        super().showEvent(event)
        self._show_setup()
        if self.rig_mode and self._phase is Phase.READY:
            self.rig_flow.load()

    @Slot(int)
    def _on_device_tabs_current_changed(self, index: int) -> None:
        self.pictures.setCurrentIndex(index)
        if self.rig_mode:
            self.preview.stop()  # the rig's devices are opened by its recorders only
            self.rig_flow.load()
        self.message.setText("")
        self._set_phase(self._phase)
        self._sync_preview()

    @Slot()
    def _on_rig_changed(self) -> None:
        self._set_phase(self._phase)  # Record follows whether a rig is chosen

    def _sync_preview(self) -> None:
        """Preview the picked device when it is verified; show why not otherwise."""
        if self._phase is not Phase.READY or self._closing or self.rig_mode:
            return
        choice = self.picker.choice()
        mode = choice.usable_mode if choice is not None and choice.previewable else None
        if choice is None or mode is None:
            self.preview.stop()
            self.view.show_text(why_no_picture(choice))
            return
        self.preview.show_device(choice.device, mode, self._capture.open_source)

    def release_device(self, device_id: str) -> threading.Event | None:
        """``device_id`` is about to be verified: stop previewing it; the event is set
        once it is closed."""
        was_shown = self.preview.running
        released = self.preview.let_go(device_id)
        if released is not None and was_shown and not self.preview.running:
            device = self._checks.device(device_id)
            self.view.show_text(f"Verifying {device.name if device else device_id}…")
        return released

    def recording_device(self, device_id: str) -> bool:
        """True while this page records ``device_id`` (or is about to, or is saving it)."""
        busy = self._phase in (Phase.STARTING, Phase.RECORDING, Phase.SAVING)
        return (busy and self._recording_id == device_id) or self.rig_flow.records(device_id)

    @Slot(QImage, int)
    def _on_preview_frame_ready(self, image: QImage, _number: int) -> None:
        self.view.show_frame(image)
        self.preview.fit_to(self.view.width(), self.view.height())

    @Slot(str)
    def _on_preview_preview_ended(self, reason: str) -> None:
        if reason and self._phase is Phase.READY:
            self.view.show_text("No picture.")
            self.message.setText(reason)

    # -- recording -----------------------------------------------------------------------------

    @Slot()
    def _on_record_button_clicked(self) -> None:
        if self.rig_mode:
            self._record_rig()
            return
        choice = self.picker.choice()
        if (
            self._phase is not Phase.READY
            or self._session is None
            or choice is None
            or not choice.previewable
        ):
            return
        self._recording_id = choice.device.device_id
        self._purpose = self.setup.chosen_purpose()
        self._stop_requested = False
        self._set_phase(Phase.STARTING)
        self.message.setText(f"Checking {choice.device.name} once more, then recording…")
        released = self.preview.let_go(choice.device.device_id)
        self.preview.stop()
        capture, device_id, mode, session_id, purpose = (
            self._capture,
            choice.device.device_id,
            choice.usable_mode,
            self._session.id,
            self._purpose,
        )
        assert mode is not None

        # on the pool thread: the preview lets the device go, the recorder opens it
        def start() -> Recorder:
            if released is not None:
                released.wait(RELEASE_TIMEOUT_S)
            return capture.start_recording(device_id, mode, session_id=session_id, purpose=purpose)

        self._calls.submit(start, self._on_recording_started, self._on_recording_refused)

    def _record_rig(self) -> None:
        rig = self.rig_flow.rig()
        if self._phase is not Phase.READY or self._session is None or rig is None:
            return
        self._stop_requested = False
        if self.rig_flow.start(self._session.id):
            self._set_phase(Phase.STARTING)
            self.message.setText(
                f"Checking the {len(rig.devices)} cameras of the rig {rig.name}, opening them, "
                "then recording all at one instant…"
            )

    @Slot(str)
    def _on_rig_started(self, said: str) -> None:
        if self._closing:
            return  # shut_down saves it
        self.message.setText(said)
        self._set_phase(Phase.RECORDING)
        if self._stop_requested:
            self._save_rig("")

    @Slot(str)
    def _on_rig_refused(self, said: str) -> None:
        self.message.setText(said)
        self._recording_ended()

    def _save_rig(self, ended_by_itself: str) -> None:
        if self._phase is not Phase.RECORDING:
            return
        self._set_phase(Phase.SAVING)
        why = f"Every camera stopped by itself: {ended_by_itself}. " if ended_by_itself else ""
        self.message.setText(
            f"{why}Stopping every camera, checking each SHA-256 and measuring the sync…"
        )
        self.rig_flow.stop()

    @Slot(object, str)
    def _on_rig_ended(self, row: SavedRecording | None, said: str) -> None:
        if row is not None:
            self.attempts.add(row)
            self.attempts.set_jobs(self._monitor.jobs)
            self._monitor.refresh()
        self.message.setText(said)
        self._recording_ended()

    def _on_recording_started(self, recorder: Recorder) -> None:
        self._recorder = recorder
        if self._closing:
            return  # shut_down saves it
        self.preview.show_recorder(recorder)
        self.message.setText(f"Recording {recorder.device.name} in {recorder.mode.label()}.")
        self._set_phase(Phase.RECORDING)
        self._on_info_timer_timeout()
        if self._stop_requested:  # Stop was pressed while it started
            self._save_recording("")

    def _on_recording_refused(self, error: Exception) -> None:
        self.message.setText(f"Recording did not start: {say_error(error)}")
        self._recording_ended()

    @Slot()
    def _on_stop_button_clicked(self) -> None:
        if self._phase is Phase.STARTING:
            self._stop_requested = True
            self.message.setText("Stopping: the recording is starting and stops once it has begun…")
            self._set_phase(Phase.STARTING)
            return
        if self.rig_flow.recording is not None:
            self._save_rig("")
            return
        self._save_recording("")

    def _save_recording(self, ended_by_itself: str) -> None:
        recorder, session = self._recorder, self._session
        if self._phase is not Phase.RECORDING or recorder is None or session is None:
            return
        self.info.show_recording(recorder.status())  # the last counts before they freeze
        self._set_phase(Phase.SAVING)
        self.preview.stop()
        why = f"Recording ended by itself: {ended_by_itself}. " if ended_by_itself else ""
        self.message.setText(f"{why}Saving the recording and checking its SHA-256…")
        queue = self._queue
        self._calls.submit(
            lambda: stop_and_save(queue, recorder, session.id),
            self._on_attempt_saved,
            self._on_save_failed,
        )

    def _on_attempt_saved(self, row: SavedRecording) -> None:
        self.attempts.add(row)
        self.attempts.set_jobs(self._monitor.jobs)
        # after the operator's action: show its jobs without waiting for the event
        self._monitor.refresh()
        what = (
            f"Attempt {row.number} saved"
            if row.number is not None
            else "Board recording saved"
            if self._purpose is RecordingPurpose.BOARD
            else "Plane recording saved"
            if self._purpose is RecordingPurpose.PLANE
            else "Recording saved"
        )
        done = (
            f"{what}: {row.frames} frames, {row.dropped} dropped, "
            f"SHA-256 {row.manifest_sha256[:12]}…"
        )
        self.message.setText(f"{done} {row.note}" if row.note else f"{done}; analysis requested.")
        self._recording_ended()

    def _on_save_failed(self, error: Exception) -> None:
        why = say_error(error)
        why = why if why.endswith((".", "!", "?")) else f"{why}."
        self.message.setText(
            f"The recording could not be saved: {why} Nothing was deleted: Labrig "
            "recovers it at its next start and lists it in the recovery report."
        )
        self._recording_ended()

    def _recording_ended(self) -> None:
        """Back to previewing; the device may be verified again by whoever waited for it."""
        self._recorder, self._recording_id, self._stop_requested = None, None, False
        if self._closing:
            return
        self.info.show_stopped()
        self._set_phase(Phase.READY)
        self._sync_preview()
        self._show_setup()
        self._checks.verify_next()

    @Slot()
    def _on_info_timer_timeout(self) -> None:
        if self.rig_flow.recording is not None and self._phase is Phase.RECORDING:
            if ended := self.rig_flow.tick():  # every camera stopped: save what was recorded
                self._save_rig(ended)
            return
        self.info.show_preview_rate(self.view.rate_fps())
        recorder = self._recorder
        if recorder is None or self._phase is not Phase.RECORDING:
            return
        status = recorder.status()
        self.info.show_recording(status)
        if status.stop_reason:  # the device or the disk ended it: save what was recorded
            self._save_recording(status.stop_reason)

    # -- importing -----------------------------------------------------------------------------

    def open_import_dialog(self) -> None:
        """File ▸ Import video…: pick video files to make attempts of the open session."""
        if self._session is None or self._phase is not Phase.READY:
            self.message.setText(
                "Start a session first (1. Session): an imported video becomes an attempt of it."
                if self._session is None
                else "Wait for the recording to be saved, then import."
            )
            return
        self.importer.open_dialog(self)

    def import_videos(self, paths: list[Path]) -> None:
        """Import ``paths`` as attempts of the open session, off the GUI thread."""
        if self._session is not None and self._phase is Phase.READY and paths:
            self.message.setText(f"Importing {len(paths)} video(s)…")
            self.importer.start(paths, self._session.id)

    @Slot(list, str)
    def _on_importer_imported(self, saved: list[SavedRecording], said: str) -> None:
        for row in saved:
            self.attempts.add(row)
        self.attempts.set_jobs(self._monitor.jobs)
        self._monitor.refresh()
        self.message.setText(said)

    # -- analysis progress ---------------------------------------------------------------------

    @Slot()
    def _on_monitor_snapshot_changed(self) -> None:
        self.attempts.set_jobs(self._monitor.jobs)

    @Slot(str, float, str)
    def _on_monitor_job_progressed(self, job_id: str, fraction: float, _message: str) -> None:
        self.attempts.set_progress(job_id, fraction)

    # -- quitting ------------------------------------------------------------------------------

    def recording_in_progress(self) -> str | None:
        """What is being recorded, in a few words, while a recording starts or runs; else None."""
        if self._phase not in (Phase.STARTING, Phase.RECORDING):
            return None
        if (recording := self.rig_flow.recording) is not None:
            elapsed = max((c.status.elapsed_s for c in recording.status().cameras), default=0.0)
            return f"The rig {recording.rig.name} is recording ({clock(elapsed)} so far)"
        if self._recording_id is None and (rig := self.rig_flow.rig()) is not None:
            return f"The rig {rig.name} is starting"
        device = self._checks.device(self._recording_id or "")
        name = device.name if device is not None else self._recording_id
        status = self.recording_status
        length = f" ({clock(status.elapsed_s)} so far)" if status is not None else ""
        return f"{name} is recording{length}"

    def shut_down(self, timeout_ms: int) -> None:
        """Stop and save a recording in progress, marked as interrupted, and join the preview and
        worker threads."""
        self._closing = True
        self._info_timer.stop()
        self._calls.wait(timeout_ms)  # a start or save in flight reports now
        if not self.importer.wait(timeout_ms):  # an import in flight ends before the store closes
            log.warning("an import did not end within %d ms", timeout_ms)
        self.preview.stop()
        rig_saved = self.rig_flow.shut_down(timeout_ms, INTERRUPTED_BY_CLOSING)
        if rig_saved is not None:
            self.attempts.add(rig_saved)
        recorder, session = self._recorder, self._session
        if (
            recorder is not None
            and session is not None
            and self._phase in (Phase.STARTING, Phase.RECORDING)
        ):
            self._recorder = None
            try:
                self.attempts.add(
                    stop_and_save(
                        self._queue, recorder, session.id, interrupted=INTERRUPTED_BY_CLOSING
                    )
                )
            except LabrigError:  # it stays provisional: start-up recovery salvages it
                log.exception("saving the recording in progress failed while quitting")
        if not self.preview.shut_down(timeout_ms):
            log.warning("the preview thread did not end within %d ms", timeout_ms)
