"""The parts of the Review page: the values table, the revision history and the edit form.

They only show what they are given and collect what the reviewer types; the page reads and saves off
the GUI thread. Threading contract: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from labrig.domain.revisions import REVISABLE, FieldRef
from labrig.review import (
    FieldValue,
    ReviewedResult,
    ReviewListRow,
    RevisedValue,
    RevisionView,
    local_time,
)
from labrig.ui.common.result_view import METRIC_COLUMNS, format_value
from labrig.ui.common.widgets import message_label
from labrig.ui.review.model import REVISED

VALUE_COLUMNS = ("Track", "Metric", "Automatic", "In force", "Last change")
AUTOMATIC_COLUMN, EFFECTIVE_COLUMN, CHANGE_COLUMN = 2, 3, 4
HISTORY_COLUMNS = ("#", "Reviewer", "When", "Changed", "Reason")
CAPTIONS = {key: (caption, kind) for key, caption, kind in METRIC_COLUMNS}
FIELD_ROLE = Qt.ItemDataRole.UserRole


def metric_caption(metric: str, units: Mapping[str, str] | None) -> str:
    """ "Peak speed (px/frame)": the Results page's caption with the result's unit."""
    caption, kind = CAPTIONS.get(metric, (metric, None))
    if not units or kind is None:
        return caption
    length, time = units.get("length", ""), units.get("time", "")
    unit = {
        "length": length,
        "time": time,
        "speed": f"{length}/{'frame' if time == 'frames' else time}",
    }[kind]
    return f"{caption} ({unit})"


def field_words(field: str, units: Mapping[str, str] | None = None) -> str:
    """ "Peak speed (px/frame) of track 0" for ``track:0.peak_speed``."""
    ref = FieldRef.parse(field)
    return f"{metric_caption(ref.metric, units)} of track {ref.track_id}"


def _configure(table: QTableWidget, columns: Sequence[str], name: str) -> None:
    """Read-only, one row selected at a time, columns fitted to their contents."""
    table.setObjectName(name)
    table.setColumnCount(len(columns))
    table.setHorizontalHeaderLabels(list(columns))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.verticalHeader().hide()
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)


def _item(text: str, *, number: bool = False, tip: str = "") -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setToolTip(tip or text)
    if number:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def _mark_revised(item: QTableWidgetItem) -> None:
    item.setBackground(QBrush(REVISED))
    item.setForeground(QBrush(QColor("black")))
    font = QFont(item.font())
    font.setBold(True)
    item.setFont(font)


class ResultHeading(QWidget):
    """Which result is shown (subject, attempt, id, units, revisions), and warnings about it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = message_label("reviewTitle")
        self.notes = message_label("reviewNotes")
        self.notes.setStyleSheet("#reviewNotes { color: #a02020; }")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.notes)

    def show_text(self, text: str) -> None:
        """No result shown: ``text`` says why."""
        self.title.setText(text)
        self.notes.hide()

    def show_result(self, reviewed: ReviewedResult, row: ReviewListRow | None) -> None:
        who = (
            f"{row.subject_code} · {row.protocol} · attempt {row.attempt_number}"
            if row and row.subject_code
            else f"attempt {reviewed.attempt_id[:8]}"
        )
        units = reviewed.units or {}
        unit = f" · values in {units.get('length')} and {units.get('time')}" if units else ""
        count = len(reviewed.revisions)
        self.title.setText(
            f"<h3>{who}</h3>result {reviewed.result_id[:12]}… · {reviewed.status}"
            f"{' (degraded)' if reviewed.degraded else ''}{unit} · "
            f"{count} revision{'s' if count != 1 else ''}"
        )
        notes = []
        if not reviewed.automatic_intact:
            notes.append(
                "The stored automatic result no longer matches its SHA-256: the database was "
                "altered. Keep it as evidence and restore from a backup."
            )
        if reviewed.superseded_by:
            notes.append(
                f"A reprocess published a newer result ({reviewed.superseded_by[:12]}…) for this "
                "attempt; revisions stay with the result they were made on."
            )
        self.notes.setText("\n".join(notes))
        self.notes.setVisible(bool(notes))


class ValuesTable(QTableWidget):
    """One row per track and metric: the automatic value, the value in force,
    and its last change."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        _configure(self, VALUE_COLUMNS, "valuesTable")

    def show_values(
        self,
        fields: Sequence[FieldValue],
        revised: Mapping[str, RevisedValue],
        units: Mapping[str, str] | None,
    ) -> None:
        self.setRowCount(len(fields))
        for row, value in enumerate(fields):
            ref = FieldRef.parse(value.field)
            change = revised.get(value.field)
            cells = (
                _item(ref.track_id),
                _item(metric_caption(ref.metric, units)),
                _item(
                    format_value(value.automatic), number=True, tip=f"automatic: {value.automatic}"
                ),
                _item(
                    format_value(value.effective), number=True, tip=f"in force: {value.effective}"
                ),
                _item(change.describe() if change else "— (automatic)"),
            )
            for column, item in enumerate(cells):
                item.setData(FIELD_ROLE, value.field)
                if change is not None and column in (EFFECTIVE_COLUMN, CHANGE_COLUMN):
                    _mark_revised(item)
                self.setItem(row, column, item)

    def row_of(self, field: str) -> int | None:
        return next((r for r in range(self.rowCount()) if self._field(r) == field), None)

    def selected_field(self) -> str | None:
        rows = self.selectionModel().selectedRows()
        return self._field(rows[0].row()) if rows else None

    def _field(self, row: int) -> str | None:
        """The field shown on ``row``; every row's cells are set by :meth:`show_values`."""
        item = self.item(row, 0)
        return None if item is None else str(item.data(FIELD_ROLE))


class HistoryTable(QTableWidget):
    """Every revision of the shown result, oldest first: who, when, what changed (old
    → new), and why."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        _configure(self, HISTORY_COLUMNS, "historyTable")
        self.undoable: set[int] = set()
        self.setWordWrap(True)
        # what changed and why share the width and wrap, so neither runs off the table
        header = self.horizontalHeader()
        for column in (HISTORY_COLUMNS.index("Changed"), HISTORY_COLUMNS.index("Reason")):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)

    def show_history(
        self, history: Sequence[RevisionView], units: Mapping[str, str] | None
    ) -> None:
        undone_by = {r.undoes: r.number for r in history if r.undoes is not None}
        #: the revisions an undo may name: a correction or a value, not undone yet
        self.undoable = {
            r.number for r in history if (r.changes or r.operations) and r.number not in undone_by
        }
        self.setRowCount(len(history))
        for row, revision in enumerate(history):
            changed = "\n".join(
                [o.describe() for o in revision.operations]
                + [
                    f"{field_words(c.field, units)}: {format_value(c.old)} → {format_value(c.new)}"
                    for c in revision.changes
                ]
                + (
                    [f"signed off as {revision.sign_off.meaning}"]
                    if revision.sign_off is not None
                    else []
                )
                + ([f"undoes revision {revision.undoes}"] if revision.undoes is not None else [])
                + (
                    [f"(undone by revision {undone_by[revision.number]})"]
                    if revision.number in undone_by
                    else []
                )
            )
            cells = (
                _item(str(revision.number), number=True),
                _item(revision.reviewer),
                _item(local_time(revision.created_at), tip=revision.created_at),
                _item(changed),
                _item(revision.reason),
            )
            for column, item in enumerate(cells):
                item.setData(FIELD_ROLE, revision.number)
                self.setItem(row, column, item)
        self.resizeRowsToContents()

    def selected_undoable(self) -> int | None:
        """The number of the revision selected, when an undo may name it."""
        rows = self.selectionModel().selectedRows()
        item = self.item(rows[0].row(), 0) if rows else None
        number = None if item is None else int(item.data(FIELD_ROLE))
        return number if number in self.undoable else None


class ReviseForm(QGroupBox):
    """Track, metric, new value and the mandatory reason; "Save revision" is handled by the page."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Revise a value", parent)
        self.permission = QLabel("")
        self.permission.setObjectName("revisePermission")
        self.permission.setWordWrap(True)
        self.track_box = QComboBox()
        self.track_box.setObjectName("reviseTrack")
        self.metric_box = QComboBox()
        self.metric_box.setObjectName("reviseMetric")
        self.current = QLabel("")
        self.current.setObjectName("reviseCurrent")
        self.value = QLineEdit()
        self.value.setObjectName("reviseValue")
        self.value.setPlaceholderText("in the result's units, e.g. 812.5")
        self.reason = QLineEdit()
        self.reason.setObjectName("reviseReason")
        self.reason.setPlaceholderText("required: why the value is wrong")
        self.reason.setToolTip("Kept with the revision and in the audit trail")
        self.button = QPushButton("Save revision")
        self.button.setObjectName("saveRevision")
        self.status = QLabel("")
        self.status.setObjectName("reviseStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form = QFormLayout(self)
        form.addRow(self.permission)
        form.addRow("Track", self.track_box)
        form.addRow("Metric", self.metric_box)
        form.addRow("Now", self.current)
        form.addRow("New value", self.value)
        form.addRow("Reason", self.reason)
        form.addRow(self.button)
        form.addRow(self.status)
        self._refusal: str | None = None
        self._saving = self._shown = False
        self._update()

    @property
    def dirty(self) -> bool:
        """The reviewer has typed a value or a reason that is not saved yet."""
        return bool(self.value.text().strip() or self.reason.text().strip())

    def field(self) -> str | None:
        track, metric = self.track_box.currentData(), self.metric_box.currentData()
        return None if track is None or metric is None else f"track:{track}.{metric}"

    def set_choices(self, tracks: Sequence[str], units: Mapping[str, str] | None) -> None:
        """Offer the shown result's tracks and the revisable metrics, keeping the current
        choice when offered."""
        keep = self.field()
        for combo, items in (
            (self.track_box, [(t, f"track {t}") for t in tracks]),
            (self.metric_box, [(m, metric_caption(m, units)) for m in REVISABLE]),
        ):
            combo.blockSignals(True)
            combo.clear()
            for data, text in items:
                combo.addItem(text, data)
            combo.blockSignals(False)
        if keep is not None:
            self.choose(keep)
        self._shown = bool(tracks)
        self._update()

    def choose(self, field: str) -> None:
        ref = FieldRef.parse(field)
        for combo, data in ((self.track_box, ref.track_id), (self.metric_box, ref.metric)):
            index = combo.findData(data)
            if index >= 0:
                combo.setCurrentIndex(index)

    def show_current(self, value: FieldValue | None) -> None:
        """The chosen field's automatic value and the value in force, beside the box
        for the new one."""
        if value is None:
            self.current.clear()
            return
        source = f"revision {value.revision}" if value.revision is not None else "automatic"
        self.current.setText(
            f"automatic {format_value(value.automatic)} · in force "
            f"{format_value(value.effective)} ({source})"
        )

    def clear_draft(self) -> None:
        self.value.clear()
        self.reason.clear()

    def set_refusal(self, refusal: str | None) -> None:
        """None: the user may revise. Else the access service's words on why not, and the
        form is disabled."""
        self._refusal = refusal
        self.permission.setText(f"You cannot revise results: {refusal}" if refusal else "")
        self.permission.setVisible(bool(refusal))
        self._update()

    def set_saving(self, saving: bool) -> None:
        self._saving = saving
        self._update()

    def _update(self) -> None:
        open_ = self._shown and self._refusal is None
        for widget in (self.track_box, self.metric_box, self.value, self.reason):
            widget.setEnabled(open_ and not self._saving)
        self.button.setEnabled(open_ and not self._saving)
        self.button.setText("Saving…" if self._saving else "Save revision")
