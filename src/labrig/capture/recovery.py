"""Start-up recovery: every provisional capture left by a crash is resolved, nothing deleted.

Closed segments are verified and committed as ``salvaged``; the segment that
was open is kept up to its last decodable frame; files that cannot be read
are moved to the quarantine folder and listed. A folder whose capture was
already committed (a crash after the commit point) is tidied away.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path

from sqlalchemy import exists, select, text

from labrig.capture.commit import commit_capture, count_frames, media_ext
from labrig.capture.manifest import (
    ManifestError,
    ManifestV1,
    SegmentV1,
    read_manifest,
    write_manifest,
)
from labrig.capture.recorder import provisional_root
from labrig.capture.samples import is_sample_chunk, read_chunk
from labrig.capture.sink import read_timestamps
from labrig.errors import LabrigError
from labrig.fsutil import (
    FolderLock,
    NotARegularFileError,
    fsync_dir,
    fsync_file,
    sha256_file,
    shown,
)
from labrig.store import BlobStore, Store, utcnow
from labrig.store.models import Capture, RigRecording

DONE_STATES = ("committed", "salvaged")


class SegmentsMissingError(LabrigError):
    """A provisional manifest lists closed segments that are nowhere: not in its folder, not in
    the media store."""

    code = "LABRIG_SEGMENTS_MISSING"


@dataclass(frozen=True)
class Recovered:
    capture_id: str
    outcome: str  # salvaged, quarantined or tidied
    frames: int
    detail: str


@dataclass
class RecoveryReport:
    items: list[Recovered] = field(default_factory=list)

    def to_json(self) -> list[dict[str, object]]:
        return [vars(i) for i in self.items]


def quarantine_root(store: Store) -> Path:
    return store.root / "captures" / "quarantine"


#: the rig recordings being made, or a crash left unsaved: the term of ix_rig_recordings_unsaved
#: (migration 0022) word for word, as SQLite uses a partial index only for a query that says it
RIG_UNSAVED = text("rig_recordings.state = 'recording'")


def any_rig_unsaved(store: Store) -> bool:
    """Whether a rig recording is being made or was left unsaved (one look at a small index):
    when none is, start-up recovery need not load what saves them."""
    with store.read() as session:
        return bool(session.scalar(select(exists().where(RIG_UNSAVED).select_from(RigRecording))))


def recover(store: Store) -> RecoveryReport:
    """Resolve every provisional capture folder of ``store``."""
    report = RecoveryReport()
    root = provisional_root(store)
    for folder in sorted(p for p in root.iterdir() if p.is_dir()) if root.exists() else []:
        item = _recover_one(store, folder)
        if item is not None:
            report.items.append(item)
    report.items += _abandon_orphans(store)
    return report


def _recover_one(store: Store, folder: Path) -> Recovered | None:
    """One folder resolved; whatever it holds, the others are still recovered: a folder that
    fails in a way not foreseen is quarantined with the reason, or left in place if even that
    fails (a full disk), and reported either way."""
    lock = FolderLock(folder)
    try:
        if not lock.acquire():
            return None  # still being recorded by a live process
    except OSError as exc:
        return Recovered(folder.name, "left", 0, f"its folder cannot be locked ({exc})")
    try:
        return _resolve_folder(store, folder)
    except (LabrigError, OSError) as exc:
        reason = exc.message if isinstance(exc, LabrigError) else f"{exc.strerror or exc}"
        try:
            _quarantine(store, folder, folder.name, reason)
        except OSError as again:
            return Recovered(folder.name, "left", 0, f"{reason}; left in place ({again})")
        return Recovered(folder.name, "quarantined", 0, reason)
    finally:
        lock.release()


def _abandon_orphans(store: Store) -> list[Recovered]:
    """Provisional rows whose folder is gone (removed by hand): marked abandoned, explicitly. Read
    first: a store with none (almost always) is not written at every start."""
    provisional = select(Capture).where(Capture.state == "provisional")
    with store.read() as session:
        gone = [
            row.id
            for row in session.scalars(provisional)
            if row.provisional_dir and not Path(row.provisional_dir).exists()
        ]
    if not gone:
        return []
    found = []
    with store.write() as session:
        for row in session.scalars(provisional.where(Capture.id.in_(gone))):
            if row.provisional_dir and not Path(row.provisional_dir).exists():
                row.state = "abandoned"
                row.report = json.dumps(
                    {
                        "reason": f"its folder {row.provisional_dir} disappeared",
                        "at": utcnow().isoformat(),
                    }
                )
                found.append(
                    Recovered(row.id, "abandoned", 0, f"folder {row.provisional_dir} is gone")
                )
    return found


def _resolve_folder(store: Store, folder: Path) -> Recovered:
    with store.read() as session:
        row = session.get(Capture, folder.name)
        done = row is not None and row.state in DONE_STATES
    if done:
        shutil.rmtree(folder, ignore_errors=True)
        return Recovered(
            folder.name, "tidied", 0, "committed before the crash; leftover folder removed"
        )
    try:
        manifest = read_manifest(folder)
        _refuse_another_capture(store, folder, manifest)
    except (ManifestError, NotARegularFileError) as exc:
        _quarantine(store, folder, folder.name, exc.message)
        return Recovered(folder.name, "quarantined", 0, exc.message)
    manifest, moved = _resolve_segments(store, folder, manifest)
    if not manifest.segments:
        _quarantine(store, folder, manifest.capture_id, "no decodable frames")
        return Recovered(manifest.capture_id, "quarantined", 0, "no decodable frames were recorded")
    write_manifest(folder, manifest)
    gap = {
        "recovered_after_crash": True,
        "quarantined_files": moved,
        "open_segment_frames_kept": manifest.segments[-1].frames if _was_open(manifest) else 0,
    }
    try:
        result = commit_capture(store, folder, state="salvaged", report=gap)
    except LabrigError as exc:
        _quarantine(store, folder, manifest.capture_id, exc.message)
        return Recovered(manifest.capture_id, "quarantined", 0, exc.message)
    detail = f"{result.segments} segments kept" + (
        f"; {len(moved)} unreadable files quarantined" if moved else ""
    )
    return Recovered(manifest.capture_id, "salvaged", result.frame_count, detail)


def _refuse_another_capture(store: Store, folder: Path, manifest: ManifestV1) -> None:
    """A manifest that names a capture other than its folder's (copied from another folder, or
    edited) would commit over that capture: refused."""
    if manifest.capture_id != folder.name:
        raise ManifestError(
            f"the manifest in {shown(folder)} names capture {manifest.capture_id}, not this "
            "folder's; it was copied or edited, so nothing in it is committed"
        )


def _was_open(manifest: ManifestV1) -> bool:
    return manifest.stopped_utc is None


def _resolve_segments(
    store: Store, folder: Path, manifest: ManifestV1
) -> tuple[ManifestV1, list[str]]:
    """Keep the closed segments that still verify and the decodable part of the open one."""
    kept: list[SegmentV1] = []
    moved: list[str] = []
    missing: list[str] = []
    for seg in manifest.segments:
        path = folder / seg.name
        if (
            path.exists()
            and count_frames(path) == seg.frames
            and sha256_file(path)[0] == seg.sha256
        ):
            kept.append(seg)
        elif path.exists():
            moved.append(_quarantine_file(store, manifest.capture_id, path))
        elif _in_store(store, seg):
            kept.append(seg)  # already moved into the media store by an interrupted commit
        else:
            missing.append(seg.name)
    if manifest.open_segment and (folder / manifest.open_segment).exists():
        salvaged = _salvage_open(folder, manifest.open_segment)
        if salvaged is None:
            moved.append(
                _quarantine_file(store, manifest.capture_id, folder / manifest.open_segment)
            )
        else:
            kept.append(salvaged)
    if missing:
        raise SegmentsMissingError(
            f"{shown(folder)} lacks {', '.join(missing)}, which its manifest lists as closed, and "
            "the media store does not hold them either; the folder is quarantined as it is"
        )
    return replace(manifest, segments=tuple(kept), open_segment=None), moved


def _in_store(store: Store, seg: SegmentV1) -> bool:
    stored = BlobStore(store.media_dir).path(seg.sha256, media_ext(seg))
    return stored.is_file() and sha256_file(stored)[0] == seg.sha256


def _salvage_open(folder: Path, name: str) -> SegmentV1 | None:
    path = folder / name
    frames = count_frames(path)
    if frames == 0:
        return None
    fsync_file(path)
    if is_sample_chunk(path):  # an instrument's chunk holds its samples' times
        stamps_name, stamps = "", read_chunk(path).mono_ns[:frames].tolist()
    else:
        stamps_name = Path(name).with_suffix(".ts.csv").name
        stamps = _read_stamps(folder / stamps_name)[:frames]
    first = stamps[0] if stamps else 0
    last = stamps[-1] if stamps else 0
    digest, size = sha256_file(path)
    return SegmentV1(name, stamps_name, frames, digest, size, first, last)


def _read_stamps(path: Path) -> list[int]:
    try:
        return read_timestamps(path)
    except OSError:
        return []  # no usable timestamps: the frames are still kept


def _quarantine_file(store: Store, capture_id: str, path: Path) -> str:
    target = quarantine_root(store) / capture_id
    target.mkdir(parents=True, exist_ok=True)
    os.replace(path, target / path.name)
    fsync_dir(target)
    return str(target / path.name)


def _quarantine(store: Store, folder: Path, capture_id: str, reason: str) -> None:
    target = quarantine_root(store) / folder.name
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        for item in folder.iterdir():
            os.replace(item, target / item.name)
        folder.rmdir()
    else:
        os.replace(folder, target)
    fsync_dir(target.parent)
    with store.write() as session:
        row = session.get(Capture, capture_id)
        if row is not None and row.state not in DONE_STATES:
            row.state, row.provisional_dir = "quarantined", None
            row.report = json.dumps(
                {"quarantined": str(target), "reason": reason, "at": utcnow().isoformat()}
            )
