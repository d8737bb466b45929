"""The runner of one camera's recording: grab thread → bounded queue → writer thread → sink.

The grab thread only reads the device and timestamps frames; it never waits on
the disk. A full queue counts a dropped frame instead of blocking, and a gap in
frame arrival times counts the frames the device skipped: drops are counted
live and stored, never silently discarded. ``status()`` returns a frozen
snapshot any thread may read, and ``latest_frame()`` the newest frame grabbed, so
a live preview shows what is recorded without opening the device a second time.
What every recording shares (the manifest, the commit, a rig's held start) is
:class:`~labrig.capture.stream_recorder.StreamRecorder`'s.
"""

from __future__ import annotations

import queue
import time
from collections import deque
from pathlib import Path

from labrig.capture.avi import count_avi_frames
from labrig.capture.commit import count_frames
from labrig.capture.devices import DeviceInfo
from labrig.capture.recording_state import (
    HELD,
    DeviceBusyError,
    RecorderState,
    RecorderStatus,
    device_lock,
    provisional_root,
    status_json,
)
from labrig.capture.sink import FrameClock, SegmentClosed, SegmentSink, now_ns
from labrig.capture.sources import FrameSource, Image, Mode, read_timed
from labrig.capture.stream_recorder import StreamRecorder
from labrig.domain.recordings import RecordingPurpose
from labrig.storage import StorageMonitor
from labrig.store import Store

__all__ = [
    "HELD",
    "DeviceBusyError",
    "Recorder",
    "RecorderState",
    "RecorderStatus",
    "device_lock",
    "provisional_root",
    "status_json",
]


class Recorder(StreamRecorder[Mode]):
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
        verification: dict[str, object] | None = None,
        session_id: str | None = None,
        segment_seconds: float = 5.0,
        queue_seconds: float = 2.0,
        monitor: StorageMonitor | None = None,
        clock: FrameClock = now_ns,
        purpose: RecordingPurpose = RecordingPurpose.ATTEMPT,
        first_segment_share: float = 1.0,
    ) -> None:
        super().__init__(
            store,
            device,
            mode,
            verification=dict(verification or {}),
            session_id=session_id,
            segment_seconds=segment_seconds,
            queue_items=round(queue_seconds * mode.fps),
            monitor=monitor,
            purpose=purpose,
        )
        self.source = source
        # < 1: the first segment is that share of the others (see RigRecording's staggering)
        self.first_segment_share = first_segment_share
        self.clock = clock  # stamps each frame as the grab thread takes it
        self._latest: Image | None = None
        self._recent: deque[int] = deque(maxlen=max(4, round(2 * mode.fps)))  # last 2 s, mono
        self.device_clock = hasattr(source, "read_timed")

    def _open_source(self) -> Mode:
        return self.source.open(self.mode)

    def _close_source(self) -> None:
        self.source.close()

    def _make_sink(self, on_closed: SegmentClosed) -> SegmentSink:
        return self.sink_class(
            self.folder,
            self.mode,
            self.segment_seconds,
            on_closed,
            device_clock=self.device_clock,
            first_segment_share=self.first_segment_share,
        )

    def _count_closed(self, path: Path) -> int:
        """A closed segment's frames from its AVI structure (every frame a whole JPEG, as many as
        its index lists: :mod:`labrig.capture.avi`), decoded only when that cannot be read."""
        counted = count_avi_frames(path)
        return counted if counted is not None else count_frames(path)

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
