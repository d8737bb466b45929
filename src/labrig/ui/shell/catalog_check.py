"""The catalog's page check in the window: SQLite's integrity check, once, after the window is
shown, on a pool thread (it reads the whole database, so it never delays the first paint).

Damage found stops this window's writers first (the job executor and the event dispatcher), then is
recorded beside the catalog (``labrig.db.damaged``), so every write from now on, here and in every
later process, is refused with ``LABRIG_CATALOG_DAMAGED``; ``damageFound`` then carries that
refusal for the window to show. Threading contract: build, start and stop on the GUI thread; the
check runs on a pool thread and touches no widget; ``damageFound`` is emitted on the GUI thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from labrig.health import damage_found, page_check
from labrig.store import Store
from labrig.store.dialects.sqlite import PageCheck
from labrig.ui.shell.background import BackgroundCalls

log = logging.getLogger(__name__)
FOUND_BY = "the window"


class CatalogCheck(QObject):
    """Runs the page check of ``store`` when started; ``stop_writing`` stops this window's writers
    (called on the GUI thread before the damage is recorded)."""

    #: the CatalogDamagedError every write now meets
    damageFound = Signal(object)

    def __init__(
        self, store: Store, stop_writing: Callable[[], None], parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._store, self._stop_writing = store, stop_writing
        self._calls = BackgroundCalls(1, self)
        self._check: PageCheck | None = None

    @property
    def running(self) -> bool:
        return self._calls.busy

    def start(self, check: PageCheck | None = None) -> None:
        """Begin the check (``check``, else the catalog's integrity check; none on PostgreSQL)."""
        self._check = check or page_check(self._store)
        if self._check is not None:
            self._calls.submit(self._check.run, self._on_check_done, self._on_check_failed)

    def stop(self, timeout_ms: int) -> None:
        """End a check in progress (on quit): it is run again at the next start."""
        if self._check is not None:
            self._check.interrupt()
        self._calls.wait(timeout_ms)

    def _on_check_done(self, findings: list[str] | None) -> None:
        if findings:  # None: interrupted; []: the pages are whole
            self._stop_writing()
            self.damageFound.emit(damage_found(self._store, FOUND_BY, findings).refusal())

    def _on_check_failed(self, error: Exception) -> None:
        # the file could not be read for the check: not evidence of damage; said in the log
        log.warning("the catalog's page check did not run: %s", error)
