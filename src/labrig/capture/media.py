"""A committed capture read back: its segments, timestamps and frames (by manifest digest), and the
decoding of recorded media files into frames, for calibration, analysis and review alike."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
from sqlalchemy import select

from labrig.capture.manifest import read_committed_manifest
from labrig.capture.sink import read_timestamps
from labrig.errors import LabrigError
from labrig.fsutil import require_regular, shown
from labrig.store import BlobStore, Store
from labrig.store.models import Capture, CaptureSegment


class CaptureMissingError(LabrigError):
    code = "LABRIG_CAPTURE_MISSING"


class FileNameNotUtf8Error(LabrigError):
    """A media file whose name OpenCV cannot be given (bytes that are not UTF-8)."""

    code = "LABRIG_FILE_NAME_NOT_UTF8"


def open_video(path: Path) -> cv2.VideoCapture:
    """An OpenCV reader on the media file ``path`` (not opened when nothing decodable is there).

    Every media file Labrig decodes is opened here. Refused first, with a typed error, what OpenCV
    would not survive: a name whose bytes are not UTF-8 (OpenCV's Python binding crashes the
    process on one, signal 11) and a FIFO, folder or device (a FIFO would be waited on for ever)."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        raise FileNameNotUtf8Error(
            f"{shown(path)} has a name that is not valid UTF-8, which the video decoder cannot "
            "open; rename the file (or import it with 'labrig import', which copies it under a "
            "name of its own) and try again. Nothing was changed"
        ) from None
    require_regular(path)
    return cv2.VideoCapture(str(path))


@dataclass(frozen=True)
class CaptureMedia:
    capture_id: str
    device_id: str
    mode: dict[str, Any]
    frame_count: int
    dropped_frames: int
    segments: tuple[Path, ...]  # media files, in recording order
    timestamps: tuple[Path | None, ...]  # their timestamp sidecars

    @property
    def fps(self) -> float:
        return float(self.mode.get("fps") or 30.0)

    def frames(self) -> Iterator[npt.NDArray[np.uint8]]:
        """Every frame of every segment, BGR."""
        for path in self.segments:
            yield from iter_frames(path)

    def luma_frames(self) -> Iterator[npt.NDArray[np.uint8]]:
        """The same frames as their grey (luma) plane, H×W: quicker to decode, for
        brightness-only analyses."""
        for path in self.segments:
            yield from iter_luma(path)

    @property
    def timed(self) -> bool:
        """Whether the frames' times are known: every segment has recorded timestamps, or the
        mode states a frame rate (an imported file's header). False only when neither is there,
        and :meth:`times_s` would assume 30 fps."""
        return all(p is not None for p in self.timestamps) or bool(self.mode.get("fps"))

    def times_s(self) -> npt.NDArray[np.float64]:
        """Seconds since the first frame, from the recorded monotonic timestamps
        (frame/fps without them)."""
        mono: list[int] = []
        for path in self.timestamps:
            if path is None:
                return np.arange(self.frame_count, dtype=np.float64) / self.fps
            mono += read_timestamps(path)
        return (np.asarray(mono, dtype=np.float64) - mono[0]) / 1e9 if mono else np.zeros(0)


def load_capture(store: Store, manifest_sha256: str) -> CaptureMedia:
    """The committed capture whose manifest has this digest; refused when it is not in the store
    (:class:`CaptureMissingError`) or its manifest is damaged (:class:`ManifestError`)."""
    blobs = BlobStore(store.media_dir)
    path = blobs.path(manifest_sha256, ".json")
    try:
        manifest = read_committed_manifest(path, manifest_sha256)
    except FileNotFoundError as exc:
        raise CaptureMissingError(
            f"the capture manifest {manifest_sha256[:12]}… is not in the media store; run "
            "'labrig verify'"
        ) from exc
    with store.read() as session:
        capture = session.get(Capture, manifest.capture_id)
        segments = list(
            session.scalars(
                select(CaptureSegment)
                .where(CaptureSegment.capture_id == manifest.capture_id)
                .order_by(CaptureSegment.position)
            )
        )
    if capture is None or capture.manifest_sha256 != manifest_sha256:
        raise CaptureMissingError(
            f"capture {manifest.capture_id} of manifest {manifest_sha256[:12]}… is not in the "
            "catalog; run 'labrig verify'"
        )
    ext = {s.sha256: Path(s.name).suffix for s in manifest.segments}
    return CaptureMedia(
        capture.id,
        capture.device_id,
        manifest.mode,
        capture.frame_count,
        capture.dropped_frames,
        tuple(blobs.path(s.media_sha256, ext.get(s.media_sha256, ".avi")) for s in segments),
        tuple(
            blobs.path(s.timestamps_sha256, ".csv") if s.timestamps_sha256 else None
            for s in segments
        ),
    )


def iter_frames(path: Path) -> Iterator[npt.NDArray[np.uint8]]:
    """Every frame of one media file (BGR, uint8) in order;
    nothing for a file that will not open."""
    cap = open_video(path)
    try:
        while cap.isOpened():
            ok, frame = cap.read()
            if not ok:
                return
            yield np.asarray(frame, dtype=np.uint8)
    finally:
        cap.release()


def iter_luma(path: Path) -> Iterator[npt.NDArray[np.uint8]]:
    """Every frame of one media file as its grey (luma) plane, H×W uint8, in order; nothing for a
    file that will not open. The same frames, as many, as :func:`iter_frames` gives, for the
    analyses that look at brightness only.

    MJPG frames are decoded from their JPEG packets straight to grey: libjpeg-turbo then skips the
    chroma planes and the colour conversion, ~1.5× the speed of decoding to BGR at 720p. The grey is
    the JPEG's own Y plane (Rec. 601 weights, as ``cv2.COLOR_BGR2GRAY``), not a grey of the BGR
    image rebuilt from subsampled chroma. Other codecs, and the rest of a file from any packet that
    is not a whole JPEG frame, are decoded to BGR and converted."""
    for served, grey in enumerate(_jpeg_luma(path)):
        if grey is None:
            yield from _converted_luma(path, skip=served)
            return
        yield grey


def _jpeg_luma(path: Path) -> Iterator[npt.NDArray[np.uint8] | None]:
    """Grey frames decoded from the file's JPEG packets; a None, then nothing, where
    that stops working."""
    cap = open_video(path)
    try:
        if not cap.isOpened():
            return
        size = (int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT)), int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)))
        fourcc = int(cap.get(cv2.CAP_PROP_FOURCC)).to_bytes(4, "little")
        # CAP_PROP_FORMAT = -1: OpenCV's documented raw mode, "undecoded RAW video streams (as Mat
        # 8UC1)"; the FFmpeg backend gives one packet per read (1×N uint8), other backends refuse
        # the set and the BGR path takes over. Not CAP_PROP_CONVERT_RGB = 0: for MJPG it returns the
        # Y plane through an "unsupported format, treated as 8UC1" fallback that logs a warning on
        # every frame, and for other codecs need not return luma at all.
        if fourcc.upper() not in _JPEG_FOURCCS or not cap.set(cv2.CAP_PROP_FORMAT, -1):
            yield None
            return
        while True:
            ok, packet = cap.read()
            if not ok:
                return
            grey = _jpeg_to_grey(np.asarray(packet, dtype=np.uint8), size)
            yield grey
            if grey is None:
                return
    finally:
        cap.release()


_JPEG_FOURCCS = frozenset({b"MJPG", b"JPEG"})
_SOI = (0xFF, 0xD8)  # the first two bytes of every JPEG


def _jpeg_to_grey(
    packet: npt.NDArray[np.uint8], size: tuple[int, int]
) -> npt.NDArray[np.uint8] | None:
    """The grey image of one packet, or None unless it is a whole JPEG frame of ``size`` (rows,
    cols); a packet of two interlaced fields, for one, decodes to half the rows."""
    if packet.ndim != 2 or packet.shape[0] != 1 or packet.size < 4 or tuple(packet[0, :2]) != _SOI:
        return None
    grey = cv2.imdecode(packet, cv2.IMREAD_GRAYSCALE | cv2.IMREAD_IGNORE_ORIENTATION)
    return np.asarray(grey, dtype=np.uint8) if grey is not None and grey.shape == size else None


def _converted_luma(path: Path, skip: int) -> Iterator[npt.NDArray[np.uint8]]:
    """The frames after the first ``skip``, decoded to BGR and converted to grey."""
    cap = open_video(path)
    try:
        if not all(cap.grab() for _ in range(skip)):
            return
        while cap.isOpened():
            ok, frame = cap.read()
            if not ok:
                return
            yield np.asarray(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), dtype=np.uint8)
    finally:
        cap.release()
