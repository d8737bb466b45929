"""``video/<camera>-overlay.mp4``: one camera's recording with the markers drawn over it, for a
reader without Labrig (a slide, a report, a colleague's media player). Qt-free: drawn with OpenCV.

Every recorded frame is written once, in order, at the recorded size and the camera's frame rate,
so frame k of the video is stored frame k of the capture. Over it, each marker in force (the
effective track, as the reviewer corrected it; none for a track the corrections removed): a filled
disc in its colour (:data:`~labrig.domain.palette.SERIES_BGR` when it has none) with a dark
outline, its label (``M`` and its track id, as in every format), and its trail over the last
:data:`TRAIL_S` seconds: solid where tracked, thin and dashed where a gap fill interpolated it,
broken where the marker was not seen. A rig's 3-D result adds, in each camera, each marker's 3-D
position reprojected into it as a small diamond, joined to the detection when the two differ. A
caption in the bottom-left corner gives the frame and its time (s from the attempt's first frame).

The codec is H.264 in MP4 where the installed OpenCV's FFmpeg can write it (:func:`video_codec`
tries once and remembers); else Motion JPEG in AVI, which every OpenCV writes.
"""

from __future__ import annotations

import functools
import itertools
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from labrig.domain.corrections import trail_runs
from labrig.domain.palette import SERIES_BGR
from labrig.export.tables import marker_label
from labrig.review.player import Overlay, ResultMedia

TRAIL_S = 1.0  # seconds of trail drawn behind each marker
STEP_EVERY = 10  # frames between two progress calls
INK, WHITE = (20, 20, 20), (255, 255, 255)  # outlines; the caption's text
FONT = cv2.FONT_HERSHEY_SIMPLEX
SHIFT = 4  # sub-pixel bits of the drawn positions (1/16 px)
# the fourccs tried for MP4, in order ("H264" in MP4 is written as "avc1" by FFmpeg, after a warning
# OpenCV prints on the terminal, so it is not tried)
H264 = ("avc1",)
FALLBACK = ("MJPG", ".avi")
Image = npt.NDArray[np.uint8]
BGR = tuple[int, int, int]


class VideoWriterError(OSError):
    """The video file cannot be written (the codec refused to open it, or a frame of another
    size): the export fails as any failed write does, and its partial bundle is removed."""


@contextmanager
def _quiet() -> Iterator[None]:
    """OpenCV's own log silenced (a codec refused while probing is not an error)."""
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    try:
        yield
    finally:
        cv2.utils.logging.setLogLevel(level)


@functools.cache
def video_codec() -> tuple[str, str]:
    """(fourcc, file extension): H.264 in MP4 (``avc1``, ``.mp4``) when the installed
    OpenCV/FFmpeg writes a file it reads back (tried once, then remembered), else ``MJPG`` in
    ``.avi``. The pip wheels of OpenCV carry no H.264 encoder on Linux; a build with one does."""
    frames = [np.full((48, 64, 3), 40 * k, np.uint8) for k in range(5)]
    with tempfile.TemporaryDirectory(prefix="labrig-codec-") as folder, _quiet():
        for fourcc in H264:
            path = str(Path(folder) / f"probe-{fourcc}.mp4")
            writer = cv2.VideoWriter(path, cv2.VideoWriter.fourcc(*fourcc), 30.0, (64, 48))
            if not writer.isOpened():
                continue
            for frame in frames:
                writer.write(frame)
            writer.release()
            capture = cv2.VideoCapture(path)
            read = []
            while (got := capture.read())[0]:
                read.append(got[1].shape)
            capture.release()
            if read == [f.shape for f in frames]:
                return fourcc, ".mp4"
    return FALLBACK


def write_overlay_video(
    media: ResultMedia,
    camera: int,
    path: Path,
    fourcc: str,
    *,
    step: Callable[[int, int], None] | None = None,
) -> int:
    """Write camera ``camera``'s recording with its markers drawn (the module docstring) into
    ``path`` with the codec ``fourcc`` (:func:`video_codec`); the frames written. ``step(done,
    total)`` is called every :data:`STEP_EVERY` frames and at the end; it may raise to stop (the
    file is then left incomplete, for the caller to remove)."""
    info = media.cameras[camera]
    fps = media.media[camera].fps
    overlays = media.overlays_by_camera[camera]
    colours = [_bgr(o.colour_rgb, k) for k, o in enumerate(overlays)]
    trail = max(round(TRAIL_S * fps), 1)
    total = info.frame_count
    writer: cv2.VideoWriter | None = None
    done = 0
    try:
        for index, picture in enumerate(media.media[camera].frames()):
            frame = np.ascontiguousarray(picture)
            height, width = frame.shape[:2]
            if writer is None:
                writer = _open(path, fourcc, fps, (width, height))
                size = (width, height)
            elif (width, height) != size:
                raise VideoWriterError(
                    f"frame {index} of {info.device_id} is {width}×{height}, not "
                    f"{size[0]}×{size[1]} as the frames before it; the video cannot hold both"
                )
            scale = max(1.0, min(width, height) / 480)
            for overlay, colour in zip(overlays, colours, strict=True):
                _draw_marker(frame, overlay, index, trail, colour, scale)
            t = info.times_s[index] if index < len(info.times_s) else index / fps
            _caption(frame, f"frame {index}  {float(t):.3f} s", scale)
            writer.write(frame)
            done = index + 1
            if step is not None and done % STEP_EVERY == 0:
                step(done, max(total, done))
    finally:
        if writer is not None:
            writer.release()
    if writer is None:
        raise VideoWriterError(f"{info.device_id}'s recording has no frame to write into {path}")
    if step is not None and done % STEP_EVERY:
        step(done, max(total, done))
    return done


def _open(path: Path, fourcc: str, fps: float, size: tuple[int, int]) -> cv2.VideoWriter:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*fourcc), fps, size)
    if not writer.isOpened():
        raise VideoWriterError(
            f"OpenCV cannot write {path} as {fourcc} video at {size[0]}×{size[1]}, {fps:g} fps "
            "(its FFmpeg lacks the codec, or the folder is not writable)"
        )
    return writer


def _bgr(rgb: tuple[int, int, int] | None, k: int) -> BGR:
    if rgb is None:
        return SERIES_BGR[k % len(SERIES_BGR)]
    return int(rgb[2]), int(rgb[1]), int(rgb[0])


def _fixed(xy: Sequence[float] | npt.NDArray[np.float64]) -> tuple[int, int]:
    """A picture px position (pixel centres at whole numbers) in OpenCV's fixed point."""
    return round(float(xy[0]) * (1 << SHIFT)), round(float(xy[1]) * (1 << SHIFT))


def _dashed(frame: Image, points: list[npt.NDArray[np.float64]], colour: BGR, dash: float) -> None:
    """A thin polyline drawn ``dash`` px on, ``dash`` px off, the pattern running on across its
    corners."""
    travelled = 0.0
    for a, b in itertools.pairwise(points):
        length = float(np.hypot(*(b - a)))
        t = 0.0
        while t < length:
            t2 = min(length, t + dash - travelled % dash)
            if int(travelled // dash) % 2 == 0:
                p, q = a + (b - a) * (t / length), a + (b - a) * (t2 / length)
                cv2.line(frame, _fixed(p), _fixed(q), colour, 1, cv2.LINE_AA, SHIFT)
            travelled += t2 - t
            t = t2


def _draw_marker(
    frame: Image, overlay: Overlay, index: int, trail: int, colour: BGR, scale: float
) -> None:
    track = overlay.effective
    label = marker_label(overlay.track_id)
    radius = round(6 * scale)
    at = None if track is None else track.at(index)
    if track is not None:
        for filled, points in trail_runs(track, index - trail, index):
            if len(points) < 2:
                continue
            if filled:
                _dashed(frame, points, colour, 4 * scale)
            else:
                line = np.asarray([_fixed(p) for p in points], np.int32)
                thick = max(round(2 * scale), 1)
                cv2.polylines(frame, [line], False, colour, thick, cv2.LINE_AA, SHIFT)
    projected = None if overlay.reprojected is None else overlay.reprojected.at(index)
    if projected is not None:
        if at is not None and float(np.hypot(*(at - projected))) > 1.0:
            cv2.line(frame, _fixed(at), _fixed(projected), colour, 1, cv2.LINE_AA, SHIFT)
        d = 6 * scale
        diamond = [projected + v for v in ((0, -d), (d, 0), (0, d), (-d, 0))]
        corners = np.asarray([_fixed(p) for p in diamond], np.int32)
        cv2.polylines(frame, [corners], True, INK, round(3 * scale) + 1, cv2.LINE_AA, SHIFT)
        cv2.polylines(frame, [corners], True, colour, round(2 * scale), cv2.LINE_AA, SHIFT)
        if at is None:
            _text(frame, f"{label} 3-D only", projected, radius, colour, scale)
    if at is None:
        return
    cv2.circle(frame, _fixed(at), (radius + 2) << SHIFT, INK, -1, cv2.LINE_AA, SHIFT)
    cv2.circle(frame, _fixed(at), radius << SHIFT, colour, -1, cv2.LINE_AA, SHIFT)
    _text(frame, label, at, radius, colour, scale)


def _text(
    frame: Image, text: str, at: npt.NDArray[np.float64], gap: int, colour: BGR, s: float
) -> None:
    """``text`` up and right of ``at``, moved in to stay whole inside the picture."""
    (w, h), base = cv2.getTextSize(text, FONT, 0.5 * s, max(round(s), 1))
    x = min(max(round(float(at[0])) + gap + 4, 2), frame.shape[1] - w - 2)
    y = min(max(round(float(at[1])) - gap - 2, h + 2), frame.shape[0] - base - 2)
    _outlined(frame, text, (x, y), colour, s)


def _caption(frame: Image, text: str, s: float) -> None:
    """The caption in the bottom-left corner (clear of the virtual cameras' top-left frame tag)."""
    _, base = cv2.getTextSize(text, FONT, 0.5 * s, max(round(s), 1))
    margin = round(8 * s)
    _outlined(frame, text, (margin, frame.shape[0] - margin - base), WHITE, s)


def _outlined(frame: Image, text: str, origin: tuple[int, int], colour: BGR, s: float) -> None:
    thick = max(round(s), 1)
    cv2.putText(frame, text, origin, FONT, 0.5 * s, INK, thick + 2, cv2.LINE_AA)
    cv2.putText(frame, text, origin, FONT, 0.5 * s, colour, thick, cv2.LINE_AA)
