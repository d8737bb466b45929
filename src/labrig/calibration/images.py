"""The views a calibration is solved from, read from files: image files, and every Nth frame of
video files.

An image file is read as bytes, never by name (OpenCV's Python binding crashes the process on a
name that is not UTF-8), its size taken from its header and refused above the limits *before*
OpenCV decodes it (a PNG header claiming 50000×50000 made OpenCV raise on one run and crash with
signal 11 on another), then decoded in memory. A video is opened by
:func:`labrig.capture.open_video`. What cannot be read is refused with a typed error, never a
traceback: ``LABRIG_IMAGE_UNREADABLE``, ``LABRIG_IMAGE_TOO_LARGE``, ``LABRIG_NOT_A_REGULAR_FILE``,
``LABRIG_FILE_NAME_NOT_UTF8``. Names in views and messages are printable
(:func:`labrig.fsutil.shown`).

Qt-free, no database; every function may run on any thread.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from labrig.calibration.camera import View
from labrig.capture import open_video
from labrig.errors import LabrigError, UsageError
from labrig.fsutil import NotARegularFileError, open_regular, shown

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_PIXELS",
    "MAX_SIDE_PX",
    "VIDEO_SUFFIXES",
    "ImageTooLargeError",
    "ImageUnreadableError",
    "declared_size",
    "frames_from_video",
    "load_images",
    "load_views",
    "read_image",
]

VIDEO_SUFFIXES = frozenset({".avi", ".mp4", ".mkv", ".mov", ".m4v", ".webm"})
# Far above any camera Labrig calibrates (4K is 8.3 MP, a 61 MP sensor is 9504x6336), far below
# what exhausts a workstation: 100 MP decoded is 300 MB, and detection makes copies of it.
MAX_SIDE_PX = 20_000
MAX_PIXELS = 100_000_000
MAX_FILE_BYTES = 1 << 30  # a file is read whole before decoding: 1 GiB, past any 100 MP picture
_PNG = b"\x89PNG\r\n\x1a\n"
# JPEG frame headers: SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC), which share the range
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})  # markers without a length
_TIFF_ORDER = {b"II*\0": "<", b"MM\0*": ">"}
_TIFF_WIDTH, _TIFF_HEIGHT, _TIFF_SHORT, _TIFF_LONG = 256, 257, 3, 4
Image = npt.NDArray[np.uint8]


class ImageUnreadableError(LabrigError):
    code = "LABRIG_IMAGE_UNREADABLE"


class ImageTooLargeError(LabrigError):
    """An image whose header declares more pixels than a view may have, refused before decoding."""

    code = "LABRIG_IMAGE_TOO_LARGE"


def load_views(paths: Sequence[Path], every: int = 10) -> Iterator[View]:
    """Images and every ``every``-th frame of videos, in the order given; lazy."""
    if every < 1:
        raise UsageError("--every must be at least 1")
    for path in paths:
        yield from (
            frames_from_video(path, every)
            if path.suffix.lower() in VIDEO_SUFFIXES
            else load_images([path])
        )


def load_images(paths: Iterable[Path]) -> Iterator[View]:
    """Each image file as a view named by its file name; lazy, so only one picture is held
    at a time."""
    for path in paths:
        yield View(shown(path.name), read_image(path))


def read_image(path: Path) -> Image:
    """The picture in the PNG, JPEG, TIFF or BMP file ``path``, BGR.

    Refused: a missing, empty, damaged or unknown file (:class:`ImageUnreadableError`), one whose
    header declares more than ``MAX_SIDE_PX`` a side or ``MAX_PIXELS`` in all, or a file over
    ``MAX_FILE_BYTES`` (:class:`ImageTooLargeError`), and a folder, FIFO or device standing at
    ``path`` (:class:`~labrig.fsutil.NotARegularFileError`, at once: a FIFO is never waited on)."""
    data = _read_bytes(path)
    size = declared_size(data)
    if size is None or min(size) < 1:
        raise _unreadable(path)
    if max(size) > MAX_SIDE_PX or size[0] * size[1] > MAX_PIXELS:
        raise _too_large(
            path,
            f"is {size[0]}x{size[1]} pixels ({size[0] * size[1] / 1e6:.0f} MP) by its header, "
            f"more than a view may be ({MAX_SIDE_PX} a side, {MAX_PIXELS // 1_000_000} MP in all)",
        )
    try:
        image = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR)
    except cv2.error:
        image = None
    if image is None:
        raise _unreadable(path)
    return np.asarray(image, dtype=np.uint8)


def frames_from_video(path: Path, every: int = 10) -> Iterator[View]:
    """Frames 0, every, 2·every, … of a video file, named ``file#frame``; lazy (a long video is
    never in memory)."""
    try:
        cap = open_video(path)
    except NotARegularFileError:
        raise _not_a_file(path) from None
    index = 0
    try:
        while cap.isOpened():
            ok, frame = cap.read() if index % every == 0 else (cap.grab(), None)
            if not ok:
                break
            if frame is not None:
                yield View(f"{shown(path.name)}#{index}", np.asarray(frame, dtype=np.uint8))
            index += 1
    finally:
        cap.release()
    if index == 0:
        raise ImageUnreadableError(
            f"{shown(path)} cannot be read as a video (missing, damaged or no frames); "
            "check the path, or export the capture's frames as images"
        )


def declared_size(data: bytes) -> tuple[int, int] | None:
    """The width and height a PNG, JPEG, TIFF or BMP file's header declares; None for anything
    else, or a header too damaged to say."""
    try:
        if data.startswith(_PNG) and data[12:16] == b"IHDR":
            width, height = struct.unpack_from(">II", data, 16)
            return width, height
        if data.startswith(b"\xff\xd8"):
            return _jpeg_size(data)
        if data[:4] in _TIFF_ORDER:
            return _tiff_size(data, _TIFF_ORDER[data[:4]])
        if data.startswith(b"BM"):
            return _bmp_size(data)
    except struct.error:  # the header ends before the size
        return None
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """From the first frame header (SOFn), found as libjpeg finds it: bytes before a marker are
    skipped, and segments are stepped over by their lengths (an Exif thumbnail is inside one)."""
    at = 2
    while at + 1 < len(data):
        if data[at] != 0xFF or data[at + 1] in (0x00, 0xFF):  # not a marker, or fill before one
            at += 1
            continue
        marker = data[at + 1]
        if marker in _JPEG_STANDALONE:
            at += 2
        elif marker in _JPEG_SOF:
            height, width = struct.unpack_from(">HH", data, at + 5)
            return width, height
        elif marker in (0xDA, 0xD9):  # the picture data, or the end, before any frame header
            return None
        else:
            at += 2 + struct.unpack_from(">H", data, at + 2)[0]
    return None


def _tiff_size(data: bytes, order: str) -> tuple[int, int] | None:
    """From the first image directory (the page OpenCV decodes)."""
    (directory,) = struct.unpack_from(order + "I", data, 4)
    (entries,) = struct.unpack_from(order + "H", data, directory)
    found: dict[int, int] = {}
    for entry in range(entries):
        tag, kind = struct.unpack_from(order + "HH", data, directory + 2 + 12 * entry)
        if tag in (_TIFF_WIDTH, _TIFF_HEIGHT) and kind in (_TIFF_SHORT, _TIFF_LONG):
            value_format = order + ("H" if kind == _TIFF_SHORT else "I")
            found[tag] = struct.unpack_from(value_format, data, directory + 10 + 12 * entry)[0]
    if _TIFF_WIDTH not in found or _TIFF_HEIGHT not in found:
        return None
    return found[_TIFF_WIDTH], found[_TIFF_HEIGHT]


def _bmp_size(data: bytes) -> tuple[int, int]:
    (header,) = struct.unpack_from("<I", data, 14)
    if header == 12:  # the old OS/2 header: unsigned 16-bit sizes
        width, height = struct.unpack_from("<HH", data, 18)
        return width, height
    width, height = struct.unpack_from("<ii", data, 18)
    return width, abs(height)  # a negative height is a picture stored top row first


def _read_bytes(path: Path) -> bytes:
    try:
        with open_regular(path) as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except NotARegularFileError:
        raise _not_a_file(path) from None
    except OSError as exc:
        raise _unreadable(path, exc.strerror or type(exc).__name__) from None
    if len(data) > MAX_FILE_BYTES:
        raise _too_large(
            path, f"is over {MAX_FILE_BYTES >> 20} MiB, more than a view's file may be"
        )
    return data


def _unreadable(
    path: Path, why: str = "missing, empty, damaged or not a picture"
) -> ImageUnreadableError:
    return ImageUnreadableError(
        f"{shown(path)} cannot be read as an image ({why}); check the path and export PNG, JPEG, "
        "TIFF or BMP"
    )


def _too_large(path: Path, what: str) -> ImageTooLargeError:
    return ImageTooLargeError(
        f"{shown(path)} {what}; export the views at the size the camera records (a calibration "
        "holds for one camera mode), or replace the file if its header is damaged. Nothing was "
        "changed"
    )


def _not_a_file(path: Path) -> NotARegularFileError:
    return NotARegularFileError(
        f"{shown(path)} is not a file (a folder, FIFO or device stands there); give the image or "
        "video files of the board themselves. Nothing was changed"
    )
