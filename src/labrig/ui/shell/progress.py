"""Progress coalescing between a running stage and the GUI thread (no Qt here).

A stage may report progress thousands of times a second. Two pieces keep that
from flooding the GUI: a :class:`ProgressCell` per running job, where the
worker overwrites the newest value and the GUI thread takes it (so at most one
notification per job waits in the event queue), and a :class:`ProgressThrottle`
on the GUI thread that delivers at most one update per job per interval, the
newest one, and never loses the last.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    fraction: float
    message: str


class ProgressCell:
    """The newest progress of one running job. Thread-safe: the worker puts, the GUI thread takes."""

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
    """At most one delivery per job per ``interval`` seconds; the newest value wins.

    Not thread-safe: use it from one thread (the GUI thread). The caller delivers
    what :meth:`offer` and :meth:`due` return, and asks again after :meth:`wait`.
    """

    def __init__(self, interval: float = 0.1, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval, self._clock = interval, clock
        self._sent_at: dict[str, float] = {}
        self._pending: dict[str, Progress] = {}

    def offer(self, job_id: str, progress: Progress) -> Progress | None:
        """``progress`` if it may be delivered now; otherwise it waits (replacing an older one)."""
        now = self._clock()
        last = self._sent_at.get(job_id)
        if last is not None and now - last < self.interval:
            self._pending[job_id] = progress
            return None
        self._sent_at[job_id] = now
        self._pending.pop(job_id, None)
        return progress

    def due(self) -> list[tuple[str, Progress]]:
        """The waiting values whose interval has passed, now counted as delivered."""
        now = self._clock()
        ready = [job_id for job_id in self._pending if now - self._sent_at[job_id] >= self.interval]
        for job_id in ready:
            self._sent_at[job_id] = now
        return [(job_id, self._pending.pop(job_id)) for job_id in ready]

    def wait(self) -> float | None:
        """Seconds until the next waiting value is due; None when nothing waits."""
        if not self._pending:
            return None
        now = self._clock()
        return max(0.0, min(self._sent_at[j] + self.interval - now for j in self._pending))

    def finish(self, job_id: str) -> Progress | None:
        """Forget ``job_id``; returns its last value if it was still waiting (deliver it now)."""
        self._sent_at.pop(job_id, None)
        return self._pending.pop(job_id, None)
