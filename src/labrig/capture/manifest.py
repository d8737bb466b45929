"""ManifestV1: the provisional record of a capture, written before the first frame.

It lives beside the media in the capture's provisional folder and is rewritten
atomically (temp file, fsync, rename, directory fsync) when recording starts and
each time a segment closes, so after any crash it says which segments were
closed (with their digests) and which one was open.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from labrig.errors import LabrigError
from labrig.fsutil import write_atomic

SCHEMA = "labrig.manifest/1"
MANIFEST_NAME = "manifest.json"
# recorded: .avi; imported: as it came
SEGMENT_NAME = re.compile(r"^seg-\d{5}\.(avi|mkv|mp4|mov|m4v)$")
TIMESTAMPS_NAME = re.compile(r"^seg-\d{5}\.ts\.csv$")


class ManifestError(LabrigError):
    """A manifest that cannot be trusted: unreadable, another schema, or a hostile path."""

    code = "LABRIG_MANIFEST_INVALID"


@dataclass(frozen=True)
class SegmentV1:
    """One closed segment of media."""

    # file name inside the capture folder: seg-NNNNN.avi (imported media keeps its own extension)
    name: str
    timestamps: (
        str  # its per-frame timestamp sidecar, seg-NNNNN.ts.csv ("" when the source had none)
    )
    frames: int  # frames written to it
    sha256: str  # digest of the closed file, computed as it closed
    bytes: int  # its size
    first_mono_ns: int  # monotonic time of its first frame
    last_mono_ns: int  # monotonic time of its last frame


@dataclass(frozen=True)
class ManifestV1:
    """The provisional manifest; every field is documented in docs/capture.md."""

    capture_id: str  # id of the capture
    session_id: str | None  # session it belongs to (None for a bare recording)
    device: dict[str, Any]  # the DeviceInfo as JSON
    mode: dict[str, Any]  # the verified mode: width, height, fps, pixel_format
    verification: dict[str, Any]  # inventory entry and measured fps of the verification
    started_utc: str  # ISO-8601 UTC time recording started
    segment_seconds: float  # planned length of each segment
    segments: tuple[SegmentV1, ...] = ()  # closed segments, in order
    open_segment: str | None = None  # the segment being written, if any
    dropped_frames: int = 0  # frames known lost (timestamp gaps + queue overflow)
    stopped_utc: str | None = None  # set when recording stopped normally
    schema: str = field(default=SCHEMA)

    def with_segment(self, segment: SegmentV1, next_open: str | None) -> ManifestV1:
        return replace(self, segments=(*self.segments, segment), open_segment=next_open)

    def to_bytes(self) -> bytes:
        return json.dumps(asdict(self), indent=1, sort_keys=True).encode()


def write_manifest(folder: Path, manifest: ManifestV1) -> None:
    write_atomic(folder / MANIFEST_NAME, manifest.to_bytes())


def read_manifest(folder: Path) -> ManifestV1:
    """Read and check a manifest; names that could escape the folder are refused."""
    path = folder / MANIFEST_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ManifestError(
            f"{path} cannot be read ({exc}); the capture folder is kept for inspection"
        ) from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ManifestError(f"{path} is not a {SCHEMA} manifest")
    try:
        segments = tuple(SegmentV1(**s) for s in data.pop("segments"))
        manifest = ManifestV1(segments=segments, **data)
    except (TypeError, KeyError) as exc:
        raise ManifestError(f"{path} is missing or has unknown fields ({exc})") from exc
    for name in [s.name for s in segments] + (
        [manifest.open_segment] if manifest.open_segment else []
    ):
        if not isinstance(name, str) or not SEGMENT_NAME.match(name):
            raise ManifestError(f"{path} names a media file '{name}' outside its folder; refused")
    if any(s.timestamps and not TIMESTAMPS_NAME.match(s.timestamps) for s in segments):
        raise ManifestError(f"{path} names a timestamp file outside its folder; refused")
    return manifest
