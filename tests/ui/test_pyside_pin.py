"""Regression for the PySide6 6.12.0 crash that pins PySide6-Essentials to 6.11.3.

6.12.0 drops a reference to ``True`` on every ``Signal(bool).emit(True)``; on
CPython 3.11, where ``True`` is not immortal, its count reaches zero and the
interpreter aborts in ``bool_dealloc``.
"""

from __future__ import annotations

import sys

import PySide6
from PySide6.QtCore import QObject, Signal, Slot


class _Toggle(QObject):
    toggled = Signal(bool)

    def __init__(self) -> None:
        super().__init__()
        self.received = 0
        self.toggled.connect(self._on_self_toggled)

    @Slot(bool)
    def _on_self_toggled(self, value: bool) -> None:
        self.received += 1  # keep no reference to ``value``: the count must come back exactly


def test_pyside_is_the_pinned_version() -> None:
    assert PySide6.__version__ == "6.11.3", (
        "PySide6-Essentials is pinned to 6.11.3 because 6.12.0 crashes CPython 3.11 "
        "(bool_dealloc) after Signal(bool).emit(True); re-run test_emitting_true_keeps_"
        "its_refcount before moving the pin"
    )


def test_emitting_true_keeps_its_refcount() -> None:
    toggle = _Toggle()
    before = sys.getrefcount(True)
    for _ in range(5000):
        toggle.toggled.emit(True)
    after = sys.getrefcount(True)

    assert toggle.received == 5000
    assert after == before
