"""The Capture page's rig mode, its widgets: the rig to record (chosen from the stored rigs, with
its devices listed), and the grid of live previews, one per camera, each captioned with its frame
rate and dropped frames, and a scrolling plot per instrument
(:class:`~labrig.ui.capture.instrument_tile.InstrumentTile`), above the live sync spread.

Threading contract: GUI thread only; each tile's frames are converted on its own preview thread
(:class:`~labrig.ui.capture.preview.PreviewStream`), from the recorder's newest frame: the rig's
recorders hold the devices, the previews open nothing.
"""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGridLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from labrig.capture.instrument_recorder import InstrumentRecorder
from labrig.capture.recorder import Recorder
from labrig.capture.rig_recorder import RigRecording, RigStatus
from labrig.capture.rigs import Rig
from labrig.capture.samples import SampleMode
from labrig.domain.recordings import RIG_PURPOSE_LABELS, RecordingPurpose
from labrig.ui.capture.instrument_tile import InstrumentTile
from labrig.ui.capture.preview import PreviewStream, RecorderFeed
from labrig.ui.capture.widgets import PreviewView, clock
from labrig.ui.common.widgets import fixed_lines, message_label

PURPOSE_NOTES = {
    RecordingPurpose.ATTEMPT: "Analysed when saved: in 3-D, in mm, once the rig has a valid rig "
    "calibration (Calibration ▸ A rig).",
    RecordingPurpose.BOARD: "Not analysed: kept to calibrate the rig from (Calibration ▸ A rig). "
    "Carry the board through the volume for about 30 s, where two or more cameras see it whole.",
    RecordingPurpose.PLANE: "Not analysed: sets the world's origin and axes when the rig is "
    "calibrated. Lay the board flat on the floor where every camera sees it; 1 s is enough.",
}
NO_RIGS = "No rig yet: make one on the Devices screen (or 'labrig rigs add')."


class RigChooser(QWidget):
    """Which rig to record, what it is made of, and what the recording is for."""

    rigChanged = Signal()
    #: the recording's purpose was changed (a RecordingPurpose)
    purposeChanged = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combo = QComboBox()
        self.combo.setObjectName("rigCombo")
        self.devices = message_label("rigDevices")
        self.purpose = QComboBox()
        self.purpose.setObjectName("rigRecordingPurpose")
        for value, label in RIG_PURPOSE_LABELS.items():
            self.purpose.addItem(label, value.value)
            self.purpose.setItemData(self.purpose.count() - 1, label, Qt.ItemDataRole.ToolTipRole)
        # the words are long: the box is as wide as the column, and opens wide enough to read them
        self.purpose.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.purpose.setMinimumContentsLength(16)
        self.purpose_note = fixed_lines(message_label("rigPurposeNote"), 3)
        # what the rig's attempts would be analysed with now
        self.calibration = fixed_lines(message_label("rigCalibration"), 3)
        self.rigs: list[Rig] = []
        layout = QVBoxLayout(self)
        form = QFormLayout()
        form.addRow("Rig", self.combo)
        form.addRow("This recording is", self.purpose)
        layout.addLayout(form)
        layout.addWidget(self.purpose_note)
        layout.addWidget(self.calibration)
        layout.addWidget(self.devices)
        layout.addStretch(1)
        self.combo.currentIndexChanged.connect(self._on_combo_current_index_changed)
        self.purpose.currentIndexChanged.connect(self._on_purpose_current_index_changed)
        self._on_purpose_current_index_changed(0)

    def chosen_purpose(self) -> RecordingPurpose:
        return RecordingPurpose(self.purpose.currentData())

    @Slot(int)
    def _on_purpose_current_index_changed(self, _index: int) -> None:
        purpose = self.chosen_purpose()
        self.purpose_note.setText(PURPOSE_NOTES[purpose])
        self.purposeChanged.emit(purpose)

    def set_rigs(self, rigs: list[Rig]) -> None:
        """Show ``rigs``, keeping the one picked when it is still there."""
        picked = self.rig()
        self.rigs = list(rigs)
        self.combo.blockSignals(True)
        self.combo.clear()
        for rig in self.rigs:
            instruments = sum(d.instrument for d in rig.devices)
            what = f"{len(rig.devices) - instruments} cameras" + (
                f", {instruments} instrument{'s' * (instruments > 1)}" if instruments else ""
            )
            self.combo.addItem(f"{rig.name} ({what})", rig.name)
        names = [r.name for r in self.rigs]
        self.combo.setCurrentIndex(
            names.index(picked.name) if picked and picked.name in names else 0
        )
        self.combo.blockSignals(False)
        self._show()
        self.rigChanged.emit()

    def rig(self) -> Rig | None:
        index = self.combo.currentIndex()
        return self.rigs[index] if 0 <= index < len(self.rigs) else None

    @Slot(int)
    def _on_combo_current_index_changed(self, _index: int) -> None:
        self._show()
        self.rigChanged.emit()

    def _show(self) -> None:
        rig = self.rig()
        if rig is None:
            self.devices.setText(NO_RIGS)
            return
        lines = [f"{d.place}: {d.device_id} at {d.mode.label()}" for d in rig.devices]
        made = "built in: the virtual rig's cameras" if rig.builtin else f"made by {rig.created_by}"
        self.devices.setText("\n".join([*lines, f"({made})"]))


class RigTile(QWidget):
    """One camera of the rig: its live picture and a caption under it."""

    def __init__(self, place: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.place = place
        self.view = PreviewView()
        self.view.setMinimumSize(160, 90)
        self.caption = QLabel(place)
        self.caption.setObjectName("rigTileCaption")
        self.stream = PreviewStream(self)
        self.stream.frameReady.connect(self._on_stream_frame_ready)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.caption)

    @Slot(QImage, int)
    def _on_stream_frame_ready(self, image: QImage, _number: int) -> None:
        self.view.show_frame(image)
        self.stream.fit_to(self.view.width(), self.view.height())

    def stop(self) -> None:
        self.stream.stop()

    def shut_down(self, timeout_ms: int) -> bool:
        return self.stream.shut_down(timeout_ms)


class RigGrid(QWidget):
    """The rig's cameras and instruments in a grid (2 columns up to 4 devices, then 3, then 4),
    and the spread."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rigGrid")
        self.tiles: list[RigTile | InstrumentTile] = []
        self._grid = QGridLayout()
        self._grid.setSpacing(4)
        self.summary = QLabel("")
        self.summary.setObjectName("rigSpread")
        self.summary.setToolTip(
            "How far apart in time the cameras' matched frames are, at p99 over the last two "
            "seconds (docs/rigs.md)"
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._grid, 1)
        layout.addWidget(self.summary)

    def show_rig(self, rig: Rig | None) -> None:
        """Tiles for ``rig``'s cameras, each saying it waits for Record."""
        self.stop()
        for old in self.tiles:
            self._grid.removeWidget(old)
            old.deleteLater()
        self.tiles = []
        if rig is None:
            self.summary.setText(NO_RIGS)
            return
        columns = 2 if len(rig.devices) <= 4 else 3 if len(rig.devices) <= 6 else 4
        for n, device in enumerate(rig.devices):
            tile: RigTile | InstrumentTile
            if isinstance(device.mode, SampleMode):
                tile = InstrumentTile(device.place, device.mode, self)
            else:
                tile = RigTile(device.place, self)
                tile.view.show_text(f"{device.place}\nstarts with Record")
            self._grid.addWidget(tile, n // columns, n % columns)
            self.tiles.append(tile)
        rows = math.ceil(len(rig.devices) / columns)
        for r in range(rows):
            self._grid.setRowStretch(r, 1)
        for c in range(columns):  # every tile the same size, a plot's as a picture's
            self._grid.setColumnStretch(c, 1)
        instruments = sum(isinstance(d.mode, SampleMode) for d in rig.devices)
        cameras = len(rig.devices) - instruments
        named = f"{cameras} cameras" + (
            f" and {instruments} instrument{'s' * (instruments > 1)}" if instruments else ""
        )
        self.summary.setText(f"{named}: all start at one instant and stop at one instant.")

    def show_recording(self, recording: RigRecording) -> None:
        for tile, recorder in zip(self.tiles, recording.recorders, strict=False):
            if isinstance(tile, InstrumentTile) and isinstance(recorder, InstrumentRecorder):
                tile.follow(recorder)
            elif isinstance(tile, RigTile) and isinstance(recorder, Recorder):
                tile.stream.start(RecorderFeed(recorder))

    def show_status(self, status: RigStatus) -> None:
        for tile, camera in zip(self.tiles, status.cameras, strict=False):
            s = camera.status
            ended = " · stopped" if s.stop_reason else ""
            if camera.instrument:
                tile.caption.setText(f"{camera.place} · {s.fps:.0f} Hz · {s.dropped} lost{ended}")
            else:
                tile.caption.setText(
                    f"{camera.place} · {s.fps:.1f} fps · {s.dropped} dropped{ended}"
                )
        elapsed = max((c.status.elapsed_s for c in status.cameras), default=0.0)
        dropped = sum(c.status.dropped for c in status.cameras if not c.instrument)
        spread = (
            f"{status.spread_p99_ms:.2f} ms" if status.spread_p99_ms is not None else "measuring"
        )
        self.summary.setText(
            f"● REC {clock(elapsed)} · sync spread p99 {spread} · {dropped} dropped"
        )

    def stop(self) -> None:
        for tile in self.tiles:
            tile.stop()

    def shut_down(self, timeout_ms: int) -> bool:
        return all([tile.shut_down(timeout_ms) for tile in self.tiles])
