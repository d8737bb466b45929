"""Counting the frames of a recorded AVI segment from its structure, without decoding them.

A closed segment is the sink's own MJPEG-in-AVI file. Its frames are the video chunks (``00dc``)
of its ``movi`` list; each must be a whole JPEG (starting with SOI ``FF D8``, ending with EOI
``FF D9``), and the ``idx1`` index the encoder wrote on closing must list as many. Walking that
structure reads a few bytes a frame, where decoding a 720p frame back costs about as much CPU as
encoding it: while a rig records, the check of each closed segment would otherwise take a core's
share from the cameras. The SHA-256 still covers every byte; imported media and a segment
recovered after a crash are decoded (:func:`~labrig.capture.commit.count_frames`).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

from labrig.fsutil import open_regular

_HEADER = struct.Struct("<4sI")
_VIDEO = (b"00dc", b"00db")
_INDEX_ENTRY = 16


def count_avi_frames(path: Path) -> int | None:
    """The whole JPEG frames of a complete AVI segment, when its ``movi`` list and its ``idx1``
    index agree; None when the file is not such an AVI (then decode it)."""
    try:
        with open_regular(path) as fh:
            return _count(fh, path.stat().st_size)
    except (OSError, struct.error):
        return None


def _count(fh: BinaryIO, size: int) -> int | None:
    head = fh.read(12)
    if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"AVI ":
        return None
    pos, frames, indexed = 12, None, None
    while pos + 8 <= size:
        fh.seek(pos)
        cid, length = _HEADER.unpack(fh.read(8))
        if pos + 8 + length > size:
            return None  # cut short: not a closed segment
        if cid == b"LIST" and fh.read(4) == b"movi":
            frames = _movi(fh, pos + 12, pos + 8 + length)
        elif cid == b"idx1":
            indexed = sum(
                fh.read(_INDEX_ENTRY)[:4] in _VIDEO for _ in range(length // _INDEX_ENTRY)
            )
        pos += 8 + length + (length & 1)
    if frames is None or indexed != frames:
        return None
    return frames


def _movi(fh: BinaryIO, start: int, end: int) -> int | None:
    pos, frames = start, 0
    while pos + 8 <= end:
        fh.seek(pos)
        cid, length = _HEADER.unpack(fh.read(8))
        if pos + 8 + length > end:
            return None
        if cid in _VIDEO:
            if length < 4 or fh.read(2) != b"\xff\xd8":
                return None
            fh.seek(pos + 8 + length - 2)
            if fh.read(2) != b"\xff\xd9":
                return None
            frames += 1
        pos += 8 + length + (length & 1)
    return frames
