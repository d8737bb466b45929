"""Cameras OpenCV opens: USB/UVC cameras by index, IP cameras by URL (MJPEG over HTTP, RTSP).

Timeouts are set when the device opens, because a silent stream otherwise blocks ``read`` for 30 s:
OpenCV fixes them at open time (``CAP_PROP_OPEN_TIMEOUT_MSEC``, ``CAP_PROP_READ_TIMEOUT_MSEC``), so
``read`` may wait up to the ``read_timeout_s`` given here whatever ``timeout_s`` it is passed; give
both the same value.

The mode that ``open`` returns is what the camera reports, except the frame rate of network streams:
FFmpeg reads it from the stream's header and says 25 for MJPEG over HTTP whatever the camera sends,
so for URLs the requested rate is reported (or the reported one when none was requested). Neither is
evidence: device verification measures the real rate from frame arrival times.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from labrig.capture.sources import Image, Mode
from labrig.errors import LabrigError


class SourceOpenError(LabrigError):
    """The camera could not be opened: nothing answered at that index or URL, or it refused."""

    code = "LABRIG_DEVICE_OPEN_FAILED"


class OpenCVSource:
    """A :class:`~labrig.capture.sources.FrameSource` over ``cv2.VideoCapture``.

    ``target``: a camera index (USB/UVC; the index ``cv2_enumerate_cameras`` lists) or a stream URL.
    ``api_preference``: an OpenCV backend (``cv2.CAP_V4L2``, ``cv2.CAP_MSMF``, ``cv2.CAP_FFMPEG``
    …); None lets OpenCV choose.

    Threading: ``open``/``read``/``close`` from one thread at a time (the grab thread).
    ``cv2.VideoCapture`` is not safe to release while another thread reads, so ``close`` must not be
    used to interrupt a blocked ``read``: the read timeout bounds how long that read can block.
    """

    def __init__(
        self,
        target: int | str,
        api_preference: int | None = None,
        *,
        open_timeout_s: float = 5.0,
        read_timeout_s: float = 2.0,
    ) -> None:
        self.target = target
        self.api_preference = cv2.CAP_ANY if api_preference is None else api_preference
        self.open_timeout_s = open_timeout_s
        self.read_timeout_s = read_timeout_s
        self._cap: cv2.VideoCapture | None = None

    @property
    def is_network(self) -> bool:
        return isinstance(self.target, str) and "://" in self.target

    def open(self, mode: Mode | None = None) -> Mode:
        """Open the camera, ask for ``mode`` (the camera may refuse) and return the mode
        it reports."""
        self.close()
        params = [
            cv2.CAP_PROP_OPEN_TIMEOUT_MSEC,
            round(self.open_timeout_s * 1000),
            cv2.CAP_PROP_READ_TIMEOUT_MSEC,
            round(self.read_timeout_s * 1000),
        ]
        cap = cv2.VideoCapture(self.target, self.api_preference, params)
        if not cap.isOpened():
            cap.release()
            raise SourceOpenError(self._open_failure_advice())
        if mode is not None:
            # A camera that cannot do the mode picks the nearest it can; what it reports below is
            # the truth.
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, mode.width)
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, mode.height)
            cap.set(cv2.CAP_PROP_FPS, mode.fps)
        self._cap = cap
        return self._reported_mode(cap, mode)

    def _reported_mode(self, cap: cv2.VideoCapture, requested: Mode | None) -> Mode:
        width, height = (
            int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)),
            int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT)),
        )
        if width <= 0 or height <= 0:  # some backends only know the size once a frame arrived
            frame = self.read(self.read_timeout_s)
            if frame is None:
                self.close()
                raise SourceOpenError(
                    f"{self._label()} opened but sent no frame within {self.read_timeout_s:g} s. "
                    + self._checks()
                )
            height, width = frame.shape[:2]
        reported = float(cap.get(cv2.CAP_PROP_FPS))
        if not (math.isfinite(reported) and reported > 0):
            reported = 0.0
        fps = (
            requested.fps
            if requested is not None and (self.is_network or reported == 0.0)
            else reported
        )
        return Mode(width, height, fps, "BGR")

    def read(self, timeout_s: float = 2.0) -> Image | None:
        """The next frame (BGR uint8), or None: stream ended, device gone or silent for
        ``read_timeout_s``."""
        if self._cap is None:
            return None
        ok, frame = self._cap.read()
        if not ok or frame is None:
            return None
        if frame.ndim == 2:  # some cameras deliver grey; the FrameSource contract is H×W×3 BGR
            frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
        return np.asarray(frame, dtype=np.uint8)

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None

    def _label(self) -> str:
        return f"camera {self.target}" if isinstance(self.target, int) else f"stream {self.target}"

    def _checks(self) -> str:
        if self.is_network:
            return (
                "Check the URL (host, port and path), that the camera is powered and on this "
                "network, and that no firewall blocks it."
            )
        return (
            "Check the cable and that the camera appears in the device list, and close any other "
            "program using the camera (only one can use it at a time)."
        )

    def _open_failure_advice(self) -> str:
        return f"Could not open {self._label()}. " + self._checks()
