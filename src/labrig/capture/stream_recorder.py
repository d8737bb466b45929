"""What every recording shares, whatever the device: grab thread → bounded queue → writer → sink.

A camera's recorder (:class:`~labrig.capture.recorder.Recorder`) and an instrument's
(:class:`~labrig.capture.instrument_recorder.InstrumentRecorder`) differ in what their grab thread
reads (frames, blocks of samples) and what their sink writes (MJPEG segments, chunks of rows). The
rest is this: the device's lock, the provisional manifest written before the first item and at
each closed segment, a held start and one begin instant for a rig, the writer thread, the segments
verified back while recording goes on, the stop that commits through the verified hash, and a
status any thread may read.
"""

from __future__ import annotations

import json
import math
import queue
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from labrig.capture.commit import CommitResult, commit_capture, count_frames
from labrig.capture.devices import DeviceInfo
from labrig.capture.manifest import ManifestV1, SegmentV1, write_manifest
from labrig.capture.recording_state import (
    HELD,
    DeviceBusyError,
    RecorderState,
    RecorderStatus,
    device_lock,
    provisional_root,
)
from labrig.capture.sink import SegmentClosed
from labrig.domain.events import EventName
from labrig.domain.recordings import RecordingPurpose
from labrig.domain.storage import PressureLevel
from labrig.errors import LabrigError
from labrig.events import record_event
from labrig.fsutil import FolderLock, disk_full, fsync_dir
from labrig.storage import StorageMonitor
from labrig.store import Store, utcnow
from labrig.store.models import Capture
from labrig.tasks import run_below_recording

_END = None


class StreamMode(Protocol):
    """A camera's :class:`~labrig.capture.sources.Mode` or an instrument's
    :class:`~labrig.capture.samples.SampleMode`."""

    @property
    def fps(self) -> float: ...

    def label(self) -> str: ...

    def to_json(self) -> dict[str, Any]: ...


ModeT = TypeVar("ModeT", bound=StreamMode)


class Sink(Protocol):
    def setup(self) -> str: ...

    def append(self, *item: Any) -> None: ...

    def open_bytes(self) -> int: ...

    def close(self) -> None: ...


SinkFactory = Callable[..., Sink]


class StreamRecorder(Generic[ModeT]):
    """One recording of one device into a new capture. Threading: call start/stop from one
    thread; status from any. Subclasses read the device (``_open_source``, ``_grab_loop``) and
    name their sink (``_make_sink``)."""

    def __init__(
        self,
        store: Store,
        device: DeviceInfo,
        mode: ModeT,
        *,
        verification: dict[str, Any] | None,
        session_id: str | None,
        segment_seconds: float,
        queue_items: int,
        monitor: StorageMonitor | None,
        purpose: RecordingPurpose,
    ) -> None:
        self.store, self.device, self.mode = store, device, mode
        self.purpose = purpose
        self.verification, self.session_id = verification or {}, session_id
        self.capture_id = str(uuid.uuid4())
        self.folder = provisional_root(store) / self.capture_id
        self.segment_seconds = segment_seconds
        self.monitor = monitor
        self._queue: queue.Queue[Any] = queue.Queue(max(2, queue_items))
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._state = RecorderState.IDLE
        self._frames, self._gap_drops, self._overflow_drops = 0, 0, 0
        self._segments, self._bytes, self._started, self._stop_reason = 0, 0, 0.0, ""
        self._ended = 0.0
        # the open segment's size on disk, read by the writer thread a few times a second
        self._open_bytes = 0
        self._size_every, self._items = max(1, round(mode.fps / 4)), 0
        self._error: LabrigError | None = None
        self._threads: list[threading.Thread] = []
        # the newest item grabbed, for a preview: waiters woken per item
        self._newest = threading.Condition()
        self._grabbed, self._grab_ended = 0, False
        # closed segments are verified back while recording goes on, so stopping stays quick;
        # it runs below the recording's threads: a busy machine delays the check, never a frame
        self._verifier = ThreadPoolExecutor(
            1, thread_name_prefix="labrig-verify", initializer=run_below_recording
        )
        self._decoded: dict[str, Future[int]] = {}
        # a rig's recorders stream before they record: items before ``_begin_ns`` go to the
        # preview only, items at or after ``_end_ns`` end the recording (host monotonic ns)
        self._begin_ns, self._end_ns = 0, math.inf
        self.device_clock = False

    # -- what a kind of device supplies --------------------------------------------------------

    def _open_source(self) -> ModeT:
        raise NotImplementedError

    def _close_source(self) -> None:
        raise NotImplementedError

    def _make_sink(self, on_closed: SegmentClosed) -> Sink:
        raise NotImplementedError

    def _grab_loop(self) -> None:
        raise NotImplementedError

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
        self.mode = self._open_source()
        self.folder.mkdir(parents=True)
        fsync_dir(self.folder.parent)
        self._lock_file = FolderLock(self.folder)
        self._lock_file.acquire()  # tells recovery in another process that this capture is alive
        self._sink = self._make_sink(self._on_sink_segment_closed)
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
        if not self._begin_ns:  # not held: recording from the first item
            self._record_start()
            self._started = time.monotonic()
        self._state = RecorderState.RECORDING
        self._threads = [
            threading.Thread(target=self._grab_loop_then_end, name="labrig-grab", daemon=True),
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
        """Record what is stamped at or after ``at_ns`` (host monotonic ns), once started with
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
        """Record nothing stamped at or after ``at_ns``: the first such item ends the grab thread
        (then :meth:`stop` commits what came before)."""
        self._end_ns = at_ns

    def wait_streaming(self, timeout_s: float) -> bool:
        """Wait until the device has sent something (or stopped); whether it sent something."""
        with self._newest:
            self._newest.wait_for(lambda: self._grabbed > 0 or self._grab_ended, timeout_s)
            return self._grabbed > 0

    def wait_grab_ended(self, timeout_s: float) -> bool:
        """Wait until the grab thread has ended (the device stopped, or an item reached
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

    def _grab_loop_then_end(self) -> None:
        try:
            self._grab_loop()
        finally:
            self._close_source()
            with self._newest:
                self._grab_ended = True
                self._newest.notify_all()
            self._queue.put(_END)

    def _write_loop(self) -> None:
        while (item := self._queue.get()) is not _END:
            if self._error is not None:
                self._overflow_drops += self._count(item)  # nowhere to write it: dropped
                continue
            try:
                self._sink.append(*item)
                self._frames += self._count(item)
                self._items += 1
                if self._items % self._size_every == 0:
                    self._open_bytes = self._sink.open_bytes()
            except LabrigError as exc:
                self._error = exc
                self._end(exc.message)
        try:
            self._sink.close()
        except LabrigError as exc:
            self._error = self._error or exc

    def _count_closed(self, path: Path) -> int:
        """The frames (or samples) a closed segment holds, read back from the disk."""
        return count_frames(path)

    def _count(self, item: Any) -> int:
        """The frames (or samples) a queued item holds."""
        return 1

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
            self._count_closed, self.folder / segment.name
        )
        if self.monitor is not None:
            rate = self._bytes / max(time.monotonic() - self._started, 1e-3)
            if self.monitor.sample(rate).level is PressureLevel.CRITICAL:
                self._end(
                    "the disk is nearly full: recording stopped after the last complete segment"
                )
