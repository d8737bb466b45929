"""Starting the GUI: where the UI parts (bridge, executor, queue monitor, window and its screens)
are composed, once, over the core services."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication

from labrig.bootstrap import Services
from labrig.capture import attempt_names
from labrig.heap import frozen_heap
from labrig.ui.screens import PAGES
from labrig.ui.shell.bridge import EventBridge
from labrig.ui.shell.catalog_check import CatalogCheck
from labrig.ui.shell.main_window import MainWindow
from labrig.ui.shell.qt_executor import QtJobExecutor
from labrig.ui.shell.queue_monitor import QueueMonitor
from labrig.ui.shell.recovery_dialog import recover_and_report

# How long quitting waits for running stages to hand their jobs back; a stage
# that does not check in time loses its lease instead, and runs again later.
SHUTDOWN_TIMEOUT_MS = 10_000


@dataclass(frozen=True)
class Gui:
    """The UI parts composed over one :class:`Services`."""

    window: MainWindow
    bridge: EventBridge
    executor: QtJobExecutor
    monitor: QueueMonitor
    catalog_check: CatalogCheck


def build_main_window(services: Services, workers: int = 2) -> Gui:
    """The bridge attached to ``services``, the job executor, and the window listening to both.

    Call on the GUI thread, with a QApplication already created. Nothing is
    started: :meth:`Services.start` delivers events, :meth:`QtJobExecutor.start`
    runs jobs, :meth:`CatalogCheck.start` checks the catalog's pages (damage found stops both, and
    the window says so).
    """
    bridge = EventBridge()
    bridge.attach(services)
    executor = QtJobExecutor(services.queue, workers)
    executor.attach(bridge)
    monitor = QueueMonitor(
        services.queue,
        bridge,
        executor.signals,
        attempt_names=partial(attempt_names, services.store),
    )
    window = MainWindow(services, bridge, monitor, PAGES)

    def stop_writing() -> None:
        executor.shutdown(0)  # claims no more; running stages hand their jobs back
        services.dispatcher_thread.stop()

    check = CatalogCheck(services.store, stop_writing, window)
    check.damageFound.connect(window.show_catalog_damage)
    return Gui(window, bridge, executor, monitor, check)


def run_gui(services: Services, argv: list[str]) -> int:
    """Show the main window and run the event loop; returns the exit code.

    Services are started after the window exists, so no early event misses the
    bridge. When the application is about to quit, the pages stop and save a
    recording in progress and join their preview and probe threads, the executor
    hands running jobs back and waits for its workers, then the services close,
    so the dispatcher thread is joined before Qt tears down the objects it
    publishes to. A catalog with damage recorded (``labrig.db.damaged``) opens for looking only:
    the window says why, and neither recovery, the dispatcher nor the executor is started.
    """
    app = QApplication.instance() or QApplication(argv)
    QCoreApplication.setApplicationName("Labrig")
    gui = build_main_window(services)

    def shut_down() -> None:
        gui.window.shut_down(SHUTDOWN_TIMEOUT_MS)  # a recording is saved before the store closes
        gui.executor.shutdown(SHUTDOWN_TIMEOUT_MS)
        gui.catalog_check.stop(SHUTDOWN_TIMEOUT_MS)
        services.close()

    app.aboutToQuit.connect(shut_down)
    gui.window.show()
    if (damaged := services.store.damage()) is not None:
        gui.window.show_catalog_damage(damaged)  # recorded before: nothing that writes is started
    else:
        recover_and_report(services, gui.window)  # before any new recording can start
        services.start()
        gui.executor.start()
        gui.catalog_check.start()  # on a pool thread: the window is already painting
    try:
        with frozen_heap():  # what start-up made: out of the full collections (labrig.heap)
            return app.exec()
    finally:
        # the QApplication may outlive this call (embedding, tests): leave it no
        # connection to services that are gone, and the dispatcher no dead bridge
        app.aboutToQuit.disconnect(shut_down)
        gui.bridge.detach(services)
        # Closing the last window during quit() posts one more Quit event, which
        # exec() returns before handling; left queued, it would end the next event
        # loop on this application at once (a second run_gui, a modal dialog).
        QCoreApplication.removePostedEvents(app, QEvent.Type.Quit)
