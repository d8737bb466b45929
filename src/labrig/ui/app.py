"""Starting the GUI: where the UI parts are composed, once, over the core services."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication

from labrig.bootstrap import Services
from labrig.ui.bridge import EventBridge
from labrig.ui.main_window import MainWindow


def build_main_window(services: Services) -> tuple[MainWindow, EventBridge]:
    """The bridge attached to ``services`` and the window listening to it.

    Call on the GUI thread, with a QApplication already created. Nothing is started.
    """
    bridge = EventBridge()
    bridge.attach(services)
    return MainWindow(services, bridge), bridge


def run_gui(services: Services, argv: list[str]) -> int:
    """Show the main window and run the event loop; returns the exit code.

    Services are started after the window exists, so no early event misses the
    bridge, and closed when the application is about to quit, so the dispatcher
    thread is joined before Qt tears down the objects it publishes to.
    """
    app = QApplication.instance() or QApplication(argv)
    QCoreApplication.setApplicationName("Labrig")
    window, bridge = build_main_window(services)
    app.aboutToQuit.connect(services.close)
    window.show()
    services.start()
    try:
        return app.exec()
    finally:
        # the QApplication may outlive this call (embedding, tests): leave it no
        # connection to services that are gone, and the dispatcher no dead bridge
        app.aboutToQuit.disconnect(services.close)
        bridge.detach(services)
        # Closing the last window during quit() posts one more Quit event, which
        # exec() returns before handling; left queued, it would end the next event
        # loop on this application at once (a second run_gui, a modal dialog).
        QCoreApplication.removePostedEvents(app, QEvent.Type.Quit)
