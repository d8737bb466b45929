"""The main window: navigation on the left, one page at a time, live status below.

Threading contract: build and use on the GUI thread only. Core events arrive
through the :class:`~labrig.ui.shell.bridge.EventBridge`, whose signals are already on
the GUI thread; the window never polls the database.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QSettings, Qt, Slot
from PySide6.QtGui import QAction, QCloseEvent, QGuiApplication, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from labrig import __version__
from labrig.bootstrap import Services
from labrig.domain.events import EventName
from labrig.domain.storage import human_bytes
from labrig.errors import LabrigError
from labrig.events import EventRecord
from labrig.releases import ReleaseView
from labrig.storage import Reading
from labrig.sync import SyncStatus, sync_status
from labrig.ui.shell import window_state
from labrig.ui.shell.background import BackgroundCalls
from labrig.ui.shell.bridge import EventBridge
from labrig.ui.shell.latest import Latest
from labrig.ui.shell.pages import (
    ChangesStatus,
    ImportsVideo,
    Navigates,
    PageContext,
    PageSpec,
    Records,
    ShutsDown,
)
from labrig.ui.shell.queue_monitor import QueueMonitor, queue_summary

NOTHING_YET = "—"
RELEASE_EVENTS = (EventName.DEPLOYMENT_ACTIVATED, EventName.DEPLOYMENT_ROLLEDBACK)
# How long closing waits for a page's threads (a recording being committed, a device probe).
PAGE_SHUTDOWN_MS = 10_000
DAMAGE_STYLE = "#catalogDamageBanner { background: #a02020; color: white; padding: 6px; }"


class MainWindow(QMainWindow):
    """Labrig's top-level window, showing ``pages`` (the app's are
    :data:`~labrig.ui.screens.PAGES`). Its size, place and splitters are kept in ``settings``
    (:func:`~labrig.ui.shell.window_state.ui_settings` unless given)."""

    def __init__(
        self,
        services: Services,
        bridge: EventBridge,
        monitor: QueueMonitor,
        pages: Sequence[PageSpec],
        parent: QWidget | None = None,
        settings: QSettings | None = None,
    ) -> None:
        super().__init__(parent)
        self._settings = settings or window_state.ui_settings()
        self._close_confirmed = False  # closing during a recording was confirmed
        self._context = PageContext(services, bridge, monitor, self)
        self._services = services
        self._monitor = monitor
        self._calls = BackgroundCalls(1, self)
        # a burst of events (a sync batch) reads the status at most twice
        self._status_reads = Latest(self._calls)
        self.page_keys = tuple(spec.key for spec in pages)
        self.page_titles = tuple(spec.title for spec in pages)
        self.setWindowTitle("Labrig")
        self._build_pages(pages)
        self._build_status_bar()
        self._build_menus()
        bridge.eventRecorded.connect(self._on_bridge_event_recorded)
        bridge.storagePressureChanged.connect(self._on_bridge_storage_pressure_changed)
        monitor.snapshotChanged.connect(self._on_monitor_snapshot_changed)
        self._on_monitor_snapshot_changed()
        self.refresh_status()
        window_state.restore(self, self._settings)

    def _build_pages(self, pages: Sequence[PageSpec]) -> None:
        """The navigation list and the stack of pages. Each page is built (and its modules
        imported) when it is first shown or asked for (:meth:`page`): until then the stack holds
        an empty stand-in, so the window opens on the one page it shows."""
        self.navigation = QListWidget()
        self.navigation.setObjectName("navigation")
        self.pages = QStackedWidget()
        self.pages.setObjectName("pages")
        self._specs = tuple(pages)
        self._built: dict[str, QWidget] = {}
        self._stand_ins: dict[str, QWidget] = {}
        for spec in pages:
            self.navigation.addItem(spec.title)
            stand_in = self._stand_ins[spec.key] = QWidget()
            stand_in.setObjectName(f"unbuilt_{spec.key}")
            self.pages.addWidget(stand_in)
        # wide enough for the longest title, no wider: the page gets the room
        self.navigation.setFixedWidth(self.navigation.sizeHintForColumn(0) + 24)
        # the first page is current, and built when the window is shown (unless another is first)
        self.navigation.setCurrentRow(0)
        self.navigation.currentRowChanged.connect(self._on_navigation_current_row_changed)
        central = QWidget()
        layout = QVBoxLayout(central)
        self.damage_banner = self._status_label("catalogDamageBanner", "")
        self.damage_banner.setWordWrap(True)
        self.damage_banner.setStyleSheet(DAMAGE_STYLE)
        self.damage_banner.hide()
        layout.addWidget(self.damage_banner)
        row = QHBoxLayout()
        row.addWidget(self.navigation)
        row.addWidget(self.pages, 1)
        layout.addLayout(row, 1)
        self.setCentralWidget(central)

    def _build_status_bar(self) -> None:
        self.last_event = self._status_label("lastEvent", f"Last event: {NOTHING_YET}")
        self.statusBar().addWidget(self.last_event, 1)
        self.storage_status = self._status_label("storageStatus", f"Storage: {NOTHING_YET}")
        self.queue_status = self._status_label("queueStatus", f"Queue: {NOTHING_YET}")
        self.release_status = self._status_label("releaseStatus", f"Release: {NOTHING_YET}")
        self.sync_status = self._status_label("syncStatus", f"Sync: {NOTHING_YET}")
        self.statusBar().addPermanentWidget(self.storage_status)
        self.statusBar().addPermanentWidget(self.queue_status)
        self.statusBar().addPermanentWidget(self.release_status)
        self.statusBar().addPermanentWidget(self.sync_status)

    def _build_menus(self) -> None:
        """File, Go (one entry per page, Ctrl+1…), Tools and Help; every action is also
        reachable from a page."""
        file_menu = self.menuBar().addMenu("&File")
        self.new_session_action = self._action(
            file_menu,
            "newSession",
            "&New session…",
            QKeySequence.StandardKey.New,
            lambda: self.show_page("capture"),
        )
        self.import_action = self._action(
            file_menu, "importVideo", "&Import video…", None, self._import_video
        )
        file_menu.addSeparator()
        self.quit_action = self._action(
            file_menu, "quit", "&Quit", QKeySequence.StandardKey.Quit, self.close
        )
        go_menu = self.menuBar().addMenu("&Go")
        self.page_actions = [
            self._action(
                go_menu,
                f"go_{key}",
                title,
                QKeySequence(f"Ctrl+{i + 1}") if i < 9 else None,
                lambda _=False, k=key: self.show_page(k),
            )
            for i, (key, title) in enumerate(zip(self.page_keys, self.page_titles, strict=True))
        ]
        tools_menu = self.menuBar().addMenu("&Tools")
        self.refresh_action = self._action(
            tools_menu,
            "refreshStatus",
            "&Refresh status",
            QKeySequence.StandardKey.Refresh,
            self.refresh_status,
        )
        self.copy_folder_action = self._action(
            tools_menu, "copyDataFolder", "&Copy data folder path", None, self._copy_data_folder
        )
        help_menu = self.menuBar().addMenu("&Help")
        self.about_action = self._action(
            help_menu, "about", "&About Labrig", None, self._show_about
        )

    def _action(
        self, menu: Any, name: str, text: str, shortcut: Any, slot: Callable[..., Any]
    ) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        if shortcut is not None:
            action.setShortcut(shortcut)
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    @Slot()
    def refresh_status(self) -> None:
        """Read the storage level and the active release off the GUI thread, then show them."""
        services = self._services

        def read() -> tuple[Reading, ReleaseView | None, SyncStatus]:
            active = [r for r in services.releases.list() if r.status == "active"]
            return (
                services.storage.sample(),
                (active[-1] if active else None),
                sync_status(services.store),
            )

        self._status_reads.request(
            read,
            self._show_status,
            lambda error: self.last_event.setText(f"Could not read the status: {error}"),
        )

    def _show_status(self, status: tuple[Reading, ReleaseView | None, SyncStatus]) -> None:
        reading, release, sync = status
        self._show_sync(sync)
        self.storage_status.setText(
            f"Storage: {reading.level.label} ({human_bytes(reading.free_bytes)} free)"
        )
        self.release_status.setText(
            f"Release: {release.version} ({release.digest[:8]})"
            if release
            else "Release: none active"
        )

    def _show_sync(self, sync: SyncStatus) -> None:
        """The archive sync in a few words; the last error in the tooltip."""
        if sync.destination is None:
            self.sync_status.setText("Sync: not configured")
            self.sync_status.setToolTip(
                "Nothing is copied to an archive yet. An admin sets the archive folder on the "
                "Settings screen (Go ▸ Settings)."
            )
            return
        failing = f" ({sync.failing} failing)" if sync.failing else ""
        self.sync_status.setText(
            f"Sync: {sync.pending} pending{failing} · {sync.acknowledged} archived"
        )
        error = sync.last_error
        self.sync_status.setToolTip(
            f"Archive: {sync.destination.get('location')}"
            + (f"\nLast error ({error.get('at')}): {error.get('error')}" if error else "")
        )

    @Slot(object)
    def show_catalog_damage(self, refusal: LabrigError) -> None:
        """Say, above every page, that writing stopped and why: the code and the steps."""
        self.damage_banner.setText(f"Writing stopped. {refusal.code}: {refusal.message}.")
        self.damage_banner.show()

    def _import_video(self) -> None:
        """Show the page that imports videos and open its file dialog."""
        for key in self.page_keys:
            page = self.page(key)
            if isinstance(page, ImportsVideo):
                self.show_page(key)
                page.open_import_dialog()
                return

    def _copy_data_folder(self) -> None:
        QGuiApplication.clipboard().setText(str(self._services.store.root))
        self.last_event.setText(f"Copied: {self._services.store.root}")

    def _show_about(self) -> None:
        box = QMessageBox(
            QMessageBox.Icon.Information,
            "About Labrig",
            f"Labrig {__version__}\nCapture and analysis workstation.\n"
            f"Data folder: {self._services.store.root}",
            QMessageBox.StandardButton.Ok,
            self,
        )
        box.setObjectName("aboutBox")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # window-modal, not a nested event loop: the window keeps running

    @staticmethod
    def _status_label(name: str, text: str) -> QLabel:
        label = QLabel(text)
        label.setObjectName(name)
        return label

    def shut_down(self, timeout_ms: int = PAGE_SHUTDOWN_MS) -> None:
        """Let every page with threads of its own stop them: a recording is stopped and saved,
        previews and probes are joined. Safe to call more than once."""
        self._calls.wait(timeout_ms)
        for page in self.built_pages():
            if isinstance(page, ShutsDown):
                page.shut_down(timeout_ms)
        if self._context.devices_made:
            self._context.devices.shut_down(timeout_ms)

    def recording_in_progress(self) -> str | None:
        """What a page is recording, in a few words, or None."""
        for page in self.built_pages():
            if isinstance(page, Records) and (busy := page.recording_in_progress()):
                return busy
        return None

    def closeEvent(self, event: QCloseEvent) -> None:
        busy = self.recording_in_progress()
        if busy and not self._close_confirmed:
            event.ignore()  # asked first; the answer closes the window or leaves it recording
            self._ask_before_closing(busy)
            return
        window_state.save(self, self._settings)
        self.shut_down()
        super().closeEvent(event)

    def _ask_before_closing(self, busy: str) -> None:
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Close Labrig during a recording?",
            f"{busy}. Stop and save the recording, then close Labrig?",
            QMessageBox.StandardButton.NoButton,
            self,
        )
        box.setObjectName("closeWhileRecordingBox")
        box.setInformativeText(
            "The recording is saved, and its attempt is marked as interrupted. Keep recording to "
            "go on; stop it on the Capture screen."
        )
        close = box.addButton("Stop, save and close", QMessageBox.ButtonRole.AcceptRole)
        close.setObjectName("stopSaveCloseButton")
        keep = box.addButton("Keep recording", QMessageBox.ButtonRole.RejectRole)
        keep.setObjectName("keepRecordingButton")
        box.setDefaultButton(keep)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        close.clicked.connect(self._on_close_confirmed)
        box.open()  # window-modal, not a nested event loop: the recording goes on meanwhile

    @Slot()
    def _on_close_confirmed(self) -> None:
        self._close_confirmed = True
        self.close()

    def show_page(self, key: str) -> None:
        """Switch to the page registered under ``key``."""
        self.navigation.setCurrentRow(self.page_keys.index(key))

    def page(self, key: str) -> QWidget:
        """The page registered under ``key``, built now if it was not yet."""
        if (built := self._built.get(key)) is not None:
            return built
        index = self.page_keys.index(key)
        stand_in, spec = self._stand_ins.pop(key), self._specs[index]
        page = spec.factory(self._context)
        page.setObjectName(f"page_{spec.key}")
        if isinstance(page, Navigates):
            page.navigateRequested.connect(self.show_page)
        if isinstance(page, ChangesStatus):
            page.statusChanged.connect(self.refresh_status)
        current = self.pages.currentIndex()
        self.pages.insertWidget(index, page)
        self.pages.removeWidget(stand_in)
        stand_in.deleteLater()
        self.pages.setCurrentIndex(current)
        window_state.restore_splitters(page, self._settings)
        self._built[key] = page
        return page

    def built_pages(self) -> list[QWidget]:
        """The pages built so far (a page never shown has nothing to stop or save)."""
        return list(self._built.values())

    def showEvent(self, event: QShowEvent) -> None:
        self.page(self.page_keys[max(self.pages.currentIndex(), 0)])
        super().showEvent(event)

    @Slot(int)
    def _on_navigation_current_row_changed(self, row: int) -> None:
        if row >= 0:  # -1 while the list is being cleared
            self.page(self.page_keys[row])
            self.pages.setCurrentIndex(row)

    @Slot(object)
    def _on_bridge_event_recorded(self, event: EventRecord) -> None:
        self.last_event.setText(f"Last event: {event.name}")
        if event.name in RELEASE_EVENTS or event.name == EventName.SYNC_ACKNOWLEDGED:
            self.refresh_status()

    @Slot(str, "qlonglong")
    def _on_bridge_storage_pressure_changed(self, level: str, free_bytes: int) -> None:
        self.storage_status.setText(f"Storage: {level} ({human_bytes(free_bytes)} free)")

    @Slot()
    def _on_monitor_snapshot_changed(self) -> None:
        counts = self._monitor.counts
        self.queue_status.setText(queue_summary(counts))
        self.queue_status.setToolTip(
            "\n".join(f"{state.value}: {n}" for state, n in counts.items() if n)
            or "No job is waiting, running, blocked or failed (the Queue screen lists them all)."
        )
