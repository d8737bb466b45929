"""Driving the Results and Calibration pages the way a reviewer does: clicking rows and waiting."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableView
from pytestqt.qtbot import QtBot

if TYPE_CHECKING:
    from labrig.ui.common.result_plots import ResultPlots

WAIT_MS = 10_000


def click_row(qtbot: QtBot, table: QTableView, row: int) -> None:
    rect = table.visualRect(table.model().index(row, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def curves(plots: ResultPlots, name: str = "trajectory") -> list[Any]:
    """The curves drawn on one of the result's plots (``trajectory``, ``speed``…): one per track.
    The dots the player moves along the trajectories, at the frame it shows, are left out (they
    come and go with the recording's frames)."""
    drawn = getattr(plots, name).getPlotItem().listDataItems()
    return [item for item in drawn if item is not plots.positions]
