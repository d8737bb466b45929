"""The Settings page: the open store's facts (which technicians copy into support requests) and the
archive sync destination, each with a line saying what it does; an admin sets the destination here.

Threading contract: GUI thread only. The store's facts are read once, when the page is built; the
sync status is read, and the destination saved, on the page's pool thread through
:class:`~labrig.ui.shell.background.BackgroundCalls`. The sync service is the authority on who may
change the destination (admins, or anyone while no admin exists) and on the folder: its refusals
are shown in its own words.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette, QShowEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from labrig.errors import LabrigError
from labrig.store import Store
from labrig.sync import DestinationConfig, SyncService, SyncStatus, sync_status
from labrig.ui.common.widgets import message_label, named_button
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.latest import Latest

# (caption, object name, what the setting does)
STORE_FACTS = (
    (
        "Data folder",
        "dataFolder",
        "Where recordings, calibrations and the catalog are kept; back up this whole folder.",
    ),
    (
        "Database file",
        "databaseFile",
        "The catalog: sessions, attempts, jobs, results, roles and the audit trail.",
    ),
    (
        "Schema revision",
        "schemaRevision",
        "The catalog's layout; a newer Labrig upgrades it when it opens the store.",
    ),
    (
        "Store id",
        "storeId",
        "Names this store in exports and at the archive; quote it in support requests.",
    ),
)
SYNC_DOES = (
    "Where committed media, capture manifests and published results are copied; each copy counts "
    "as archived only when the archive's copy re-hashes to the same SHA-256. The copying itself "
    "runs with 'labrig sync' on this workstation; the status bar shows what is pending."
)
SYNC_WHO = (
    "Changing the destination needs the admin role (anyone may, while no admin is assigned); the "
    "change and its reason are kept in the audit trail."
)


def destination_words(status: SyncStatus) -> str:
    destination = status.destination
    if destination is None:
        return "not configured: nothing is copied to an archive yet"
    return (
        f"'{destination.get('name')}' at {destination.get('location')} (set by "
        f"{destination.get('configured_by')}; {status.acknowledged} archived, "
        f"{status.pending} pending)"
    )


def _fact(value: str, name: str, does: str) -> QWidget:
    """The value (selectable: technicians copy it), with what it does below it."""
    box = QWidget()
    column = QVBoxLayout(box)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(0)
    label = QLabel(value)
    label.setObjectName(name)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    column.addWidget(label)
    column.addWidget(_does(does))
    return box


def _does(text: str) -> QLabel:
    """What a setting does: one quieter line (the palette's placeholder colour) under its value."""
    label = message_label("", text)
    palette = label.palette()
    palette.setColor(
        QPalette.ColorRole.WindowText, palette.color(QPalette.ColorRole.PlaceholderText)
    )
    label.setPalette(palette)
    return label


class SettingsPage(QWidget):
    """The store's facts, then the archive sync destination and the admin's form for it."""

    statusChanged = Signal()  # a setting the status bar shows was changed

    def __init__(self, store: Store, sync: SyncService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._store, self._sync = store, sync
        self._calls = BackgroundCalls(threads=1, parent=self)
        self._status_reads = Latest(self._calls)
        self.status: SyncStatus | None = None
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Settings</h2>"))
        layout.addWidget(self._store_box())
        layout.addWidget(self._sync_box())
        layout.addStretch(1)

    def _store_box(self) -> QGroupBox:
        box = QGroupBox("This store")
        form = QFormLayout(box)
        values = (
            str(self._store.root),
            str(self._store.db_path),
            self._store.revision() or "none (not migrated)",
            self._store.meta("store_id") or "unknown",
        )
        for (caption, name, does), value in zip(STORE_FACTS, values, strict=True):
            form.addRow(caption, _fact(value, name, does))
        return box

    def _sync_box(self) -> QGroupBox:
        box = QGroupBox("Archive sync")
        form = QFormLayout(box)
        self.destination = message_label("syncDestination", "Reading the sync destination…")
        column = QVBoxLayout()
        column.setSpacing(0)
        column.addWidget(self.destination)
        column.addWidget(_does(SYNC_DOES))
        form.addRow("Destination", column)
        self.folder = QLineEdit()
        self.folder.setObjectName("syncFolder")
        self.folder.setPlaceholderText("the archive folder (a mounted network share); must exist")
        self.browse_button = named_button("browseSyncFolder", "Choose…", self._browse)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.folder, 1)
        folder_row.addWidget(self.browse_button)
        form.addRow("New folder", folder_row)
        self.name = QLineEdit()
        self.name.setObjectName("syncName")
        self.name.setPlaceholderText("what the status and events call it (default: the folder's)")
        form.addRow("Name", self.name)
        self.reason = QLineEdit()
        self.reason.setObjectName("syncReason")
        self.reason.setPlaceholderText("why (required; kept in the audit trail)")
        form.addRow("Reason", self.reason)
        self.save_button = named_button("saveSync", "Save destination", self._save)
        buttons = QHBoxLayout()
        buttons.addWidget(self.save_button)
        buttons.addStretch(1)
        form.addRow(buttons)
        form.addRow(_does(SYNC_WHO))
        self.message = message_label("syncMessage")
        form.addRow(self.message)
        return box

    # -- reading -------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._calls.busy

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()

    def refresh(self) -> None:
        self._status_reads.request(
            partial(sync_status, self._store),
            self._on_status_read,
            lambda error: self.destination.setText(
                f"The sync destination could not be read: {say_error(error)}"
            ),
        )

    def _on_status_read(self, status: SyncStatus) -> None:
        self.status = status
        self.destination.setText(destination_words(status))

    def shut_down(self, timeout_ms: int) -> None:
        self._calls.wait(timeout_ms)

    # -- saving --------------------------------------------------------------------------------

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "The archive folder", self.folder.text())
        if folder:
            self.folder.setText(folder)

    def _save(self) -> None:
        folder, reason = self.folder.text().strip(), self.reason.text().strip()
        if not folder:
            self.message.setText("Not saved: choose the archive folder first.")
            return
        if not reason:  # the service refuses it too; said here with the field's name
            self.message.setText("Not saved: type why the destination changes (the Reason box).")
            return
        self.save_button.setEnabled(False)
        self.message.setText(f"Checking {folder} and saving it as the destination…")
        work = partial(self._sync.configure, folder, reason, self.name.text().strip() or None)
        self._calls.submit(work, self._on_saved, self._on_refused)

    def _on_saved(self, config: DestinationConfig) -> None:
        self.save_button.setEnabled(True)
        self.reason.clear()
        self.message.setText(
            f"Saved: sync copies to '{config.name}' at {config.location} (archive id "
            f"{config.destination_id[:8]}…)."
        )
        self.refresh()
        self.statusChanged.emit()  # the status bar's sync line reads it again

    def _on_refused(self, error: Exception) -> None:
        self.save_button.setEnabled(True)
        code = f" ({error.code})" if isinstance(error, LabrigError) else ""
        self.message.setText(f"Not saved{code}: {say_error(error)}")
