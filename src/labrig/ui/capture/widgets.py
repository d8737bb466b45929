"""The Capture page's parts: the session form, the preview view, the info bar and
the attempts table.

They only show what they are given; the page decides. Threading contract: GUI thread only.
"""

from __future__ import annotations

import time
from collections import deque

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QTableView,
    QWidget,
)

from labrig.capture import RecorderStatus
from labrig.ui.capture.attempts_model import ANALYSIS_COLUMN, AttemptTableModel
from labrig.ui.common.progress_bar import ProgressBarDelegate
from labrig.ui.common.widgets import message_label

NOTHING = "—"
RATE_WINDOW_S = 1.0  # the preview rate is counted over the last second


def clock(seconds: float) -> str:
    """``mm:ss.s``, as an info bar shows a recording's length."""
    minutes, rest = divmod(max(seconds, 0.0), 60)
    return f"{int(minutes):02d}:{rest:04.1f}"


class SessionForm(QGroupBox):
    """Subject code, protocol and operator, and the button that starts or ends the session."""

    FIELDS = ("Subject code", "Protocol", "Operator")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("1. Session", parent)
        form = QFormLayout(self)
        self.subject_edit = self._edit("subjectCode", "e.g. S-014")
        self.protocol_edit = self._edit("protocol", "e.g. gait 10 m")
        self.operator_edit = self._edit("operator", "your name or initials")
        for caption, edit in zip(self.FIELDS, self.edits, strict=True):
            form.addRow(caption, edit)
        self.button = QPushButton()
        self.button.setObjectName("sessionButton")
        form.addRow(self.button)
        self.message = message_label("sessionMessage")
        form.addRow(self.message)

    @staticmethod
    def _edit(name: str, hint: str) -> QLineEdit:
        edit = QLineEdit()
        edit.setObjectName(name)
        edit.setPlaceholderText(hint)
        return edit

    @property
    def edits(self) -> tuple[QLineEdit, QLineEdit, QLineEdit]:
        return self.subject_edit, self.protocol_edit, self.operator_edit

    def texts(self) -> tuple[str, str, str]:
        subject, protocol, operator = (edit.text() for edit in self.edits)
        return subject, protocol, operator

    def show_open(self, open_session: bool, can_toggle: bool) -> None:
        for edit in self.edits:
            edit.setReadOnly(open_session)
        self.button.setText("End session" if open_session else "Start session")
        self.button.setEnabled(can_toggle)

    def focus_named(self, message: str) -> None:
        """Put the cursor in the field a refusal names first (the core's messages start
        with the field)."""
        for caption, edit in zip(self.FIELDS, self.edits, strict=True):
            if message.startswith(caption):
                edit.setFocus()
                return


class PreviewView(QLabel):
    """The live picture, or a sentence saying why there is none. The frames follow its size,
    never the reverse."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("previewView")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setMinimumSize(320, 180)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.setStyleSheet("background: #161616; color: #bbbbbb;")
        self.setWordWrap(True)
        #: Frames shown since the page was built.
        self.frames_shown = 0
        self._shown_at: deque[float] = deque(maxlen=240)

    def show_frame(self, image: QImage) -> None:
        # the only conversion left to the GUI thread: QPixmap lives here
        self.setPixmap(QPixmap.fromImage(image))
        self.frames_shown += 1
        self._shown_at.append(time.monotonic())

    def rate_fps(self) -> float:
        """Pictures shown per second over the last second."""
        now = time.monotonic()
        recent = [t for t in self._shown_at if now - t <= RATE_WINDOW_S]
        return (
            (len(recent) - 1) / (recent[-1] - recent[0])
            if len(recent) > 1 and recent[-1] > recent[0]
            else 0.0
        )

    def show_text(self, text: str) -> None:
        self.clear()
        self.setText(text)


class InfoBar(QWidget):
    """Elapsed time, frame rate, MB/s and dropped frames of the recording, and the
    preview's own rate."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.elapsed = self._info("elapsed", "The recording's length so far")
        self.frame_rate = self._info(
            "frameRate", "Frames written per second since recording started"
        )
        self.data_rate = self._info(
            "dataRate",
            "Megabytes per second written to disk since recording started; the first figure "
            "comes once the encoder has written its first block (a few hundred kilobytes)",
        )
        self.dropped = self._info("dropped", "Frames the camera skipped or the disk could not take")
        self.preview_rate = self._info("previewRate", "Pictures per second shown in the preview")
        for label in (
            self.elapsed,
            self.frame_rate,
            self.data_rate,
            self.dropped,
            self.preview_rate,
        ):
            layout.addWidget(label)
        layout.addStretch(1)

    @staticmethod
    def _info(name: str, tip: str) -> QLabel:
        label = QLabel(NOTHING)
        label.setObjectName(name)
        label.setToolTip(tip)
        return label

    def show_recording(self, status: RecorderStatus) -> None:
        self.elapsed.setText(f"● REC {clock(status.elapsed_s)}")
        self.frame_rate.setText(f"{status.fps:.1f} fps")
        # on disk so far: the encoder writes in blocks, so the first figure follows its first block
        self.data_rate.setText(
            f"{status.mb_per_s:.2f} MB/s" if status.mb_per_s > 0 else "MB/s: measuring"
        )
        self.dropped.setText(f"{status.dropped} dropped")

    def show_stopped(self) -> None:
        """The figures stay, as those of the last recording; only the REC mark goes."""
        if self.elapsed.text().startswith("● REC "):
            self.elapsed.setText("Last recording " + self.elapsed.text().removeprefix("● REC "))

    def show_preview_rate(self, fps: float) -> None:
        self.preview_rate.setText(f"Preview {fps:.1f} fps")


class AnalysisBarDelegate(ProgressBarDelegate):
    """The Queue page's bar, labelled with the attempt's summary ("1 of 3 stages done") instead
    of a percentage."""

    def label(self, fraction: float, index: QModelIndex | QPersistentModelIndex) -> str:
        return str(index.data(Qt.ItemDataRole.DisplayRole))


class AttemptTable(QTableView):
    """The session's attempts over ``model``; the Analysis column paints as a labelled bar."""

    def __init__(self, model: AttemptTableModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attemptTable")
        self.setModel(model)
        self.setItemDelegateForColumn(ANALYSIS_COLUMN, AnalysisBarDelegate(self))
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().hide()
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)
        # one line a row: the stages that do not fit end in "…", the tooltip has them all
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
