"""The Settings page: facts about the open store that technicians copy into support requests.

Threading contract: GUI thread only; the facts are read once, when the page is built.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QVBoxLayout, QWidget

from labrig.store import Store


class SettingsPage(QWidget):
    """Facts about the open store, read once when the page is built."""

    def __init__(self, store: Store, parent: QWidget | None = None) -> None:
        super().__init__(parent)
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
