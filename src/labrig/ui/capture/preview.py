"""Live preview: frames read and converted to QImage on a pool thread, shown by the GUI thread.

A :class:`FrameFeed` says where frames come from: a device opened for preview
(:class:`SourceFeed`), or the recorder's newest frame while it records
(:class:`RecorderFeed`), so the device is never opened twice. A
:class:`PreviewStream` runs one feed at a time.

Threading contract: build and drive a :class:`PreviewStream` on the GUI thread;
its signals are emitted there. The feed is opened, read, converted (scaled, then
copied into a QImage) and closed on the stream's one pool thread, which touches
no widget. At most one converted frame waits for the GUI at a time: while the
GUI has not shown the last one, newer frames are read and skipped, never queued.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

import cv2
import numpy as np
from PySide6.QtCore import QCoreApplication, QObject, QRunnable, Qt, QThreadPool, Signal, Slot
from PySide6.QtGui import QImage

from labrig.capture import FrameSource, Image, Mode, Recorder, RecorderState
from labrig.errors import LabrigError

log = logging.getLogger(__name__)

DEVICE_SILENT = (
    "The camera stopped sending pictures (unplugged, switched off, or used by another program). "
    "Check its cable and power, then pick it again in the device list."
)
RECORDER_POLL_S = 0.1  # how often a waiting RecorderFeed looks whether it was asked to stop


def to_qimage(image: Image, fit: tuple[int, int] | None = None) -> QImage:
    """A BGR H×W×3 frame as an RGB QImage that owns its pixels, shrunk to fit ``fit``
    (never enlarged).

    Pure and thread-safe: call it on a worker thread (QImage, unlike QPixmap, may live there).
    """
    height, width = image.shape[:2]
    if fit is not None and fit[0] > 0 and fit[1] > 0:
        scale = min(fit[0] / width, fit[1] / height)
        if scale < 1.0:
            size = (max(1, round(width * scale)), max(1, round(height * scale)))
            image = np.asarray(
                cv2.resize(image, size, interpolation=cv2.INTER_AREA), dtype=np.uint8
            )
    image = np.ascontiguousarray(image)
    height, width = image.shape[:2]
    # copy(): the QImage must own its pixels, the array goes away with this frame
    return QImage(image.data, width, height, image.strides[0], QImage.Format.Format_BGR888).copy()


class FrameFeed(Protocol):
    """Where preview frames come from. Threading: every method runs on the preview thread."""

    #: Why :meth:`read` returned None, in a technician's words
    #: ("" when asked to stop or nothing to say).
    end_reason: str

    def open(self) -> None: ...

    def read(self, stop: threading.Event) -> Image | None:
        """The next frame; None when the feed ended or ``stop`` is set."""
        ...

    def close(self) -> None: ...


class SourceFeed:
    """A device opened for preview only, in the mode it was verified in.

    ``make_source`` builds the frame source on the preview thread too: building one may
    take a while (the virtual camera renders its noise), and none of it belongs on the GUI thread.
    """

    def __init__(self, make_source: Callable[[], FrameSource], mode: Mode) -> None:
        self._make_source, self.mode, self.end_reason = make_source, mode, ""
        self._source: FrameSource | None = None

    def open(self) -> None:
        self._source = self._make_source()
        self.mode = self._source.open(self.mode)

    def read(self, stop: threading.Event) -> Image | None:
        assert self._source is not None
        image = self._source.read(timeout_s=max(2.0, 4 / self.mode.fps))
        if image is None and not stop.is_set():
            self.end_reason = DEVICE_SILENT
        return image

    def close(self) -> None:
        if self._source is not None:
            self._source.close()


class RecorderFeed:
    """The newest frame the recorder grabbed; the recorder holds the device, this
    feed opens nothing."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder, self.end_reason, self._seen = recorder, "", 0

    def open(self) -> None:
        pass

    def read(self, stop: threading.Event) -> Image | None:
        while not stop.is_set():
            newest = self.recorder.latest_frame(self._seen, RECORDER_POLL_S)
            if newest is not None:
                self._seen, image = newest
                return image
            status = self.recorder.status()
            if status.state is not RecorderState.RECORDING or status.stop_reason:
                return None  # the recording ended; the capture page reports why
        return None

    def close(self) -> None:
        pass


class _Fit:
    """The largest size (w, h) worth converting to: written by the GUI thread, read by
    the preview thread."""

    size: tuple[int, int] | None = None


class _PreviewSignals(QObject):
    """The private hop: emitted from the preview thread only."""

    converted = Signal(int, QImage, int)  # run generation, frame, frame number
    ended = Signal(int, str)  # run generation, reason ("" when asked to stop)


class _PreviewRun(QRunnable):
    """One feed from open to close on the preview thread; cooperative stop through ``stop``."""

    def __init__(self, feed: FrameFeed, generation: int, hop: _PreviewSignals, fit: _Fit) -> None:
        super().__init__()
        self.feed, self.generation, self._hop, self._fit = feed, generation, hop, fit
        self.stop = threading.Event()
        self.finished = threading.Event()  # set once the feed is closed: the device is free again
        # the GUI showed the last frame sent: the next may be converted
        self.shown = threading.Event()
        self.shown.set()

    def run(self) -> None:
        reason = ""
        try:
            self.feed.open()
            reason = self._loop()
        except LabrigError as exc:
            reason = exc.message
        except (
            Exception
        ) as exc:  # a broken driver must end the preview with words, not kill the thread
            log.exception("the preview failed")
            reason = f"The preview stopped: {type(exc).__name__}: {exc}. Pick the device again."
        finally:
            self._close()
        self._hop.ended.emit(self.generation, "" if self.stop.is_set() else reason)

    def _loop(self) -> str:
        number = 0
        while not self.stop.is_set():
            image = self.feed.read(self.stop)
            if image is None:
                return self.feed.end_reason
            number += 1
            if self.shown.is_set():  # else the GUI is behind: skip this frame rather than queue it
                self.shown.clear()
                self._hop.converted.emit(self.generation, to_qimage(image, self._fit.size), number)
        return ""

    def _close(self) -> None:
        try:
            self.feed.close()
        except Exception:  # closing a vanished device may fail; the device is free either way
            log.exception("closing the preview feed failed")
        finally:
            self.finished.set()


class PreviewStream(QObject):
    """Runs one :class:`FrameFeed` at a time; a new :meth:`start` stops the previous feed first."""

    #: A converted frame and its number in the feed (1, 2, …); emitted on the GUI thread.
    frameReady = Signal(QImage, int)
    #: The running feed ended by itself: why, in words.
    #: Emitted on the GUI thread; not emitted after :meth:`stop`.
    previewEnded = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._fit = _Fit()
        self._pool = QThreadPool(self)
        # one feed at a time: a device is closed before it is opened again
        self._pool.setMaxThreadCount(1)
        self._hop = _PreviewSignals(self)
        queued = Qt.ConnectionType.QueuedConnection
        self._hop.converted.connect(self._on_run_converted, queued)
        self._hop.ended.connect(self._on_run_ended, queued)
        self._generation = 0
        self._run: _PreviewRun | None = None

    @property
    def running(self) -> bool:
        return self._run is not None

    def fit_to(self, width: int, height: int) -> None:
        """Convert frames no larger than ``width`` × ``height`` from now on (the view's size)."""
        self._fit.size = (width, height)

    def start(self, feed: FrameFeed) -> threading.Event:
        """Stop the running feed, then run ``feed``;
        returns the event set once ``feed`` is closed."""
        self.stop()
        self._generation += 1
        self._run = _PreviewRun(feed, self._generation, self._hop, self._fit)
        self._pool.start(self._run)
        return self._run.finished

    def stop(self) -> threading.Event | None:
        """Ask the running feed to stop; returns the event set once its device is closed
        (None: nothing ran).

        Returns at once: wait on the event from a worker thread, never on the GUI thread.
        """
        run, self._run = self._run, None
        if run is None:
            return None
        run.stop.set()
        self._generation += 1  # whatever that run still sends is stale
        return run.finished

    def shut_down(self, timeout_ms: int) -> bool:
        """Stop and wait for the preview thread; False if it did not end in time."""
        self.stop()
        done = self._pool.waitForDone(timeout_ms)
        QCoreApplication.sendPostedEvents(self)
        return done

    @Slot(int, QImage, int)
    def _on_run_converted(self, generation: int, image: QImage, number: int) -> None:
        run = self._run
        if run is None or generation != run.generation:
            return
        # receivers paint it now (direct connections on this thread)
        self.frameReady.emit(image, number)
        run.shown.set()

    @Slot(int, str)
    def _on_run_ended(self, generation: int, reason: str) -> None:
        run = self._run
        if run is None or generation != run.generation:
            return
        self._run = None
        self.previewEnded.emit(reason)
