"""A committed capture as the analysis stages see it: its segments, timestamps and frames, by manifest digest."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import select

from labrig.analysis.media_qc import iter_frames, iter_luma
from labrig.capture.sink import read_timestamps
from labrig.errors import LabrigError
from labrig.store.blobs import BlobStore
from labrig.store.database import Store
from labrig.store.models import Capture, CaptureSegment


class CaptureMissingError(LabrigError):
    code = "LABRIG_CAPTURE_MISSING"


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
        """The same frames as their grey (luma) plane, H×W: quicker to decode, for brightness-only analyses."""
        for path in self.segments:
            yield from iter_luma(path)

    def times_s(self) -> npt.NDArray[np.float64]:
        """Seconds since the first frame, from the recorded monotonic timestamps (frame/fps without them)."""
        mono: list[int] = []
        for path in self.timestamps:
            if path is None:
                return np.arange(self.frame_count, dtype=np.float64) / self.fps
            mono += read_timestamps(path)
        return (np.asarray(mono, dtype=np.float64) - mono[0]) / 1e9 if mono else np.zeros(0)


def load_capture(store: Store, manifest_sha256: str) -> CaptureMedia:
    """The committed capture whose manifest has this digest; refused when it is not in the store."""
    blobs = BlobStore(store.media_dir)
    path = blobs.path(manifest_sha256, ".json")
    try:
        manifest = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise CaptureMissingError(f"the capture manifest {manifest_sha256[:12]}… is not in the media store "
                                  f"({exc}); run 'labrig verify'") from exc
    with store.read() as session:
        capture = session.get(Capture, manifest["capture_id"])
        segments = list(session.scalars(select(CaptureSegment).where(
            CaptureSegment.capture_id == manifest["capture_id"]).order_by(CaptureSegment.position)))
    if capture is None:
        raise CaptureMissingError(f"capture {manifest['capture_id']} is not in the catalog")
    ext = {s["sha256"]: Path(s["name"]).suffix for s in manifest["segments"]}
    return CaptureMedia(
        capture.id, capture.device_id, manifest["mode"], capture.frame_count, capture.dropped_frames,
        tuple(blobs.path(s.media_sha256, ext.get(s.media_sha256, ".avi")) for s in segments),
        tuple(blobs.path(s.timestamps_sha256, ".csv") if s.timestamps_sha256 else None for s in segments))
