"""The runner of one recording: grab thread → bounded queue → writer thread → sink.

The grab thread only reads the device and timestamps frames; it never waits on
the disk. A full queue counts a dropped frame instead of blocking, and a gap in
frame arrival times counts the frames the device skipped: drops are counted
live and stored, never silently discarded. ``status()`` returns a frozen
snapshot any thread may read, and ``latest_frame()`` the newest frame grabbed, so
a live preview shows what is recorded without opening the device a second time.
"""

from __future__ import annotations

import hashlib
import json
import math
import queue
import shutil
import threading
import time
import uuid
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from labrig.capture.commit import CommitResult, commit_capture, count_frames
from labrig.capture.devices import DeviceInfo
from labrig.capture.manifest import ManifestV1, SegmentV1, write_manifest
from labrig.capture.sink import FrameClock, SegmentSink, now_ns
from labrig.capture.sources import FrameSource, Image, Mode, read_timed
from labrig.domain.events import EventName
from labrig.domain.recordings import RecordingPurpose
from labrig.domain.storage import PressureLevel
from labrig.errors import LabrigError
from labrig.events import record_event
from labrig.fsutil import FileLock, FolderLock, disk_full, fsync_dir
from labrig.storage import StorageMonitor
from labrig.store import Store, utcnow
from labrig.store.models import Capture
from labrig.tasks import run_below_recording

_END = None
HELD = 2**63  # a held recorder's start instant until begin() names one: after every frame
_Frame = tuple[Image, int, int, tuple[int, int] | None]  # image, mono, utc, device index and time


class RecorderState(StrEnum):
    IDLE = "idle"
    RECORDING = "recording"
    STOPPING = "stopping"
    COMMITTED = "committed"
    FAILED = "failed"


@dataclass(frozen=True)
class RecorderStatus:
    state: RecorderState
    capture_id: str
    frames: int  # frames written so far
    dropped: int  # gap drops + queue-overflow drops
    elapsed_s: float
    fps: float  # frames written per second since the start
    mb_per_s: float  # bytes on disk per second since the start (closed segments + the open one)
    segments: int  # closed segments
    stop_reason: str = ""  # why recording ended, when it was not asked to


def provisional_root(store: Store) -> Path:
    return store.root / "captures" / "provisional"


class DeviceBusyError(LabrigError):
    """The device is being recorded already (by a rig, the window or another command)."""

    code = "LABRIG_DEVICE_BUSY"


def device_lock(store: Store, device_id: str) -> FileLock:
    """The lock a recording of ``device_id`` holds in the data folder, so that no two recordings
    (in this process or another) share a device."""
    folder = store.root / "captures" / "devices"
    folder.mkdir(parents=True, exist_ok=True)
    return FileLock(folder / f"{hashlib.sha256(device_id.encode()).hexdigest()[:24]}.lock")


class Recorder:
    """Records ``source`` in ``mode`` into a new capture. Threading: call start/stop
    from one thread."""

    sink_class: type[SegmentSink] = SegmentSink

    def __init__(
        self,
        store: Store,
        source: FrameSource,
        device: DeviceInfo,
        mode: Mode,
        *,
        verification: dict[str, Any] | None = None,
        session_id: str | None = None,
        segment_seconds: float = 5.0,
        queue_seconds: float = 2.0,
        monitor: StorageMonitor | None = None,
        clock: FrameClock = now_ns,
        purpose: RecordingPurpose = RecordingPurpose.ATTEMPT,
    ) -> None:
        self.store, self.source, self.device, self.mode = store, source, device, mode
        self.purpose = purpose
        self.clock = clock  # stamps each frame as the grab thread takes it
        self.verification, self.session_id = verification or {}, session_id
        self.capture_id = str(uuid.uuid4())
        self.folder = provisional_root(store) / self.capture_id
        self.segment_seconds = segment_seconds
        self.monitor = monitor
        self._queue: queue.Queue[_Frame | None] = queue.Queue(
            max(2, round(queue_seconds * mode.fps))
        )
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._state, self._frames, self._gap_drops, self._overflow_drops = (
            RecorderState.IDLE,
            0,
            0,
            0,
        )
        self._segments, self._bytes, self._started, self._stop_reason = 0, 0, 0.0, ""
        self._ended = 0.0
        # the open segment's size on disk, read by the writer thread a few times a second
        self._open_bytes = 0
        self._size_every = max(1, round(mode.fps / 4))
        self._error: LabrigError | None = None
        self._threads: list[threading.Thread] = []
        # the newest frame grabbed, for a preview: one reference kept, waiters woken per frame
        self._newest = threading.Condition()
        self._grabbed, self._grab_ended = 0, False
        self._latest: Image | None = None
        # closed segments are decoded back while recording goes on, so stopping stays quick
        # it runs below the recording's threads: a busy machine delays the check, never a frame
        self._verifier = ThreadPoolExecutor(
            1, thread_name_prefix="labrig-verify", initializer=run_below_recording
        )
        self._decoded: dict[str, Future[int]] = {}
        # a rig's recorders stream before they record: frames before ``_begin_ns`` go to the
        # preview only, frames at or after ``_end_ns`` end the recording (host monotonic ns)
        self._begin_ns, self._end_ns = 0, math.inf
        self._recent: deque[int] = deque(maxlen=max(4, round(2 * mode.fps)))  # last 2 s, mono
        self.device_clock = hasattr(source, "read_timed")

    # -- control -------------------------------------------------------------------------------

    def start(self, *, hold: bool = False) -> str:
        """Open the device, write the provisional manifest, record
        ``capture.started``, start threads.

        ``hold``: stream (the preview sees frames) but record nothing until :meth:`begin` names
        the instant recording starts, as a rig starts all its devices at one instant.
        """
        if hold:
            self._begin_ns = HELD
        self._device_lock = device_lock(self.store, self.device.device_id)
        if not self._device_lock.acquire():
            raise DeviceBusyError(
                f"{self.device.name} ({self.device.device_id}) is being recorded already, by a "
                "rig, the window or another 'labrig record'; stop that recording first, or record "
                "another device"
            )
        try:
            self._open()
        except BaseException:
            self._device_lock.release()
            raise
        return self.capture_id

    def _open(self) -> None:
        self.mode = self.source.open(self.mode)
        self.folder.mkdir(parents=True)
        fsync_dir(self.folder.parent)
        self._lock_file = FolderLock(self.folder)
        self._lock_file.acquire()  # tells recovery in another process that this capture is alive
        self._sink = self.sink_class(
            self.folder,
            self.mode,
            self.segment_seconds,
            self._on_sink_segment_closed,
            device_clock=self.device_clock,
        )
        first = self._sink.setup()
        self._manifest = ManifestV1(
            self.capture_id,
            self.session_id,
            self.device.to_json(),
            self.mode.to_json(),
            self.verification,
            utcnow().isoformat(),
            self.segment_seconds,
            open_segment=first,
        )
        write_manifest(self.folder, self._manifest)
        if not self._begin_ns:  # not held: recording from the first frame
            self._record_start()
            self._started = time.monotonic()
        self._state = RecorderState.RECORDING
        self._threads = [
            threading.Thread(target=self._grab_loop, name="labrig-grab", daemon=True),
            threading.Thread(target=self._write_loop, name="labrig-write", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _record_start(self) -> None:
        with self.store.write() as session:
            session.add(
                Capture(
                    id=self.capture_id,
                    session_id=self.session_id,
                    device_id=self.device.device_id,
                    origin="recorded",
                    state="provisional",
                    mode=json.dumps(self.mode.to_json()),
                    verification=json.dumps(self.verification),
                    started_at=utcnow(),
                    frame_count=0,
                    dropped_frames=0,
                    provisional_dir=str(self.folder),
                    purpose=self.purpose.value,
                )
            )
            record_event(
                session,
                EventName.CAPTURE_STARTED,
                {
                    "capture_id": self.capture_id,
                    "session_id": self.session_id,
                    "device_id": self.device.device_id,
                    "manifest_path": str(self.folder / "manifest.json"),
                },
            )

    def begin(self, at_ns: int) -> None:
        """Record the frames stamped at or after ``at_ns`` (host monotonic ns), once started with
        ``hold``: the capture is catalogued (``capture.started``) now."""
        self._begin_ns = at_ns
        self._started = time.monotonic()
        self._record_start()

    def discard(self) -> None:
        """Stop a recorder started with ``hold`` that never began: it recorded nothing, so its
        folder goes and nothing is catalogued."""
        assert self._begin_ns == HELD, "only a held recorder that never began is discarded"
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self._verifier.shutdown()
        self._lock_file.release()
        self._device_lock.release()
        shutil.rmtree(self.folder, ignore_errors=True)
        self._state = RecorderState.FAILED

    def end_at(self, at_ns: int) -> None:
        """Record no frame stamped at or after ``at_ns``: the first such frame ends the grab thread
        (then :meth:`stop` commits what came before)."""
        self._end_ns = at_ns

    def wait_grab_ended(self, timeout_s: float) -> bool:
        """Wait until the grab thread has ended (the device stopped, or a frame reached
        :meth:`end_at`'s instant); whether it did within ``timeout_s``."""
        with self._newest:
            return self._newest.wait_for(lambda: self._grab_ended, timeout_s)

    def wait(self, seconds: float) -> None:
        """Record for ``seconds`` (or until the device or the disk ends the recording)."""
        self._stop.wait(seconds)

    def stop(self) -> CommitResult:
        """Stop, write out what is queued, close the last segment and commit the capture."""
        with self._lock:
            self._state = RecorderState.STOPPING
        self._stop.set()
        for thread in self._threads:
            thread.join()
        decoded = {name: future.result() for name, future in self._decoded.items()}
        self._verifier.shutdown()
        try:
            self._manifest = replace(
                self._manifest,
                open_segment=None,
                dropped_frames=self.dropped,
                stopped_utc=utcnow().isoformat(),
            )
            write_manifest(self.folder, self._manifest)
            result = commit_capture(self.store, self.folder, report=self._report(), decoded=decoded)
        except LabrigError:
            self._state = RecorderState.FAILED
            raise
        except Exception as exc:
            self._state = RecorderState.FAILED
            if full := disk_full(exc, f"recording stopped. {self._kept()}"):
                raise full from exc
            raise
        finally:
            self._lock_file.release()
            self._device_lock.release()
        self._state = RecorderState.COMMITTED
        return result

    def _kept(self) -> str:
        frames = sum(seg.frames for seg in self._manifest.segments)
        return (
            f"The {frames} frames of its {len(self._manifest.segments)} closed segments are kept "
            "in its folder; 'labrig recover' (or the next start of the window) commits them once "
            "there is room"
        )

    def _report(self) -> dict[str, Any] | None:
        report = {
            "gap_drops": self._gap_drops,
            "overflow_drops": self._overflow_drops,
            "stop_reason": self._stop_reason,
            "error_code": self._error.code if self._error else None,
        }
        return report if any(report.values()) else None

    @property
    def dropped(self) -> int:
        return self._gap_drops + self._overflow_drops

    def latest_frame(self, after: int = 0, timeout_s: float = 0.0) -> tuple[int, Image] | None:
        """The newest frame grabbed and its number (1, 2, …), once one newer than frame
        ``after`` exists.

        Waits up to ``timeout_s`` for it; None if none came in time or the grab thread has
        ended. A reader slower than the device skips frames (it always gets the newest);
        recording never waits for it. Thread-safe: any thread may call it. The array is shared
        with the writer: read it only.
        """
        with self._newest:
            self._newest.wait_for(lambda: self._grabbed > after or self._grab_ended, timeout_s)
            if self._grabbed <= after or self._latest is None:
                return None
            return self._grabbed, self._latest

    def recent_stamps(self) -> list[int]:
        """The host times (monotonic ns) of the frames recorded in about the last two seconds,
        for a live sync figure. Thread-safe."""
        with self._newest:
            return list(self._recent)

    def status(self) -> RecorderStatus:
        # a recording the device or the disk ended lasted until then
        elapsed = (self._ended or time.monotonic()) - self._started if self._started else 0.0
        return RecorderStatus(
            state=self._state,
            capture_id=self.capture_id,
            frames=self._frames,
            dropped=self.dropped,
            elapsed_s=elapsed,
            fps=self._frames / elapsed if elapsed else 0.0,
            mb_per_s=(self._bytes + self._open_bytes) / 1e6 / elapsed if elapsed else 0.0,
            segments=self._segments,
            stop_reason=self._stop_reason,
        )

    # -- threads -------------------------------------------------------------------------------

    def _grab_loop(self) -> None:
        interval_ns = 1e9 / self.mode.fps
        last, last_index = 0, -1
        utc_offset = time.time_ns() - time.monotonic_ns()
        while not self._stop.is_set():
            image, timed = read_timed(self.source, max(2.0, 4 / self.mode.fps))
            if image is None:
                self._end("the device stopped sending frames (unplugged or switched off)")
                break
            if timed is not None:  # the device's own stamp of when it was exposed
                mono, utc = timed.mono_ns, timed.mono_ns + utc_offset
            else:
                mono, utc = self.clock()
            with self._newest:
                self._grabbed, self._latest = self._grabbed + 1, image
                self._newest.notify_all()
            if mono < self._begin_ns:
                continue  # streaming, not recording yet
            if mono >= self._end_ns:
                break
            if timed is not None:  # the device's counter says which frames it skipped
                if last_index >= 0 and timed.device_index > last_index + 1:
                    self._gap_drops += timed.device_index - last_index - 1
                last_index = timed.device_index
            elif last and mono - last > 1.5 * interval_ns:
                self._gap_drops += round((mono - last) / interval_ns) - 1
            last = mono
            device = (timed.device_index, timed.device_ns) if timed is not None else None
            with self._newest:
                self._recent.append(mono)
            try:
                self._queue.put_nowait((image, mono, utc, device))
            except queue.Full:
                self._overflow_drops += 1  # the disk is behind: count it, never block the device
        self.source.close()
        with self._newest:
            self._grab_ended = True
            self._newest.notify_all()
        self._queue.put(_END)

    def _write_loop(self) -> None:
        while (item := self._queue.get()) is not _END:
            if self._error is not None:
                self._overflow_drops += 1  # nowhere to write it any more: counted as dropped
                continue
            try:
                self._sink.append(*item)
                self._frames += 1
                if self._frames % self._size_every == 0:
                    self._open_bytes = self._sink.open_bytes()
            except LabrigError as exc:
                self._error = exc
                self._end(exc.message)
        try:
            self._sink.close()
        except LabrigError as exc:
            self._error = self._error or exc

    def _end(self, reason: str) -> None:
        if not self._stop.is_set():
            self._stop_reason = reason
            self._ended = time.monotonic()
            self._stop.set()

    def _on_sink_segment_closed(self, segment: SegmentV1, next_open: str | None) -> None:
        self._segments += 1
        self._bytes, self._open_bytes = self._bytes + segment.bytes, 0
        self._manifest = replace(
            self._manifest.with_segment(segment, next_open), dropped_frames=self.dropped
        )
        write_manifest(self.folder, self._manifest)
        self._decoded[segment.name] = self._verifier.submit(
            count_frames, self.folder / segment.name
        )
        if self.monitor is not None:
            rate = self._bytes / max(time.monotonic() - self._started, 1e-3)
            if self.monitor.sample(rate).level is PressureLevel.CRITICAL:
                self._end(
                    "the disk is nearly full: recording stopped after the last complete segment"
                )


def status_json(status: RecorderStatus) -> dict[str, Any]:
    data = asdict(status)
    data["state"] = status.state.value
    return data
