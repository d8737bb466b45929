"""Long work in the window: one adapter that brings any task's progress to the GUI thread and
carries a cancel back.

:class:`ProgressRelay` takes progress posted from working threads (any number of pieces of work, by
key) and emits it on the GUI thread, at most once per key per interval, the newest value, never
losing the last: a :class:`~labrig.tasks.ProgressCell` per key means at most one notice per key
waits in the event queue, and a :class:`~labrig.tasks.ProgressThrottle` paces what reaches the
widgets. The job executor relays its stages' progress through one; :class:`QtTask` is a
:class:`~labrig.tasks.Task` for the work a page starts itself (a board calibration, an export),
relayed the same way.

Threading contract: build on the GUI thread. :meth:`ProgressRelay.post` and a QtTask's Task methods
may be called from any thread; every signal is emitted on the GUI thread;
:meth:`ProgressRelay.finish` and :meth:`QtTask.cancel` are called on the GUI thread.
"""

from __future__ import annotations

import itertools
import math
import threading

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot

from labrig.tasks import Progress, ProgressCell, ProgressThrottle, TaskControl

_keys = itertools.count()


class ProgressRelay(QObject):
    """Progress of work on other threads, delivered on the GUI thread (see the module docstring)."""

    #: (key, fraction 0–1, message), on the GUI thread
    progressed = Signal(str, float, str)
    _posted = Signal(str)  # private hop from a working thread: the key's cell holds a value to take

    def __init__(self, interval: float = 0.1, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._cells: dict[str, ProgressCell] = {}
        self._throttle = ProgressThrottle(interval)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._posted.connect(self._on_self_posted, Qt.ConnectionType.QueuedConnection)

    def post(self, key: str, fraction: float, message: str) -> None:
        """The newest progress of ``key``. Any thread; returns at once."""
        with self._lock:
            cell = self._cells.setdefault(key, ProgressCell())
        if cell.put(fraction, message):
            self._posted.emit(key)

    def finish(self, key: str) -> None:
        """``key``'s work ended: deliver its last progress now if it is still
        waiting, then forget it."""
        with self._lock:
            cell = self._cells.pop(key, None)
        newest = cell.take() if cell is not None else None
        waiting = self._throttle.finish(key)
        last = newest or waiting
        if last is not None:
            self._emit(key, last)

    @Slot(str)
    def _on_self_posted(self, key: str) -> None:
        with self._lock:
            cell = self._cells.get(key)
        progress = cell.take() if cell is not None else None
        if progress is not None and (deliver := self._throttle.offer(key, progress)) is not None:
            self._emit(key, deliver)
        self._arm()

    @Slot()
    def _on_timer_timeout(self) -> None:
        for key, progress in self._throttle.due():
            self._emit(key, progress)
        self._arm()

    def _arm(self) -> None:
        wait = self._throttle.wait()
        if wait is not None:
            self._timer.start(math.ceil(wait * 1000))

    def _emit(self, key: str, progress: Progress) -> None:
        self.progressed.emit(key, progress.fraction, progress.message)


class QtTask(QObject):
    """A :class:`~labrig.tasks.Task` a page starts and may cancel; its progress arrives as
    :attr:`progressed`.

    The work calls :meth:`progress`, :attr:`cancelled` and :meth:`check_cancelled` on its own
    thread; the page calls :meth:`cancel` and :meth:`finish` on the GUI thread.
    """

    #: (fraction 0–1, message), on the GUI thread;
    #: the last value is always delivered (by :meth:`finish`)
    progressed = Signal(float, str)

    def __init__(self, interval: float = 0.1, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._key = f"task-{next(_keys)}"
        self._relay = ProgressRelay(interval, self)
        self._relay.progressed.connect(self._on_relay_progressed)
        self._control = TaskControl(
            lambda fraction, message: self._relay.post(self._key, fraction, message)
        )

    # -- the Task protocol: the working thread
    # ------------------------------------------------------

    def progress(self, fraction: float, message: str = "") -> None:
        self._control.progress(fraction, message)

    @property
    def cancelled(self) -> bool:
        return self._control.cancelled

    def check_cancelled(self) -> None:
        self._control.check_cancelled()

    # -- the page: the GUI thread
    # ----------------------------------------------------------------------

    def cancel(self) -> None:
        """Ask the work to stop at its next check."""
        self._control.cancel()

    def finish(self) -> None:
        """The work ended: deliver its last progress if it has not arrived yet."""
        self._relay.finish(self._key)

    @Slot(str, float, str)
    def _on_relay_progressed(self, _key: str, fraction: float, message: str) -> None:
        self.progressed.emit(fraction, message)
