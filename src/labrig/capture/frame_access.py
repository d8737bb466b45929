"""Frame-accurate reading of a committed capture: frame k, exactly, in any order, for the player.

A frame is named by its stored index: its place among the capture's frames, counted through its
segments in recording order, which is also the row of the segments' timestamp sidecars. Seeking a
video by OpenCV's ``CAP_PROP_POS_FRAMES`` is never used: on many files it lands on another frame
(OpenCV #9053) and says nothing.

Labrig's own segments are MJPEG in AVI: every frame is a whole JPEG, so each is its own keyframe.
Their chunks are located once by walking the ``movi`` list
(:func:`labrig.capture.avi.jpeg_chunks`), and frame k is read from its byte offset and decoded
alone: an arbitrary frame costs one JPEG decode, whatever its place. Any other file (an imported
video of another codec) is decoded forward from its start, each frame counted, keeping the
reader's place, so stepping on costs one frame and stepping back reopens the file and decodes up
to the frame: slower, never wrong.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import cv2
import numpy as np

from labrig.capture.avi import jpeg_chunks
from labrig.capture.media import CaptureMedia, open_video
from labrig.capture.sources import Image
from labrig.errors import LabrigError
from labrig.fsutil import open_regular


class FrameOutOfRangeError(LabrigError):
    code = "LABRIG_FRAME_OUT_OF_RANGE"


class FrameUnreadableError(LabrigError):
    code = "LABRIG_FRAME_UNREADABLE"


@dataclass
class _Forward:
    """A segment of another codec, decoded forward from its start; ``next_index`` is the index
    the next read gives."""

    path: Path
    capture: cv2.VideoCapture | None = None
    next_index: int = 0

    def read(self, index: int) -> Image | None:
        if self.capture is None or index < self.next_index:
            self.close()
            self.capture, self.next_index = open_video(self.path), 0
        while self.next_index < index:  # skip forward without decoding
            if not self.capture.grab():
                return None
            self.next_index += 1
        ok, frame = self.capture.read()
        if not ok:
            return None
        self.next_index += 1
        return np.asarray(frame, dtype=np.uint8)

    def close(self) -> None:
        if self.capture is not None:
            self.capture.release()
            self.capture = None


class FrameReader:
    """Frames of one committed capture by stored index (:meth:`frame`). Not thread-safe: one per
    thread (a player's decoding thread). Close it, or use it as a context manager."""

    def __init__(self, media: CaptureMedia) -> None:
        self.media = media
        self._starts: list[int] = []  # the stored index of each segment's first frame
        self._chunks: list[list[tuple[int, int]] | None] = []
        self._files: dict[int, BinaryIO] = {}
        self._forward: dict[int, _Forward] = {}
        total = 0
        for path in media.segments:
            chunks = jpeg_chunks(path)
            self._starts.append(total)
            self._chunks.append(chunks)
            total += len(chunks) if chunks is not None else _count_forward(path)
        self.frame_count = total

    def __enter__(self) -> FrameReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def frame(self, index: int) -> Image:
        """Frame ``index`` (BGR): :class:`FrameOutOfRangeError` outside the capture,
        :class:`FrameUnreadableError` when its bytes do not decode."""
        if not 0 <= index < self.frame_count:
            raise FrameOutOfRangeError(
                f"capture {self.media.capture_id} has frames 0 to {self.frame_count - 1}; "
                f"there is no frame {index}"
            )
        segment = bisect.bisect_right(self._starts, index) - 1
        local = index - self._starts[segment]
        chunks = self._chunks[segment]
        image = self._jpeg(segment, *chunks[local]) if chunks is not None else None
        if chunks is None:
            forward = self._forward.setdefault(segment, _Forward(self.media.segments[segment]))
            image = forward.read(local)
        if image is None:
            raise FrameUnreadableError(
                f"frame {index} of capture {self.media.capture_id} does not decode; run "
                "'labrig verify' to check the media store"
            )
        return image

    def _jpeg(self, segment: int, offset: int, length: int) -> Image | None:
        fh = self._files.get(segment)
        if fh is None:
            fh = self._files[segment] = open_regular(self.media.segments[segment])
        fh.seek(offset)
        data = np.frombuffer(fh.read(length), dtype=np.uint8)
        image = cv2.imdecode(data, cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
        return None if image is None else np.asarray(image, dtype=np.uint8)

    def close(self) -> None:
        for fh in self._files.values():
            fh.close()
        for forward in self._forward.values():
            forward.close()
        self._files.clear()
        self._forward.clear()


def _count_forward(path: Path) -> int:
    """The frames of a file of another codec, counted by grabbing each (not trusting its header's
    frame count)."""
    capture = open_video(path)
    try:
        n = 0
        while capture.isOpened() and capture.grab():
            n += 1
        return n
    finally:
        capture.release()
