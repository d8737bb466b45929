"""What the window's pages are built from, and what it asks of a page when it closes.

The window knows its pages only as :class:`PageSpec` s: a key, a title and a factory that receives a
:class:`PageContext` and hands the page only what it uses (the screens are listed in
:mod:`labrig.ui.screens`), so a page gets its collaborators in ``__init__`` like every other widget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from PySide6.QtWidgets import QWidget

from labrig.bootstrap import Services
from labrig.ui.shell.bridge import EventBridge
from labrig.ui.shell.device_checks import DeviceChecks
from labrig.ui.shell.queue_monitor import QueueMonitor


@dataclass(frozen=True)
class PageContext:
    """What pages are built from."""

    services: Services
    bridge: EventBridge
    monitor: QueueMonitor
    devices: DeviceChecks  # the window's one list of devices and verdicts, shared by the pages


PageFactory = Callable[[PageContext], QWidget]


@runtime_checkable
class ShutsDown(Protocol):
    """A page with threads or a recording of its own: the window calls this when it closes."""

    def shut_down(self, timeout_ms: int) -> None: ...


@dataclass(frozen=True)
class PageSpec:
    """One navigation entry: a stable key, the title shown, and how to build its page."""

    key: str
    title: str
    factory: PageFactory
