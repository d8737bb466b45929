"""OpenCVSource against a real HTTP camera on 127.0.0.1: real sockets, real FFmpeg demuxing,
real JPEG decoding."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from labrig.capture.opencv_source import OpenCVSource, SourceOpenError
from labrig.capture.sources import FrameSource, Mode
from tests.support.mjpeg_server import MjpegServer

READ_TIMEOUT_S = 1.0


@pytest.fixture
def camera() -> Iterator[MjpegServer]:
    with MjpegServer(fps=30.0, quality=80, size=(640, 480), max_seconds=30.0) as server:
        yield server


@pytest.fixture
def source(camera: MjpegServer) -> Iterator[OpenCVSource]:
    src = OpenCVSource(camera.url, open_timeout_s=3.0, read_timeout_s=READ_TIMEOUT_S)
    yield src
    src.close()


def read_until_none(src: FrameSource, limit_s: float) -> float:
    """Seconds until ``read`` returned None (frames already in flight may come first)."""
    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        if src.read(READ_TIMEOUT_S) is None:
            return time.monotonic() - start
    pytest.fail(f"read still returned frames {limit_s} s after the fault")


def test_frames_arrive_at_the_camera_rate_and_size(source: OpenCVSource) -> None:
    mode = source.open(Mode(640, 480, 30.0))
    assert (mode.width, mode.height, mode.pixel_format) == (640, 480, "BGR")
    for _ in range(10):  # FFmpeg's probe at open buffered a few frames: they come in a burst
        assert source.read() is not None
    arrivals = []
    start = time.monotonic()
    while time.monotonic() - start < 1.5:
        frame = source.read()
        assert frame is not None and frame.shape == (480, 640, 3)
        arrivals.append(time.monotonic())
    rate = (len(arrivals) - 1) / (arrivals[-1] - arrivals[0])
    print(f"OpenCVSource over MJPEG/HTTP: {rate:.2f} fps measured for 30 fps served")
    assert rate == pytest.approx(30.0, rel=0.15)


def test_a_killed_camera_ends_reads_at_once(camera: MjpegServer, source: OpenCVSource) -> None:
    source.open()
    assert source.read() is not None
    camera.kill()
    elapsed = read_until_none(source, limit_s=5.0)
    print(f"killed camera noticed after {elapsed:.3f} s")
    assert elapsed < 2.0


def test_a_silent_camera_ends_reads_within_the_read_timeout(
    camera: MjpegServer, source: OpenCVSource
) -> None:
    source.open()
    assert source.read() is not None
    camera.go_silent()
    elapsed = read_until_none(source, limit_s=10.0)
    print(f"silent camera noticed after {elapsed:.3f} s (read timeout {READ_TIMEOUT_S} s)")
    assert elapsed < READ_TIMEOUT_S + 1.0  # plus the frames already in flight when it went quiet


def test_a_url_nothing_listens_on_is_refused_with_a_code() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(SourceOpenError) as refused:
        OpenCVSource(f"http://127.0.0.1:{port}/video.mjpg", open_timeout_s=3.0).open()
    assert time.monotonic() - start < 4.0
    assert refused.value.code == "LABRIG_DEVICE_OPEN_FAILED"
    assert "URL" in refused.value.message


def test_a_camera_that_accepts_but_never_answers_is_refused_after_the_open_timeout() -> None:
    # the kernel completes the handshake; nobody ever reads the request
    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen(4)
        start = time.monotonic()
        with pytest.raises(SourceOpenError):
            OpenCVSource(
                f"http://127.0.0.1:{mute.getsockname()[1]}/video.mjpg", open_timeout_s=1.5
            ).open()
        elapsed = time.monotonic() - start
    print(f"mute camera refused after {elapsed:.2f} s (open timeout 1.5 s)")
    assert elapsed < 3.0  # not FFmpeg's default 30 s


def test_a_camera_index_with_no_camera_is_refused_with_a_code() -> None:
    with pytest.raises(SourceOpenError) as refused:
        OpenCVSource(97).open()
    assert refused.value.code == "LABRIG_DEVICE_OPEN_FAILED"
    assert "other program" in refused.value.message


def test_reading_a_closed_source_returns_none(source: OpenCVSource) -> None:
    source.open()
    source.close()
    assert source.read() is None
