"""The one bridge from core events to Qt signals on the GUI thread.

Threading contract: construct an :class:`EventBridge` on the GUI thread (its
thread affinity decides where its signals are emitted). :meth:`EventBridge.publish`
may be called from any thread; every public signal is emitted on the GUI thread,
so any slot or plain callable connected to it runs there and may touch widgets.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal, Slot

from labrig.bootstrap import Services
from labrig.domain.events import EventName
from labrig.events import EventRecord


class EventBridge(QObject):
    """Re-emits core :class:`EventRecord` s as Qt signals, always on the GUI thread."""

    #: Every recorded event, emitted on the GUI thread.
    eventRecorded = Signal(object)
    #: ``storage.pressure.changed``: (level, free_bytes), emitted on the GUI thread.
    #: "qlonglong", not int: Qt's int is 32-bit and free bytes routinely exceed 2 GiB.
    storagePressureChanged = Signal(str, "qlonglong")  # type: ignore[arg-type]  # stubs omit C++ type names

    # Private hop: a queued connection to ourselves moves the event onto our
    # (GUI) thread before any public signal fires. Emitting the public signals
    # directly from the worker would leave plain-callable receivers (lambdas,
    # functions) running on the worker thread.
    _published = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._published.connect(self._on_self_published, Qt.ConnectionType.QueuedConnection)

    def publish(self, event: EventRecord) -> None:
        """Hand ``event`` to the GUI thread. Safe from any thread; returns at once."""
        self._published.emit(event)

    def attach(self, services: Services) -> None:
        """Receive every event the dispatcher thread announces from now on."""
        services.dispatcher_thread.listeners.append(self.publish)

    def detach(self, services: Services) -> None:
        """Stop receiving events; call before this bridge is destroyed if services outlive it."""
        if self.publish in services.dispatcher_thread.listeners:
            services.dispatcher_thread.listeners.remove(self.publish)

    @Slot(object)
    def _on_self_published(self, event: EventRecord) -> None:
        self.eventRecorded.emit(event)
        if event.name == EventName.STORAGE_PRESSURE_CHANGED:
            payload = event.payload
            self.storagePressureChanged.emit(str(payload["level"]), int(payload["free_bytes"]))
