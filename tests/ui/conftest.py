"""UI fixtures: real services over this test's own store, and the window built the app's way."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from labrig.bootstrap import Services, bootstrap
from labrig.store import Store
from labrig.ui.app import build_main_window
from labrig.ui.bridge import EventBridge
from labrig.ui.main_window import MainWindow


@pytest.fixture
def services(store: Store) -> Iterator[Services]:
    """Services over the test's store, polling fast so delivery tests stay quick; not started."""
    built = bootstrap(store=store, poll_seconds=0.05)
    yield built
    built.close()


@pytest.fixture
def ui(qtbot: QtBot, services: Services) -> Iterator[tuple[MainWindow, EventBridge]]:
    window, bridge = build_main_window(services)
    qtbot.addWidget(window)
    yield window, bridge
    bridge.detach(services)
