"""UI fixtures: real services over this test's own store, and the window built the app's way."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from labrig.bootstrap import Services, bootstrap
from labrig.scenarios.reference_check import release_health_check
from labrig.store import Store
from labrig.ui.app import Gui, build_main_window
from labrig.ui.shell.bridge import EventBridge
from tests.ui.jobs_helpers import TEST_LEASE
from tests.ui.review_helpers import bench, review_template, rig  # noqa: F401 (the Review tests')


@pytest.fixture
def services(store: Store) -> Iterator[Services]:
    """Services over the test's store, polling fast and leasing briefly so tests stay
    quick; not started."""
    built = bootstrap(
        store=store, poll_seconds=0.05, lease=TEST_LEASE, health_check=release_health_check
    )
    yield built
    built.close()


@pytest.fixture
def bridge(services: Services) -> Iterator[EventBridge]:
    """A bridge attached to the test's services (whichever ``services`` the module uses)."""
    made = EventBridge()
    made.attach(services)
    yield made
    made.detach(services)


@pytest.fixture
def ui(qtbot: QtBot, services: Services) -> Iterator[Gui]:
    """The window, bridge, executor and queue monitor; nothing started. Workers are
    stopped afterwards."""
    gui = build_main_window(services)
    qtbot.addWidget(gui.window)
    yield gui
    gui.executor.shutdown(5000)
    gui.bridge.detach(services)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/ui drives Qt widgets: mark it ``gui`` so ``pytest -m
    gui`` runs them all."""
    for item in items:
        if "tests/ui/" in item.path.as_posix():
            item.add_marker(pytest.mark.gui)
