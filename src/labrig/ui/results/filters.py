"""Above the Results list, under its search: the attempts' filters (result status, review, device
or rig) in one row of small lists, and under them the session the list is limited to ("Sessions…"
shows every session to choose one); and the order of the list, set by clicking a column's header
(again: reversed), shown by the header's arrow.

What is asked is plain data (:attr:`ResultsFilters.status`, :attr:`ResultsFilters.review`,
:attr:`ResultsFilters.source`, :attr:`ResultsFilters.session`, :attr:`ListOrder.sort`,
:attr:`ListOrder.descending`) that a read on a pool thread may take.
Threading contract: GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from labrig.capture.session_listing import SessionRow
from labrig.results.search import AttemptSort, ReviewFilter, Source, StatusFilter
from labrig.ui.results.sessions import session_words

STATUSES: tuple[tuple[str, StatusFilter | None], ...] = (
    ("Any result", None),
    ("Published", StatusFilter.PUBLISHED),
    ("Degraded", StatusFilter.DEGRADED),
    ("Blocked", StatusFilter.BLOCKED),
    ("Pending", StatusFilter.PENDING),
)
REVIEWS: tuple[tuple[str, ReviewFilter | None], ...] = (
    ("Any review", None),
    ("Revised", ReviewFilter.REVISED),
    ("Not reviewed", ReviewFilter.UNREVISED),
    ("Signed off", ReviewFilter.SIGNED_OFF),
)
ANY_SOURCE = "Any rig or device"
#: the order of each column of the Results list, and its words when the list is in it
COLUMN_SORTS = (
    AttemptSort.SUBJECT,
    AttemptSort.ATTEMPT,
    AttemptSort.STATUS,
    AttemptSort.PROTOCOL,
    AttemptSort.RECORDED,
)
ORDER_WORDS = {
    (AttemptSort.RECORDED, True): "newest first",
    (AttemptSort.RECORDED, False): "oldest first",
    (AttemptSort.SUBJECT, False): "by subject, A to Z",
    (AttemptSort.SUBJECT, True): "by subject, Z to A",
    (AttemptSort.PROTOCOL, False): "by protocol, A to Z",
    (AttemptSort.PROTOCOL, True): "by protocol, Z to A",
    (AttemptSort.ATTEMPT, False): "by attempt number, lowest first",
    (AttemptSort.ATTEMPT, True): "by attempt number, highest first",
    (AttemptSort.STATUS, False): "by result: blocked, degraded, pending, published",
    (AttemptSort.STATUS, True): "by result: published, pending, degraded, blocked",
}


def source_words(source: Source) -> str:
    """``Rig bench``, ``Device uvc:…``: a rig or device as its list offers it."""
    kind, name = _source_parts(source)
    return f"{kind.capitalize()} {name}"


def _source_parts(source: Source) -> tuple[str, str]:
    return ("rig", source.rig) if source.rig is not None else ("device", source.device_id or "")


SOURCE_TIP = "Only the attempts of this rig or device"


class ResultsFilters(QWidget):
    """The status, review and device-or-rig lists, and under them the session the list is limited
    to (chosen in the sessions: :attr:`sessionsRequested`); :attr:`changed` asks for the first page
    of the list to be read again."""

    changed = Signal()
    #: "Sessions…" was clicked: the sessions are to be shown, to choose one
    sessionsRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.status: StatusFilter | None = None
        self.review: ReviewFilter | None = None
        self.source: Source | None = None
        self.session: SessionRow | None = None
        self._sources: list[Source] = []
        self.status_box = self._box("resultsStatusFilter", "Only the attempts with this result")
        self.review_box = self._box(
            "resultsReviewFilter",
            "Only the attempts reviewers revised, or not, or signed off (a sign-off no later "
            "revision cleared)",
        )
        self.source_box = self._box("resultsSourceFilter", SOURCE_TIP)
        for words, _status in STATUSES:
            self.status_box.addItem(words)
        for words, _review in REVIEWS:
            self.review_box.addItem(words)
        self.source_box.addItem(ANY_SOURCE)
        self.status_box.currentIndexChanged.connect(self._on_status_box_changed)
        self.review_box.currentIndexChanged.connect(self._on_review_box_changed)
        self.source_box.currentIndexChanged.connect(self._on_source_box_changed)
        # three lists share the list's width; each gives way (its words elided in the box, whole
        # in its drop-down)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        rows = QVBoxLayout(self)
        rows.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        for box in (self.status_box, self.review_box, self.source_box):
            row.addWidget(box, 1)
        rows.addLayout(row)
        rows.addLayout(self._session_row())

    def _session_row(self) -> QHBoxLayout:
        """ "Sessions…", then the session chosen (its words and a button that lifts it)."""
        self.sessions_button = QPushButton("Sessions…")
        self.sessions_button.setObjectName("resultsSessions")
        self.sessions_button.setToolTip(
            "Every session, a page at a time with its attempts counted: choose one to list only "
            "its attempts"
        )
        self.sessions_button.clicked.connect(self.sessionsRequested)
        self.session_label = QLabel()
        self.session_label.setObjectName("resultsSession")
        self.session_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.all_sessions = QPushButton("Every session")
        self.all_sessions.setObjectName("resultsEverySession")
        self.all_sessions.setToolTip("List the attempts of every session again")
        self.all_sessions.clicked.connect(lambda: self.set_session(None))
        self.session_label.hide()
        self.all_sessions.hide()
        row = QHBoxLayout()
        row.addWidget(self.sessions_button)
        row.addWidget(self.session_label, 1)
        row.addWidget(self.all_sessions)
        row.addStretch(0)
        return row

    def set_session(self, session: SessionRow | None) -> None:
        """List only ``session``'s attempts (None: every session's)."""
        self.session = session
        if session is not None:
            self.session_label.setText(f"Session {session_words(session)}")
            self.session_label.setToolTip(
                f"{session.subject_code}, {session.protocol}, by {session.operator}: "
                f"{session.attempts} attempts"
            )
        self.session_label.setVisible(session is not None)
        self.all_sessions.setVisible(session is not None)
        self.changed.emit()

    @staticmethod
    def _box(name: str, tip: str) -> QComboBox:
        box = QComboBox()
        box.setObjectName(name)
        box.setToolTip(tip)
        box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        box.setMinimumContentsLength(6)
        return box

    @property
    def active(self) -> bool:
        """A filter leaves attempts out."""
        return (self.status, self.review, self.source, self.session) != (None,) * 4

    def set_sources(self, sources: list[Source]) -> None:
        """The rigs and devices offered (the catalog's); the one chosen stays when still offered."""
        if sources == self._sources:
            return
        chosen = self.source
        self._sources = list(sources)
        self.source_box.blockSignals(True)
        self.source_box.clear()
        self.source_box.addItem(ANY_SOURCE)
        for source in self._sources:
            self.source_box.addItem(source_words(source))
        at = self._sources.index(chosen) + 1 if chosen in self._sources else 0
        self.source_box.setCurrentIndex(at)
        self.source_box.blockSignals(False)
        if at == 0 and chosen is not None:
            self._on_source_box_changed(0)

    @Slot(int)
    def _on_status_box_changed(self, index: int) -> None:
        self.status = STATUSES[max(index, 0)][1]
        self.changed.emit()

    @Slot(int)
    def _on_review_box_changed(self, index: int) -> None:
        self.review = REVIEWS[max(index, 0)][1]
        self.changed.emit()

    @Slot(int)
    def _on_source_box_changed(self, index: int) -> None:
        self.source = self._sources[index - 1] if index > 0 else None
        self._name_source()
        self.changed.emit()

    def _name_source(self) -> None:
        """The chosen rig's or device's whole name in the box's tip: a device's id is longer than
        the box shows."""
        if self.source is None:
            self.source_box.setToolTip(SOURCE_TIP)
        else:
            kind, name = _source_parts(self.source)
            self.source_box.setToolTip(f"Only the attempts of the {kind} {name}")


class ListOrder(QObject):
    """A list's order, from clicks on its header: a column first clicked sorts A to Z (dates:
    newest first), clicked again reversed; the header's arrow shows it."""

    changed = Signal()

    def __init__(self, header: QHeaderView, sorts: tuple[AttemptSort, ...]) -> None:
        super().__init__(header)
        self._header, self._sorts = header, sorts
        self.sort, self.descending = AttemptSort.RECORDED, True
        header.setSectionsClickable(True)
        header.setSortIndicatorShown(True)
        header.sectionClicked.connect(self._on_header_section_clicked)
        self._show()

    @property
    def words(self) -> str:
        return ORDER_WORDS[(self.sort, self.descending)]

    @Slot(int)
    def _on_header_section_clicked(self, section: int) -> None:
        sort = self._sorts[section]
        if sort is self.sort:
            self.descending = not self.descending
        else:
            self.sort, self.descending = sort, sort is AttemptSort.RECORDED
        self._show()
        self.changed.emit()

    def _show(self) -> None:
        """The arrow on the sorted column (Qt's own click handling may have moved it)."""
        order = Qt.SortOrder.DescendingOrder if self.descending else Qt.SortOrder.AscendingOrder
        self._header.setSortIndicator(self._sorts.index(self.sort), order)
