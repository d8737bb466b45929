"""``labrig verify``: re-hash every blob and check every committed manifest against the catalog.

Each blob found whole records when (``blobs.verified_at``), so a check may take only part of a
large store: what was stored since a date, or what has not been found whole for some days (oldest
first). The full check, the default, also looks for files no row references and for catalog text
changed outside Labrig.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from itertools import islice

from sqlalchemy import Select, or_, select, update

from labrig.capture.adopt import Orphan, find_orphans
from labrig.capture.manifest import ManifestError, read_committed_manifest
from labrig.errors import CatalogDamagedError, LabrigError
from labrig.fsutil import NotARegularFileError, shown
from labrig.store import BlobStore, Store, utcnow
from labrig.store.models import Blob, Capture, CaptureSegment
from labrig.tasks import UNTRACKED, Task


@dataclass(frozen=True)
class Problem:
    subject: str  # blob digest or capture id
    problem: str


@dataclass(frozen=True)
class Selection:
    """Which blobs a check re-hashes: all (the default), those stored since ``stored_since``,
    and/or those not found whole since ``unchecked_since`` (never checked ones included)."""

    stored_since: datetime | None = None
    unchecked_since: datetime | None = None

    @property
    def full(self) -> bool:
        return self.stored_since is None and self.unchecked_since is None


@dataclass(frozen=True)
class IntegrityReport:
    blobs_checked: int
    captures_checked: int
    problems: list[Problem]
    full: bool = True
    #: whether each whole blob's check was recorded (not on a catalog that refuses writes)
    recorded: bool = True


#: blobs re-hashed side by side (hashing releases the GIL; disks serve several reads at once)
HASHERS = min(4, os.cpu_count() or 1)
#: whole blobs recorded per write transaction
RECORD_EVERY = 500


def verify_store(
    store: Store, task: Task = UNTRACKED, selection: Selection = Selection()
) -> IntegrityReport:
    """Re-hash the selected blobs (all by default), then check the committed manifests among them;
    progress goes to ``task`` (blob by blob) and a cancel stops it. Nothing is changed but the
    record of when each blob was found whole."""
    blobs = BlobStore(store.media_dir)
    with store.read() as session:
        rows = list(session.scalars(_selected(selection)))
        picked = {b.sha256 for b in rows}
        captures = [
            c
            for c in session.scalars(select(Capture).where(Capture.manifest_sha256.is_not(None)))
            if selection.full or c.manifest_sha256 in picked
        ]
        segments = list(session.scalars(select(CaptureSegment).order_by(CaptureSegment.position)))
    problems, whole, recorded = [], [], True
    for number, (blob, issue) in enumerate(_rehashed(blobs, rows), start=1):
        task.check_cancelled()
        task.progress((number - 1) / max(len(rows), 1), f"re-hashing file {number} of {len(rows)}")
        if issue:
            problems.append(Problem(blob.sha256, issue))
        else:
            whole.append(blob.sha256)
        if len(whole) >= RECORD_EVERY:
            recorded = _record(store, whole) and recorded
            whole = []
    recorded = _record(store, whole) and recorded
    task.progress(1.0, f"checking {len(captures)} manifests")
    for capture in captures:
        assert capture.manifest_sha256 is not None
        own = [s.media_sha256 for s in segments if s.capture_id == capture.id]
        problems += _check_manifest(blobs, capture, own)
    if selection.full:
        problems += _orphans(find_orphans(store))
        problems += [
            Problem(
                f"{table} {key}",
                f"its {column} holds text that is not valid UTF-8: the catalog was changed outside "
                "Labrig. It reads with \ufffd in place of the bad bytes and Labrig leaves the row "
                "as it is; restore labrig.db from a backup to get the original text back",
            )
            for table, key, column in store.text_not_utf8()
        ]
    return IntegrityReport(len(rows), len(captures), problems, selection.full, recorded)


def _selected(selection: Selection) -> Select[Blob]:
    """The blobs a check takes: in digest order for a full check, else those found whole longest
    ago first (never checked ones first of all)."""
    query = select(Blob)
    if selection.stored_since is not None:
        query = query.where(Blob.created_at >= selection.stored_since)
    if selection.unchecked_since is not None:
        query = query.where(
            or_(Blob.verified_at.is_(None), Blob.verified_at < selection.unchecked_since)
        )
    if selection.full:
        return query.order_by(Blob.sha256)
    return query.order_by(Blob.verified_at.is_not(None), Blob.verified_at, Blob.sha256)


def _rehashed(blobs: BlobStore, rows: list[Blob]) -> Iterator[tuple[Blob, str | None]]:
    """Each blob with what is wrong with it (None: whole), in order, hashed :data:`HASHERS` at a
    time."""
    if HASHERS <= 1 or len(rows) <= 1:
        yield from ((b, blobs.verify(b.sha256, b.ext)) for b in rows)
        return
    with ThreadPoolExecutor(HASHERS, thread_name_prefix="labrig-verify") as pool:
        upcoming = iter(rows)
        ahead = deque(
            (b, pool.submit(blobs.verify, b.sha256, b.ext)) for b in islice(upcoming, HASHERS * 2)
        )
        while ahead:
            blob, hashing = ahead.popleft()
            if (nxt := next(upcoming, None)) is not None:
                ahead.append((nxt, pool.submit(blobs.verify, nxt.sha256, nxt.ext)))
            yield blob, hashing.result()


def _record(store: Store, whole: Iterable[str]) -> bool:
    """Record that these blobs were found whole now; False when the catalog refuses writes (it is
    damaged: the check itself still stands)."""
    digests = list(whole)
    if not digests:
        return True
    try:
        with store.write() as session:
            session.execute(
                update(Blob).where(Blob.sha256.in_(digests)).values(verified_at=utcnow())
            )
    except CatalogDamagedError:
        return False
    return True


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
