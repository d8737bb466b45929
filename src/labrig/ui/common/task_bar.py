"""A running task in a page: what is being done, a progress bar, and a Cancel button.

The page starts its work with :meth:`TaskBar.begin`, which gives it the
:class:`~labrig.ui.shell.tasks.QtTask` to hand to the core call, and calls :meth:`TaskBar.end` when
the call returns or fails. The bar's room is kept while no task runs (its parts are hidden, not the
bar), so nothing around it moves when a task starts or ends; a message too long for one line is
elided, with the whole of it in the tooltip.

Threading contract: GUI thread only (the task's progress arrives here through the QtTask's signal).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from labrig.ui.shell.tasks import QtTask

STEPS = 1000  # the bar's resolution


class TaskBar(QWidget):
    """Progress and Cancel for one task at a time; empty (keeping its room) while none runs."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.task: QtTask | None = None
        self._text = ""
        self.message = QLabel("")
        self.message.setObjectName(f"{name}Message")
        self.message.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.bar = QProgressBar()
        self.bar.setObjectName(f"{name}Progress")
        self.bar.setRange(0, STEPS)
        self.bar.setTextVisible(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName(f"{name}Cancel")
        self.cancel_button.setToolTip("Stop it at the next safe point; nothing half-done is kept")
        self.cancel_button.clicked.connect(self._on_cancel_button_clicked)
        self.parts = QWidget()
        row = QHBoxLayout()
        row.addWidget(self.bar, 1)
        row.addWidget(self.cancel_button)
        inner = QVBoxLayout(self.parts)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addWidget(self.message)
        inner.addLayout(row)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.parts)
        self.setFixedHeight(self.parts.sizeHint().height())
        self.parts.hide()

    @property
    def running(self) -> bool:
        return self.task is not None

    @property
    def shown(self) -> bool:
        """A task is on show (between tasks the bar's room stays, empty)."""
        return not self.parts.isHidden()

    def begin(self, what: str) -> QtTask:
        """Show the bar for a new task described by ``what``; the task to hand to the core call."""
        if self.task is not None:
            self.task.deleteLater()
        self.task = QtTask(parent=self)
        self.task.progressed.connect(self._on_task_progressed)
        self.bar.setValue(0)
        self._say(what)
        self.cancel_button.setEnabled(True)
        self.cancel_button.setText("Cancel")
        self.parts.show()
        return self.task

    def end(self) -> None:
        """The call returned or failed: deliver its last progress, then hide the bar."""
        task, self.task = self.task, None
        if task is not None:
            task.finish()
            task.progressed.disconnect(self._on_task_progressed)
            task.deleteLater()
        self.parts.hide()

    @Slot(float, str)
    def _on_task_progressed(self, fraction: float, message: str) -> None:
        self.bar.setValue(round(fraction * STEPS))
        if message:
            self._say(message[:1].upper() + message[1:] + "…")

    def _say(self, text: str) -> None:
        self._text = text
        self.message.setToolTip(text)
        self._elide()

    def _elide(self) -> None:
        width = max(self.width(), 1)  # the bar keeps its room, so its width is the message's
        self.message.setText(
            self.message.fontMetrics().elidedText(self._text, Qt.TextElideMode.ElideRight, width)
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    @Slot()
    def _on_cancel_button_clicked(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.cancel_button.setEnabled(False)
            self.cancel_button.setText("Cancelling…")
