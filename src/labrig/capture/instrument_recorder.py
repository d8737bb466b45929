"""The runner of one instrument's recording: blocks of samples → bounded queue → writer → chunks.

As a camera's recorder (:class:`~labrig.capture.stream_recorder.StreamRecorder` holds what they
share): the grab thread only reads blocks and never waits on the disk, a full queue counts its
samples dropped, a gap in the instrument's sample counter counts the samples it lost, and every
chunk goes through the provisional manifest → verified hash → commit. Each sample is stamped on
the host's monotonic clock by the driver (the clock the cameras' frames are stamped on) and keeps
its instant on the instrument's own clock. ``recent_samples()`` gives the last seconds for a live
plot without opening the instrument a second time.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from typing import Any

import numpy as np

from labrig.capture.devices import DeviceInfo
from labrig.capture.sample_sink import SampleSink
from labrig.capture.samples import SampleBlock, SampleMode, SampleSource, Values
from labrig.capture.sink import SegmentClosed
from labrig.capture.stream_recorder import StreamRecorder
from labrig.domain.recordings import RecordingPurpose
from labrig.errors import LabrigError
from labrig.storage import StorageMonitor
from labrig.store import Store

PLOT_SECONDS = 5.0  # what recent_samples() keeps


class InstrumentRecorder(StreamRecorder[SampleMode]):
    """Records ``source`` into a new capture of sample chunks. Threading: call start/stop from
    one thread; status and recent_samples from any."""

    def __init__(
        self,
        store: Store,
        source: SampleSource,
        device: DeviceInfo,
        mode: SampleMode,
        *,
        verification: dict[str, Any] | None = None,
        session_id: str | None = None,
        segment_seconds: float = 5.0,
        queue_blocks: int = 512,
        monitor: StorageMonitor | None = None,
        purpose: RecordingPurpose = RecordingPurpose.ATTEMPT,
    ) -> None:
        super().__init__(
            store,
            device,
            mode,
            verification=verification,
            session_id=session_id,
            segment_seconds=segment_seconds,
            queue_items=queue_blocks,
            monitor=monitor,
            purpose=purpose,
        )
        self.source = source
        self.device_clock = True
        self._plot_lock = threading.Lock()
        self._plot: deque[SampleBlock] = deque()

    def _open_source(self) -> SampleMode:
        return self.source.open(self.mode)

    def _close_source(self) -> None:
        self.source.close()

    def _make_sink(self, on_closed: SegmentClosed) -> SampleSink:
        return SampleSink(self.folder, self.mode, self.segment_seconds, on_closed)

    def _count(self, item: Any) -> int:
        return len(item[0])

    def recent_samples(self) -> tuple[Values, Values]:
        """The last :data:`PLOT_SECONDS` of samples grabbed: their host instants (monotonic s) and
        values (samples × channels). Thread-safe; recording never waits for it."""
        with self._plot_lock:
            blocks = list(self._plot)
        if not blocks:
            return np.zeros(0), np.zeros((0, len(self.mode.channels)))
        period = 1.0 / self.mode.rate_hz
        times = np.concatenate([b.mono_ns / 1e9 + np.arange(len(b)) * period for b in blocks])
        return times, np.concatenate([b.values for b in blocks])

    def _keep_for_plot(self, block: SampleBlock) -> None:
        with self._plot_lock:
            self._plot.append(block)
            while self._plot and block.mono_ns - self._plot[0].mono_ns > PLOT_SECONDS * 1e9:
                self._plot.popleft()

    def _grab_loop(self) -> None:
        expected = -1
        period_ns = 1e9 / self.mode.rate_hz
        while not self._stop.is_set():
            try:
                block = self.source.read_block(max(2.0, 64 / self.mode.rate_hz))
            except LabrigError as exc:  # it broke the protocol: what came before is kept
                self._end(exc.message)
                break
            if block is None:
                self._end("the instrument stopped sending samples (unplugged or switched off)")
                break
            with self._newest:
                self._grabbed += 1
                self._newest.notify_all()
            self._keep_for_plot(block)
            # the end instant reached: this block is the last one recorded
            ended = block.mono_ns + (len(block) - 1) * period_ns >= self._end_ns
            block = self._within(block, period_ns)
            if block is None:
                if ended:
                    break
                continue
            if expected >= 0 and block.first_index > expected:
                self._gap_drops += block.first_index - expected  # the instrument's counter
            expected = block.first_index + len(block)
            try:
                self._queue.put_nowait((block,))
            except queue.Full:
                self._overflow_drops += len(block)  # the disk is behind: counted, never waited
            if ended:
                break

    def _within(self, block: SampleBlock, period_ns: float) -> SampleBlock | None:
        """The part of ``block`` stamped from the begin instant to before the end instant; None
        when none of it is."""
        stamps = block.mono_ns + np.arange(len(block)) * period_ns
        keep = (stamps >= self._begin_ns) & (stamps < self._end_ns)
        if not keep.any():
            return None
        first = int(np.argmax(keep))
        last = len(block) - int(np.argmax(keep[::-1]))
        if first == 0 and last == len(block):
            return block
        return SampleBlock(
            block.first_index + first,
            block.mono_ns + round(first * period_ns),
            block.device_ns + round(first * period_ns),
            block.values[first:last],
        )
