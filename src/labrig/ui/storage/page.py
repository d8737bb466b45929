"""The Storage page: how full the media volume is, what level that means, and how long
recording can go on.

Threading contract: GUI thread only. Measuring (a disk-usage call, a walk of the
media folder, and a level change recorded in the catalog) runs on a pool thread
through :class:`~labrig.ui.shell.background.BackgroundCalls`; the page measures when
it is first shown, when asked, and when the bridge reports a level change.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QFormLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from labrig.capture import Mode
from labrig.domain.storage import PressureLevel, human_bytes
from labrig.storage import StorageMonitor
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.bridge import EventBridge

#: the recording modes the forecast is given for: what labs record most. Recordings are stored as
#: MJPEG whatever the camera sends (BGR, MJPG, YUYV), so only the size and rate count.
FORECAST_MODES = tuple(
    Mode(w, h, fps)
    for w, h, fps in ((640, 480, 30.0), (1280, 720, 30.0), (1280, 720, 60.0), (1920, 1080, 30.0))
)
LEVEL_ADVICE = {
    PressureLevel.NORMAL: "Plenty of room.",
    PressureLevel.ELEVATED: "Getting full: plan to archive and free space soon.",
    PressureLevel.HIGH: (
        "Nearly full: analyses that write large outputs wait; free space before long recordings."
    ),
    PressureLevel.CRITICAL: (
        "Full: new recordings are refused. Free space (archive old sessions) to record again."
    ),
}


@dataclass(frozen=True)
class StorageFacts:
    """One measurement of the media volume, taken off the GUI thread."""

    level: PressureLevel
    free_bytes: int
    total_bytes: int
    media_bytes: int
    media_files: int
    #: minutes of recording left above the critical floor, per forecast mode
    minutes_left: tuple[float, ...]


def measure(monitor: StorageMonitor) -> StorageFacts:
    """Sample the volume (recording a level change, as every sample does) and add up
    the media folder."""
    reading = monitor.sample()
    total = monitor.usage().total
    media_bytes, media_files = _folder_size(monitor.store.media_dir)
    room = max(reading.free_bytes - monitor.policy.critical_free, 0)
    minutes = tuple(room / mode.bytes_per_second() / 60 for mode in FORECAST_MODES)
    return StorageFacts(reading.level, reading.free_bytes, total, media_bytes, media_files, minutes)


def _folder_size(folder: Path) -> tuple[int, int]:
    size = count = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                size += os.stat(os.path.join(root, name)).st_size
                count += 1
            except OSError:  # removed while walking
                continue
    return size, count


def minutes_text(minutes: float) -> str:
    if minutes >= 120:
        return f"about {minutes / 60:.0f} h"
    return f"about {minutes:.0f} min" if minutes >= 1 else "none"


class StoragePage(QWidget):
    """Level with its advice, free and total space, what the media takes, and a
    recording-time forecast."""

    def __init__(
        self, monitor: StorageMonitor, bridge: EventBridge, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._monitor = monitor
        self._calls = BackgroundCalls(1, self)
        self._measured_once = False
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Storage</h2>"))
        form = QFormLayout()
        self.level = self._value("level", form, "Pressure level")
        self.advice = self._value("advice", form, "What it means")
        self.free = self._value("free", form, "Free")
        self.media = self._value("media", form, "Labrig media")
        self.folder = self._value("folder", form, "Media folder")
        self.folder.setText(str(monitor.store.media_dir))
        self.thresholds = self._value("thresholds", form, "Levels")
        policy = monitor.policy
        self.thresholds.setText(
            f"elevated below {human_bytes(policy.elevated_free)} free, high below "
            f"{human_bytes(policy.high_free)}, critical below {human_bytes(policy.critical_free)} "
            "(recording is refused at critical)"
        )
        layout.addLayout(form)
        layout.addWidget(
            QLabel("Recording time left before the volume reaches the critical floor:")
        )
        self.forecast = QTableWidget(len(FORECAST_MODES), 2)
        self.forecast.setObjectName("forecast")
        self.forecast.setHorizontalHeaderLabels(
            ["Mode (any camera format: recordings are stored as MJPEG)", "Recording time left"]
        )
        self.forecast.verticalHeader().setVisible(False)
        self.forecast.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.forecast.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for row, mode in enumerate(FORECAST_MODES):
            size = f"{mode.width}x{mode.height} at {mode.fps:g} fps"
            self.forecast.setItem(row, 0, QTableWidgetItem(size))
            self.forecast.setItem(row, 1, QTableWidgetItem("—"))
        layout.addWidget(self.forecast)
        self.measure_button = QPushButton("Measure now")
        self.measure_button.setObjectName("measureButton")
        self.measure_button.clicked.connect(self.measure)
        self.message = QLabel("")
        self.message.setObjectName("message")
        self.message.setWordWrap(True)
        layout.addWidget(self.measure_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.message)
        layout.addStretch(1)
        bridge.storagePressureChanged.connect(self._on_bridge_storage_pressure_changed)

    @staticmethod
    def _value(name: str, form: QFormLayout, caption: str) -> QLabel:
        label = QLabel("—")
        label.setObjectName(name)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(caption, label)
        return label

    @property
    def busy(self) -> bool:
        return self._calls.busy

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._measured_once:
            self.measure()

    @Slot()
    def measure(self) -> None:
        """Measure on a pool thread; the page shows the result when it comes."""
        if self._calls.busy:
            return
        self._measured_once = True
        self.measure_button.setEnabled(False)
        self.message.setText("Measuring…")
        self._calls.submit(lambda: measure(self._monitor), self._show, self._failed)

    def _show(self, facts: StorageFacts) -> None:
        self.measure_button.setEnabled(True)
        self.message.setText("")
        self.level.setText(facts.level.label)
        self.advice.setText(LEVEL_ADVICE[facts.level])
        free = human_bytes(facts.free_bytes)
        if facts.total_bytes:
            used = (facts.total_bytes - facts.free_bytes) / facts.total_bytes
            free = f"{free} of {human_bytes(facts.total_bytes)} ({used:.0%} used)"
        self.free.setText(free)
        self.media.setText(f"{human_bytes(facts.media_bytes)} in {facts.media_files} files")
        for row, minutes in enumerate(facts.minutes_left):
            item = self.forecast.item(row, 1)
            assert item is not None
            item.setText(minutes_text(minutes))

    def _failed(self, error: Exception) -> None:
        self.measure_button.setEnabled(True)
        self.message.setText(f"Could not measure the volume: {say_error(error)}")

    @Slot(str, "qlonglong")
    def _on_bridge_storage_pressure_changed(self, _level: str, _free_bytes: int) -> None:
        self.measure()

    def shut_down(self, timeout_ms: int) -> None:
        self._calls.wait(timeout_ms)
