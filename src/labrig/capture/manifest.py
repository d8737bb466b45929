"""ManifestV1: the provisional record of a capture, written before the first frame.

It lives beside the media in the capture's provisional folder and is rewritten
atomically (temp file, fsync, rename, directory fsync) when recording starts and
each time a segment closes, so after any crash it says which segments were
closed (with their digests) and which one was open.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from labrig.capture.samples import is_sample_mode, sample_mode_from_json
from labrig.errors import LabrigError
from labrig.fsutil import open_regular, shown, write_atomic

SCHEMA = "labrig.manifest/1"
MANIFEST_NAME = "manifest.json"
# recorded: .avi (an instrument's: .samples.csv); imported: as it came
SEGMENT_NAME = re.compile(r"^seg-\d{5}\.(avi|mkv|mp4|mov|m4v|samples\.csv)$")
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
    # digest of its timestamp sidecar as stored: set in the committed manifest (so the media store
    # alone can rebuild the catalog), "" in a provisional one, and in manifests committed before it
    timestamps_sha256: str = ""


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
    """The provisional manifest of a capture folder, validated (:func:`parse_manifest`)."""
    return read_manifest_file(folder / MANIFEST_NAME)


def read_manifest_file(path: Path) -> ManifestV1:
    """A manifest file (provisional, or a committed one in the media store), validated; refused
    with :class:`ManifestError` when it cannot be read or is not a valid manifest, and with
    :class:`~labrig.fsutil.NotARegularFileError` when something else stands there."""
    try:
        with open_regular(path) as fh:
            raw = fh.read(MAX_MANIFEST_BYTES + 1)
    except OSError as exc:
        raise ManifestError(
            f"{shown(path)} cannot be read ({exc.strerror or exc}); the capture folder is kept for "
            "inspection"
        ) from exc
    return parse_manifest(raw, shown(path))


def read_committed_manifest(path: Path, sha256: str) -> ManifestV1:
    """A committed manifest from the media store, refused (:class:`ManifestError`) unless its bytes
    still hash to the digest it is stored under and it is valid. Missing, it raises
    ``FileNotFoundError``; something else standing there,
    :class:`~labrig.fsutil.NotARegularFileError`."""
    with open_regular(path) as fh:
        raw = fh.read(MAX_MANIFEST_BYTES + 1)
    if hashlib.sha256(raw).hexdigest() != sha256:
        raise ManifestError(
            f"the committed manifest {shown(path)} no longer matches its digest (changed or "
            "damaged on disk); run 'labrig verify' and restore it from the archive or a backup"
        )
    return parse_manifest(raw, shown(path))


def parse_manifest(raw: bytes, where: str) -> ManifestV1:
    """The manifest in ``raw``, checked against its schema before any field is used: every field
    present, of its type and in range, nothing unknown, and no file name that could leave the
    capture folder. Anything else is refused with :class:`ManifestError` (never another error)."""
    if len(raw) > MAX_MANIFEST_BYTES:
        raise ManifestError(f"{where} is over {MAX_MANIFEST_BYTES} bytes: not a {SCHEMA} manifest")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ManifestError(
            f"{where} is not valid JSON ({exc}); the capture folder is kept for inspection"
        ) from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ManifestError(f"{where} is not a {SCHEMA} manifest")
    try:
        return _manifest(data)
    except _Invalid as exc:
        raise ManifestError(f"{where} is not a valid {SCHEMA} manifest: {exc}") from None


MAX_MANIFEST_BYTES = 16 << 20  # a day of one-minute segments is ~0.5 MB
CAPTURE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")  # a folder name, never a path
SHA256 = re.compile(r"^[0-9a-f]{64}$")
_MANIFEST_FIELDS = {f.name for f in fields(ManifestV1)}
_SEGMENT_FIELDS = {f.name for f in fields(SegmentV1)}
_SEGMENT_REQUIRED = _SEGMENT_FIELDS - {"timestamps_sha256"}
_REQUIRED = {"capture_id", "session_id", "device", "mode", "verification", "started_utc"} | {
    "segment_seconds",
    "segments",
}


class _Invalid(Exception):
    """One field that breaks the schema (what is wrong, for the refusal's message)."""


def _manifest(data: dict[str, Any]) -> ManifestV1:
    _known(data, _MANIFEST_FIELDS, _REQUIRED, "the manifest")
    segments = data["segments"]
    if not isinstance(segments, list):
        raise _Invalid("'segments' is not a list")
    for key in ("device", "mode", "verification"):
        if not isinstance(data[key], dict):
            raise _Invalid(f"'{key}' is not an object")
    _mode(data["mode"])
    open_segment = _optional_str(data, "open_segment")
    if open_segment is not None and not SEGMENT_NAME.match(open_segment):
        raise _Invalid(f"it names a media file '{open_segment}' outside its folder; refused")
    session_id = _optional_str(data, "session_id")
    stopped = _optional_str(data, "stopped_utc")
    return ManifestV1(
        capture_id=_capture_id(data["capture_id"]),
        session_id=session_id,
        device=data["device"],
        mode=data["mode"],
        verification=data["verification"],
        started_utc=_utc(data["started_utc"], "started_utc"),
        segment_seconds=_number(data["segment_seconds"], "segment_seconds"),
        segments=tuple(_segment(s, n) for n, s in enumerate(segments)),
        open_segment=open_segment,
        dropped_frames=_count(data.get("dropped_frames", 0), "dropped_frames"),
        stopped_utc=None if stopped is None else _utc(stopped, "stopped_utc"),
    )


def _segment(data: object, position: int) -> SegmentV1:
    where = f"segment {position}"
    if not isinstance(data, dict):
        raise _Invalid(f"{where} is not an object")
    _known(data, _SEGMENT_FIELDS, _SEGMENT_REQUIRED, where)
    name, stamps, digest = data["name"], data["timestamps"], data["sha256"]
    if not isinstance(name, str) or not SEGMENT_NAME.match(name):
        raise _Invalid(f"{where} names a media file {name!r} outside its folder; refused")
    if not isinstance(stamps, str) or (stamps and not TIMESTAMPS_NAME.match(stamps)):
        raise _Invalid(f"{where} names a timestamp file {stamps!r} outside its folder; refused")
    if not isinstance(digest, str) or not SHA256.match(digest):
        raise _Invalid(f"{where} has no SHA-256 digest")
    stamps_digest = data.get("timestamps_sha256", "")
    if not isinstance(stamps_digest, str) or (stamps_digest and not SHA256.match(stamps_digest)):
        raise _Invalid(f"{where} has a timestamps digest that is not a SHA-256")
    return SegmentV1(
        name,
        stamps,
        _count(data["frames"], f"{where} frames"),
        digest,
        _count(data["bytes"], f"{where} bytes"),
        _integer(data["first_mono_ns"], f"{where} first_mono_ns"),
        _integer(data["last_mono_ns"], f"{where} last_mono_ns"),
        stamps_digest,
    )


def _known(data: dict[str, Any], allowed: set[str], required: set[str], where: str) -> None:
    if missing := sorted(required - data.keys()):
        raise _Invalid(f"{where} lacks {', '.join(missing)}")
    if unknown := sorted(str(k) for k in data.keys() - allowed):
        raise _Invalid(f"{where} has unknown fields {', '.join(unknown)[:200]}")


def _mode(mode: dict[str, Any]) -> None:
    if is_sample_mode(mode):
        try:
            sample_mode_from_json(mode)
        except ValueError as exc:
            raise _Invalid(f"its instrument's mode has {exc}") from None
        return
    for key in ("width", "height"):
        if key in mode:
            _count(mode[key], f"mode {key}")
    if mode.get("fps") is not None:
        _number(mode["fps"], "mode fps")
    if "pixel_format" in mode and not isinstance(mode["pixel_format"], str):
        raise _Invalid("mode pixel_format is not text")


def _capture_id(value: object) -> str:
    if not isinstance(value, str) or not CAPTURE_ID.match(value):
        raise _Invalid("'capture_id' is not a capture id")
    return value


def _optional_str(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise _Invalid(f"'{key}' is not text")
    return value


def _utc(value: object, key: str) -> str:
    try:
        datetime.fromisoformat(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise _Invalid(f"'{key}' is not an ISO-8601 time") from None
    return str(value)


def _integer(value: object, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Invalid(f"'{key}' is not a whole number")
    return value


def _count(value: object, key: str) -> int:
    number = _integer(value, key)
    if number < 0:
        raise _Invalid(f"'{key}' is negative")
    return number


def _number(value: object, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _Invalid(f"'{key}' is not a number")
    if value < 0:
        raise _Invalid(f"'{key}' is negative")
    return value
