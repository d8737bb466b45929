"""Discovery and verification for the whole window: one list of devices, one verdict per
device and mode.

Discovery and verification block (camera enumeration, a one-second probe), so
they run on one pool thread, one at a time: two probes at once would measure
each other's load, and every page sees the same verdicts. Every device is
verified after discovery, the one a page asks for first. Before a device is
probed, the pages using it are asked to let it go (a preview closes it); a
device being recorded is not probed until its recording ends.

Threading contract: build and call on the GUI thread; signals are emitted there.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import QObject, Signal

from labrig.capture import (
    FRAME_KINDS,
    CaptureService,
    DeviceInfo,
    DiscoveryReport,
    Mode,
    Verification,
)
from labrig.ui.shell.background import BackgroundCalls, say_error

# a preview closes its device within one frame; a stalled driver within its read timeout
RELEASE_TIMEOUT_S = 5.0
CHECKING = "Labrig is opening the device and measuring the pictures it sends (about a second)."
WAITING = "Waiting for its turn to be verified."
IN_USE = "Being recorded; it is verified again once the recording ends."
Key = tuple[str, Mode | None]


class DeviceUser(Protocol):
    """A page that opens devices (to preview or record them)."""

    def release_device(self, device_id: str) -> threading.Event | None:
        """Stop using ``device_id`` for a probe; the event is set once it is closed
        (None: not open)."""
        ...

    def recording_device(self, device_id: str) -> bool:
        """True while ``device_id`` is being recorded: it must not be probed now."""
        ...


@dataclass(frozen=True)
class Choice:
    """A device, the mode chosen for it, and its verdict in that mode (None: not verified yet)."""

    device: DeviceInfo
    mode: Mode | None
    verdict: Verification | None

    @property
    def previewable(self) -> bool:
        """Verified in a mode and gives pictures: it may be previewed and recorded."""
        return (
            self.verdict is not None
            and self.verdict.ok
            and self.mode is not None
            and self.device.kind in FRAME_KINDS
        )

    @property
    def usable_mode(self) -> Mode | None:
        """The mode as the inventory lists it (pixel format resolved), once verified."""
        return (self.verdict.requested or self.mode) if self.verdict is not None else self.mode


@dataclass(frozen=True)
class _Found:
    report: DiscoveryReport
    # per device: the inventory's modes, empty for frameless or unknown models
    modes: dict[str, tuple[Mode, ...]]


def _discover(capture: CaptureService) -> _Found:
    """Runs on the pool thread: discovery, then each device's listed modes from the inventory."""
    report = capture.discover()
    modes = {}
    for device in report.devices:
        entry = capture.inventory.match(device)
        modes[device.device_id] = (
            entry.modes if entry is not None and device.kind in FRAME_KINDS else ()
        )
    return _Found(report, modes)


class DeviceChecks(QObject):
    """The devices found, their modes and verdicts, and the order they are verified in."""

    #: Discovery ended: the device list (or the problems, or the failure) changed.
    devicesChanged = Signal()
    #: The status of one device changed (verdict arrived, check started, mode changed): its id.
    deviceChecked = Signal(str)

    def __init__(self, capture: CaptureService, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._capture = capture
        self._calls = BackgroundCalls(1, self)
        self._users: list[DeviceUser] = []
        self.devices: list[DeviceInfo] = []
        self.problems: list[str] = []  # from the last discovery, in words
        self.listed: dict[str, tuple[Mode, ...]] = {}
        self._modes: dict[str, Mode | None] = {}
        self._verdicts: dict[Key, Verification] = {}
        self._failures: dict[Key, str] = {}
        self._pending: list[str] = []
        self._checking: Key | None = None
        self.searching = self.searched = self._closing = False

    def add_user(self, user: DeviceUser) -> None:
        self._users.append(user)

    # -- reading -------------------------------------------------------------------------------

    def device(self, device_id: str) -> DeviceInfo | None:
        return next((d for d in self.devices if d.device_id == device_id), None)

    def choice(self, device_id: str) -> Choice | None:
        device = self.device(device_id)
        if device is None:
            return None
        mode = self._modes.get(device_id)
        return Choice(device, mode, self._verdicts.get((device_id, mode)))

    def status(self, device_id: str) -> tuple[str, str]:
        """The status in a word or two, and the reason in sentences."""
        key = (device_id, self._modes.get(device_id))
        if key == self._checking:
            return "Checking…", CHECKING
        if (verdict := self._verdicts.get(key)) is not None:
            if not verdict.ok:
                return "Refused", verdict.reason
            fps = f" · {verdict.measured.fps:.1f} fps" if verdict.measured else ""
            return f"Verified{fps}", verdict.reason
        if key in self._failures:
            return "Not verified", self._failures[key]
        if any(user.recording_device(device_id) for user in self._users):
            return "In use", IN_USE
        return "Waiting", WAITING

    # -- asking --------------------------------------------------------------------------------

    def search(self) -> None:
        """Discover devices (on the pool thread), then verify each one that has no verdict yet."""
        if self.searching or self._closing:
            return
        self.searching = self.searched = True
        capture = self._capture
        self._calls.submit(
            lambda: _discover(capture), self._on_discovered, self._on_discovery_failed
        )

    def set_mode(self, device_id: str, mode: Mode | None) -> None:
        self._modes[device_id] = mode
        self.prefer(device_id)

    def reverify(self, device_id: str) -> None:
        key = (device_id, self._modes.get(device_id))
        self._verdicts.pop(key, None)
        self._failures.pop(key, None)
        self.prefer(device_id)

    def prefer(self, device_id: str) -> None:
        """Verify ``device_id`` in its chosen mode next,
        unless that verdict is known or being made."""
        key = (device_id, self._modes.get(device_id))
        if device_id in self._pending:
            self._pending.remove(device_id)
        if key not in self._verdicts and key not in self._failures and key != self._checking:
            self._pending.insert(0, device_id)
        # before the check starts: a page previewing it lets go first
        self.deviceChecked.emit(device_id)
        self.verify_next()

    def verify_next(self) -> None:
        """Start the next check, if none runs; the pages call it when a recording ends."""
        if self._checking is not None or self._closing:
            return
        waiting = [d for d in self._pending if not any(u.recording_device(d) for u in self._users)]
        device = self.device(waiting[0]) if waiting else None
        if device is None:
            return
        self._pending.remove(device.device_id)
        key = (device.device_id, self._modes.get(device.device_id))
        if key in self._verdicts:  # its mode changed back to one already verified
            self.verify_next()
            return
        self._start_check(device, key)

    def _start_check(self, device: DeviceInfo, key: Key) -> None:
        self._checking = key
        self.deviceChecked.emit(device.device_id)
        closing = [e for u in self._users if (e := u.release_device(device.device_id)) is not None]
        capture, mode = self._capture, key[1]

        def check() -> Verification:  # on the pool thread
            for closed in closing:
                closed.wait(RELEASE_TIMEOUT_S)
            return capture.verify(device, mode)

        self._calls.submit(
            check,
            lambda v: self._on_checked(key, v, None),
            lambda e: self._on_checked(key, None, e),
        )

    def shut_down(self, timeout_ms: int) -> bool:
        """Start nothing new and wait for the running discovery or verification."""
        self._closing = True
        return self._calls.wait(timeout_ms)

    # -- outcomes, GUI thread ------------------------------------------------------------------

    def _on_discovered(self, found: _Found) -> None:
        self.searching = False
        self.devices, self.listed = found.report.devices, found.modes
        for device in self.devices:
            listed = found.modes.get(device.device_id, ())
            self._modes.setdefault(device.device_id, listed[0] if listed else None)
        self._pending = [
            d.device_id
            for d in self.devices
            if (d.device_id, self._modes.get(d.device_id)) not in self._verdicts
        ]
        self.problems = [p.message for p in found.report.problems]
        self.devicesChanged.emit()
        self.verify_next()

    def _on_discovery_failed(self, error: Exception) -> None:
        self.searching = False
        self.problems = [f"Could not list the devices: {say_error(error)}. Click Search again."]
        self.devicesChanged.emit()

    def _on_checked(self, key: Key, verdict: Verification | None, error: Exception | None) -> None:
        self._checking = None
        if verdict is not None:
            self._verdicts[key] = verdict
        elif error is not None:
            self._failures[key] = f"Could not be verified: {say_error(error)}. Click Verify again."
        self.deviceChecked.emit(key[0])
        self.verify_next()
