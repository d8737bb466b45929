"""The main window: navigation on the left, one page at a time, live status below.

Threading contract: build and use on the GUI thread only. Core events arrive
through the :class:`~labrig.ui.bridge.EventBridge`, whose signals are already on
the GUI thread; the window never polls the database.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Slot
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QListWidget, QMainWindow, QStackedWidget, QWidget

from labrig.bootstrap import Services
from labrig.events.outbox import EventRecord
from labrig.ui.bridge import EventBridge
from labrig.ui.device_checks import DeviceChecks
from labrig.ui.pages import PAGES, PageContext, PageSpec, ShutsDown
from labrig.ui.queue_model import QueueMonitor, queue_summary

NOTHING_YET = "—"
# How long closing waits for a page's threads (a recording being committed, a device probe).
PAGE_SHUTDOWN_MS = 10_000


def human_bytes(count: int) -> str:
    """Decimal units, as disk vendors and file managers report free space."""
    value = float(count)
    for unit in ("B", "kB", "MB", "GB"):
        if abs(value) < 1000:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} TB"


class MainWindow(QMainWindow):
    """Labrig's top-level window; ``pages`` defaults to :data:`~labrig.ui.pages.PAGES`."""

    def __init__(
        self,
        services: Services,
        bridge: EventBridge,
        monitor: QueueMonitor,
        pages: Sequence[PageSpec] = PAGES,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._context = PageContext(services, bridge, monitor, DeviceChecks(services.capture, self))
        self._monitor = monitor
        self.page_keys = tuple(spec.key for spec in pages)
        self.setWindowTitle("Labrig")
        self._build_pages(pages)
        self._build_status_bar()
        bridge.eventRecorded.connect(self._on_bridge_event_recorded)
        bridge.storagePressureChanged.connect(self._on_bridge_storage_pressure_changed)
        monitor.snapshotChanged.connect(self._on_monitor_snapshot_changed)
        self._on_monitor_snapshot_changed()

    def _build_pages(self, pages: Sequence[PageSpec]) -> None:
        self.navigation = QListWidget()
        self.navigation.setObjectName("navigation")
        self.pages = QStackedWidget()
        self.pages.setObjectName("pages")
        for spec in pages:
            self.navigation.addItem(spec.title)
            page = spec.factory(self._context)
            page.setObjectName(f"page_{spec.key}")
            self.pages.addWidget(page)
        # wide enough for the longest title, no wider: the page gets the room
        self.navigation.setFixedWidth(self.navigation.sizeHintForColumn(0) + 24)
        self.navigation.currentRowChanged.connect(self._on_navigation_current_row_changed)
        self.navigation.setCurrentRow(0)
        central = QWidget()
        layout = QHBoxLayout(central)
        layout.addWidget(self.navigation)
        layout.addWidget(self.pages, 1)
        self.setCentralWidget(central)

    def _build_status_bar(self) -> None:
        self.last_event = self._status_label("lastEvent", f"Last event: {NOTHING_YET}")
        self.statusBar().addWidget(self.last_event, 1)
        self.storage_status = self._status_label("storageStatus", f"Storage: {NOTHING_YET}")
        self.queue_status = self._status_label("queueStatus", f"Queue: {NOTHING_YET}")
        self.statusBar().addPermanentWidget(self.storage_status)
        self.statusBar().addPermanentWidget(self.queue_status)

    @staticmethod
    def _status_label(name: str, text: str) -> QLabel:
        label = QLabel(text)
        label.setObjectName(name)
        return label

    def shut_down(self, timeout_ms: int = PAGE_SHUTDOWN_MS) -> None:
        """Let every page with threads of its own stop them: a recording is stopped and saved, previews
        and probes are joined. Safe to call more than once."""
        for index in range(self.pages.count()):
            page = self.pages.widget(index)
            if isinstance(page, ShutsDown):
                page.shut_down(timeout_ms)
        self._context.devices.shut_down(timeout_ms)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.shut_down()
        super().closeEvent(event)

    def show_page(self, key: str) -> None:
        """Switch to the page registered under ``key``."""
        self.navigation.setCurrentRow(self.page_keys.index(key))

    @Slot(int)
    def _on_navigation_current_row_changed(self, row: int) -> None:
        if row >= 0:  # -1 while the list is being cleared
            self.pages.setCurrentIndex(row)

    @Slot(object)
    def _on_bridge_event_recorded(self, event: EventRecord) -> None:
        self.last_event.setText(f"Last event: {event.name}")

    @Slot(str, "qlonglong")
    def _on_bridge_storage_pressure_changed(self, level: str, free_bytes: int) -> None:
        self.storage_status.setText(f"Storage: {level} ({human_bytes(free_bytes)} free)")

    @Slot()
    def _on_monitor_snapshot_changed(self) -> None:
        counts = self._monitor.counts
        self.queue_status.setText(queue_summary(counts))
        self.queue_status.setToolTip("\n".join(f"{state.value}: {n}" for state, n in counts.items() if n))
