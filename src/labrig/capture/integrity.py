"""``labrig verify``: re-hash every blob and check every committed manifest against the catalog."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from labrig.capture.adopt import Orphan, find_orphans
from labrig.capture.manifest import ManifestError, read_committed_manifest
from labrig.errors import LabrigError
from labrig.fsutil import NotARegularFileError, shown
from labrig.store import BlobStore, Store
from labrig.store.models import Blob, Capture, CaptureSegment
from labrig.tasks import UNTRACKED, Task


@dataclass(frozen=True)
class Problem:
    subject: str  # blob digest or capture id
    problem: str


@dataclass(frozen=True)
class IntegrityReport:
    blobs_checked: int
    captures_checked: int
    problems: list[Problem]


def verify_store(store: Store, task: Task = UNTRACKED) -> IntegrityReport:
    """Re-hash every blob, then check every committed manifest; progress goes to ``task`` (blob by
    blob) and a cancel stops it (nothing is changed either way)."""
    blobs = BlobStore(store.media_dir)
    with store.read() as session:
        rows = list(session.scalars(select(Blob).order_by(Blob.sha256)))
        captures = list(
            session.scalars(select(Capture).where(Capture.manifest_sha256.is_not(None)))
        )
        segments = list(session.scalars(select(CaptureSegment).order_by(CaptureSegment.position)))
    problems = []
    for number, blob in enumerate(rows, start=1):
        task.check_cancelled()
        task.progress((number - 1) / max(len(rows), 1), f"re-hashing file {number} of {len(rows)}")
        if issue := blobs.verify(blob.sha256, blob.ext):
            problems.append(Problem(blob.sha256, issue))
    task.progress(1.0, f"checking {len(captures)} manifests")
    for capture in captures:
        assert capture.manifest_sha256 is not None
        own = [s.media_sha256 for s in segments if s.capture_id == capture.id]
        problems += _check_manifest(blobs, capture, own)
    problems += _orphans(find_orphans(store))
    problems += [
        Problem(
            f"{table} {key}",
            f"its {column} holds text that is not valid UTF-8: the catalog was changed outside "
            "Labrig. It reads with \ufffd in place of the bad bytes and Labrig leaves the row as "
            "it is; restore labrig.db from a backup to get the original text back",
        )
        for table, key, column in store.text_not_utf8()
    ]
    return IntegrityReport(len(rows), len(captures), problems)


def _orphans(orphans: list[Orphan]) -> list[Problem]:
    """What the unreferenced files of the media store are, and what to do about them: one problem
    per committed capture the catalog lost (its manifest and the files it names), one per other
    file."""
    problems, named = [], set()
    for orphan in (o for o in orphans if o.ext == ".json"):
        try:
            manifest = read_committed_manifest(orphan.path, orphan.sha256)
        except (OSError, LabrigError):
            continue
        files = {orphan.sha256} | {s.sha256 for s in manifest.segments}
        files |= {s.timestamps_sha256 for s in manifest.segments if s.timestamps_sha256}
        named |= files
        problems.append(
            Problem(
                manifest.capture_id,
                f"committed capture {manifest.capture_id} is in the media store ({len(files)} "
                "files) but not in the catalog (its rows were lost); run 'labrig recover --adopt' "
                "to catalog it again",
            )
        )
    return problems + [
        Problem(
            orphan.sha256 or shown(orphan.path.name),
            f"{shown(orphan.path)} is in the media store but no catalog row references it (left "
            "by an interrupted commit, or put there by hand); nothing was changed",
        )
        for orphan in orphans
        if orphan.sha256 not in named
    ]


def _check_manifest(
    blobs: BlobStore, capture: Capture, segment_digests: list[str]
) -> list[Problem]:
    assert capture.manifest_sha256 is not None
    path = blobs.path(capture.manifest_sha256, ".json")
    try:
        manifest = read_committed_manifest(path, capture.manifest_sha256)
    except FileNotFoundError:
        return [Problem(capture.id, f"its committed manifest is missing: {shown(path)}")]
    except OSError as exc:
        return [Problem(capture.id, f"its committed manifest {shown(path)} is unreadable ({exc})")]
    except (ManifestError, NotARegularFileError) as exc:
        return [Problem(capture.id, exc.message)]
    if [s.sha256 for s in manifest.segments] != segment_digests:
        return [
            Problem(capture.id, "the committed manifest and the catalog list different segments")
        ]
    if manifest.capture_id != capture.id:
        return [Problem(capture.id, "the committed manifest names another capture")]
    return []
