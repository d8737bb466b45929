"""Events recorded on other threads reach widgets on the GUI thread, through the one bridge."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication, QLabel
from pytestqt.qtbot import QtBot

from labrig.bootstrap import Services
from labrig.domain.events import EventName
from labrig.events.outbox import EventRecord, record_event
from labrig.ui.app import Gui
from labrig.ui.shell.bridge import EventBridge

LOW = {
    "volume": "/media/lab",
    "previous_level": "normal",
    "level": "high",
    "free_bytes": 12_300_000_000,
    "minutes_left": None,
}


def _in_thread(target: Callable[[], object]) -> None:
    """Run ``target`` in a plain thread; what it raises is re-raised here, not lost in the
    thread."""
    errors: list[Exception] = []

    def run() -> None:
        try:
            target()
        except Exception as exc:  # noqa: BLE001 - carried to the test thread and re-raised below
            errors.append(exc)

    worker = threading.Thread(target=run, name="test-recorder")
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "the worker thread did not finish within 10 s"
    if errors:
        raise errors[0]


def _record(name: str, payload: dict[str, Any]) -> EventRecord:
    return EventRecord(1, "e-1", name, 1, True, payload, datetime.now(UTC))


def test_event_recorded_on_a_thread_updates_the_status_bar(
    qtbot: QtBot, qapp: QApplication, services: Services, ui: Gui
) -> None:
    window, bridge = ui.window, ui.bridge
    delivered_on: list[QThread] = []
    bridge.eventRecorded.connect(lambda _event: delivered_on.append(QThread.currentThread()))
    services.start()

    def record() -> None:
        with services.store.write() as session:
            record_event(session, EventName.STORAGE_PRESSURE_CHANGED, LOW)

    with qtbot.waitSignal(bridge.eventRecorded, timeout=5000) as blocker:
        _in_thread(record)

    event = blocker.args[0]
    assert isinstance(event, EventRecord)
    assert event.name == "storage.pressure.changed" and event.payload == LOW
    storage = window.findChild(QLabel, "storageStatus")
    qtbot.waitUntil(lambda: storage.text() == "Storage: high (12.3 GB free)", timeout=5000)
    assert window.findChild(QLabel, "lastEvent").text() == "Last event: storage.pressure.changed"
    assert delivered_on == [qapp.thread()]
    services.close()


def test_publish_from_any_thread_emits_typed_signals_on_the_gui_thread(
    qtbot: QtBot, qapp: QApplication
) -> None:
    bridge = EventBridge()
    seen: list[tuple[str, int, bool]] = []
    bridge.storagePressureChanged.connect(
        lambda level, free: seen.append((level, free, QThread.currentThread() == qapp.thread()))
    )
    # 5 TB: far beyond a 32-bit int, which a plain Signal(str, int) would overflow
    payload = dict(LOW, level="normal", free_bytes=5_000_000_000_000)

    with qtbot.waitSignal(bridge.storagePressureChanged, timeout=5000):
        _in_thread(lambda: bridge.publish(_record(EventName.STORAGE_PRESSURE_CHANGED, payload)))

    assert seen == [("normal", 5_000_000_000_000, True)]


def test_other_events_do_not_emit_storage_pressure(qtbot: QtBot) -> None:
    bridge = EventBridge()
    other = _record("plugin.something.happened", {"x": 1})

    with (
        qtbot.assertNotEmitted(bridge.storagePressureChanged),
        qtbot.waitSignal(bridge.eventRecorded),
    ):
        bridge.publish(other)


def test_attach_and_detach_manage_the_dispatcher_listener(services: Services) -> None:
    bridge = EventBridge()

    bridge.attach(services)
    assert services.dispatcher_thread.listeners == [bridge.publish]
    bridge.detach(services)
    assert services.dispatcher_thread.listeners == []
