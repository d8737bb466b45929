"""The window's size, place, maximised state and splitter positions, kept between runs.

They are kept per user in Qt's settings (on Linux ``~/.config/Labrig/window.ini``; tests point
Qt's user scope at a folder of their own with ``QSettings.setPath``). The first time, the window
opens at :data:`OPENING_SIZE` or, on a larger screen, at four fifths of it, never larger than the
screen. Splitters are kept by object name, so every splitter worth remembering has one.

Threading contract: GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings, QSize
from PySide6.QtWidgets import QMainWindow, QSplitter, QWidget

OPENING_SIZE = QSize(1280, 800)  # the layout is checked at this size (docs/screenshots)
SHARE_OF_SCREEN = 0.8


def ui_settings() -> QSettings:
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "Labrig", "window")


def opening_size(available: QSize) -> QSize:
    """The first size: at least :data:`OPENING_SIZE` where the screen allows, more on a large
    screen, never beyond it."""
    width = max(OPENING_SIZE.width(), round(available.width() * SHARE_OF_SCREEN))
    height = max(OPENING_SIZE.height(), round(available.height() * SHARE_OF_SCREEN))
    return QSize(min(width, available.width()), min(height, available.height()))


def restore(window: QMainWindow, settings: QSettings) -> None:
    """Size and place ``window`` as it was left (or at its opening size), and its splitters."""
    geometry = settings.value("geometry")
    if not (isinstance(geometry, QByteArray) and window.restoreGeometry(geometry)):
        screen = window.screen()
        available = screen.availableGeometry().size() if screen is not None else OPENING_SIZE
        window.resize(opening_size(available))
    state = settings.value("state")
    if isinstance(state, QByteArray):
        window.restoreState(state)
    restore_splitters(window, settings)


def restore_splitters(widget: QWidget, settings: QSettings) -> None:
    """The splitters in ``widget`` as they were left (a page built after the window opened)."""
    for splitter in widget.findChildren(QSplitter):
        kept = settings.value(f"splitters/{splitter.objectName()}")
        if splitter.objectName() and isinstance(kept, QByteArray):
            splitter.restoreState(kept)


def save(window: QMainWindow, settings: QSettings) -> None:
    settings.setValue("geometry", window.saveGeometry())
    settings.setValue("state", window.saveState())
    for splitter in window.findChildren(QSplitter):
        if splitter.objectName():
            settings.setValue(f"splitters/{splitter.objectName()}", splitter.saveState())
    settings.sync()
