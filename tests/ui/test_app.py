"""``run_gui`` shows the window, runs the loop and closes the services when the app quits."""

from __future__ import annotations

import gc
import threading
import time

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

from labrig.bootstrap import Services, bootstrap
from labrig.domain.jobs import JobState
from labrig.jobs.queue import WORKER_STOPPED
from labrig.ui.app import run_gui
from labrig.ui.shell.main_window import MainWindow
from tests.ui.jobs_helpers import LONG, SELFTEST


def _dispatcher_running() -> bool:
    return any(t.name == "labrig-dispatcher" and t.is_alive() for t in threading.enumerate())


class _QuitCatcher(QObject):
    """Counts Quit events reaching the application and swallows them, so none can end a loop."""

    def __init__(self) -> None:
        super().__init__()
        self.caught = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Quit:
            self.caught += 1
            return True
        return False


def _pending_quits(app: QApplication) -> int:
    """How many Quit events are queued for ``app`` (delivered now, into a catcher that drops
    them)."""
    catcher = _QuitCatcher()
    app.installEventFilter(catcher)
    try:
        QCoreApplication.sendPostedEvents(app, QEvent.Type.Quit)
    finally:
        app.removeEventFilter(catcher)
    return catcher.caught


def test_run_gui_shows_the_window_and_closes_services_on_quit(
    qapp: QApplication, services: Services
) -> None:
    during: dict[str, object] = {}

    def look_then_quit() -> None:
        windows = [w for w in qapp.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        during["titles"] = [w.windowTitle() for w in windows]
        during["dispatching"] = _dispatcher_running()
        # what start-up made is out of the collector's full passes while the loop runs
        during["frozen"] = gc.get_freeze_count() > 50_000
        qapp.quit()

    QTimer.singleShot(0, look_then_quit)
    code = run_gui(services, ["labrig"])

    assert code == 0
    assert during == {"titles": ["Labrig"], "dispatching": True, "frozen": True}
    assert gc.get_freeze_count() == 0  # and given back after it: the window's cycles are freed
    assert not _dispatcher_running()
    assert services.dispatcher_thread.listeners == []


def test_run_gui_leaves_no_quit_event_behind(qapp: QApplication, services: Services) -> None:
    # Regression: closing the last window during quit() posts a second Quit that
    # exec() returns before handling; left queued, it ended the next event loop on
    # this application at once (every later QEventLoop.exec() returned -1).
    QTimer.singleShot(0, qapp.quit)
    run_gui(services, ["labrig"])

    assert _pending_quits(qapp) == 0


def test_run_gui_runs_jobs_and_quitting_hands_a_running_one_back(
    qapp: QApplication, services: Services
) -> None:
    job = services.queue.enqueue(SELFTEST, config=LONG)
    deadline = time.monotonic() + 10

    def quit_once_running() -> None:
        if services.queue.get(job.id).state is JobState.RUNNING or time.monotonic() > deadline:
            qapp.quit()
        else:
            QTimer.singleShot(20, quit_once_running)

    QTimer.singleShot(0, quit_once_running)
    assert run_gui(services, ["labrig"]) == 0

    again = bootstrap(services.store.root)  # the services are closed: look with fresh ones
    try:
        view = again.queue.get(job.id)
    finally:
        again.close()
    assert (view.state, view.error_code, view.attempts) == (
        JobState.RETRY_WAITING,
        WORKER_STOPPED,
        0,
    )
