"""Recording a rig: every device opened and streaming, then one start instant and one stop for all.

Each device keeps today's recorder (its grab thread, bounded queue, writer and segments; its
provisional manifest → verified hash → commit), and takes its device's lock, so two rigs sharing a
device cannot record at once. The rig recording is stored (``rig_recordings``) before any device
records, naming every capture, so a crash leaves enough for recovery to make the attempt from what
is salvaged. A device that fails while recording stops alone: the others go on, its capture is
committed up to the failure, and the rig recording says which device stopped and when.

:meth:`RigRecording.stop` commits every capture and measures the sync over them
(:mod:`labrig.capture.rig_sync`); making them one attempt is the pipeline's
(:func:`labrig.pipeline.save_rig_attempt`), in one transaction with the rig recording's outcome.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from labrig.capture.commit import CommitResult
from labrig.capture.devices import DeviceInfo
from labrig.capture.instrument_recorder import InstrumentRecorder
from labrig.capture.inventory import FRAME_KINDS
from labrig.capture.recorder import Recorder, RecorderStatus
from labrig.capture.rig_sync import (
    Stream,
    SyncFigures,
    capture_stream,
    instrument_stream,
    measure_sync,
)
from labrig.capture.rigs import Rig, RigDevice
from labrig.capture.samples import SampleMode
from labrig.capture.sink import now_ns
from labrig.capture.stream_recorder import StreamRecorder
from labrig.capture.verify import DeviceRefusedError, Verification
from labrig.errors import LabrigError
from labrig.store import Store, utcnow
from labrig.store.models import RigRecording as RigRecordingRow

STREAM_TIMEOUT_S = 5.0  # how long every device has to send its first frame


class RigDeviceError(LabrigError):
    """A device of the rig cannot record now: not connected, not a camera, or sent no frame."""

    code = "LABRIG_RIG_DEVICE_UNAVAILABLE"


@dataclass(frozen=True)
class RigCameraStatus:
    place: str
    device_id: str
    status: RecorderStatus  # an instrument's frames are its samples
    instrument: bool = False


@dataclass(frozen=True)
class RigStatus:
    cameras: list[RigCameraStatus]
    spread_p99_ms: float | None  # over the last two seconds; None before two cameras have frames

    @property
    def dropped(self) -> int:
        return sum(c.status.dropped for c in self.cameras)


@dataclass(frozen=True)
class RigCaptureOutcome:
    place: str
    device_id: str
    mode: str
    capture_id: str
    commit: CommitResult | None  # None when its commit failed (recovery salvages it)
    stopped: dict[str, Any] | None  # {"reason", "after_s"} when the device stopped early
    error: str | None = None
    instrument: bool = False  # an instrument's capture of samples, not a camera's

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "instrument" if self.instrument else "camera",
            "place": self.place,
            "device_id": self.device_id,
            "mode": self.mode,
            "capture_id": self.capture_id,
            "state": self.commit.state if self.commit else "provisional",
            "frames": self.commit.frame_count if self.commit else 0,
            "dropped_frames": self.commit.dropped_frames if self.commit else 0,
            "manifest_sha256": self.commit.manifest_sha256 if self.commit else None,
            "stopped": self.stopped,
            "error": self.error,
        }


@dataclass(frozen=True)
class RigResult:
    """A rig recording stopped: each capture's outcome and the sync figures over the committed
    ones (None with fewer than two)."""

    recording_id: str
    rig: str
    session_id: str
    captures: list[RigCaptureOutcome]
    sync: SyncFigures | None
    note: str = ""  # which devices stopped early, which commits failed

    @property
    def committed(self) -> list[RigCaptureOutcome]:
        """The captures committed with at least one frame (or sample): the cameras', then the
        instruments'."""
        done = [c for c in self.captures if c.commit and c.commit.frame_count]
        return sorted(done, key=lambda c: c.instrument)

    @property
    def cameras(self) -> list[RigCaptureOutcome]:
        """The cameras' captures committed with at least one frame."""
        return [c for c in self.committed if not c.instrument]

    @property
    def committed_ids(self) -> list[str]:
        return [c.capture_id for c in self.committed]


@dataclass
class RigRecording:
    """A rig being recorded. Threading: start/stop from one thread; status from any."""

    store: Store
    rig: Rig
    session_id: str
    recorders: list[StreamRecorder[Any]]
    id: str = field(default_factory=lambda: str(uuid.uuid4()))

    def start(self) -> None:
        """Store the rig recording, start every device streaming, then begin all at one instant
        once each has sent a frame. A device that fails here stops the others (nothing is kept of
        a recording that never began) and raises."""
        self._store_row()
        started: list[StreamRecorder[Any]] = []
        try:
            for recorder in self.recorders:
                recorder.start(hold=True)
                started.append(recorder)
            deadline = time.monotonic() + STREAM_TIMEOUT_S
            for place, recorder in zip(self._places(), self.recorders, strict=True):
                if not recorder.wait_streaming(max(0.0, deadline - time.monotonic())):
                    raise RigDeviceError(
                        f"{place} ({recorder.device.device_id}) opened but sent nothing in "
                        f"{STREAM_TIMEOUT_S:g} s; check its cable and that no other program uses "
                        "it, then record again"
                    )
        except BaseException:
            for recorder in started:
                recorder.discard()
            self._set_state("failed")
            raise
        slowest = max(1e9 / r.mode.fps for r in self.recorders)
        begin = now_ns()[0] + round(slowest)
        for recorder in self.recorders:
            recorder.begin(begin)

    def _places(self) -> list[str]:
        return [d.place for d in self.rig.devices]

    def _store_row(self) -> None:
        with self.store.write() as db:
            db.add(
                RigRecordingRow(
                    id=self.id,
                    rig_name=self.rig.name,
                    session_id=self.session_id,
                    state="recording",
                    started_at=utcnow(),
                    devices=json.dumps(
                        [
                            {
                                "kind": "instrument" if d.instrument else "camera",
                                "place": d.place,
                                "device_id": d.device_id,
                                "mode": r.mode.label(),
                                "capture_id": r.capture_id,
                            }
                            for d, r in zip(self.rig.devices, self.recorders, strict=True)
                        ]
                    ),
                )
            )

    def _set_state(self, state: str) -> None:
        with self.store.write() as db:
            row = db.get(RigRecordingRow, self.id)
            if row is not None:
                row.state = state

    def status(self) -> RigStatus:
        cameras = [
            RigCameraStatus(
                place, r.device.device_id, r.status(), isinstance(r, InstrumentRecorder)
            )
            for place, r in zip(self._places(), self.recorders, strict=True)
        ]
        recorders = [
            (place, r)
            for place, r in zip(self._places(), self.recorders, strict=True)
            if isinstance(r, Recorder)
        ]
        recent = [
            Stream(place, r.mode.fps, stamps)
            for place, r in recorders
            if (stamps := r.recent_stamps())
        ]
        spread = None
        if len(recent) == len(recorders) >= 2:
            figures = measure_sync(recent)
            spread = figures.spread_ms["p99"] if figures.spread_ms else None
        return RigStatus(cameras, spread)

    def wait(self, seconds: float) -> None:
        """Wait up to ``seconds``, or until every device has stopped."""
        deadline = time.monotonic() + seconds
        for recorder in self.recorders:
            recorder.wait(max(0.0, deadline - time.monotonic()))

    def all_stopped(self) -> bool:
        return all(r.status().stop_reason for r in self.recorders)

    def stop(self) -> RigResult:
        """One stop instant for all; commit every capture and measure the sync."""
        end = now_ns()[0]
        for recorder in self.recorders:
            recorder.end_at(end)
        outcomes = []
        for place, recorder in zip(self._places(), self.recorders, strict=True):
            recorder.wait_grab_ended(2.0 + 3 / recorder.mode.fps)
            why = recorder.status().stop_reason
            stopped = (
                {"reason": why, "after_s": round(recorder.status().elapsed_s, 3)} if why else None
            )
            try:
                commit, error = recorder.stop(), None
            except LabrigError as exc:
                commit, error = None, f"{exc.code}: {exc.message}"
            outcomes.append(
                RigCaptureOutcome(
                    place,
                    recorder.device.device_id,
                    recorder.mode.label(),
                    recorder.capture_id,
                    commit,
                    stopped,
                    error,
                    isinstance(recorder, InstrumentRecorder),
                )
            )
        return RigResult(
            self.id,
            self.rig.name,
            self.session_id,
            outcomes,
            sync_of(self.store, outcomes),
            _note(outcomes),
        )


def sync_of(store: Store, outcomes: Sequence[RigCaptureOutcome]) -> SyncFigures | None:
    """The sync over the outcomes' cameras committed with frames, named by their places, with the
    instruments' clocks beside them; None with fewer than two cameras."""
    done = [o for o in outcomes if o.commit and o.commit.frame_count]
    cameras = [(o.place, o.commit) for o in done if not o.instrument and o.commit]
    if len(cameras) < 2:
        return None
    return measure_sync(
        [capture_stream(store, c.manifest_sha256, p) for p, c in cameras],
        [
            instrument_stream(store, o.commit.manifest_sha256, o.place)
            for o in done
            if o.instrument and o.commit
        ],
    )


def _note(outcomes: Sequence[RigCaptureOutcome]) -> str:
    parts = []
    for o in outcomes:
        if o.error:
            parts.append(
                f"{o.place} ({o.device_id}) could not be committed ({o.error}); 'labrig recover' "
                "salvages it"
            )
        elif o.stopped:
            parts.append(
                f"{o.place} ({o.device_id}) stopped after {o.stopped['after_s']:.1f} s: "
                f"{o.stopped['reason']}"
            )
    return "; ".join(parts) + ("." if parts else "")


def check_devices(
    rig: Rig, connected: Sequence[DeviceInfo], streams_samples: Callable[[DeviceInfo], bool]
) -> list[tuple[RigDevice, DeviceInfo]]:
    """Each device of ``rig`` as discovery found it; refused when one is not connected, or gives
    neither pictures nor samples (``streams_samples``: whether an instrument does)."""
    by_id = {d.device_id: d for d in connected}
    missing = [d for d in rig.devices if d.device_id not in by_id]
    if missing:
        names = ", ".join(f"{d.place} ({d.device_id})" for d in missing)
        raise RigDeviceError(
            f"the rig '{rig.name}' names devices that are not connected: {names}. Connect them "
            "(or check the URL), run 'labrig devices', and record again; or make a rig of the "
            "devices you have"
        )
    found = [(d, by_id[d.device_id]) for d in rig.devices]
    silent = [
        f"{d.place} ({info.name})"
        for d, info in found
        if info.kind not in FRAME_KINDS and not streams_samples(info)
    ]
    if silent:
        raise RigDeviceError(
            f"the rig '{rig.name}' has devices that stream neither pictures nor samples: "
            f"{', '.join(silent)}; a rig records cameras and instruments whose inventory entry "
            "names their protocol (docs/rigs.md)"
        )
    return found


def check_instruments(rig: Rig, verdicts: Sequence[Verification]) -> None:
    """Refuse an instrument that streams otherwise than when the rig was made (another rate or
    other channels): its samples would not be what the rig says."""
    for device, verdict in zip(rig.devices, verdicts, strict=True):
        if isinstance(device.mode, SampleMode) and verdict.stream != device.mode:
            now = verdict.stream.label() if verdict.stream else "no samples"
            raise RigDeviceError(
                f"{device.place} ({device.device_id}) streams {now} now; the rig '{rig.name}' was "
                f"made with {device.mode.label()}. Set the instrument back, or make the rig again"
            )


def verify_all(
    rig: Rig,
    found: Sequence[tuple[RigDevice, DeviceInfo]],
    verify: Callable[[DeviceInfo, Any], Verification],
) -> list[Verification]:
    """Verify every device of the rig in its mode, at once (each probe on its own thread); the
    first refusal raises, naming the device."""
    with ThreadPoolExecutor(min(8, len(found)), thread_name_prefix="labrig-rig-verify") as pool:
        verdicts = list(pool.map(lambda pair: verify(pair[1], pair[0].mode), found))
    for (device, _), verdict in zip(found, verdicts, strict=True):
        if not verdict.ok:
            raise DeviceRefusedError(
                f"the rig '{rig.name}' cannot record: {device.place} ({device.device_id}): "
                f"{verdict.reason}",
                code=verdict.reason_code,
            )
    return verdicts
