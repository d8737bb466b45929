"""Frame-accurate reading of recorded media: every frame carries its index in pixels (the virtual
rig's frame tag), is written by the recording sink into several MJPEG segments, and is read back
by stored index in any order. A video of another codec is read forward, and back, as exactly."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from labrig.capture.avi import count_avi_frames, jpeg_chunks
from labrig.capture.frame_access import FrameOutOfRangeError, FrameReader, FrameUnreadableError
from labrig.capture.frame_tags import read_frame_tag, write_frame_tag
from labrig.capture.manifest import SegmentV1
from labrig.capture.media import CaptureMedia
from labrig.capture.sink import SegmentSink
from labrig.capture.sources import Mode

MODE = Mode(320, 240, 30.0)
PERIOD_NS = 33_333_333


def tagged(n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    img = rng.integers(60, 200, (MODE.height, MODE.width, 3), dtype=np.uint8)
    write_frame_tag(img, n)
    return img


def media(paths: list[Path], frames: int) -> CaptureMedia:
    return CaptureMedia(
        "capture-1", "virtual", {"fps": MODE.fps}, frames, 0, tuple(paths), (None,) * len(paths)
    )


def recorded(folder: Path, frames: int) -> list[Path]:
    """``frames`` tagged frames written by the recording sink, a segment a second."""
    closed: list[SegmentV1] = []
    sink = SegmentSink(folder, MODE, 1.0, lambda s, _n: closed.append(s))
    sink.setup()
    for n in range(frames):
        sink.append(tagged(n), n * PERIOD_NS, n * PERIOD_NS)
    sink.close()
    return [folder / s.name for s in closed]


def test_every_frame_of_a_recording_is_read_by_its_index_in_any_order(tmp_path: Path) -> None:
    paths = recorded(tmp_path, 100)
    assert len(paths) >= 3  # the frames span segments
    with FrameReader(media(paths, 100)) as reader:
        assert reader.frame_count == 100
        order = np.random.default_rng(7).permutation(100)
        for k in [*order, 99, 0, 50, 51, 49]:
            assert read_frame_tag(reader.frame(int(k))) == k
    with pytest.raises(FrameOutOfRangeError) as refused:
        FrameReader(media(paths, 100)).frame(100)
    assert refused.value.code == "LABRIG_FRAME_OUT_OF_RANGE" and "0 to 99" in refused.value.message


def test_the_frames_located_are_the_frames_counted_and_a_cut_segment_keeps_its_whole_frames(
    tmp_path: Path,
) -> None:
    (path, *_) = recorded(tmp_path, 20)
    chunks = jpeg_chunks(path)
    assert chunks is not None and len(chunks) == count_avi_frames(path) == 20
    raw = path.read_bytes()
    cut = tmp_path / "cut.avi"  # a crash mid-frame: the frames before it are still there
    offset, length = chunks[12]
    cut.write_bytes(raw[: offset + length // 2])
    assert count_avi_frames(cut) is None
    assert jpeg_chunks(cut) == chunks[:12]
    with FrameReader(media([cut], 12)) as reader:
        assert reader.frame_count == 12
        assert [read_frame_tag(reader.frame(k)) for k in (11, 3, 0)] == [11, 3, 0]


def test_a_video_of_another_codec_is_read_forward_and_back_exactly(tmp_path: Path) -> None:
    path = tmp_path / "imported.avi"
    writer = cv2.VideoWriter(
        str(path), cv2.VideoWriter.fourcc(*"XVID"), MODE.fps, (MODE.width, MODE.height)
    )
    assert writer.isOpened()
    for n in range(60):
        writer.write(tagged(n))
    writer.release()
    assert jpeg_chunks(path) is None  # not whole JPEGs: decoded forward
    with FrameReader(media([path], 60)) as reader:
        assert reader.frame_count == 60
        for k in (0, 1, 2, 30, 31, 59, 10, 45, 44, 0):
            assert read_frame_tag(reader.frame(k)) == k, k


def test_a_damaged_frame_is_refused_by_name(tmp_path: Path) -> None:
    (path, *_) = recorded(tmp_path, 10)
    chunks = jpeg_chunks(path)
    assert chunks is not None
    offset, length = chunks[4]
    raw = bytearray(path.read_bytes())
    raw[offset + 2 : offset + length - 2] = bytes(length - 4)  # its JPEG body zeroed
    path.write_bytes(bytes(raw))
    with FrameReader(media([path], 10)) as reader:
        assert read_frame_tag(reader.frame(5)) == 5
        with pytest.raises(FrameUnreadableError) as refused:
            reader.frame(4)
    assert refused.value.code == "LABRIG_FRAME_UNREADABLE" and "frame 4" in refused.value.message
