"""Committing a capture: from a provisional folder to content-addressed, verified media.

Order matters, and a crash at any point leaves something recovery can finish:
segments are fsynced (at close), decoded back to count their frames, re-hashed,
moved into the media store, the directory fsynced; then one database
transaction records the capture, its segments and ``capture.committed`` — the
commit point. Only then is the provisional folder removed.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from labrig.capture.manifest import ManifestV1, SegmentV1, read_manifest
from labrig.capture.media import open_video
from labrig.capture.samples import count_samples, is_sample_chunk
from labrig.domain.events import EventName
from labrig.domain.idempotency import sha256_hex
from labrig.errors import LabrigError
from labrig.events import record_event
from labrig.fsutil import fsync_file, sha256_file, write_atomic
from labrig.store import BlobMismatchError, BlobStore, Store, utcnow
from labrig.store.models import Blob, Capture, CaptureSegment, ImportedSource
from labrig.tasks import UNTRACKED, Task


class FrameCountMismatchError(LabrigError):
    code = "LABRIG_CAPTURE_FRAME_MISMATCH"


class AlreadyImportedError(LabrigError):
    code = "LABRIG_ALREADY_IMPORTED"


def already_imported(shown_as: str, capture_id: str) -> str:
    return f"{shown_as} was already imported as capture {capture_id}; nothing changed"


@dataclass(frozen=True)
class CommitResult:
    capture_id: str
    state: str
    manifest_sha256: str
    frame_count: int
    dropped_frames: int
    segments: int


def media_ext(seg: SegmentV1) -> str:
    return Path(seg.name).suffix.lower()


CHECK_FRAMES = 64  # frames decoded between a task's progress and cancel checks


def count_frames(path: Path, task: Task = UNTRACKED, expected: int = 0) -> int:
    """Frames that decode from ``path`` (0 for a file OpenCV cannot open); an instrument's chunk's
    whole rows of samples. Progress goes to ``task`` when ``expected`` (the header's count) is
    known; a cancel stops it."""
    if is_sample_chunk(path):
        return count_samples(path)
    reader = open_video(path)
    frames = 0
    try:
        while reader.isOpened() and reader.grab():
            frames += 1
            if frames % CHECK_FRAMES == 0:
                task.check_cancelled()
                if expected:
                    task.progress(
                        min(frames / expected, 1.0), f"decoding frame {frames} of {expected}"
                    )
    finally:
        reader.release()
    return frames


def _checked_source(folder: Path, blobs: BlobStore, name: str, sha256: str, ext: str) -> Path:
    """The segment file to store: in the folder, or already moved into the store by an
    interrupted commit."""
    local = folder / name
    return local if local.exists() else blobs.path(sha256, ext)


def _verify_segment(
    folder: Path, blobs: BlobStore, seg: SegmentV1, decoded_earlier: int | None
) -> None:
    path = _checked_source(folder, blobs, seg.name, seg.sha256, media_ext(seg))
    fsync_file(path)
    decoded = count_frames(path) if decoded_earlier is None else decoded_earlier
    if decoded != seg.frames:
        raise FrameCountMismatchError(
            f"{path} decodes to {decoded} frames, the manifest says {seg.frames}; "
            "it is kept where it is for recovery"
        )
    if sha256_file(path)[0] != seg.sha256:
        raise BlobMismatchError(
            f"{path} no longer matches the digest taken when it closed; kept for inspection"
        )


def _store_file(blobs: BlobStore, path: Path, sha256: str, ext: str, kind: str) -> dict[str, Any]:
    size = path.stat().st_size
    if path.parent != blobs.path(sha256, ext).parent:
        blobs.put(path, sha256, ext)
    return {"sha256": sha256, "ext": ext, "size": size, "kind": kind}


def commit_capture(
    store: Store,
    folder: Path,
    *,
    state: str = "committed",
    report: dict[str, Any] | None = None,
    origin: str = "recorded",
    source_sha256: str | None = None,
    decoded: Mapping[str, int] | None = None,
) -> CommitResult:
    """Verify, store and record the capture whose provisional manifest is in ``folder``.

    ``decoded`` gives frame counts the recorder already decoded back from closed
    segments (re-opened after their fsync, while recording went on); every
    segment is still re-hashed here, so the bytes stored are the bytes counted.
    """
    blobs = BlobStore(store.media_dir)
    manifest = read_manifest(folder)
    stored: list[dict[str, Any]] = []
    segments: list[SegmentV1] = []
    for seg in manifest.segments:
        _verify_segment(folder, blobs, seg, (decoded or {}).get(seg.name))
        ext = media_ext(seg)
        stored.append(
            _store_file(
                blobs,
                _checked_source(folder, blobs, seg.name, seg.sha256, ext),
                seg.sha256,
                ext,
                "media",
            )
        )
        stamps = folder / seg.timestamps
        stamps_sha = sha256_file(stamps)[0] if seg.timestamps and stamps.exists() else None
        if stamps_sha:
            stored.append(_store_file(blobs, stamps, stamps_sha, ".csv", "timestamps"))
        segments.append(replace(seg, timestamps_sha256=stamps_sha or ""))
    final = replace(
        manifest,
        segments=tuple(segments),
        open_segment=None,
        stopped_utc=manifest.stopped_utc or utcnow().isoformat(),
    )
    body = final.to_bytes()
    manifest_sha = sha256_hex(body)
    staged = folder / "manifest.committed.json"
    write_atomic(staged, body)
    stored.append(_store_file(blobs, staged, manifest_sha, ".json", "manifest"))
    try:
        result = _record(
            store,
            final,
            manifest_sha,
            stored=stored,
            state=state,
            report=report,
            origin=origin,
            source_sha256=source_sha256,
        )
    except AlreadyImportedError:
        # the same file's other import committed first. Its segments are these bytes, stored once;
        # this manifest names a capture id of its own, which no row can reference: withdrawn
        blobs.withdraw(manifest_sha, ".json")
        raise
    shutil.rmtree(folder, ignore_errors=True)
    return result


def _record(
    store: Store,
    manifest: ManifestV1,
    manifest_sha: str,
    *,
    stored: list[dict[str, Any]],
    state: str,
    report: dict[str, Any] | None,
    origin: str,
    source_sha256: str | None,
) -> CommitResult:
    with store.write() as session:
        capture = catalog_capture(
            session,
            manifest,
            manifest_sha,
            stored,
            state=state,
            report=report,
            origin=origin,
            source_sha256=source_sha256,
        )
        record_event(
            session,
            EventName.CAPTURE_COMMITTED,
            {
                "capture_id": manifest.capture_id,
                "state": state,
                "manifest_sha256": manifest_sha,
                "segments": len(manifest.segments),
                "frame_count": capture.frame_count,
                "dropped_frames": manifest.dropped_frames,
            },
        )
    return CommitResult(
        manifest.capture_id,
        state,
        manifest_sha,
        capture.frame_count,
        manifest.dropped_frames,
        len(manifest.segments),
    )


def catalog_capture(
    session: Session,
    manifest: ManifestV1,
    manifest_sha: str,
    stored: list[dict[str, Any]],
    *,
    state: str,
    report: dict[str, Any] | None,
    origin: str,
    source_sha256: str | None,
    committed_at: datetime | None = None,
) -> Capture:
    """The catalog rows of a committed capture, in ``session``'s write transaction: its stored
    files (``stored``: sha256, ext, size, kind), the capture (its provisional row completed, or a
    new one) and its segments in order. For a commit, and for rebuilding the catalog from the
    media store (:mod:`labrig.capture.adopt`)."""
    for blob in stored:
        if session.get(Blob, blob["sha256"]) is None:
            session.add(Blob(created_at=utcnow(), **blob))
    capture = session.get(Capture, manifest.capture_id)
    if capture is None:  # imported, or recovered before the start was recorded
        capture = _new_capture_row(manifest, origin)
        session.add(capture)
    capture.source_sha256 = source_sha256
    if source_sha256 is not None:
        _claim_source(session, source_sha256, manifest)
    capture.state, capture.committed_at = state, committed_at or utcnow()
    capture.frame_count = sum(seg.frames for seg in manifest.segments)
    capture.dropped_frames, capture.manifest_sha256 = manifest.dropped_frames, manifest_sha
    capture.provisional_dir, capture.report = None, json.dumps(report) if report else None
    session.flush()
    for position, seg in enumerate(manifest.segments):
        session.add(
            CaptureSegment(
                capture_id=manifest.capture_id,
                position=position,
                media_sha256=seg.sha256,
                timestamps_sha256=seg.timestamps_sha256 or None,
                frames=seg.frames,
                first_mono_ns=seg.first_mono_ns,
                last_mono_ns=seg.last_mono_ns,
            )
        )
    return capture


def _claim_source(session: Session, source_sha256: str, manifest: ManifestV1) -> None:
    """Record the imported file's digest, once: a second import of it, even one that passed the
    earlier check at the same moment, is refused here by the catalog's primary key."""
    shown_as = str(manifest.device.get("name") or "this file")
    earlier = session.get(ImportedSource, source_sha256)
    if earlier is not None:
        raise AlreadyImportedError(already_imported(shown_as, earlier.capture_id))
    session.add(ImportedSource(source_sha256=source_sha256, capture_id=manifest.capture_id))
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:
        winner = session.get(ImportedSource, source_sha256, populate_existing=True)
        raise AlreadyImportedError(
            already_imported(shown_as, winner.capture_id if winner else "(being committed)")
        ) from None


def _new_capture_row(manifest: ManifestV1, origin: str) -> Capture:
    return Capture(
        id=manifest.capture_id,
        session_id=manifest.session_id,
        device_id=str(manifest.device.get("device_id", "unknown"))[:255],
        origin=origin,
        state="provisional",
        mode=json.dumps(manifest.mode),
        verification=json.dumps(manifest.verification),
        started_at=datetime.fromisoformat(manifest.started_utc),
        frame_count=0,
        dropped_frames=0,
    )
