"""A page with a list of rows and the selected row in detail: what the Calibration, Results and
Review screens share.

The list is read off the GUI thread when the page is first shown and again whenever the event bridge
reports an event that may change it (a hidden page only notes that it is stale and reads when next
shown); newer reads overtake older ones (:class:`~labrig.ui.shell.latest.Latest`). A re-read keeps
the selection and reads the detail again only when the selected row changed, so an unrelated event
never disturbs what a user is reading. A page may ask, once, that a key be selected when the list
next shows it (:meth:`ListDetailPage.select_when_listed`: the Calibration screen selects the
calibration it has just made).

Threading contract: GUI thread only. The subclass's ``read_*`` methods run on the page's pool
threads; every ``show_*`` and ``on_*`` hook runs on the GUI thread.
"""

from __future__ import annotations

from typing import ClassVar, Generic, TypeVar

from PySide6.QtCore import QItemSelection, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from labrig.events import EventRecord
from labrig.ui.common.rows_model import RowsTableModel, rows_table, select_key, selected_key
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.bridge import EventBridge
from labrig.ui.shell.latest import Latest

Row = TypeVar("Row")
Detail = TypeVar("Detail")


class ListDetailPage(QWidget, Generic[Row, Detail]):
    """The list, its status line, the reads and the selection; a subclass lays them out and
    shows the detail."""

    #: the words of the placeholder shown in the detail while nothing is selected,
    #: and while the detail is read
    nothing_selected_text: ClassVar[str] = "Select a row to see it in detail."
    reading_text: ClassVar[str] = "Reading…"
    #: shown when a re-read no longer lists the selected row (None: the detail is left as it is)
    unlisted_text: ClassVar[str | None] = None
    #: what a failed read could not read, as in "The {list_noun} could not be read: …"
    list_noun: ClassVar[str] = "rows"
    detail_noun: ClassVar[str] = "row"

    def __init__(
        self,
        bridge: EventBridge,
        model: RowsTableModel[Row],
        table_name: str,
        status_name: str = "listStatus",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._reads = BackgroundCalls(threads=2, parent=self)
        self._list_reads, self._detail_reads = Latest(self._reads), Latest(self._reads)
        self._stale = True  # read the list when next shown
        self._wanted: str | None = None  # a key to select once the list shows it
        self.model = model
        model.setParent(self)
        self.table = rows_table(model, table_name)
        self.list_status = QLabel("")
        self.list_status.setObjectName(status_name)
        self.list_status.setWordWrap(True)
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        bridge.eventRecorded.connect(self._on_bridge_event_recorded)

    # -- what a subclass says ----------------------------------------------------------------------

    def read_list(self) -> list[Row]:
        """The rows, blocking: runs on a pool thread."""
        raise NotImplementedError

    def read_detail(self, key: str) -> Detail:
        """The detail of the row ``key``, blocking: runs on a pool thread."""
        raise NotImplementedError

    def detail_key(self, detail: Detail) -> str | None:
        """The key of the row ``detail`` belongs to (a detail for a row no longer
        selected is dropped)."""
        raise NotImplementedError

    def show_detail(self, detail: Detail) -> None:
        raise NotImplementedError

    def show_placeholder(self, text: str) -> None:
        """Show ``text`` where the detail goes: nothing is selected, it is being read,
        or it cannot be."""
        raise NotImplementedError

    def describe_list(self, rows: list[Row]) -> str:
        """The status line under the list after a read."""
        return f"{len(rows)} listed."

    def refreshes(self, event: EventRecord) -> bool:
        """Whether ``event`` may change the list."""
        return False

    def on_event(self, event: EventRecord) -> None:
        """Every event the bridge reports, before the list is considered for a re-read."""

    def on_selection_changed(self, key: str | None) -> None:
        """The user selected another row (or none), before its detail is read."""

    def on_shown_fresh(self) -> None:
        """The page was shown while its list was current (so no re-read was started)."""

    # -- shared
    # --------------------------------------------------------------------------------------

    def list_column(self, *below: QWidget) -> QWidget:
        """The table above its status line, then ``below`` in order,
        to lay out on the page's left."""
        column = QWidget()
        layout = QVBoxLayout(column)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.list_status)
        for widget in below:
            layout.addWidget(widget)
        return column

    def list_column_under(self, above: QWidget, *below: QWidget) -> QWidget:
        """:meth:`list_column` with ``above`` over the table (a search and page buttons)."""
        column = self.list_column(*below)
        layout = column.layout()
        assert isinstance(layout, QVBoxLayout)
        layout.insertWidget(0, above)
        return column

    @property
    def list_busy(self) -> bool:
        """A read of the list or of the detail is running or queued."""
        return self._list_reads.busy or self._detail_reads.busy

    def refresh(self) -> None:
        """Read the list again (off the GUI thread)."""
        self._stale = False
        self._list_reads.request(self.read_list, self._on_list_read, self._on_list_failed)

    def shut_down(self, timeout_ms: int) -> None:
        """Wait for running reads, so none outlives the store."""
        self._reads.wait(timeout_ms)

    def selected_key(self) -> str | None:
        return selected_key(self.table, self.model)

    def select(self, key: str) -> bool:
        """Select the row of ``key``; False when the list does not show it."""
        return select_key(self.table, self.model, key)

    def select_when_listed(self, key: str) -> None:
        """Select ``key`` (and read its detail) when the next read of the list shows it."""
        self._wanted = key

    def request_detail(self, key: str) -> None:
        self._detail_reads.request(
            lambda: self.read_detail(key), self._on_detail_read, self._on_detail_failed
        )

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()
        else:
            self.on_shown_fresh()

    @Slot(object)
    def _on_bridge_event_recorded(self, event: EventRecord) -> None:
        self.on_event(event)
        if not self.refreshes(event):
            return
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True

    def _on_list_read(self, rows: list[Row]) -> None:
        wanted, self._wanted = self._wanted, None
        selected = wanted or self.selected_key()
        before = self.model.find(selected) if selected else None
        selection = self.table.selectionModel()
        # a re-read is not a new choice: the detail is read again only if it changed
        selection.blockSignals(True)
        try:
            self.model.set_rows(rows)
            listed = selected is not None and self.select(selected)
        finally:
            selection.blockSignals(False)
        self.table.viewport().update()
        self.list_status.setText(self.describe_list(rows))
        if selected is None:
            return
        if not listed:
            if self.unlisted_text is not None:
                self.show_placeholder(self.unlisted_text)
        elif selected == wanted or self.model.find(selected) != before:
            self.request_detail(selected)

    def _on_list_failed(self, error: Exception) -> None:
        self.list_status.setText(f"The {self.list_noun} could not be read: {say_error(error)}")

    @Slot(QItemSelection, QItemSelection)
    def _on_table_selection_changed(
        self, _selected: QItemSelection, _deselected: QItemSelection
    ) -> None:
        key = self.selected_key()
        self.on_selection_changed(key)
        if key is None:
            self.show_placeholder(self.nothing_selected_text)
            return
        self.show_placeholder(self.reading_text)
        self.request_detail(key)

    def _on_detail_read(self, detail: Detail) -> None:
        if self.detail_key(detail) == self.selected_key():  # else the selection moved on meanwhile
            self.show_detail(detail)

    def _on_detail_failed(self, error: Exception) -> None:
        self.show_placeholder(f"The {self.detail_noun} could not be read: {say_error(error)}")


def rows_word(count: int, noun: str) -> str:
    """``1 attempt``, ``3 attempts``."""
    return f"{count} {noun}" + ("" if count == 1 else "s")
