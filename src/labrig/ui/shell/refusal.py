"""A refusal at start-up shown in a message box: a window started from a menu has no terminal."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication, QMessageBox

from labrig.errors import LabrigError

# platforms with no screen: nobody would see the box, and a modal one would never be closed
HEADLESS_PLATFORMS = frozenset({"offscreen", "minimal"})


def refusal_box(error: LabrigError) -> QMessageBox:
    # CLI messages follow "labrig: CODE: ", a box starts them
    text = error.message[:1].upper() + error.message[1:]
    box = QMessageBox(
        QMessageBox.Icon.Warning, "Labrig cannot start", text if text.endswith(".") else text + "."
    )
    box.setInformativeText(f"Error code: {error.code}")
    box.setStandardButtons(QMessageBox.StandardButton.Close)
    return box


def show_refusal(error: LabrigError) -> bool:
    """Show ``error`` modally where a screen exists; True when it was shown.

    Call on the main thread before the main window exists. The caller still prints it and exits.
    """
    app = QApplication.instance() or QApplication(sys.argv[:1])  # held: the box needs it alive
    if not isinstance(app, QApplication) or app.platformName() in HEADLESS_PLATFORMS:
        return False  # a bare QCoreApplication has no widgets to show a box with
    refusal_box(error).exec()
    return True
