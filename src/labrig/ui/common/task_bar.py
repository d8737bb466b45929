"""A running task in a page: what is being done, a progress bar, and a Cancel button.

The page starts its work with :meth:`TaskBar.begin`, which gives it the :class:`~labrig.ui.shell.tasks.QtTask`
to hand to the core call, and calls :meth:`TaskBar.end` when the call returns or fails. The bar keeps its room
while hidden, so the widgets around it do not move when a task starts or ends.

Threading contract: GUI thread only (the task's progress arrives here through the QtTask's signal).
"""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from labrig.ui.shell.tasks import QtTask

STEPS = 1000  # the bar's resolution


class TaskBar(QWidget):
    """Progress and Cancel for one task at a time; hidden (keeping its room) while none runs."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.task: QtTask | None = None
        self.message = QLabel("")
        self.message.setObjectName(f"{name}Message")
        self.message.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setObjectName(f"{name}Progress")
        self.bar.setRange(0, STEPS)
        self.bar.setTextVisible(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName(f"{name}Cancel")
        self.cancel_button.setToolTip("Stop it at the next safe point; nothing half-done is kept")
        self.cancel_button.clicked.connect(self._on_cancel_button_clicked)
        row = QHBoxLayout()
        row.addWidget(self.bar, 1)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.message)
        layout.addLayout(row)
        policy = self.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        policy.setVerticalPolicy(QSizePolicy.Policy.Fixed)
        self.setSizePolicy(policy)
        self.hide()

    @property
    def running(self) -> bool:
        return self.task is not None

    def begin(self, what: str) -> QtTask:
        """Show the bar for a new task described by ``what``; the task to hand to the core call."""
        if self.task is not None:
            self.task.deleteLater()
        self.task = QtTask(parent=self)
        self.task.progressed.connect(self._on_task_progressed)
        self.bar.setValue(0)
        self.message.setText(what)
        self.cancel_button.setEnabled(True)
        self.cancel_button.setText("Cancel")
        self.show()
        return self.task

    def end(self) -> None:
        """The call returned or failed: deliver its last progress, then hide the bar."""
        task, self.task = self.task, None
        if task is not None:
            task.finish()
            task.progressed.disconnect(self._on_task_progressed)
            task.deleteLater()
        self.hide()

    @Slot(float, str)
    def _on_task_progressed(self, fraction: float, message: str) -> None:
        self.bar.setValue(round(fraction * STEPS))
        if message:
            self.message.setText(message[:1].upper() + message[1:] + "…")

    @Slot()
    def _on_cancel_button_clicked(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.cancel_button.setEnabled(False)
            self.cancel_button.setText("Cancelling…")
