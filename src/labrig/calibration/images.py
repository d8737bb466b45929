"""The views a calibration is solved from, read from files: image files, and every Nth frame of
video files.

Qt-free, no database; every function may run on any thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import cv2
import numpy as np

from labrig.calibration.camera import View
from labrig.errors import LabrigError, UsageError

__all__ = [
    "VIDEO_SUFFIXES",
    "ImageUnreadableError",
    "frames_from_video",
    "load_images",
    "load_views",
]

VIDEO_SUFFIXES = frozenset({".avi", ".mp4", ".mkv", ".mov", ".m4v", ".webm"})


class ImageUnreadableError(LabrigError):
    code = "LABRIG_IMAGE_UNREADABLE"


def load_images(paths: Iterable[Path]) -> Iterator[View]:
    """Each image file as a view named by its file name; lazy, so only one frame is held
    at a time."""
    for path in paths:
        image = cv2.imread(str(path), cv2.IMREAD_COLOR) if path.is_file() else None
        if image is None:
            raise ImageUnreadableError(
                f"{path} cannot be read as an image (missing, empty or not a picture); "
                "check the path and export PNG, JPEG, TIFF or BMP"
            )
        yield View(path.name, np.asarray(image, dtype=np.uint8))


def frames_from_video(path: Path, every: int = 10) -> Iterator[View]:
    """Frames 0, every, 2·every, … of a video file, named ``file#frame``; lazy (a long video is
    never in memory)."""
    cap = cv2.VideoCapture(str(path)) if path.is_file() else None
    index = 0
    try:
        while cap is not None and cap.isOpened():
            ok, frame = cap.read() if index % every == 0 else (cap.grab(), None)
            if not ok:
                break
            if frame is not None:
                yield View(f"{path.name}#{index}", np.asarray(frame, dtype=np.uint8))
            index += 1
    finally:
        if cap is not None:
            cap.release()
    if index == 0:
        raise ImageUnreadableError(
            f"{path} cannot be read as a video (missing, damaged or no frames); "
            "check the path, or export the capture's frames as images"
        )


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
