"""A dispatcher run in the background (Qt-free): woken by this process's commits, polling for other
processes', each pass telling listeners (the window's event bridge) of the events newly recorded.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from sqlalchemy import select

from labrig.events.dispatcher import Dispatcher
from labrig.events.outbox import EventRecord, events_after
from labrig.fsutil import DiskFullError
from labrig.store import Store
from labrig.store.models import OutboxEvent

log = logging.getLogger(__name__)
#: after a commit wakes the thread, how long it lets more commits gather before its pass
SETTLE_S = 0.05
#: a headless worker's: no window shows its events as they come, so it lets more gather, for
#: fewer and larger deliveries (a pass's fixed cost is a few statements; 2 worker processes
#: draining on PostgreSQL: about a tenth more jobs a second, a tenth less CPU, than with SETTLE_S)
WORKER_SETTLE_S = 0.2


class DispatcherThread:
    """Runs a dispatcher in the background: woken by local commits (a pass then takes those of the
    next :data:`SETTLE_S` too), polling for other processes'.

    ``listeners`` receive every newly seen event, called from this thread.
    """

    def __init__(
        self, dispatcher: Dispatcher, poll_seconds: float = 1.0, settle_seconds: float = SETTLE_S
    ) -> None:
        self.dispatcher = dispatcher
        self.poll_seconds, self.settle_seconds = poll_seconds, settle_seconds
        self.listeners: list[Callable[[EventRecord], None]] = []
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_seq = _last_seq(dispatcher.store)
        dispatcher.store.on_events_committed(self._wake.set)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="labrig-dispatcher", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            if self._wake.wait(self.poll_seconds) and self.settle_seconds:
                # woken by a commit: the commits of the next moment are delivered with it, in one
                # pass (a worker commits a batch every few milliseconds; a pass each cost more
                # than the jobs)
                self._stop.wait(self.settle_seconds)
            self._wake.clear()
            try:
                self._announce_new()
                self.dispatcher.dispatch_once()
            except DiskFullError as exc:  # the events wait: tried again at the next poll
                log.warning("event dispatch paused: %s", exc.message)
            except Exception:  # keep delivering after a transient database error
                log.exception("event dispatch pass failed; retrying")

    def _announce_new(self) -> None:
        if not self.listeners:  # a worker: nobody to tell, so the new events are not read
            return
        for event in events_after(self.dispatcher.store, self._last_seq):
            self._last_seq = event.seq
            for listener in list(self.listeners):
                listener(event)


def _last_seq(store: Store) -> int:
    with store.read() as session:
        return (
            session.scalar(select(OutboxEvent.seq).order_by(OutboxEvent.seq.desc()).limit(1)) or 0
        )
