"""The frames of a recorded AVI segment from its structure, without decoding them: counting them
(:func:`count_avi_frames`) and locating each (:func:`jpeg_chunks`, for frame-accurate reading).

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
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from labrig.fsutil import open_regular

_HEADER = struct.Struct("<4sI")
_VIDEO = (b"00dc", b"00db")
_INDEX_ENTRY = 16


@dataclass(frozen=True)
class _Walk:
    chunks: list[tuple[int, int]]  # (byte offset, length) of each frame's JPEG, in order
    complete: bool  # the file ends where its last chunk does (not cut short)
    indexed: int | None  # the video entries of its idx1 index (None: no index)


def count_avi_frames(path: Path) -> int | None:
    """The whole JPEG frames of a complete AVI segment, when its ``movi`` list and its ``idx1``
    index agree; None when the file is not such an AVI (then decode it)."""
    walk = _walk_file(path)
    if walk is None or not walk.complete or walk.indexed != len(walk.chunks):
        return None
    return len(walk.chunks)


def jpeg_chunks(path: Path) -> list[tuple[int, int]] | None:
    """Where each frame of an MJPEG AVI segment lies: (byte offset, length) of its JPEG, in order,
    the whole frames of a segment cut short included; None when the file is not an AVI whose
    video chunks are all whole JPEGs (then decode it)."""
    walk = _walk_file(path)
    return None if walk is None else walk.chunks


def _walk_file(path: Path) -> _Walk | None:
    try:
        with open_regular(path) as fh:
            return _walk(fh, path.stat().st_size)
    except (OSError, struct.error):
        return None


def _walk(fh: BinaryIO, size: int) -> _Walk | None:
    head = fh.read(12)
    if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"AVI ":
        return None
    pos, chunks, indexed, complete = 12, None, None, True
    while pos + 8 <= size:
        fh.seek(pos)
        cid, length = _HEADER.unpack(fh.read(8))
        if pos + 8 + length > size:
            complete = False  # cut short: not a closed segment
        if cid == b"LIST" and fh.read(4) == b"movi":
            chunks = _movi(fh, pos + 12, min(pos + 8 + length, size))
            if chunks is None:
                return None
        elif cid == b"idx1" and complete:
            indexed = sum(
                fh.read(_INDEX_ENTRY)[:4] in _VIDEO for _ in range(length // _INDEX_ENTRY)
            )
        if not complete:
            break
        pos += 8 + length + (length & 1)
    return None if chunks is None else _Walk(chunks, complete, indexed)


def _movi(fh: BinaryIO, start: int, end: int) -> list[tuple[int, int]] | None:
    """The frames' JPEGs of a ``movi`` list ending at ``end`` (a chunk past it is cut short, and
    left out); None where a video chunk is not a whole JPEG."""
    pos, chunks = start, []
    while pos + 8 <= end:
        fh.seek(pos)
        cid, length = _HEADER.unpack(fh.read(8))
        if pos + 8 + length > end:
            break
        if cid in _VIDEO:
            if length < 4 or fh.read(2) != b"\xff\xd8":
                return None
            fh.seek(pos + 8 + length - 2)
            if fh.read(2) != b"\xff\xd9":
                return None
            chunks.append((pos + 8, length))
        pos += 8 + length + (length & 1)
    return chunks
