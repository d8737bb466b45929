"""Long work, Qt-free: one protocol to report progress and to honour a cancel, whatever the work is.

A :class:`Task` is what a long call is handed: a job's stage (its
:class:`~labrig.jobs.stages.StageContext` is a Task), a board calibration, an export, a sync batch,
an import, a verify. The call reports :meth:`Task.progress` (a fraction 0–1 and a message a
technician reads) and, between units of work, calls :meth:`Task.check_cancelled`, which raises once
a cancel was requested (:class:`TaskCancelledError` for a :class:`TaskControl`; a stage's context
raises its own); each call says what a cancel leaves behind, and leaves nothing half-written. The
front end that starts the work holds a :class:`TaskControl`: it cancels, and it observes progress
(the CLI prints it; the window shows it through one Qt adapter,
:class:`~labrig.ui.shell.tasks.QtTask`).

The other half of this module delivers progress from the working thread to another one without
flooding it: a :class:`ProgressCell` per piece of work, which the worker overwrites and the other
thread takes, and a :class:`ProgressThrottle` that lets through at most one update per interval, the
newest, and never loses the last.

Threading: a Task's methods are called on the thread doing the work; :meth:`TaskControl.cancel`
from any thread.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from labrig.errors import JobCancelledError

OnProgress = Callable[[float, str], None]
#: the progress of one of many pieces of work, by key (a job id):
#: what an executor hands its observer
KeyedProgress = Callable[[str, float, str], None]


class TaskCancelledError(JobCancelledError):
    """The work stopped at a cancel request and kept nothing partial. A
    :class:`JobCancelledError` (code ``LABRIG_CANCELLED``), so work run inside a job's stage that
    lets it through is recorded Cancelled."""


class Task(Protocol):
    """What long work reports to and asks. Every call is made on the thread doing the work."""

    def progress(self, fraction: float, message: str = "") -> None:
        """``fraction`` of the work is done (0–1); ``message`` says what is being done, in a
        technician's words."""
        ...

    @property
    def cancelled(self) -> bool:
        """A cancel was requested: stop at the next point where nothing is left half-done."""
        ...

    def check_cancelled(self) -> None:
        """Raise if a cancel was requested; return at once otherwise."""
        ...


class TaskControl:
    """A task as the front end that started it holds it: cancel it, read or observe its progress.

    ``on_progress`` is called on the working thread with every update; the newest is also kept in
    :attr:`fraction` and :attr:`message`.
    """

    def __init__(self, on_progress: OnProgress | None = None) -> None:
        self._cancel = threading.Event()
        self._on_progress = on_progress
        self.fraction, self.message = 0.0, ""

    def progress(self, fraction: float, message: str = "") -> None:
        self.fraction, self.message = min(max(fraction, 0.0), 1.0), message
        if self._on_progress is not None:
            self._on_progress(self.fraction, message)

    def cancel(self) -> None:
        """Ask the work to stop at its next check. Safe from any thread; the work ends
        with a cancel error."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def check_cancelled(self) -> None:
        if self._cancel.is_set():
            raise TaskCancelledError(
                "cancelled at your request; nothing was kept of the unfinished work"
            )


class _Untracked:
    """The task of a call nobody watches: progress goes nowhere and no cancel ever comes."""

    def progress(self, fraction: float, message: str = "") -> None:
        pass

    @property
    def cancelled(self) -> bool:
        return False

    def check_cancelled(self) -> None:
        pass


UNTRACKED: Task = _Untracked()


class Share:
    """The part ``start``–``end`` of ``parent``: its fractions 0–1 are reported to the parent in
    that range, so a step of longer work reports as if it were the whole. ``message`` stands in for
    a step that reports none (a file copy knows how far it is, not what it copies)."""

    def __init__(self, parent: Task, start: float, end: float, message: str = "") -> None:
        self._parent, self._start, self._span, self._message = parent, start, end - start, message

    def progress(self, fraction: float, message: str = "") -> None:
        self._parent.progress(
            self._start + self._span * min(max(fraction, 0.0), 1.0), message or self._message
        )

    @property
    def cancelled(self) -> bool:
        return self._parent.cancelled

    def check_cancelled(self) -> None:
        self._parent.check_cancelled()


# -- delivering progress to another thread
# -------------------------------------------------------------


@dataclass(frozen=True)
class Progress:
    fraction: float
    message: str


class ProgressCell:
    """The newest progress of one piece of work. Thread-safe: the worker puts, the
    other thread takes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._newest: Progress | None = None

    def put(self, fraction: float, message: str) -> bool:
        """Store the newest value; True when the cell was empty, so the taker must be told."""
        with self._lock:
            was_empty = self._newest is None
            self._newest = Progress(fraction, message)
        return was_empty

    def take(self) -> Progress | None:
        with self._lock:
            newest, self._newest = self._newest, None
        return newest


class ProgressThrottle:
    """At most one delivery per key per ``interval`` seconds; the newest value wins.

    Not thread-safe: use it from one thread (the GUI thread). The caller delivers
    what :meth:`offer` and :meth:`due` return, and asks again after :meth:`wait`.
    """

    def __init__(self, interval: float = 0.1, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval, self._clock = interval, clock
        self._sent_at: dict[str, float] = {}
        self._pending: dict[str, Progress] = {}

    def offer(self, key: str, progress: Progress) -> Progress | None:
        """``progress`` if it may be delivered now; otherwise it waits (replacing an older one)."""
        now = self._clock()
        last = self._sent_at.get(key)
        if last is not None and now - last < self.interval:
            self._pending[key] = progress
            return None
        self._sent_at[key] = now
        self._pending.pop(key, None)
        return progress

    def due(self) -> list[tuple[str, Progress]]:
        """The waiting values whose interval has passed, now counted as delivered."""
        now = self._clock()
        ready = [key for key in self._pending if now - self._sent_at[key] >= self.interval]
        for key in ready:
            self._sent_at[key] = now
        return [(key, self._pending.pop(key)) for key in ready]

    def wait(self) -> float | None:
        """Seconds until the next waiting value is due; None when nothing waits."""
        if not self._pending:
            return None
        now = self._clock()
        return max(0.0, min(self._sent_at[k] + self.interval - now for k in self._pending))

    def finish(self, key: str) -> Progress | None:
        """Forget ``key``; returns its last value if it was still waiting (deliver it now)."""
        self._sent_at.pop(key, None)
        return self._pending.pop(key, None)


BELOW_RECORDING = 10  # the niceness of long work that must yield to recording (Linux)


def run_below_recording() -> None:
    """Run this thread's long work below the recording's threads: on Linux, where each thread has
    its own niceness, raise this one's to :data:`BELOW_RECORDING` (never back down, which would
    need privileges); elsewhere nothing. A recording's grab and writer threads keep the process's
    own priority, so on a busy workstation they get the CPU first."""
    if not sys.platform.startswith("linux"):
        return
    tid = threading.get_native_id()
    try:
        if os.getpriority(os.PRIO_PROCESS, tid) < BELOW_RECORDING:
            os.setpriority(os.PRIO_PROCESS, tid, BELOW_RECORDING)
    except OSError:  # a container that forbids it: the work runs at the process's priority
        pass
