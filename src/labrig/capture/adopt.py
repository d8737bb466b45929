"""Rebuilding the catalog from the media store: ``labrig recover --adopt``.

A committed manifest is self-describing: it names its capture, device, mode and every segment with
its digest (and, since segments carry it, its timestamp sidecar's). When the catalog lost captures
(the database deleted or truncated, its WAL file removed after a commit), their files still sit in
the media store as orphans that no row references; ``labrig verify`` lists them. Adopting one
re-hashes every file it names and, only when all match, re-creates its catalog rows in one
transaction, with an entry in the audit trail. Nothing in the media store is changed, and a
manifest that does not verify is left where it is and reported.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select

from labrig.capture.commit import AlreadyImportedError, catalog_capture, media_ext
from labrig.capture.manifest import SHA256, ManifestV1, read_committed_manifest, read_manifest
from labrig.capture.recorder import provisional_root
from labrig.domain.audit import Actor
from labrig.errors import LabrigError
from labrig.events import record_audit
from labrig.fsutil import sha256_file, shown
from labrig.store import BlobStore, Store
from labrig.store.models import Blob, Capture, CaptureSession

ADOPT_ACTION = "capture.adopt"


@dataclass(frozen=True)
class Adopted:
    capture_id: str  # the capture the manifest names ("" when it could not be read)
    manifest_sha256: str
    outcome: str  # adopted, or left (the detail says why)
    frames: int
    detail: str

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class Orphan:
    """A file in the media store that no catalog row references."""

    path: Path
    sha256: str  # "" when the name is not a digest (the file is not one Labrig stored)
    ext: str


def find_orphans(store: Store) -> list[Orphan]:
    """Every file of the media store that no blob row names, but those of a commit in progress
    (or interrupted, which recovery finishes): its capture still has its provisional folder, and
    the folder's manifest, or its committed manifest already moved into the store, names them."""
    with store.read() as session:
        known = set(session.scalars(select(Blob.sha256)))
    candidates = [o for o in _media_files(store.media_dir) if o.sha256 not in known]
    if not candidates:
        return []
    in_flight = _named_by_commits_in_flight(store, candidates)
    with store.read() as session:  # rows committed while the folder was read are not orphans
        known = set(session.scalars(select(Blob.sha256)))
    return [o for o in candidates if o.sha256 not in known | in_flight]


def _named_by_commits_in_flight(store: Store, candidates: list[Orphan]) -> set[str]:
    folders = provisional_root(store)
    named: set[str] = set()
    for folder in folders.iterdir() if folders.is_dir() else []:
        try:
            named |= {s.sha256 for s in read_manifest(folder).segments}
        except (LabrigError, OSError):
            continue  # recovery will deal with it
    for orphan in (o for o in candidates if o.ext == ".json"):
        try:
            manifest = read_committed_manifest(orphan.path, orphan.sha256)
        except (LabrigError, OSError):
            continue
        if (folders / manifest.capture_id).is_dir():
            named |= {orphan.sha256} | {s.sha256 for s in manifest.segments}
            named |= {s.timestamps_sha256 for s in manifest.segments if s.timestamps_sha256}
    return named


def adopt_orphans(store: Store, actor: Actor) -> list[Adopted]:
    """Re-create the catalog rows of every orphaned committed manifest whose files all verify."""
    return [_adopt(store, actor, orphan) for orphan in find_orphans(store) if orphan.ext == ".json"]


def _media_files(media: Path) -> Iterator[Orphan]:
    for folder in sorted(media.iterdir()) if media.is_dir() else []:
        for path in sorted(folder.iterdir()) if folder.is_dir() else []:
            stem, ext = (path.name[:64], path.name[64:]) if len(path.name) >= 64 else ("", "")
            digest = stem if SHA256.match(stem) and folder.name == stem[:2] else ""
            yield Orphan(path, digest, ext if digest else "")


def _adopt(store: Store, actor: Actor, orphan: Orphan) -> Adopted:
    try:
        manifest = read_committed_manifest(orphan.path, orphan.sha256)
        stored = _verified_files(BlobStore(store.media_dir), manifest, orphan)
        return _catalog(store, actor, manifest, orphan.sha256, stored)
    except (LabrigError, OSError) as exc:
        reason = exc.message if isinstance(exc, LabrigError) else str(exc.strerror or exc)
        return Adopted("", orphan.sha256, "left", 0, f"{reason}; nothing was changed")


class AdoptRefusedError(LabrigError):
    """An orphaned manifest that cannot be adopted (a file it names is missing or changed, or
    its capture is already in the catalog)."""

    code = "LABRIG_ADOPT_REFUSED"


def _verified_files(blobs: BlobStore, manifest: ManifestV1, orphan: Orphan) -> list[dict[str, Any]]:
    """Every file the manifest names, re-hashed; refused unless all are there and match."""
    stored = []
    for seg in manifest.segments:
        stored.append(_verified(blobs, seg.sha256, media_ext(seg), "media", seg.name))
        if seg.timestamps_sha256:
            stored.append(_verified(blobs, seg.timestamps_sha256, ".csv", "timestamps", seg.name))
    size = orphan.path.stat().st_size
    return [*stored, {"sha256": orphan.sha256, "ext": ".json", "size": size, "kind": "manifest"}]


def _verified(blobs: BlobStore, sha256: str, ext: str, kind: str, name: str) -> dict[str, Any]:
    path = blobs.path(sha256, ext)
    if not os.path.lexists(path):
        raise AdoptRefusedError(f"{name}'s {kind} file {shown(path)} is not in the media store")
    digest, size = sha256_file(path)
    if digest != sha256:
        raise AdoptRefusedError(f"{name}'s {kind} file {shown(path)} no longer matches its digest")
    return {"sha256": sha256, "ext": ext, "size": size, "kind": kind}


def _catalog(
    store: Store,
    actor: Actor,
    manifest: ManifestV1,
    manifest_sha: str,
    stored: list[dict[str, Any]],
) -> Adopted:
    kind = str(manifest.device.get("kind") or "")
    origin = kind if kind in ("imported", "watch_folder") else "recorded"
    source = manifest.verification.get("source_sha256") if origin != "recorded" else None
    with store.write() as session:
        if session.get(Capture, manifest.capture_id) is not None:
            raise AdoptRefusedError(
                f"capture {manifest.capture_id} is already in the catalog under another manifest"
            )
        lost_session = manifest.session_id is not None and (
            session.get(CaptureSession, manifest.session_id) is None
        )
        report = {"adopted_from_media_store": True, "lost_session_id": manifest.session_id}
        try:
            capture = catalog_capture(
                session,
                replace(manifest, session_id=None) if lost_session else manifest,
                manifest_sha,
                stored,
                state="committed",
                report=report if lost_session else {"adopted_from_media_store": True},
                origin=origin,
                source_sha256=source if isinstance(source, str) and SHA256.match(source) else None,
                committed_at=datetime.fromisoformat(manifest.stopped_utc or manifest.started_utc),
            )
        except AlreadyImportedError as exc:
            raise AdoptRefusedError(exc.message) from None
        record_audit(
            session,
            actor,
            ADOPT_ACTION,
            "capture",
            manifest.capture_id,
            "rebuilt from its committed manifest in the media store",
            {"manifest_sha256": manifest_sha, "segments": len(manifest.segments)},
        )
    detail = f"{len(manifest.segments)} segments re-hashed and catalogued" + (
        f"; its session {manifest.session_id} is not in the catalog, so it is in none"
        if lost_session
        else ""
    )
    return Adopted(manifest.capture_id, manifest_sha, "adopted", capture.frame_count, detail)
