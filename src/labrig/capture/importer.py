"""Importing media files (``labrig import``, watch folders) through the same commit path.

The source file is never modified: it is copied (hashed while copying, fsynced)
into a provisional folder with a manifest, then committed exactly like a recording.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import cv2
from sqlalchemy import select

from labrig.capture.commit import CommitResult, commit_capture, count_frames
from labrig.capture.manifest import ManifestV1, SegmentV1, write_manifest
from labrig.capture.media import open_video
from labrig.capture.recorder import provisional_root
from labrig.errors import LabrigError
from labrig.fsutil import CHUNK, fsync_dir
from labrig.store import Store, utcnow
from labrig.store.models import Capture
from labrig.tasks import UNTRACKED, Share, Task, TaskCancelledError

MEDIA_EXTENSIONS = (".avi", ".mkv", ".mp4", ".mov", ".m4v")


class ImportRefusedError(LabrigError):
    code = "LABRIG_NOT_MEDIA"


class MediaTruncatedError(LabrigError):
    code = "LABRIG_MEDIA_TRUNCATED"


class AlreadyImportedError(LabrigError):
    code = "LABRIG_ALREADY_IMPORTED"


def _copy_hashing(source: Path, target: Path, task: Task = UNTRACKED) -> tuple[str, int]:
    digest, size, total = hashlib.sha256(), 0, max(source.stat().st_size, 1)
    with open(source, "rb") as src, open(target, "wb") as dst:
        while chunk := src.read(CHUNK):
            task.check_cancelled()
            digest.update(chunk)
            dst.write(chunk)
            size += len(chunk)
            task.progress(min(size / total, 1.0), f"copying {source.name} into the store")
        dst.flush()
        os.fsync(dst.fileno())
    return digest.hexdigest(), size


@dataclass(frozen=True)
class MediaFacts:
    decoded: int  # frames that actually decode
    header: int  # frames the container announces
    width: int
    height: int
    fps: float


def probe_media(path: Path, task: Task = UNTRACKED) -> MediaFacts:
    """What a media file holds (every frame is decoded, with progress to ``task``); refuses, with a
    reason, what is not media."""
    if not path.is_file():
        raise ImportRefusedError(f"{path} is not a file; give the path of a video file")
    if path.suffix.lower() not in MEDIA_EXTENSIONS:
        raise ImportRefusedError(
            f"{path.name} is not a video Labrig imports ({', '.join(MEDIA_EXTENSIONS)})"
        )
    reader = open_video(path)
    try:
        opened = reader.isOpened()
        header = int(reader.get(cv2.CAP_PROP_FRAME_COUNT)) if opened else 0
        size = (
            int(reader.get(cv2.CAP_PROP_FRAME_WIDTH)),
            int(reader.get(cv2.CAP_PROP_FRAME_HEIGHT)),
        )
        fps = float(reader.get(cv2.CAP_PROP_FPS)) if opened else 0.0
    finally:
        reader.release()
    decoded = count_frames(path, task, max(header, 0)) if opened else 0
    if decoded == 0:
        raise ImportRefusedError(
            f"{path.name} does not decode as video (damaged, or not a video); nothing imported"
        )
    return MediaFacts(decoded, header, size[0], size[1], fps)


def import_media(
    store: Store,
    path: Path,
    *,
    session_id: str | None = None,
    origin: str = "imported",
    accept_partial: bool = False,
    task: Task = UNTRACKED,
) -> CommitResult:
    """Copy ``path`` into the store as a committed capture; refuses non-media,
    truncation and duplicates.

    Progress goes to ``task`` (decoding every frame, then copying); a cancel before the commit
    leaves nothing in the store, and the source file is never changed."""
    facts = probe_media(path, Share(task, 0.0, 0.5))
    decoded, header = facts.decoded, facts.header
    if header > decoded and not accept_partial:
        raise MediaTruncatedError(
            f"{path.name} decodes to {decoded} of the {header} frames its header announces "
            "(truncated or damaged); import it anyway with --accept-partial"
        )
    capture_id = str(uuid.uuid4())
    folder = provisional_root(store) / capture_id
    folder.mkdir(parents=True)
    name = f"seg-00000{path.suffix.lower()}"
    try:
        digest, size = _copy_hashing(path, folder / name, Share(task, 0.5, 1.0))
        task.check_cancelled()  # the last point before anything is committed
    except TaskCancelledError:  # the provisional folder goes: nothing was committed
        _remove(folder)
        raise
    fsync_dir(folder)
    _refuse_duplicate(store, digest, path, folder)
    manifest = ManifestV1(
        capture_id,
        session_id,
        {"device_id": f"{origin}:{path.name}", "kind": origin, "name": path.name},
        {
            "width": facts.width,
            "height": facts.height,
            "fps": facts.fps,
            "pixel_format": "as recorded",
        },
        {"source_path": str(path), "source_sha256": digest},
        utcnow().isoformat(),
        0.0,
        segments=(SegmentV1(name, "", decoded, digest, size, 0, 0),),
        stopped_utc=utcnow().isoformat(),
    )
    write_manifest(folder, manifest)
    return commit_capture(
        store,
        folder,
        origin=origin,
        source_sha256=digest,
        report={"partial": True, "header_frames": header} if header > decoded else None,
    )


def _refuse_duplicate(store: Store, digest: str, path: Path, folder: Path) -> None:
    with store.read() as session:
        existing = session.scalar(select(Capture.id).where(Capture.source_sha256 == digest))
    if existing:
        _remove(folder)
        raise AlreadyImportedError(
            f"{path.name} was already imported as capture {existing}; nothing changed"
        )


def _remove(folder: Path) -> None:
    """A provisional import folder, with what it holds (files only: it has no subfolders)."""
    for item in folder.iterdir():
        item.unlink()
    folder.rmdir()
