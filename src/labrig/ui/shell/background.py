"""Blocking core calls (discover, verify, start or stop a recording) run off the GUI thread.

Threading contract: build, submit and wait on the GUI thread. The call runs on a
pool thread and touches no widget; its outcome comes back through a private
signal queued to the GUI thread, where the ``done`` or ``failed`` callback runs
and may touch widgets.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from PySide6.QtCore import QCoreApplication, QObject, QRunnable, Qt, QThreadPool, Signal, Slot

from labrig.errors import LabrigError

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class _Outcome:
    value: Any = None
    error: Exception | None = None


class _CallSignals(QObject):
    """The private hop: emitted from pool threads only."""

    ended = Signal(int, object)  # call number, _Outcome


class _Call(QRunnable):
    def __init__(self, number: int, fn: Callable[[], Any], hop: _CallSignals) -> None:
        super().__init__()
        self._number, self._fn, self._hop = number, fn, hop

    def run(self) -> None:
        try:
            outcome = _Outcome(self._fn())
        except LabrigError as exc:  # a refusal with words for the technician: the caller shows it
            outcome = _Outcome(error=exc)
        except (
            Exception
        ) as exc:  # a bug or an OS failure: logged, and still reported so nothing waits forever
            log.exception("a background call failed")
            outcome = _Outcome(error=exc)
        self._hop.ended.emit(self._number, outcome)


class BackgroundCalls(QObject):
    """Runs callables on at most ``threads`` pool threads;
    outcomes are delivered on the GUI thread."""

    def __init__(self, threads: int = 1, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(threads)
        self._hop = _CallSignals(self)
        self._hop.ended.connect(self._on_call_ended, Qt.ConnectionType.QueuedConnection)
        self._numbers = itertools.count(1)
        self._waiting: dict[int, tuple[Callable[[Any], None], Callable[[Exception], None]]] = {}

    @property
    def busy(self) -> bool:
        """Some call has not reported yet."""
        return bool(self._waiting)

    def submit(
        self, fn: Callable[[], T], done: Callable[[T], None], failed: Callable[[Exception], None]
    ) -> None:
        """Run ``fn`` on a pool thread; then ``done(result)`` or ``failed(error)``
        on the GUI thread."""
        number = next(self._numbers)
        self._waiting[number] = (done, failed)
        self._pool.start(_Call(number, fn, self._hop))

    def wait(self, timeout_ms: int) -> bool:
        """Wait for every running call, then deliver their outcomes now; False if some did
        not end in time."""
        ended = self._pool.waitForDone(timeout_ms)
        QCoreApplication.sendPostedEvents(self)
        return ended

    @Slot(int, object)
    def _on_call_ended(self, number: int, outcome: _Outcome) -> None:
        done, failed = self._waiting.pop(number)
        if outcome.error is not None:
            failed(outcome.error)
        else:
            done(outcome.value)


def say_error(error: Exception) -> str:
    """What a technician reads: a Labrig refusal's own words, anything else named plainly."""
    if isinstance(error, LabrigError):
        return error.message
    return f"an unexpected error ({type(error).__name__}: {error}); the log has the details"
