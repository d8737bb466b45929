"""The recovery report shown after start-up
when captures were salvaged, quarantined or abandoned, or a rig recording became an attempt."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from labrig.bootstrap import Services
from labrig.capture import RecoveryReport

WHAT_IT_MEANS = {
    "salvaged": "kept: every complete segment and the readable part of the last one",
    "quarantined": "unreadable: moved to the quarantine folder, nothing deleted",
    "abandoned": "its files were gone before Labrig started",
    "tidied": "already saved before the interruption",
    "rig attempt": "a rig recording made one attempt of its salvaged captures, marked interrupted",
    "rig not saved": "a rig recording whose cameras had recorded no frame yet: no attempt",
    "left": "could not be resolved now (the message says why): left where it was, tried again at "
    "the next start",
}


DIALOG_SIZE = QSize(960, 440)  # inside the 1280×800 the window opens at


class RecoveryDialog(QDialog):
    """Lists what start-up recovery did, in words a technician understands."""

    def __init__(self, report: RecoveryReport, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("recoveryDialog")
        self.setWindowTitle("Recordings recovered after an interruption")
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Labrig was interrupted while recording. Nothing was deleted; this is what was "
            "recovered:"
        )
        intro.setObjectName("recoveryIntro")
        layout.addWidget(intro)
        table = QTableWidget(len(report.items), 4, self)
        table.setObjectName("recoveryTable")
        table.setHorizontalHeaderLabels(["Capture", "Outcome", "Frames", "Details"])
        for row, item in enumerate(report.items):
            cells = (
                item.capture_id[:8],
                item.outcome,
                str(item.frames),
                f"{WHAT_IT_MEANS.get(item.outcome, '')}. {item.detail}",
            )
            for column, text in enumerate(cells):
                table.setItem(row, column, QTableWidgetItem(text))
        # the details are what a technician acts on: wrapped in full, never cut off to the right
        table.setWordWrap(True)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.verticalHeader().setVisible(False)
        table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header = table.horizontalHeader()
        for column in range(3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        layout.addWidget(table)
        self.resize(DIALOG_SIZE)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok, parent=self)
        buttons.accepted.connect(self.accept)
        layout.addWidget(buttons)


def recover_and_report(services: Services, parent: QWidget) -> RecoveryDialog | None:
    """Run start-up recovery; when it found anything, open (without blocking) the report
    over ``parent``."""
    report = services.recover()
    if not [item for item in report.items if item.outcome != "tidied"]:
        return None
    dialog = RecoveryDialog(report, parent)
    dialog.open()
    return dialog
