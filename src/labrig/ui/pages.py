"""The pages of the main window, declared as data.

Each page is built by a factory that receives a :class:`PageContext` (the
services, the event bridge, the queue monitor) and hands the page only what it
uses, so a page gets its collaborators in ``__init__`` like every other widget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QVBoxLayout, QWidget

from labrig.bootstrap import Services
from labrig.ui.bridge import EventBridge
from labrig.ui.calibration_page import CalibrationPage
from labrig.ui.capture_page import CapturePage
from labrig.ui.device_checks import DeviceChecks
from labrig.ui.devices_page import DevicesPage
from labrig.ui.queue_model import QueueMonitor
from labrig.ui.queue_page import QueuePage
from labrig.ui.releases_page import ReleasesPage
from labrig.ui.results_page import ResultsPage
from labrig.ui.review_page import ReviewPage
from labrig.ui.storage_page import StoragePage


@dataclass(frozen=True)
class PageContext:
    """What pages are built from."""

    services: Services
    bridge: EventBridge
    monitor: QueueMonitor
    devices: DeviceChecks  # the window's one list of devices and verdicts, shared by the pages


PageFactory = Callable[[PageContext], QWidget]


@runtime_checkable
class ShutsDown(Protocol):
    """A page with threads or a recording of its own: the window calls this when it closes."""

    def shut_down(self, timeout_ms: int) -> None: ...


@dataclass(frozen=True)
class PageSpec:
    """One navigation entry: a stable key, the title shown, and how to build its page."""

    key: str
    title: str
    factory: PageFactory


class SettingsPage(QWidget):
    """Facts about the open store, read once when the page is built."""

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        store = services.store
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Settings</h2>"))
        form = QFormLayout()
        rows = (
            ("Data folder", "dataFolder", str(store.root)),
            ("Database file", "databaseFile", str(store.db_path)),
            ("Schema revision", "schemaRevision", store.revision() or "none (not migrated)"),
            ("Store id", "storeId", store.meta("store_id") or "unknown"),
        )
        for caption, name, value in rows:
            label = QLabel(value)
            label.setObjectName(name)
            # technicians copy these into support requests
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow(caption, label)
        layout.addLayout(form)
        layout.addStretch(1)


PAGES: tuple[PageSpec, ...] = (
    PageSpec("capture", "Capture", lambda context: CapturePage(context.services.capture, context.services.queue,
                                                              context.monitor, context.devices)),
    PageSpec("calibration", "Calibration", lambda context: CalibrationPage(context.services, context.bridge)),
    PageSpec("results", "Results", lambda context: ResultsPage(context.services, context.bridge)),
    PageSpec("review", "Review",
             lambda context: ReviewPage(context.services.governance, context.services.store, context.bridge)),
    PageSpec("queue", "Queue", lambda context: QueuePage(context.services.queue, context.monitor)),
    PageSpec("devices", "Devices", lambda context: DevicesPage(context.devices)),
    PageSpec("storage", "Storage", lambda context: StoragePage(context.services.storage, context.bridge)),
    PageSpec("releases", "Releases", lambda context: ReleasesPage(context.services.releases, context.bridge)),
    PageSpec("settings", "Settings", lambda context: SettingsPage(context.services)),
)
