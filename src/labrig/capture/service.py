"""The capture service: what the GUI and the CLI call to find, verify and record devices.

Verification results are stored (passed or refused, with the reason) and a pass
records ``capture.device.connected`` in the same transaction.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from labrig.access import AccessControl
from labrig.capture.devices import DeviceInfo, DeviceKind
from labrig.capture.discovery import DiscoveryReport, DiscoverySettings, discover
from labrig.capture.instrument_recorder import InstrumentRecorder
from labrig.capture.inventory import ANY_FORMAT, Inventory, load_inventory
from labrig.capture.recorder import Recorder, RecorderState
from labrig.capture.recovery import RecoveryReport, recover
from labrig.capture.rig_camera import VirtualRig
from labrig.capture.rig_recorder import (
    RigRecording,
    check_devices,
    check_instruments,
    verify_all,
)
from labrig.capture.rigs import (
    DeviceSpec,
    Rig,
    RigDevice,
    check_rig,
    delete_rig,
    get_rig,
    list_rigs,
    store_rig,
)
from labrig.capture.samples import SampleMode, SampleSource
from labrig.capture.sink import FrameClock, SteadyClock, now_ns
from labrig.capture.sources import FrameSource, Mode
from labrig.capture.stream_recorder import StreamRecorder
from labrig.capture.verify import DeviceRefusedError, Verification, default_open_source, verify
from labrig.capture.verify_instrument import default_open_samples, streams_samples
from labrig.capture.virtual import SceneSwitch
from labrig.domain.events import EventName
from labrig.domain.recordings import RecordingPurpose
from labrig.domain.roles import Action
from labrig.errors import LabrigError, UsageError
from labrig.events import record_event
from labrig.storage import StorageMonitor
from labrig.store import Store, utcnow
from labrig.store.models import DeviceRecord

MODE_TEXT = re.compile(r"^(\d{2,5})x(\d{2,5})@(\d+(?:\.\d+)?)(?::(\w+))?$")


VIRTUAL_PROBE_S = 0.3
DEFAULT_RIG_MODE = Mode(1280, 720, 30.0, ANY_FORMAT)


def _verified_in(asked: Mode | None, mode: Mode) -> bool:
    """Whether a verdict made in ``asked`` is one for ``mode``, whose pixel format may be left to
    the inventory (``ANY_FORMAT``)."""
    if asked is None or asked == mode:
        return True
    return (
        mode.pixel_format == ANY_FORMAT and replace(mode, pixel_format=asked.pixel_format) == asked
    )


class DeviceNotFoundError(LabrigError):
    code = "LABRIG_DEVICE_NOT_FOUND"


def parse_mode(text: str) -> Mode:
    """``1280x720@30`` (pixel format from the inventory) or ``1280x720@30:MJPG`` → Mode."""
    match = MODE_TEXT.match(text.strip())
    if not match or float(match.group(3)) <= 0:
        raise UsageError(f"mode '{text}' is not WIDTHxHEIGHT@FPS[:FORMAT], e.g. 1280x720@30")
    return Mode(
        int(match.group(1)),
        int(match.group(2)),
        float(match.group(3)),
        match.group(4) or ANY_FORMAT,
    )


class CaptureService:
    def __init__(
        self,
        store: Store,
        monitor: StorageMonitor,
        *,
        settings: DiscoverySettings | None = None,
        inventory: Inventory | None = None,
        open_source: Callable[[DeviceInfo], FrameSource] | None = None,
        usb_backend: Any = None,
        access: AccessControl | None = None,
        frame_clock: Callable[[Mode], FrameClock] | None = None,
    ) -> None:
        self.store, self.monitor = store, monitor
        self._frame_clock = frame_clock
        self.access = access or AccessControl(store)
        self.settings = settings or DiscoverySettings()
        self._inventory = inventory
        # what each virtual camera shows (markers, or the board held up or laid on the plane)
        self.scenes = SceneSwitch()
        # the virtual rig's world clock, scene and each camera's timing (tests set them)
        self.virtual_rig = VirtualRig()
        self.open_source: Callable[[DeviceInfo], FrameSource] = open_source or (
            lambda device: default_open_source(device, self.scenes, self.virtual_rig)
        )
        self.usb_backend = usb_backend
        self.open_samples: Callable[[DeviceInfo], SampleSource] = lambda device: (
            default_open_samples(device, self.virtual_rig, self.usb_backend)
        )
        # the recorders this service started, to tell whether this workstation records now
        self._recorders: weakref.WeakSet[StreamRecorder[Any]] = weakref.WeakSet()

    @property
    def inventory(self) -> Inventory:
        if self._inventory is None:
            self._inventory = load_inventory()
        return self._inventory

    def discover(self) -> DiscoveryReport:
        return discover(self.settings, self.usb_backend)

    def _discover_rig(self, device_ids: Sequence[str]) -> DiscoveryReport:
        """Discovery that also looks for the IP cameras a rig names (an IP camera's id is its URL;
        one with credentials in its URL must be given with --ip, as its id hides them)."""
        urls = [i.removeprefix("ip:") for i in device_ids if i.startswith("ip:") and "***" not in i]
        extra = [u for u in urls if u not in self.settings.ip_cameras]
        settings = replace(self.settings, ip_cameras=[*self.settings.ip_cameras, *extra])
        return discover(settings, self.usb_backend)

    def find(self, device_id: str) -> DeviceInfo:
        report = self.discover()
        for device in report.devices:
            if device.device_id == device_id:
                return device
        known = ", ".join(d.device_id for d in report.devices) or "none"
        raise DeviceNotFoundError(
            f"no device '{device_id}' is connected; connected devices: {known}. "
            "Check the cable or the URL, then run 'labrig devices'"
        )

    def verify(self, device: DeviceInfo, mode: Mode | SampleMode | None) -> Verification:
        """Verify and store the verdict; a pass records ``capture.device.connected``. An
        instrument streams in the mode it announces (a rig's ``SampleMode`` is checked against it
        when the rig records)."""
        asked = mode if isinstance(mode, Mode) else None
        # the virtual cameras' pacing is their own: a short probe tells as much as a long one
        virtual = device.kind in (DeviceKind.VIRTUAL, DeviceKind.VIRTUAL_INSTRUMENT)
        probe_s = VIRTUAL_PROBE_S if virtual else 1.0
        verdict = verify(
            device,
            asked,
            self.inventory,
            self.open_source,
            probe_seconds=probe_s,
            open_samples=self.open_samples,
        )
        shown = verdict.stream or asked
        with self.store.write() as session:
            row = session.get(DeviceRecord, device.device_id)
            if row is None:
                row = DeviceRecord(device_id=device.device_id)
                session.add(row)
            row.kind, row.name, row.info = (
                device.kind.value,
                device.name,
                json.dumps(device.to_json()),
            )
            row.verified, row.inventory_entry, row.checked_at = (
                verdict.ok,
                verdict.entry_id,
                utcnow(),
            )
            row.mode = json.dumps(shown.to_json()) if shown else None
            row.measured_fps = verdict.measured.fps if verdict.measured else None
            row.reason_code, row.reason = verdict.reason_code, verdict.reason
            if verdict.ok:
                record_event(session, EventName.DEVICE_CONNECTED, verdict.to_event_payload())
        return verdict

    def start_recording(
        self,
        device_id: str,
        mode: Mode,
        *,
        planned_seconds: float = 600.0,
        session_id: str | None = None,
        segment_seconds: float = 5.0,
        purpose: RecordingPurpose = RecordingPurpose.ATTEMPT,
    ) -> Recorder:
        """Verify the device in ``mode``, check the disk can hold it, then start recording (for
        ``purpose``, stored on its capture).

        Needs the technician role once roles are enforced
        (:class:`~labrig.domain.roles.RoleRequiredError`).
        """
        self.access.require(Action.CAPTURE)
        device = self.find(device_id)
        verdict = self.verify(device, mode)
        if not verdict.ok:
            raise DeviceRefusedError(verdict.reason, code=verdict.reason_code)
        mode = verdict.requested or mode  # as the inventory lists it
        self.monitor.check_capture(mode.bytes_per_second(), planned_seconds, mode.label())
        verification = verdict.to_event_payload()
        recorder = Recorder(
            self.store,
            self.open_source(device),
            device,
            mode,
            verification=verification,
            clock=self.frame_clock(device, mode),
            session_id=session_id,
            segment_seconds=segment_seconds,
            monitor=self.monitor,
            purpose=purpose,
        )
        recorder.start()
        self._recorders.add(recorder)
        return recorder

    def recording_now(self) -> bool:
        """Whether a recording this service started is running or being saved (thread-safe)."""
        busy = (RecorderState.RECORDING, RecorderState.STOPPING)
        return any(r.status().state in busy for r in list(self._recorders))

    # -- rigs ----------------------------------------------------------------------------------

    def rigs(self) -> list[Rig]:
        return list_rigs(self.store)

    def add_rig(
        self,
        name: str,
        specs: Sequence[DeviceSpec],
        verified: Mapping[str, Verification] | None = None,
    ) -> Rig:
        """Make the rig ``name`` of connected devices, each verified in its mode (refused, naming
        the device, when one is not connected or fails); the verdicts are stored as for one
        device. A device's mode defaults to 1280x720@30 (as the inventory lists it), its place to
        the virtual rig camera's place or ``camN``. ``verified``: verdicts already made (and
        stored) by device id, as the window's device checks make them; a device passed in its
        mode there is not probed again."""
        self.access.require(Action.CAPTURE)
        found = {d.device_id: d for d in self._discover_rig([s.device_id for s in specs])}
        devices = []
        for n, spec in enumerate(specs, start=1):
            info = found.get(spec.device_id)
            place = spec.place or (info.descriptors.get("place") if info else None) or f"cam{n}"
            devices.append(RigDevice(spec.device_id, spec.mode or DEFAULT_RIG_MODE, str(place)))
        check_rig(name, devices)
        draft = Rig(name, tuple(devices))
        pairs = check_devices(draft, list(found.values()), self.streams_samples)
        known = dict(verified or {})

        def check(device: DeviceInfo, mode: Mode) -> Verification:
            verdict = known.get(device.device_id)
            if verdict is not None and verdict.ok and _verified_in(verdict.requested, mode):
                return verdict
            return self.verify(device, mode)

        verdicts = verify_all(draft, pairs, check)
        devices = [
            RigDevice(d.device_id, v.stream or v.requested or d.mode, d.place)
            for d, v in zip(devices, verdicts, strict=True)
        ]
        return store_rig(self.store, name, devices, self.access.actor().user)

    def remove_rig(self, name: str) -> None:
        self.access.require(Action.CAPTURE)
        delete_rig(self.store, name)

    def start_rig_recording(
        self,
        rig_name: str,
        session_id: str,
        *,
        planned_seconds: float = 600.0,
        segment_seconds: float = 5.0,
    ) -> RigRecording:
        """Check every device of the rig is connected, free and verified in its mode, and that
        the disk holds them all for ``planned_seconds``; then start them streaming and begin
        recording all at one instant (:class:`~labrig.capture.rig_recorder.RigRecording`)."""
        self.access.require(Action.CAPTURE)
        rig = get_rig(self.store, rig_name)
        found = self._discover_rig([d.device_id for d in rig.devices])
        pairs = check_devices(rig, found, self.streams_samples)
        verdicts = verify_all(rig, pairs, self.verify)
        check_instruments(rig, verdicts)
        modes = [
            v.stream or v.requested or d.mode for (d, _), v in zip(pairs, verdicts, strict=True)
        ]
        self.monitor.check_capture(
            sum(m.bytes_per_second() for m in modes),
            planned_seconds,
            f"the rig '{rig.name}' ({len(modes)} devices)",
        )
        recorders: list[StreamRecorder[Any]] = []
        for n, ((_, info), mode, verdict) in enumerate(zip(pairs, modes, verdicts, strict=True)):
            common: dict[str, Any] = {
                "verification": verdict.to_event_payload(),
                "session_id": session_id,
                "segment_seconds": segment_seconds,
                "monitor": self.monitor,
            }
            if isinstance(mode, SampleMode):
                recorders.append(
                    InstrumentRecorder(self.store, self.open_samples(info), info, mode, **common)
                )
            else:
                recorders.append(
                    Recorder(
                        self.store,
                        self.open_source(info),
                        info,
                        mode,
                        clock=self.frame_clock(info, mode),
                        # the cameras close their segments in turn, not all at one instant: a
                        # closing (fsync, hash, a new file) is a burst of work for the host
                        first_segment_share=1.0 - n / len(pairs),
                        **common,
                    )
                )
        recording = RigRecording(self.store, rig, session_id, recorders)
        self._recorders.update(recorders)
        recording.start()
        return recording

    def streams_samples(self, device: DeviceInfo) -> bool:
        """Whether ``device`` is an instrument Labrig records samples from (its inventory entry
        names the protocol it streams in)."""
        return streams_samples(device, self.inventory.match(device))

    def frame_clock(self, device: DeviceInfo, mode: Mode) -> FrameClock:
        """The clock a new recording of ``device`` in ``mode`` stamps its frames with: the one given
        to this service (a test's), else the virtual camera's own (frame n, n periods after the
        first: the scene's time), else the wall clock as each frame arrives."""
        if self._frame_clock is not None:
            return self._frame_clock(mode)
        if device.kind is DeviceKind.VIRTUAL:
            return SteadyClock(mode.fps)
        return now_ns

    def recover(self) -> RecoveryReport:
        return recover(self.store)
