"""What the window's pages are built from, and what it asks of a page when it closes.

The window knows its pages only as :class:`PageSpec` s: a key, a title and a factory that receives a
:class:`PageContext` and hands the page only what it uses (the screens are listed in
:mod:`labrig.ui.screens`), so a page gets its collaborators in ``__init__`` like every other widget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from PySide6.QtCore import QObject, SignalInstance
from PySide6.QtWidgets import QWidget

from labrig.bootstrap import Services
from labrig.ui.shell.bridge import EventBridge
from labrig.ui.shell.queue_monitor import QueueMonitor

if TYPE_CHECKING:
    from labrig.ui.shell.device_checks import DeviceChecks


class PageContext:
    """What pages are built from. ``owner``: the window, parent of the device checks."""

    def __init__(
        self, services: Services, bridge: EventBridge, monitor: QueueMonitor, owner: QObject
    ) -> None:
        self.services, self.bridge, self.monitor = services, bridge, monitor
        self._owner = owner

    @cached_property
    def devices(self) -> DeviceChecks:
        """The window's one list of devices and verdicts, shared by the pages: made (with the
        capture service) when a page that opens devices is first built."""
        from labrig.ui.shell.device_checks import DeviceChecks

        return DeviceChecks(self.services.capture, self._owner)

    @property
    def devices_made(self) -> bool:
        return "devices" in self.__dict__


PageFactory = Callable[[PageContext], QWidget]


@runtime_checkable
class ShutsDown(Protocol):
    """A page with threads or a recording of its own: the window calls this when it closes."""

    def shut_down(self, timeout_ms: int) -> None: ...


@runtime_checkable
class Records(Protocol):
    """A page that records: the window asks before it closes during a recording."""

    def recording_in_progress(self) -> str | None:
        """What is being recorded, in a few words, or None."""
        ...


@runtime_checkable
class ImportsVideo(Protocol):
    """The page File ▸ Import video… opens its dialog on."""

    def open_import_dialog(self) -> None: ...


@runtime_checkable
class ChangesStatus(Protocol):
    """A page that changes what the status bar shows (the sync destination): the window reads the
    status again when ``statusChanged`` is emitted."""

    statusChanged: SignalInstance


@runtime_checkable
class Navigates(Protocol):
    """A page with links to other pages: ``navigateRequested`` carries the key of the page to
    show."""

    navigateRequested: SignalInstance


@dataclass(frozen=True)
class PageSpec:
    """One navigation entry: a stable key, the title shown, and how to build its page."""

    key: str
    title: str
    factory: PageFactory
