"""The Review page: a reviewer picks a published result, sees the automatic and revised values,
and revises one.

Threading contract: GUI thread only. Reads (the list, the shown result, the signed-in user's role)
and saving a revision run on pool threads through
:class:`~labrig.ui.shell.background.BackgroundCalls`; the page never polls. It reads the list when
first shown and whenever the :class:`~labrig.ui.shell.bridge.EventBridge` reports
``result.published`` or ``review.revised`` (a hidden page notes it is stale and reads when next
shown); the shown result is read again when its number of revisions changes. The revision service is
the authority: the page disables the form when the access service says the user may not revise, but
any refusal the service returns on saving is shown in its words.

A revision is made on the state the reviewer was looking at: the base sent with it is the latest
revision shown when they started typing. A colleague's revision arriving meanwhile updates the table
but not that base, so saving is refused (``LABRIG_REVISION_CONFLICT``) instead of silently
overriding it; the next save is made on the new state.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QLabel, QSplitter, QTabWidget, QVBoxLayout, QWidget

from labrig.domain.events import EventName
from labrig.domain.revisions import FieldRef
from labrig.domain.roles import RoleRequiredError
from labrig.events import EventRecord
from labrig.review import (
    ResultMedia,
    ReviewedResult,
    ReviewedResults,
    ReviewerState,
    ReviewListRow,
    RevisionConflictError,
    RevisionView,
    head_of,
    revised_values,
)
from labrig.review.views import REVIEW_PAGE, published_page
from labrig.ui.common.browse_bar import BrowseBar, PageOfRows, period_start
from labrig.ui.common.list_detail import ListDetailPage
from labrig.ui.common.player import PlayerWidget
from labrig.ui.common.result_view import format_value
from labrig.ui.common.roles_policy import RolesPolicyBanner
from labrig.ui.common.widgets import message_label
from labrig.ui.review.actions import (
    DRAG_HINT,
    RIG_HINT,
    CorrectionForm,
    Requested,
    SignOffForm,
    UndoBar,
)
from labrig.ui.review.curves import SpeedCurves
from labrig.ui.review.model import ReviewListModel
from labrig.ui.review.widgets import (
    HistoryTable,
    ResultHeading,
    ReviseForm,
    ValuesTable,
    field_words,
)
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.bridge import EventBridge
from labrig.ui.shell.latest import Latest

Saver = CorrectionForm | SignOffForm | UndoBar  # a form that saves a revision and says the outcome
LIST_WIDTH = 410  # px: subject, attempt, time, revisions and note fit without scrolling
INTRO = (
    "Step through the recording, correct the tracks (drag a marker, hide, fill, swap, trim) or a "
    "value with a reason, and sign the result off. Each is a revision stored beside the automatic "
    "result, which never changes: both stay visible, with who changed what, when and why."
)
REFRESHING = frozenset({EventName.RESULT_PUBLISHED, EventName.REVIEW_REVISED})
CONFLICT = (
    "Not saved ({code}): someone revised this result while you were editing, and your change was "
    "made on what you saw before. The table now shows the newer values; check them, then press "
    "Save revision again if your change still stands."
)
ARRIVED = (
    "Revision {number} by {reviewer} arrived while you were editing: check the table. Saving now "
    "is refused so that you see it first; press Save revision again after that."
)


class ReviewPage(ListDetailPage[ReviewListRow, ReviewedResult]):
    """Published results on the left; the selected one's values, history and edit form
    on the right."""

    nothing_selected_text = "Select a published result to review it."
    reading_text = "Reading the result…"
    unlisted_text = "The selected result is no longer listed."
    list_noun, detail_noun = "results", "result"

    def __init__(
        self, results: ReviewedResults, bridge: EventBridge, parent: QWidget | None = None
    ) -> None:
        super().__init__(bridge, ReviewListModel(), "reviewResults", "reviewListStatus", parent)
        self._results = results
        self._saves = BackgroundCalls(threads=1, parent=self)  # never queued behind a read
        self._user_reads = Latest(self._reads)
        self.shown: ReviewedResult | None = None  # the result on screen
        # what the next revision is made on (see the module docstring)
        self._base: str | None = None
        self.reviewer: ReviewerState | None = None
        self.list_status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.user = message_label("reviewUser", "Reading who is signed in…")
        self.policy = RolesPolicyBanner()
        self.heading = ResultHeading()
        self.values = ValuesTable()
        self.history = HistoryTable()
        self.undo_bar = UndoBar()
        self.history_tab = QWidget()
        self.form = ReviseForm()
        self.correction = CorrectionForm()
        self.signing = SignOffForm()
        self.action_tabs = QTabWidget()
        self.action_tabs.setObjectName("reviewActions")
        self.curves = SpeedCurves()
        self.evidence_tabs = QTabWidget()
        self.evidence_tabs.setObjectName("reviewEvidence")
        self.player = PlayerWidget()
        self._correctable = False  # the shown result's tracks can be corrected
        self.browse = BrowseBar(
            REVIEW_PAGE, "Subject, protocol, operator or id", what="results", narrow=True
        )
        self.browse.changed.connect(self.refresh)
        self._lay_out()
        self.show_placeholder(self.nothing_selected_text)
        self.values.itemSelectionChanged.connect(self._on_values_item_selection_changed)
        self.form.track_box.currentIndexChanged.connect(self._on_form_field_changed)
        self.form.metric_box.currentIndexChanged.connect(self._on_form_field_changed)
        self.form.button.clicked.connect(self._on_form_button_clicked)
        self.correction.requested.connect(self._on_correction_requested)
        self.player.marker_moved.connect(self.correction.ask_move)
        self.player.range_marked.connect(self.correction.mark)
        self.signing.requested.connect(self._on_sign_off_requested)
        self.history.itemSelectionChanged.connect(
            lambda: self.undo_bar.select(self.history.selected_undoable())
        )
        self.undo_bar.requested.connect(self._on_undo_requested)
        self.player.frame_shown.connect(self._on_frame_shown)
        self.curves.time_cursor.clicked.connect(self._on_curve_clicked)

    def _lay_out(self) -> None:
        self.form.setTitle("")
        self.form.setFlat(True)
        self.action_tabs.addTab(self.correction, "Correct the tracks")
        self.action_tabs.addTab(self.form, "Revise a value")
        self.action_tabs.addTab(self.signing, "Sign off")
        self.evidence_tabs.addTab(self.curves, "Speed")
        self.evidence_tabs.addTab(self.values, "Values")
        history = QVBoxLayout(self.history_tab)
        history.setContentsMargins(0, 0, 0, 0)
        history.addWidget(self.history, 1)
        history.addWidget(self.undo_bar)
        self.evidence_tabs.addTab(self.history_tab, "History")
        lower = QSplitter(Qt.Orientation.Horizontal)
        lower.setObjectName("reviewLowerSplitter")  # positions kept between runs by name
        lower.addWidget(self.action_tabs)
        lower.addWidget(self.evidence_tabs)
        lower.setSizes([400, 400])
        split = QSplitter(Qt.Orientation.Vertical)
        split.setObjectName("reviewPlayerSplitter")
        split.addWidget(self.player)
        split.addWidget(lower)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setSizes([330, 290])  # at 1280x800: the video, then the forms whole
        self.detail = QWidget()
        detail = QVBoxLayout(self.detail)
        detail.setContentsMargins(0, 0, 0, 0)
        detail.addWidget(self.heading)
        detail.addWidget(split, 1)
        sides = QSplitter(Qt.Orientation.Horizontal)
        sides.setObjectName("reviewSplitter")
        sides.addWidget(self.list_column_under(self.browse))
        sides.addWidget(self.detail)
        sides.setStretchFactor(1, 3)
        sides.setSizes([LIST_WIDTH, 3 * LIST_WIDTH])
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Review</h2>"))
        layout.addWidget(message_label("reviewIntro", INTRO))
        layout.addWidget(self.user)
        layout.addWidget(self.policy)
        layout.addWidget(sides, 1)

    # -- reading -------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """A read, a save or the player's reading of the recording is running or queued."""
        return self._reads.busy or self._saves.busy or self.player.busy

    def refresh(self) -> None:
        """Read the list of published results and who is signed in again (off the GUI thread)."""
        super().refresh()
        self._read_reviewer()

    def refresh_list(self) -> None:
        """Read the list again, but not who is signed in."""
        super().refresh()

    def shut_down(self, timeout_ms: int) -> None:
        """Wait for a save, for reads and for the player's decoding, so none outlives the
        store."""
        self._saves.wait(timeout_ms)
        self.player.shut_down(timeout_ms)
        super().shut_down(timeout_ms)

    def read_list(self) -> PageOfRows[ReviewListRow]:
        days = self.browse.days  # plain data, as the rest of the query
        query = published_page(self.browse.words, self.browse.offset, period_start(days))
        rows = self._results.published(query)
        return PageOfRows(rows, self._results.count(query), query.offset, query.search, days)

    def read_detail(self, key: str) -> ReviewedResult:
        return self._results.show(key)

    def detail_key(self, detail: ReviewedResult) -> str:
        return detail.result_id

    def describe_list(self, rows: list[ReviewListRow]) -> str:
        assert isinstance(rows, PageOfRows)  # what read_list returns
        return self.browse.status(
            rows,
            "published result",
            "published results",
            "No published results yet: results appear here once analysed.",
        )

    def refreshes(self, event: EventRecord) -> bool:
        return event.name in REFRESHING

    def on_shown_fresh(self) -> None:
        # roles may have changed elsewhere (the CLI) since the page was last shown
        self._read_reviewer()

    def on_selection_changed(self, key: str | None) -> None:
        self.form.clear_draft()  # a draft belongs to the result it was typed for
        for status in (self.form.status, self.correction.status, self.signing.status):
            status.clear()

    def _read_reviewer(self) -> None:
        self._user_reads.request(
            self._results.reviewer,
            self._on_reviewer_read,
            lambda error: self.user.setText(f"Could not read your role: {say_error(error)}"),
        )

    def _on_reviewer_read(self, state: ReviewerState) -> None:
        self.reviewer = state
        self.user.setText(state.describe())
        self.policy.show_policy(state.enforced)
        self.form.set_refusal(state.refusal)
        self._allow()
        if state.refusal:
            for status in (self.correction.status, self.signing.status):
                status.setText(f"You cannot correct or sign off results: {state.refusal}")

    def _allow(self) -> None:
        """Open the correction and sign-off forms (and dragging on the video) to a reviewer who
        may use them on the result shown."""
        allowed = self.reviewer is not None and self.reviewer.refusal is None
        shown = self.shown is not None
        self.correction.set_allowed(allowed and shown and self._correctable)
        # markers are dragged on the picture of a 2-D result only (a rig's are 3-D)
        drawn_2d = self.player.media is not None and bool(self.player.media.overlays)
        self.player.set_editable(allowed and self._correctable and drawn_2d)
        self.signing.set_allowed(allowed and shown)
        self.undo_bar.set_allowed(allowed and shown)

    def show_detail(self, detail: ReviewedResult) -> None:
        same = self.shown is not None and self.shown.result_id == detail.result_id
        if not same or len(detail.revisions) != len(self.shown.revisions if self.shown else []):
            self._read_media(detail.result_id, keep_frame=same)
        head = head_of(detail)
        if not same or self._base is None or not self.form.dirty:
            self._base = head
        elif head != self._base and detail.revisions:
            latest = detail.revisions[-1]
            self.form.status.setText(ARRIVED.format(number=latest.number, reviewer=latest.reviewer))
        self._show_result(detail)

    def _read_media(self, result_id: str, keep_frame: bool) -> None:
        """The recording to play (and the tracks to draw, corrected as the revisions say)."""
        self.player.load(
            partial(self._results.media, result_id),
            keep_frame=keep_frame,
            wanted=lambda media: self.shown is not None and self.shown.result_id == media.result_id,
            then=self._on_media_shown,
        )

    def _on_media_shown(self, media: ResultMedia) -> None:
        self.curves.show_curves(media.curves)
        self._on_frame_shown(self.player.position)
        # a rig's markers are corrected by the reconstruction's instants, which are the first
        # camera's frames: the player's own positions
        tracks = [o.track_id for o in media.overlays] or [
            str(t.track_id) for t in (media.curves.automatic if media.curves else [])
        ]
        self._correctable = bool(tracks)
        self.correction.set_tracks(tracks, media.frame_count - 1)
        self.correction.hint.setText(RIG_HINT if media.rig_overlays else DRAG_HINT)
        if not tracks:
            self.correction.status.setText(
                "This result's tracks cannot be corrected (its tracking output is missing): "
                "revise its values instead."
            )
        self._allow()

    # -- showing -------------------------------------------------------------------------------

    def show_placeholder(self, text: str) -> None:
        self.shown, self._base = None, None
        self.player.set_media(None)
        self.heading.show_text(text)
        self.values.setRowCount(0)
        self.history.setRowCount(0)
        self.evidence_tabs.setTabText(self.evidence_tabs.indexOf(self.history_tab), "History")
        self.curves.show_curves(None)
        self.form.set_choices([], None)
        self.form.show_current(None)
        self._correctable = False
        self.correction.set_tracks([], 0)
        self.signing.show_state(None)
        self._allow()

    def _show_result(self, reviewed: ReviewedResult) -> None:
        self.shown = reviewed
        self.heading.show_result(reviewed, self.model.find(reviewed.result_id))
        revised = revised_values(reviewed.fields, reviewed.revisions)
        self.values.show_values(reviewed.fields, revised, reviewed.units)
        self.history.show_history(reviewed.revisions, reviewed.units)
        history = self.evidence_tabs.indexOf(self.history_tab)
        self.evidence_tabs.setTabText(history, f"History ({len(reviewed.revisions)})")
        tracks = list(dict.fromkeys(FieldRef.parse(f.field).track_id for f in reviewed.fields))
        self.form.set_choices(tracks, reviewed.units)
        self.signing.show_state(reviewed.sign_off)
        self._allow()
        self._on_form_field_changed()

    @Slot()
    def _on_form_field_changed(self) -> None:
        field = self.form.field()
        self.form.show_current(
            next((f for f in self.shown.fields if f.field == field), None) if self.shown else None
        )

    @Slot(int)
    def _on_frame_shown(self, index: int) -> None:
        if self.player.media is not None:
            self.curves.set_time(self.player.media.time_of(index))

    @Slot(float)
    def _on_curve_clicked(self, t: float) -> None:
        if self.player.media is not None:
            self.player.pause()
            self.player.seek(self.player.media.frame_at_time(t))

    @Slot()
    def _on_values_item_selection_changed(self) -> None:
        field = self.values.selected_field()
        if field is not None:
            self.action_tabs.setCurrentWidget(self.form)
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
        # the service refuses it too; saying it here spares a round trip and names the field
        if not reason:
            self._refuse_locally(
                self.form.reason,
                "a revision needs a reason: say why the automatic value is "
                "wrong. It is kept with the revision and in the audit trail.",
            )
            return
        base = self._base or head_of(shown)
        self.form.set_saving(True)
        self.form.status.setText(f"Saving the revision of {field_words(field, shown.units)}…")
        work = partial(self._results.revise, shown.result_id, {field: value}, reason, base)
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
        changed = "; ".join(
            f"{field_words(c.field, units)} {format_value(c.old)} → {format_value(c.new)}"
            for c in revision.changes
        )
        self.form.status.setText(
            f"Revision {revision.number} saved: {changed}. The automatic value is kept."
        )
        self._reread(revision.result_id)

    def _on_revision_refused(self, error: Exception) -> None:
        self._refused(error, self.form)

    def _refused(self, error: Exception, form: ReviseForm | Saver) -> None:
        form.set_saving(False)
        if isinstance(error, RevisionConflictError):
            form.status.setText(CONFLICT.format(code=error.code))
            self._base = None  # the next save is made on the state read now
        else:
            form.status.setText(f"Not saved: {say_error(error)}")
        if isinstance(error, RoleRequiredError):
            self._read_reviewer()
        if self.shown is not None:
            self._reread(self.shown.result_id)

    @Slot(list)
    def _on_correction_requested(self, requested: Requested) -> None:
        shown, form = self.shown, self.correction
        if shown is None or self._saves.busy or form.busy:
            return
        planned = form.plan(requested)  # None: refused in the form's words
        if planned is not None:
            operations, reason = planned
            self._save(form, self._results.correct, operations, reason)

    @Slot(str, str)
    def _on_sign_off_requested(self, meaning: str, note: str) -> None:
        self.signing.status.setText(f"Signing off as {meaning}…")
        self._save(self.signing, self._results.sign_off, meaning, note)

    @Slot(int, str)
    def _on_undo_requested(self, number: int, reason: str) -> None:
        self._save(self.undo_bar, self._results.undo, number, reason)

    def _save(self, form: Saver, call: Callable[..., RevisionView], *args: Any) -> None:
        """``call(result, *args, base)`` off the GUI thread for the result shown, made on the
        state shown; the outcome is said by ``form``, and the result read again."""
        shown = self.shown
        if shown is None or self._saves.busy:
            return
        form.set_saving(True)
        work = partial(call, shown.result_id, *args, head_of(shown))
        self._saves.submit(work, partial(self._saved, form), partial(self._refused, form=form))

    def _saved(self, form: Saver, revision: RevisionView) -> None:
        form.saved(revision)
        self._reread(revision.result_id)

    def _reread(self, result_id: str) -> None:
        """After a save or a refusal: the shown result and the list,
        without waiting for the bridge."""
        if result_id == self.selected_key():
            self.request_detail(result_id)
        self.refresh_list()
