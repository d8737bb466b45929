"""The Review page: a reviewer picks a published result, sees the automatic and revised values, and revises one.

Threading contract: GUI thread only. Reads (the list, the shown result, the signed-in user's role) and saving a
revision run on pool threads through :class:`~labrig.ui.background.BackgroundCalls`; the page never polls. It reads
the list when first shown and whenever the :class:`~labrig.ui.bridge.EventBridge` reports ``result.published`` or
``review.revised`` (a hidden page notes it is stale and reads when next shown); the shown result is read again when
its number of revisions changes. The revision service is the authority: the page disables the form when the access
service says the user may not revise, but any refusal the service returns on saving is shown in its words.

A revision is made on the state the reviewer was looking at: the base sent with it is the latest revision shown
when they started typing. A colleague's revision arriving meanwhile updates the table but not that base, so saving
is refused (``LABRIG_REVISION_CONFLICT``) instead of silently overriding it; the next save is made on the new state.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QItemSelection, Qt, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from labrig.bootstrap import Governance
from labrig.domain.events import EventName
from labrig.domain.revisions import FieldRef
from labrig.domain.roles import RoleRequiredError
from labrig.events import EventRecord
from labrig.review import (
    ReviewedResult,
    ReviewerState,
    ReviewListRow,
    RevisionConflictError,
    RevisionView,
    head_of,
    read_review_list,
    read_reviewer,
    revised_values,
)
from labrig.store import Store
from labrig.ui.background import BackgroundCalls, say_error
from labrig.ui.bridge import EventBridge
from labrig.ui.latest import Latest
from labrig.ui.result_view import format_value
from labrig.ui.review_model import ReviewListModel
from labrig.ui.review_widgets import HistoryTable, ResultHeading, ReviseForm, ValuesTable, field_words
from labrig.ui.rows_model import rows_table, select_key, selected_key

LIST_WIDTH = 380  # px: subject, attempt, time, revisions fit without scrolling
INTRO = ("A revision corrects a published result's value with a reason. It is stored beside the automatic result, "
         "which never changes: both stay visible here and on the Results page, with who changed what, when and why.")
REFRESHING = frozenset({EventName.RESULT_PUBLISHED, EventName.REVIEW_REVISED})
CONFLICT = ("Not saved ({code}): someone revised this result while you were editing, and your change was made on "
            "what you saw before. The table now shows the newer values; check them, then press Save revision "
            "again if your change still stands.")
ARRIVED = ("Revision {number} by {reviewer} arrived while you were editing: check the table. Saving now is refused "
           "so that you see it first; press Save revision again after that.")


def _label(name: str, text: str = "") -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class ReviewPage(QWidget):
    """Published results on the left; the selected one's values, history and edit form on the right."""

    def __init__(self, governance: Governance, store: Store, bridge: EventBridge,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._access, self._revisions, self._store = governance.access, governance.revisions, store
        self._reads = BackgroundCalls(threads=2, parent=self)
        self._saves = BackgroundCalls(threads=1, parent=self)  # never queued behind a read
        self._list_reads, self._detail_reads, self._user_reads = (Latest(self._reads) for _ in range(3))
        self._stale = True
        self.shown: ReviewedResult | None = None  # the result on screen
        self._base: str | None = None  # what the next revision is made on (see the module docstring)
        self.reviewer: ReviewerState | None = None
        self.model = ReviewListModel(self)
        self.table = rows_table(self.model, "reviewResults")
        self.list_status = _label("reviewListStatus")
        self.user = _label("reviewUser", "Reading who is signed in…")
        self.heading = ResultHeading()
        self.values = ValuesTable()
        self.history = HistoryTable()
        self.form = ReviseForm()
        self._lay_out()
        self._show_nothing("Select a published result to review it.")
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        self.values.itemSelectionChanged.connect(self._on_values_item_selection_changed)
        self.form.track_box.currentIndexChanged.connect(self._on_form_field_changed)
        self.form.metric_box.currentIndexChanged.connect(self._on_form_field_changed)
        self.form.button.clicked.connect(self._on_form_button_clicked)
        bridge.eventRecorded.connect(self._on_bridge_event_recorded)

    def _lay_out(self) -> None:
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.table, 1)
        column.addWidget(self.list_status)
        lower = QWidget()
        row = QHBoxLayout(lower)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.form, 2)
        history = QVBoxLayout()
        history.addWidget(QLabel("<b>History of revisions</b>"))
        history.addWidget(self.history, 1)
        row.addLayout(history, 3)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.values)
        split.addWidget(lower)
        split.setStretchFactor(0, 3)  # the values get the room; the form and history need less
        split.setStretchFactor(1, 2)
        self.detail = QWidget()
        detail = QVBoxLayout(self.detail)
        detail.setContentsMargins(0, 0, 0, 0)
        detail.addWidget(self.heading)
        detail.addWidget(split, 1)
        sides = QSplitter(Qt.Orientation.Horizontal)
        sides.addWidget(left)
        sides.addWidget(self.detail)
        sides.setStretchFactor(1, 3)
        sides.setSizes([LIST_WIDTH, 3 * LIST_WIDTH])
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Review</h2>"))
        layout.addWidget(_label("reviewIntro", INTRO))
        layout.addWidget(self.user)
        layout.addWidget(sides, 1)

    # -- reading -------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """A read or a save is running or queued."""
        return self._reads.busy or self._saves.busy

    def refresh(self) -> None:
        """Read the list of published results and who is signed in again (off the GUI thread)."""
        self._stale = False
        self._read_list()
        self._read_reviewer()

    def shut_down(self, timeout_ms: int) -> None:
        """Wait for a save and for reads, so none outlives the store."""
        self._saves.wait(timeout_ms)
        self._reads.wait(timeout_ms)

    def selected_result_id(self) -> str | None:
        return selected_key(self.table, self.model)

    def select_result(self, result_id: str) -> bool:
        return select_key(self.table, self.model, result_id)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()
        else:
            self._read_reviewer()  # roles may have changed elsewhere (the CLI) since the page was last shown

    @Slot(object)
    def _on_bridge_event_recorded(self, event: EventRecord) -> None:
        if event.name not in REFRESHING:
            return
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True

    def _read_list(self) -> None:
        self._list_reads.request(partial(read_review_list, self._revisions, self._store), self._on_list_read,
                                 self._on_list_failed)

    def _on_list_read(self, rows: list[ReviewListRow]) -> None:
        selected = self.selected_result_id()
        before = self.model.find(selected) if selected else None
        selection = self.table.selectionModel()
        selection.blockSignals(True)  # a re-read is not a new choice: the result is read again only if it changed
        try:
            self.model.set_rows(rows)
            listed = selected is not None and self.select_result(selected)
        finally:
            selection.blockSignals(False)
        self.table.viewport().update()
        self.list_status.setText(f"{len(rows)} published result" + ("s" if len(rows) != 1 else "") + ", newest first."
                                 if rows else "No published results yet: results appear here once analysed.")
        if selected is not None and not listed:
            self._show_nothing("The selected result is no longer listed.")
        elif selected is not None and self.model.find(selected) != before:
            self._read_detail(selected)

    def _on_list_failed(self, error: Exception) -> None:
        self.list_status.setText(f"The results could not be read: {say_error(error)}")

    def _read_reviewer(self) -> None:
        self._user_reads.request(partial(read_reviewer, self._access), self._on_reviewer_read,
                                 lambda error: self.user.setText(f"Could not read your role: {say_error(error)}"))

    def _on_reviewer_read(self, state: ReviewerState) -> None:
        self.reviewer = state
        self.user.setText(state.describe())
        self.form.set_refusal(state.refusal)

    @Slot(QItemSelection, QItemSelection)
    def _on_table_selection_changed(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        result_id = self.selected_result_id()
        self.form.clear_draft()  # a draft belongs to the result it was typed for
        self.form.status.clear()
        if result_id is None:
            self._show_nothing("Select a published result to review it.")
            return
        self._show_nothing("Reading the result…")
        self._read_detail(result_id)

    def _read_detail(self, result_id: str) -> None:
        self._detail_reads.request(partial(self._revisions.show, result_id), self._on_detail_read,
                                   self._on_detail_failed)

    def _on_detail_read(self, reviewed: ReviewedResult) -> None:
        if reviewed.result_id != self.selected_result_id():
            return  # the selection moved on meanwhile
        same = self.shown is not None and self.shown.result_id == reviewed.result_id
        head = head_of(reviewed)
        if not same or self._base is None or not self.form.dirty:
            self._base = head
        elif head != self._base and reviewed.revisions:
            latest = reviewed.revisions[-1]
            self.form.status.setText(ARRIVED.format(number=latest.number, reviewer=latest.reviewer))
        self._show_result(reviewed)

    def _on_detail_failed(self, error: Exception) -> None:
        self._show_nothing(f"The result could not be read: {say_error(error)}")

    # -- showing -------------------------------------------------------------------------------

    def _show_nothing(self, text: str) -> None:
        self.shown, self._base = None, None
        self.heading.show_text(text)
        self.values.setRowCount(0)
        self.history.setRowCount(0)
        self.form.set_choices([], None)
        self.form.show_current(None)

    def _show_result(self, reviewed: ReviewedResult) -> None:
        self.shown = reviewed
        self.heading.show_result(reviewed, self.model.find(reviewed.result_id))
        revised = revised_values(reviewed.fields, reviewed.revisions)
        self.values.show_values(reviewed.fields, revised, reviewed.units)
        self.history.show_history(reviewed.revisions, reviewed.units)
        tracks = list(dict.fromkeys(FieldRef.parse(f.field).track_id for f in reviewed.fields))
        self.form.set_choices(tracks, reviewed.units)
        self._on_form_field_changed()

    @Slot()
    def _on_form_field_changed(self) -> None:
        field = self.form.field()
        self.form.show_current(next((f for f in self.shown.fields if f.field == field), None) if self.shown
                               else None)

    @Slot()
    def _on_values_item_selection_changed(self) -> None:
        field = self.values.selected_field()
        if field is not None:
            self.form.choose(field)

    # -- saving --------------------------------------------------------------------------------

    @Slot()
    def _on_form_button_clicked(self) -> None:
        field, shown = self.form.field(), self.shown
        if field is None or shown is None or self._saves.busy:
            return
        value, reason = self.form.value.text().strip(), self.form.reason.text().strip()
        if not value:
            self._refuse_locally(self.form.value, "type the new value, in the result's units.")
            return
        if not reason:  # the service refuses it too; saying it here spares a round trip and names the field
            self._refuse_locally(self.form.reason, "a revision needs a reason: say why the automatic value is "
                                                   "wrong. It is kept with the revision and in the audit trail.")
            return
        base = self._base or head_of(shown)
        self.form.set_saving(True)
        self.form.status.setText(f"Saving the revision of {field_words(field, shown.units)}…")
        work = partial(self._revisions.revise, shown.result_id, {field: value}, reason, base_id=base)
        self._saves.submit(work, self._on_revision_saved, self._on_revision_refused)

    def _refuse_locally(self, where: QWidget, why: str) -> None:
        self.form.status.setText(f"Not saved: {why}")
        where.setFocus()

    def _on_revision_saved(self, revision: RevisionView) -> None:
        self.form.set_saving(False)
        self.form.clear_draft()
        same = self.shown is not None and self.shown.result_id == revision.result_id
        if same:  # else the reviewer moved on to another result while this one was saved
            self._base = revision.id
        units = self.shown.units if self.shown is not None and same else None
        changed = "; ".join(f"{field_words(c.field, units)} {format_value(c.old)} → {format_value(c.new)}"
                            for c in revision.changes)
        self.form.status.setText(f"Revision {revision.number} saved: {changed}. The automatic value is kept.")
        self._reread(revision.result_id)

    def _on_revision_refused(self, error: Exception) -> None:
        self.form.set_saving(False)
        if isinstance(error, RevisionConflictError):
            self.form.status.setText(CONFLICT.format(code=error.code))
            self._base = None  # the next save is made on the state read now
        else:
            self.form.status.setText(f"Not saved: {say_error(error)}")
        if isinstance(error, RoleRequiredError):
            self._read_reviewer()
        if self.shown is not None:
            self._reread(self.shown.result_id)

    def _reread(self, result_id: str) -> None:
        """After a save or a refusal: the shown result and the list, without waiting for the bridge."""
        if result_id == self.selected_result_id():
            self._read_detail(result_id)
        self._read_list()
