"""The Capture page's live picture: the picked device opened for preview, or the recorder's frames
while it records, and which device the preview holds open.

A device is opened by one reader at a time. Before a check or the recorder opens the device the
preview holds, :meth:`DevicePreview.let_go` stops the preview and gives the event that is set once
the device is closed; the other reader waits on it (on its own thread, never the GUI's). While
recording, the preview only looks at the recorder's frames and holds nothing.

Threading contract: GUI thread only; frames are read and converted on the stream's pool thread
(:class:`~labrig.ui.capture.preview.PreviewStream`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QImage

from labrig.capture import DeviceInfo, FrameSource, Mode, Recorder
from labrig.ui.capture.preview import PreviewStream, RecorderFeed, SourceFeed
from labrig.ui.shell.device_checks import Choice


def why_no_picture(choice: Choice | None) -> str:
    """What the preview says when the picked device cannot be shown."""
    if choice is None:
        return "Pick a camera in the device list."
    if choice.verdict is None:
        return f"Verifying {choice.device.name}…"
    if not choice.verdict.ok:
        return f"{choice.device.name} was refused; see the reason under the device list."
    return f"{choice.device.name} gives no picture stream to preview or record."


class DevicePreview(QObject):
    """A :class:`PreviewStream` that knows what it shows: ``frameReady`` and ``previewEnded`` are
    the stream's."""

    frameReady = Signal(QImage, int)
    previewEnded = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.stream = PreviewStream(self)
        self._shown: tuple[str, Mode] | None = None  # (device id, mode) previewed from the device
        self._held: tuple[str, threading.Event] | None = (
            None  # the device last opened, and its close
        )
        self.stream.frameReady.connect(self.frameReady)
        self.stream.previewEnded.connect(self._on_stream_preview_ended)

    @property
    def running(self) -> bool:
        return self.stream.running

    def shows(self, device_id: str, mode: Mode) -> bool:
        """Whether ``device_id`` in ``mode`` is previewed now."""
        return self._shown == (device_id, mode)

    def show_device(
        self, device: DeviceInfo, mode: Mode, open_source: Callable[[DeviceInfo], FrameSource]
    ) -> None:
        """Preview ``device`` in ``mode`` (opened on the preview thread), unless it is already."""
        if self.shows(device.device_id, mode):
            return
        feed = SourceFeed(lambda: open_source(device), mode)
        self._shown = (device.device_id, mode)
        self._held = (device.device_id, self.stream.start(feed))

    def show_recorder(self, recorder: Recorder) -> None:
        """The recorder holds the device now; the preview only looks at its frames."""
        self._shown, self._held = None, None
        self.stream.start(RecorderFeed(recorder))

    def stop(self) -> None:
        self.stream.stop()
        self._shown = None

    def let_go(self, device_id: str) -> threading.Event | None:
        """Stop previewing ``device_id``; the event set once it is closed, or None when the
        preview does not hold it."""
        if self._held is None or self._held[0] != device_id:
            return None
        if self._shown is not None and self._shown[0] == device_id:
            self.stop()
        return self._held[1]

    def fit_to(self, width: int, height: int) -> None:
        self.stream.fit_to(width, height)

    def shut_down(self, timeout_ms: int) -> bool:
        return self.stream.shut_down(timeout_ms)

    @Slot(str)
    def _on_stream_preview_ended(self, reason: str) -> None:
        self._shown = None
        self.previewEnded.emit(reason)
