"""The Review page's forms for correcting the tracks and signing a result off.

They collect what the reviewer chooses and types, as the command line's words (``labrig review
correct --occlude 0@10-17`` is ``("occlude", "0@10-17")`` here); the page parses, saves off the GUI
thread and shows the outcome in their status lines. Threading contract: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from labrig.domain.corrections import MAX_GAP, MIN_VALID, Operation, parse_operation
from labrig.domain.revisions import SIGN_OFF_MEANINGS
from labrig.errors import LabrigError
from labrig.review import RevisionView, SignOffState

Requested = list[tuple[str, str]]  # (kind, text) in the command line's syntax
DRAG_HINT = (
    "Drag a marker on the video to move it at the frame shown. For a range, set From and To "
    "(I / O on the video), choose the track, then an action."
)

RIG_HINT = (
    "A rig's 3-D markers: set From and To (I / O on the video; the reconstruction's instants are "
    "the first camera's frames), choose the marker, then an action. A move takes X,Y,Z in mm on "
    "the command line ('labrig review correct')."
)


def _status() -> QLabel:
    label = QLabel("")
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class _SavingForm(QWidget):
    """A form that saves a revision: open only to a reviewer who may (:meth:`set_allowed`), and
    closed while its save runs (:meth:`set_saving`); :meth:`_update` enables its widgets."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._allowed = self._saving = False

    @property
    def busy(self) -> bool:
        return self._saving

    @property
    def open(self) -> bool:
        return self._allowed and not self._saving

    def set_allowed(self, allowed: bool) -> None:
        self._allowed = allowed
        self._update()

    def set_saving(self, saving: bool) -> None:
        self._saving = saving
        self._update()

    def _update(self) -> None:
        raise NotImplementedError


class CorrectionForm(_SavingForm):
    """Track, range and the corrections of the tracked data; each action emits
    :attr:`requested`, and the reason typed once serves every correction until changed."""

    requested = Signal(list)  # Requested

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("correctionForm")
        self.hint = QLabel(DRAG_HINT)
        self.hint.setWordWrap(True)
        self.track_box = QComboBox()
        self.track_box.setObjectName("correctTrack")
        self.other_box = QComboBox()
        self.other_box.setObjectName("correctOther")
        self.other_box.setToolTip("The track to swap identities with")
        self.from_box, self.to_box = QSpinBox(), QSpinBox()
        self.from_box.setObjectName("correctFrom")
        self.to_box.setObjectName("correctTo")
        for box, key in ((self.from_box, "I"), (self.to_box, "O")):
            box.setToolTip(f"A stored frame index; {key} on the video sets it to the frame shown")
        self.method_box = QComboBox()
        self.method_box.setObjectName("correctMethod")
        self.method_box.addItem("spline", "spline")
        self.method_box.addItem("linear", "linear")
        self.method_box.setToolTip(
            "How a gap is filled: a cubic spline through the valid frames around it, or a line"
        )
        self.max_gap_box, self.min_valid_box = QSpinBox(), QSpinBox()
        self.max_gap_box.setObjectName("correctMaxGap")
        self.max_gap_box.setRange(1, 100_000)
        self.max_gap_box.setValue(MAX_GAP)
        self.max_gap_box.setSuffix(" frames")
        self.max_gap_box.setToolTip("The longest gap a fill bridges")
        self.min_valid_box.setObjectName("correctMinValid")
        self.min_valid_box.setRange(1, 1000)
        self.min_valid_box.setValue(MIN_VALID)
        self.min_valid_box.setToolTip("The valid frames a fill needs on each side of a gap")
        self.hide_button = QPushButton("Hide")
        self.hide_button.setToolTip("The marker was hidden from From to To: no position there")
        self.fill_button = QPushButton("Fill gap")
        self.fill_button.setToolTip("Interpolate the track's missing frames from From to To")
        self.swap_button = QPushButton("Swap from From")
        self.swap_button.setToolTip("The two tracks exchange identities from frame From on")
        self.trim_button = QPushButton("Keep From–To")
        self.trim_button.setToolTip("Analyse frames From to To only, in every track")
        self.reason = QLineEdit()
        self.reason.setObjectName("correctReason")
        self.reason.setPlaceholderText("required: why, kept with each correction")
        self.status = _status()
        self.status.setObjectName("correctStatus")
        grid = QGridLayout()
        grid.addWidget(QLabel("Track"), 0, 0)
        grid.addWidget(self.track_box, 0, 1)
        grid.addWidget(QLabel("From"), 0, 2)
        grid.addWidget(self.from_box, 0, 3)
        grid.addWidget(QLabel("To"), 0, 4)
        grid.addWidget(self.to_box, 0, 5)
        grid.addWidget(self.hide_button, 1, 0, 1, 2)
        grid.addWidget(self.fill_button, 1, 2, 1, 2)
        grid.addWidget(self.method_box, 1, 4, 1, 2)
        grid.addWidget(self.swap_button, 2, 0, 1, 2)
        grid.addWidget(self.other_box, 2, 2, 1, 2)
        grid.addWidget(self.trim_button, 2, 4, 1, 2)
        grid.addWidget(QLabel("Fill at most"), 3, 0, 1, 2)
        grid.addWidget(self.max_gap_box, 3, 2, 1, 2)
        grid.addWidget(QLabel("with valid each side"), 3, 4)
        grid.addWidget(self.min_valid_box, 3, 5)
        grid.addWidget(QLabel("Why"), 4, 0)
        grid.addWidget(self.reason, 4, 1, 1, 5)
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addLayout(grid)
        layout.addWidget(self.status, 1)
        self.hide_button.clicked.connect(lambda: self._ask("occlude", f"{self._range()}"))
        self.fill_button.clicked.connect(
            lambda: self._ask("fill", f"{self._range()}:{self.method_box.currentData()}")
        )
        self.swap_button.clicked.connect(
            lambda: self._ask(
                "swap",
                f"{self.track_box.currentData()},{self.other_box.currentData()}"
                f"@{self.from_box.value()}",
            )
        )
        self.trim_button.clicked.connect(
            lambda: self._ask("trim", f"{self.from_box.value()}-{self.to_box.value()}")
        )
        self._update()

    def _range(self) -> str:
        return f"{self.track_box.currentData()}@{self.from_box.value()}-{self.to_box.value()}"

    def _ask(self, kind: str, text: str) -> None:
        self.requested.emit([(kind, text)])

    def ask_move(self, track_id: str, frame: int, x: float, y: float) -> None:
        """A marker dragged on the video: ask for it to be moved there."""
        self.requested.emit([("move", f"{track_id}@{frame}={x:.2f},{y:.2f}")])

    def plan(self, requested: Requested) -> tuple[list[Operation], str] | None:
        """The operations ``requested`` and the reason typed, or None with the refusal said in
        the status line (no reason, or an operation that does not parse)."""
        reason = self.reason.text().strip()
        if not reason:
            self.status.setText(
                "Not saved: say why in Why first (it is kept with the correction and in the audit "
                "trail), then do it again."
            )
            self.reason.setFocus()
            return None
        try:
            operations = [
                parse_operation(
                    kind,
                    text,
                    max_gap=self.max_gap_box.value(),
                    min_valid=self.min_valid_box.value(),
                )
                for kind, text in requested
            ]
        except LabrigError as error:
            self.status.setText(f"Not saved: {error.message}")
            return None
        self.status.setText(f"Saving: {'; '.join(o.describe() for o in operations)}…")
        return operations, reason

    def saved(self, revision: RevisionView) -> None:
        self.set_saving(False)
        self.status.setText(
            f"Revision {revision.number} saved: "
            f"{'; '.join(o.describe() for o in revision.operations)}. The automatic tracks are "
            "kept (grey crosses where they differ); the values are recomputed."
        )

    def set_tracks(self, tracks: Sequence[str], last_frame: int) -> None:
        """The shown result's tracks and its frames (0 to ``last_frame``); the choices kept."""
        for combo in (self.track_box, self.other_box):
            keep = combo.currentData()
            combo.clear()
            for t in tracks:
                combo.addItem(f"track {t}", t)
            if keep is not None and combo.findData(keep) >= 0:
                combo.setCurrentIndex(combo.findData(keep))
        if self.other_box.currentIndex() == self.track_box.currentIndex() and len(tracks) > 1:
            self.other_box.setCurrentIndex((self.track_box.currentIndex() + 1) % len(tracks))
        for box in (self.from_box, self.to_box):
            box.setRange(0, max(last_frame, 0))

    def mark(self, end: str, frame: int) -> None:
        """I / O on the video: the range's first (``from``) or last (``to``) frame."""
        (self.from_box if end == "from" else self.to_box).setValue(frame)
        if self.to_box.value() < self.from_box.value():
            (self.to_box if end == "from" else self.from_box).setValue(frame)

    def _update(self) -> None:
        on = self.open
        for w in (
            self.track_box,
            self.other_box,
            self.from_box,
            self.to_box,
            self.method_box,
            self.max_gap_box,
            self.min_valid_box,
            self.hide_button,
            self.fill_button,
            self.swap_button,
            self.trim_button,
            self.reason,
        ):
            w.setEnabled(on)


class SignOffForm(_SavingForm):
    """The result's sign-off (in force, or cleared by a later change) and signing it off with a
    meaning; "Sign off" emits :attr:`requested` with the meaning and the note."""

    requested = Signal(str, str)  # meaning, note

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("signOffForm")
        self.state = QLabel("Not signed off.")
        self.state.setObjectName("signOffState")
        self.state.setWordWrap(True)
        self.meaning_box = QComboBox()
        self.meaning_box.setObjectName("signOffMeaning")
        for meaning, tip in zip(
            SIGN_OFF_MEANINGS,
            ("checked by a reviewer", "released for use: the lab stands behind it"),
            strict=True,
        ):
            self.meaning_box.addItem(meaning.capitalize(), meaning)
            self.meaning_box.setItemData(
                self.meaning_box.count() - 1, tip, Qt.ItemDataRole.ToolTipRole
            )
        self.note = QLineEdit()
        self.note.setObjectName("signOffNote")
        self.note.setPlaceholderText("optional note")
        self.button = QPushButton("Sign off")
        self.button.setObjectName("signOffButton")
        self.button.setToolTip(
            "Records who, when, the meaning and the SHA-256 of the values in force in the audit "
            "trail; a later correction or revised value clears it"
        )
        self.status = _status()
        self.status.setObjectName("signOffStatus")
        row = QHBoxLayout()
        row.addWidget(QLabel("As"))
        row.addWidget(self.meaning_box)
        row.addWidget(self.note, 1)
        row.addWidget(self.button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.state)
        layout.addLayout(row)
        layout.addWidget(self.status, 1)
        self.button.clicked.connect(
            lambda: self.requested.emit(self.meaning_box.currentData(), self.note.text().strip())
        )
        self._update()

    def show_state(self, state: SignOffState | None) -> None:
        if state is None:
            self.state.setText("Not signed off.")
            self.state.setStyleSheet("")
            return
        colour = "#1d6b2a" if state.in_force else "#a05a00"
        self.state.setText(state.describe())
        self.state.setStyleSheet(f"color: {colour}; font-weight: bold;")

    def saved(self, revision: RevisionView) -> None:
        self.set_saving(False)
        meaning = revision.sign_off.meaning if revision.sign_off else "?"
        self.status.setText(
            f"Signed off as {meaning} (revision {revision.number}); the audit trail holds who, "
            "when and the SHA-256 of the values in force."
        )

    def _update(self) -> None:
        on = self.open
        for w in (self.meaning_box, self.note, self.button):
            w.setEnabled(on)
        self.button.setText("Signing off…" if self._saving else "Sign off")


class UndoBar(_SavingForm):
    """Under the history: undo the revision selected there, with a reason; "Undo" emits
    :attr:`requested` with its number and the reason."""

    requested = Signal(int, str)  # revision number, reason

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.reason = QLineEdit()
        self.reason.setObjectName("undoReason")
        self.reason.setPlaceholderText("required: why it is undone")
        self.button = QPushButton("Undo selected revision")
        self.button.setObjectName("undoButton")
        self.button.setToolTip(
            "A new revision stops the selected one counting; nothing is deleted, and the history "
            "keeps both"
        )
        self.status = _status()
        self.status.setObjectName("undoStatus")
        self.number: int | None = None  # the revision selected, when it can be undone
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.reason, 1)
        row.addWidget(self.button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.status)
        self.button.clicked.connect(self._ask)
        self._update()

    def select(self, number: int | None) -> None:
        """The revision selected in the history (None: none, or one that cannot be undone)."""
        self.number = number
        self._update()

    def _ask(self) -> None:
        if self.number is None:
            return
        reason = self.reason.text().strip()
        if not reason:
            self.status.setText("Not undone: say why first; it is kept with the undo.")
            self.reason.setFocus()
            return
        self.status.setText(f"Undoing revision {self.number}…")
        self.requested.emit(self.number, reason)

    def saved(self, revision: RevisionView) -> None:
        self.set_saving(False)
        self.reason.clear()
        self.status.setText(
            f"Revision {revision.number} undoes revision {revision.undoes}: its corrections and "
            "values no longer count. Both stay in the history."
        )

    def _update(self) -> None:
        on = self.open
        self.reason.setEnabled(on)
        self.button.setEnabled(on and self.number is not None)
        self.button.setText(
            "Undoing…"
            if self._saving
            else f"Undo revision {self.number}"
            if self.number is not None
            else "Undo selected revision"
        )
