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
from typing import Any, BinaryIO

import cv2
from sqlalchemy import select

from labrig.capture.commit import (
    AlreadyImportedError,
    CommitResult,
    already_imported,
    commit_capture,
    count_frames,
)
from labrig.capture.manifest import ManifestV1, SegmentV1, write_manifest
from labrig.capture.media import open_video
from labrig.capture.recorder import provisional_root
from labrig.errors import LabrigError
from labrig.fsutil import (
    CHUNK,
    NotARegularFileError,
    disk_full,
    fsync_dir,
    open_regular,
    shown,
)
from labrig.store import Store, utcnow
from labrig.store.models import ImportedSource
from labrig.tasks import UNTRACKED, Share, Task

__all__ = ["AlreadyImportedError", "ImportRefusedError", "MediaTruncatedError", "import_media"]

MEDIA_EXTENSIONS = (".avi", ".mkv", ".mp4", ".mov", ".m4v")


class ImportRefusedError(LabrigError):
    code = "LABRIG_NOT_MEDIA"


class MediaTruncatedError(LabrigError):
    code = "LABRIG_MEDIA_TRUNCATED"


def _copy_hashing(
    source: BinaryIO, name: str, target: Path, task: Task = UNTRACKED
) -> tuple[str, int]:
    """Copy the open ``source`` to ``target``, hashing as it goes, and fsync the copy. Read from
    the file opened once, so a source renamed or deleted meanwhile is still copied whole."""
    digest, size = hashlib.sha256(), 0
    total = max(os.fstat(source.fileno()).st_size, 1)
    with open(target, "wb") as dst:
        while chunk := source.read(CHUNK):
            task.check_cancelled()
            digest.update(chunk)
            dst.write(chunk)
            size += len(chunk)
            task.progress(min(size / total, 1.0), f"copying {name} into the store")
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


def _refuse_by_name(path: Path) -> None:
    if path.suffix.lower() not in MEDIA_EXTENSIONS:
        raise ImportRefusedError(
            f"{shown(path.name)} is not a video Labrig imports ({', '.join(MEDIA_EXTENSIONS)})"
        )


def _open_source(path: Path) -> BinaryIO:
    """The file to import, opened once; refused when it is not there or not a file."""
    try:
        return open_regular(path)
    except NotARegularFileError:
        raise ImportRefusedError(
            f"{shown(path)} is not a file; give the path of a video file"
        ) from None
    except FileNotFoundError:
        raise ImportRefusedError(
            f"{shown(path)} is not a file: nothing is there; give the path of a video file"
        ) from None
    except OSError as exc:
        raise ImportRefusedError(
            f"{shown(path)} cannot be read ({exc.strerror or exc}); give the path of a video file "
            "Labrig may read"
        ) from None


def probe_media(path: Path, shown_as: str, task: Task = UNTRACKED) -> MediaFacts:
    """What the media file ``path`` holds (every frame is decoded, with progress to ``task``);
    refuses, with a reason naming it ``shown_as``, what is not media."""
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
    task.progress(1.0, f"decoded {decoded} frames")
    if decoded == 0:
        raise ImportRefusedError(
            f"{shown_as} does not decode as video (damaged, or not a video); nothing imported"
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
    device: dict[str, Any] | None = None,
) -> CommitResult:
    """Copy ``path`` into the store as a committed capture; refuses non-media,
    truncation and duplicates.

    Progress goes to ``task`` (decoding every frame, then copying); a cancel before the commit
    leaves nothing in the store, and the source file is never changed. ``device``: the device
    the video is of (a rig's camera at its place), as its manifest keeps it; by default, the
    file itself."""
    _refuse_by_name(path)
    name, shown_as = f"seg-00000{path.suffix.lower()}", shown(path.name)
    capture_id = str(uuid.uuid4())
    folder = provisional_root(store) / capture_id
    with _open_source(path) as source:
        folder.mkdir(parents=True)
        try:
            digest, size = _copy_hashing(source, shown_as, folder / name, Share(task, 0.0, 0.5))
            fsync_dir(folder)
            # decoded from the copy: what is committed is what was counted, whatever happens to
            # the source meanwhile, and the decoder never sees the source's name
            facts = probe_media(folder / name, shown_as, Share(task, 0.5, 1.0))
            _refuse_partial(facts, shown_as, accept_partial)
            task.check_cancelled()  # the last point before anything is committed
            _refuse_duplicate(store, digest, shown_as)
        except BaseException as exc:  # nothing was committed: the provisional folder goes
            _remove(folder)
            if full := disk_full(exc, f"{shown_as} was not imported; its partial copy is removed"):
                raise full from exc
            raise
    manifest = ManifestV1(
        capture_id,
        session_id,
        device or {"device_id": f"{origin}:{shown_as}", "kind": origin, "name": shown_as},
        {
            "width": facts.width,
            "height": facts.height,
            "fps": facts.fps,
            "pixel_format": "as recorded",
        },
        {"source_path": shown(path), "source_sha256": digest},
        utcnow().isoformat(),
        0.0,
        segments=(SegmentV1(name, "", facts.decoded, digest, size, 0, 0),),
        stopped_utc=utcnow().isoformat(),
    )
    write_manifest(folder, manifest)
    partial = facts.header > facts.decoded
    try:
        return commit_capture(
            store,
            folder,
            origin=origin,
            source_sha256=digest,
            report={"partial": True, "header_frames": facts.header} if partial else None,
        )
    except AlreadyImportedError:  # another import of the same file committed first
        _remove(folder)
        raise
    except Exception as exc:
        if full := disk_full(exc, f"{shown_as} stopped while it was committed; {KEPT}"):
            raise full from exc
        raise


KEPT = "it is kept, and 'labrig recover' (or the next start of the window) finishes it"


def _refuse_partial(facts: MediaFacts, shown_as: str, accept_partial: bool) -> None:
    if facts.header > facts.decoded and not accept_partial:
        raise MediaTruncatedError(
            f"{shown_as} decodes to {facts.decoded} of the {facts.header} frames its header "
            "announces (truncated or damaged); import it anyway with --accept-partial"
        )


def _refuse_duplicate(store: Store, digest: str, shown_as: str) -> None:
    """Refuse a file already imported, before anything is stored; under concurrency the check
    that decides is the catalog's key on the imported digest, at the commit."""
    with store.read() as session:
        existing = session.scalar(
            select(ImportedSource.capture_id).where(ImportedSource.source_sha256 == digest)
        )
    if existing:
        raise AlreadyImportedError(already_imported(shown_as, existing))


def _remove(folder: Path) -> None:
    """A provisional import folder, with what it holds (files only: it has no subfolders), if the
    commit has not already removed it."""
    if folder.is_dir():
        for item in folder.iterdir():
            item.unlink()
        folder.rmdir()
