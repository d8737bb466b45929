"""Driving the Results and Calibration pages the way a reviewer does: clicking rows and waiting."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableView
from pytestqt.qtbot import QtBot

WAIT_MS = 10_000


def click_row(qtbot: QtBot, table: QTableView, row: int) -> None:
    rect = table.visualRect(table.model().index(row, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
