"""The device picker: every discovered device with its verification status and reason, and its mode.

A view over the window's one :class:`~labrig.ui.shell.device_checks.DeviceChecks`:
selecting a device asks for it to be verified first; the mode and Verify again
act on the shared checks, so every page shows the same verdicts.

Threading contract: GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from labrig.capture import DeviceInfo
from labrig.ui.common.widgets import message_label, named_button
from labrig.ui.shell.device_checks import Choice, DeviceChecks

COLUMNS = ("Device", "Kind", "Status", "Details")
NAME_COLUMN, KIND_COLUMN, STATUS_COLUMN, DETAILS_COLUMN = range(len(COLUMNS))


class DevicePicker(QWidget):
    """The devices of ``checks`` in a table, the selected one's mode and reason, Search again
    and Verify again."""

    #: The selected device, its mode or its verdict changed: read :meth:`choice`.
    choiceChanged = Signal()

    def __init__(self, checks: DeviceChecks, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.checks = checks
        self._shown: list[DeviceInfo] = []
        self._build()
        checks.devicesChanged.connect(self._on_checks_devices_changed)
        checks.deviceChecked.connect(self._on_checks_device_checked)
        self._on_checks_devices_changed()

    def _build(self) -> None:
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("deviceTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)  # the full reason is under the table and in the tooltip
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._on_table_item_selection_changed)
        self.mode_combo = QComboBox()
        self.mode_combo.setObjectName("modeCombo")
        self.mode_combo.activated.connect(self._on_mode_combo_activated)
        self.search_button = named_button(
            "searchButton", "Search again", self._on_search_button_clicked
        )
        self.verify_button = named_button(
            "verifyButton", "Verify again", self._on_verify_button_clicked
        )
        self.reason = message_label("deviceReason", selectable=False)
        self.problems = message_label("discoveryProblems", selectable=False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table, 1)
        form = QFormLayout()
        form.addRow("Mode", self.mode_combo)
        layout.addLayout(form)
        layout.addWidget(self.reason)
        buttons = QHBoxLayout()
        buttons.addWidget(self.search_button)
        buttons.addWidget(self.verify_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        layout.addWidget(self.problems)

    # -- what pages and tests read -------------------------------------------------------------

    def choice(self) -> Choice | None:
        device = self._selected_device()
        return self.checks.choice(device.device_id) if device is not None else None

    def row_of(self, device_id: str) -> int | None:
        ids = [d.device_id for d in self._shown]
        return ids.index(device_id) if device_id in ids else None

    def status_of(self, device_id: str) -> str:
        row = self.row_of(device_id)
        item = self.table.item(row, STATUS_COLUMN) if row is not None else None
        return item.text() if item is not None else ""

    def search(self, again: bool = False) -> None:
        """Discover devices unless this window already did, or ``again``."""
        if again or not self.checks.searched:
            self.checks.search()
        self.search_button.setEnabled(not self.checks.searching)
        if self.checks.searching:
            self.problems.setText("Searching for devices…")

    # -- slots ---------------------------------------------------------------------------------

    @Slot()
    def _on_search_button_clicked(self) -> None:
        self.search(again=True)

    @Slot()
    def _on_verify_button_clicked(self) -> None:
        if (device := self._selected_device()) is not None:
            self.checks.reverify(device.device_id)

    def choose_mode(self, label: str) -> bool:
        """Pick the selected device's mode labelled ``label``, as if chosen in the list; False
        when the device does not offer it."""
        index = self.mode_combo.findText(label)
        if index < 0 or self._selected_device() is None:
            return False
        self.mode_combo.setCurrentIndex(index)
        self._on_mode_combo_activated(index)
        return True

    @Slot(int)
    def _on_mode_combo_activated(self, index: int) -> None:
        device = self._selected_device()
        if device is not None and index >= 0:
            self.checks.set_mode(device.device_id, self.mode_combo.itemData(index))

    @Slot()
    def _on_table_item_selection_changed(self) -> None:
        self._show_selected()
        self.choiceChanged.emit()
        if (device := self._selected_device()) is not None:
            self.checks.prefer(device.device_id)

    @Slot()
    def _on_checks_devices_changed(self) -> None:
        keep = self._selected_device()
        self._shown = list(self.checks.devices)
        self.table.blockSignals(True)  # one choiceChanged after the refill, not one per row
        self.table.setRowCount(len(self._shown))
        for row, device in enumerate(self._shown):
            name = QTableWidgetItem(device.name)
            name.setToolTip(device.device_id)
            self.table.setItem(row, NAME_COLUMN, name)
            self.table.setItem(row, KIND_COLUMN, QTableWidgetItem(device.kind.value))
            self.table.setItem(row, STATUS_COLUMN, QTableWidgetItem())
            self.table.setItem(row, DETAILS_COLUMN, QTableWidgetItem())
            self._update_row(row, device.device_id)
        self.table.clearSelection()
        if keep is not None and (kept := self.row_of(keep.device_id)) is not None:
            self.table.selectRow(kept)
        self.table.blockSignals(False)
        self.search_button.setEnabled(not self.checks.searching)
        searching = "Searching for devices…" if self.checks.searching else ""
        self.problems.setText("\n".join(f"• {m}" for m in self.checks.problems) or searching)
        self._show_selected()
        self.choiceChanged.emit()

    @Slot(str)
    def _on_checks_device_checked(self, device_id: str) -> None:
        row = self.row_of(device_id)
        if row is not None:
            self._update_row(row, device_id)
        selected = self._selected_device()
        if selected is not None and selected.device_id == device_id:
            self._show_selected()
            self.choiceChanged.emit()

    # -- drawing -------------------------------------------------------------------------------

    def _selected_device(self) -> DeviceInfo | None:
        rows = self.table.selectionModel().selectedRows()
        row = rows[0].row() if rows else -1
        return self._shown[row] if 0 <= row < len(self._shown) else None

    def _update_row(self, row: int, device_id: str) -> None:
        status, details = self.checks.status(device_id)
        for column, text in ((STATUS_COLUMN, status), (DETAILS_COLUMN, details)):
            item = self.table.item(row, column)
            if item is not None:
                item.setText(text)
                item.setToolTip(details)

    def _show_selected(self) -> None:
        device = self._selected_device()
        self.verify_button.setEnabled(device is not None)
        self.mode_combo.clear()
        if device is None:
            self.mode_combo.setEnabled(False)
            self.reason.setText("Pick a device in the list." if self._shown else "")
            return
        listed = self.checks.listed.get(device.device_id, ())
        for mode in listed:
            self.mode_combo.addItem(mode.label(), mode)
        choice = self.checks.choice(device.device_id)
        if choice is not None and choice.mode in listed:
            self.mode_combo.setCurrentIndex(listed.index(choice.mode))
        self.mode_combo.setEnabled(len(listed) > 1)
        self.reason.setText(self.checks.status(device.device_id)[1])
