"""A real HTTP camera on 127.0.0.1 for integration tests: MJPEG over HTTP, as many IP
cameras serve it.

``GET /video.mjpg`` answers ``multipart/x-mixed-replace; boundary=frame`` with one JPEG per part,
paced by the server at ``fps``. Each connection gets its own frame source (by default the virtual
camera's markers scene, unpaced: the server does the pacing) or cycles through the given frames. The
server stops by itself after ``max_seconds`` so a forgotten one cannot outlive its test run.

Faults: :meth:`MjpegServer.kill` drops every connection with a reset and stops listening (a dead
camera or a pulled network cable noticed by the stack); :meth:`MjpegServer.go_silent` keeps
connections open but sends nothing more (a camera that hangs).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

import cv2

from labrig.capture.sources import FrameSource, Image, Mode
from labrig.capture.virtual import VirtualCamera

SourceFactory = Callable[[], FrameSource]


def markers_camera() -> FrameSource:
    return VirtualCamera("markers", paced=False)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: MjpegServer


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        if self.path != "/video.mjpg":
            self.send_error(404, "the stream is at /video.mjpg")
            return
        self.send_response(200)
        self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.server.owner.stream_to(self.connection, self.wfile.write)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: test output is for the tests."""


class MjpegServer:
    """Threading: start/stop and the fault switches from the test's thread; one daemon
    thread per connection."""

    def __init__(
        self,
        source: SourceFactory | Sequence[Image] | None = None,
        fps: float = 30.0,
        quality: int = 80,
        *,
        size: tuple[int, int] = (640, 480),
        max_seconds: float = 120.0,
    ) -> None:
        self.fps, self.quality, self.size, self.max_seconds = fps, quality, size, max_seconds
        source = markers_camera if source is None else source
        self._factory = source if callable(source) else None
        self._jpegs = [] if callable(source) else [self._encode(f) for f in source]
        self._stopped, self._silent = threading.Event(), threading.Event()
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._frames_sent = 0
        self._httpd: _Server | None = None
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("start the server first")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/video.mjpg"

    @property
    def frames_sent(self) -> int:
        with self._lock:
            return self._frames_sent

    def start(self) -> MjpegServer:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        serve = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        timer = threading.Thread(target=self._stop_at_deadline, daemon=True)
        self._threads = [serve, timer]
        for thread in self._threads:
            thread.start()
        return self

    def __enter__(self) -> MjpegServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def go_silent(self) -> None:
        """Keep every connection open but send nothing more."""
        self._silent.set()

    def kill(self) -> None:
        """Stop listening and reset every connection, as a camera that died does."""
        self.stop()

    def stop(self) -> None:
        self._stopped.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            # linger 0: the close sends a reset, and the shutdown wakes a handler blocked in send.
            # OSError: that client already went away, there is nothing left to reset.
            with contextlib.suppress(OSError):
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.shutdown(socket.SHUT_RDWR)

    def _stop_at_deadline(self) -> None:
        if not self._stopped.wait(self.max_seconds):
            self.stop()

    def stream_to(self, conn: socket.socket, write: Callable[[bytes], object]) -> None:
        """Send paced JPEG parts until the source ends, the client leaves or the server stops (a
        handler thread)."""
        with self._lock:
            self._connections.add(conn)
        try:
            self._send_paced(self._frames(), write)
        # the client left or kill() reset the connection: either way this stream is over
        except OSError:
            pass
        finally:
            with self._lock:
                self._connections.discard(conn)

    def _send_paced(self, jpegs: Iterator[bytes], write: Callable[[bytes], object]) -> None:
        period, due = 1.0 / self.fps, time.monotonic()
        while not self._stopped.is_set():
            now = time.monotonic()
            if self._silent.is_set() or now < due:
                self._stopped.wait(0.05 if self._silent.is_set() else due - now)
                continue
            jpeg = next(jpegs, None)
            if jpeg is None:
                return
            write(
                b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n%b\r\n"
                % (len(jpeg), jpeg)
            )
            with self._lock:
                self._frames_sent += 1
            # a slow client gets no burst to catch up
            due = max(due + period, time.monotonic() - period)

    def _frames(self) -> Iterator[bytes]:
        if self._factory is None:
            while self._jpegs:
                yield from self._jpegs
            return
        source = self._factory()
        source.open(Mode(self.size[0], self.size[1], self.fps))
        try:
            while (frame := source.read(2.0)) is not None:
                yield self._encode(frame)
        finally:
            source.close()

    def _encode(self, frame: Image) -> bytes:
        ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, self.quality])
        if not ok:
            raise ValueError(f"cannot encode a frame of shape {frame.shape} as JPEG")
        return bytes(buf)
