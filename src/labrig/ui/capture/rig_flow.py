"""The Capture page's rig mode, its flow: the rigs read, one rig recording started, watched, stopped
and saved as one attempt, and saved again, marked interrupted, when the window closes on it.

Threading contract: GUI thread only. Reading the rigs, starting (every device verified, opened and
streaming) and stopping (every capture committed, the sync measured, the attempt saved) run on
:class:`~labrig.ui.shell.background.BackgroundCalls`; :meth:`RigFlow.tick` reads only the
recorders' in-memory counters.
"""

from __future__ import annotations

import logging
from functools import partial

from PySide6.QtCore import QObject, Signal, Slot

from labrig.calibration import RigCalibrationService
from labrig.capture import CaptureService
from labrig.capture.rig_recorder import RigRecording
from labrig.capture.rig_world import RigSceneName
from labrig.capture.rigs import Rig
from labrig.domain.recordings import RecordingPurpose
from labrig.errors import LabrigError
from labrig.jobs import JobQueue
from labrig.pipeline import SavedRecording, stop_and_save_rig
from labrig.ui.capture.rig_panel import RigChooser, RigGrid
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.latest import Latest

log = logging.getLogger(__name__)
VIRTUAL_SCENES: dict[RecordingPurpose, RigSceneName] = {
    RecordingPurpose.ATTEMPT: "markers",
    RecordingPurpose.BOARD: "board",
    RecordingPurpose.PLANE: "floor",
}


class RigFlow(QObject):
    """One rig recording at a time, through ``capture``, saved into ``queue``'s store."""

    #: The rig recording began: what to tell the technician.
    started = Signal(str)
    #: Starting was refused: why, in words.
    refused = Signal(str)
    #: The recording was saved (a SavedRecording) or not (None), and what to tell.
    ended = Signal(object, str)

    def __init__(
        self,
        capture: CaptureService,
        queue: JobQueue,
        calibration: RigCalibrationService,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self._capture, self._queue, self._calibration = capture, queue, calibration
        self.chooser = RigChooser()
        self.grid = RigGrid()
        self.recording: RigRecording | None = None
        self._calls = BackgroundCalls(1, self)
        self._reads = BackgroundCalls(1, self)
        self._readiness = Latest(self._reads)
        self._busy: set[str] = set()  # the devices of the rig being started, recorded or saved
        self._purpose = RecordingPurpose.ATTEMPT  # of the rig recording started
        self.chooser.rigChanged.connect(self._on_chooser_rig_changed)
        self.chooser.purposeChanged.connect(self._on_chooser_purpose_changed)

    def load(self) -> None:
        """Read the rigs (on the pool thread) and show them."""
        capture = self._capture
        self._reads.submit(capture.rigs, self.chooser.set_rigs, self._on_load_failed)

    def _on_load_failed(self, error: Exception) -> None:
        self.chooser.devices.setText(f"Could not read the rigs: {say_error(error)}")

    @Slot()
    def _on_chooser_rig_changed(self) -> None:
        rig = self.chooser.rig()
        if self.recording is None and not self._busy:
            self.grid.show_rig(rig)
        if rig is None:
            self.chooser.calibration.clear()
            return
        self._readiness.request(
            partial(self._calibration.readiness, rig),
            lambda ready: self.chooser.calibration.setText(ready.words()),
            lambda error: self.chooser.calibration.setText(
                f"Whether the rig is calibrated could not be read: {say_error(error)}"
            ),
        )

    @Slot(object)
    def _on_chooser_purpose_changed(self, purpose: RecordingPurpose) -> None:
        """The virtual rig's cameras show what the recording is for: the markers, the board
        carried through the volume, or the board on the floor."""
        self._capture.virtual_rig.scene = VIRTUAL_SCENES[purpose]

    def rig(self) -> Rig | None:
        return self.chooser.rig()

    def records(self, device_id: str) -> bool:
        """Whether the rig being started, recorded or saved includes ``device_id``."""
        return device_id in self._busy

    # -- recording -----------------------------------------------------------------------------

    def start(self, session_id: str) -> bool:
        """Start the chosen rig; False when there is none to start."""
        rig = self.chooser.rig()
        if rig is None or self._busy:
            return False
        self._busy = {d.device_id for d in rig.devices}
        self._purpose = self.chooser.chosen_purpose()
        self.grid.show_rig(rig)
        capture = self._capture
        self._calls.submit(
            lambda: capture.start_rig_recording(rig.name, session_id),
            self._on_started,
            self._on_start_refused,
        )
        return True

    def _on_started(self, recording: RigRecording) -> None:
        self.recording = recording
        self.grid.show_recording(recording)
        self.started.emit(
            f"Recording the rig {recording.rig.name}: {len(recording.recorders)} devices, "
            "started at one instant."
        )

    def _on_start_refused(self, error: Exception) -> None:
        self._busy = set()
        self.refused.emit(f"The rig did not start: {say_error(error)}")

    def tick(self) -> str:
        """Show the recording's counters; when every camera has stopped by itself, why."""
        recording = self.recording
        if recording is None:
            return ""
        status = recording.status()
        self.grid.show_status(status)
        if recording.all_stopped():
            return "; ".join(c.status.stop_reason for c in status.cameras)
        return ""

    def stop(self) -> None:
        """Stop all cameras at one instant, commit each, measure the sync, save the attempt."""
        recording = self.recording
        if recording is None:
            return
        self.tick()  # the last counts before they freeze
        self.grid.stop()
        queue, purpose = self._queue, self._purpose
        self._calls.submit(
            lambda: stop_and_save_rig(queue, recording, purpose=purpose),
            self._on_saved,
            self._on_save_failed,
        )

    def _on_saved(self, row: SavedRecording) -> None:
        self.recording, self._busy = None, set()
        self.ended.emit(
            row,
            f"Attempt {row.number} saved from the rig: {row.frames} frames, {row.dropped} "
            f"dropped. {row.note}",
        )

    def _on_save_failed(self, error: Exception) -> None:
        self.recording, self._busy = None, set()
        why = say_error(error)
        self.ended.emit(
            None,
            f"The rig recording could not be saved: {why.rstrip('.')}. Nothing was deleted: Labrig "
            "recovers it at its next start and makes it an attempt, marked interrupted.",
        )

    # -- quitting ------------------------------------------------------------------------------

    def shut_down(self, timeout_ms: int, interrupted: str) -> SavedRecording | None:
        """Wait for a start or save in flight; save a rig still recording, marked
        ``interrupted``; stop the previews."""
        self._calls.wait(timeout_ms)
        self._reads.wait(timeout_ms)
        self.grid.stop()
        recording, self.recording = self.recording, None
        saved = None
        if recording is not None:
            try:
                saved = stop_and_save_rig(self._queue, recording, interrupted, self._purpose)
            except LabrigError:  # its captures stay provisional: start-up recovery salvages them
                log.exception("saving the rig recording in progress failed while quitting")
        if not self.grid.shut_down(timeout_ms):
            log.warning("a rig preview thread did not end within %d ms", timeout_ms)
        return saved
