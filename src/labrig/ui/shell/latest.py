"""Newest-wins reads: one call of a kind runs at a time, and only the newest request's
outcome is delivered.

A burst of events asking for the same read (ten results published in a second) costs at most two
reads: the one running and one more after it. An outcome that a newer request has overtaken is
dropped, so a slow old read never overwrites a newer one on screen.

Threading contract: GUI thread only; the calls run on the :class:`BackgroundCalls` pool given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from labrig.ui.shell.background import BackgroundCalls

_Request = tuple[Callable[[], Any], Callable[[Any], None], Callable[[Exception], None]]


class Latest:
    """Serialises one kind of background read; see the module docstring."""

    def __init__(self, calls: BackgroundCalls) -> None:
        self._calls = calls
        self._running = False
        self._next: _Request | None = None

    @property
    def busy(self) -> bool:
        """A read is running or waiting to run."""
        return self._running or self._next is not None

    def request(
        self,
        fn: Callable[[], Any],
        done: Callable[[Any], None],
        failed: Callable[[Exception], None],
    ) -> None:
        """Run ``fn`` once the running read (if any) ends; ``done``/``failed`` run on the GUI thread
        unless a newer request overtakes this one first."""
        self._next = (fn, done, failed)
        if not self._running:
            self._start()

    def _start(self) -> None:
        assert self._next is not None
        fn, done, failed = self._next
        self._next, self._running = None, True
        self._calls.submit(
            fn, lambda value: self._ended(done, value), lambda error: self._ended(failed, error)
        )

    def _ended(self, callback: Callable[[Any], None], outcome: Any) -> None:
        self._running = False
        if self._next is not None:
            self._start()  # overtaken: this outcome is stale
        else:
            callback(outcome)
