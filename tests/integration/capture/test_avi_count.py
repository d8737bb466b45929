"""Counting a recorded segment's frames from its AVI structure: the count OpenCV decodes, and no
count (so it is decoded) for a file cut short, a frame that is not a whole JPEG, or an index that
disagrees."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from labrig.capture.avi import count_avi_frames
from labrig.capture.commit import count_frames
from labrig.capture.manifest import SegmentV1
from labrig.capture.sink import SegmentSink
from labrig.capture.sources import Mode


def segment(tmp_path: Path, frames: int = 12) -> Path:
    closed: list[SegmentV1] = []
    sink = SegmentSink(tmp_path, Mode(320, 240, 30.0), 10.0, lambda s, _n: closed.append(s))
    sink.setup()
    rng = np.random.default_rng(1)
    for n in range(frames):
        sink.append(rng.integers(0, 255, (240, 320, 3), dtype=np.uint8), n, n)
    sink.close()
    return tmp_path / closed[0].name


def test_a_closed_segment_counts_what_opencv_decodes(tmp_path: Path) -> None:
    path = segment(tmp_path)
    assert count_avi_frames(path) == count_frames(path) == 12


def test_anything_but_a_whole_segment_is_left_to_the_decoder(tmp_path: Path) -> None:
    path = segment(tmp_path)
    raw = path.read_bytes()
    cut = tmp_path / "cut.avi"
    cut.write_bytes(raw[: len(raw) // 2])
    assert count_avi_frames(cut) is None
    # a frame whose JPEG lost its end marker
    movi = raw.index(b"movi") + 4
    _, length = struct.unpack_from("<4sI", raw, movi)
    damaged = bytearray(raw)
    damaged[movi + 8 + length - 2 : movi + 8 + length] = b"\x00\x00"
    broken = tmp_path / "broken.avi"
    broken.write_bytes(bytes(damaged))
    assert count_avi_frames(broken) is None
    # an index listing one frame fewer than the file holds
    idx = raw.rindex(b"idx1")
    fewer = bytearray(raw)
    fewer[idx + 8 : idx + 8 + 4] = b"JUNK"
    disagreeing = tmp_path / "index.avi"
    disagreeing.write_bytes(bytes(fewer))
    assert count_avi_frames(disagreeing) is None
    text = tmp_path / "notes.avi"
    text.write_text("not a video")
    assert count_avi_frames(text) is None
