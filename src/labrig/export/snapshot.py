"""What an export reads from the catalog, in one read transaction: results (their values in force,
with the tracks as a reviewer corrected them, and the effective series), revisions, captures,
chain head.

Everything an export writes comes from one snapshot, so the audit chain head it records was taken
in the same transaction as its data: a store whose chain no longer holds that head was rewritten
after the export.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from labrig.capture.manifest import read_committed_manifest
from labrig.errors import LabrigError
from labrig.export.effective_series import EffectiveSeries, read_effective_series
from labrig.review import ResultNotPublishedError, ReviewedResult, find_result, reviewed_in
from labrig.review.effective import (
    CorrectionUnsupportedError,
    EffectiveTracks,
    TrackedInput,
    effective_tracks,
    operations_of,
    tracked_input,
)
from labrig.review.rig_overlays import RigSource, rig_source
from labrig.store import BlobStore, Store
from labrig.store.models import (
    AnalysisResultRecord,
    Attempt,
    AttemptCapture,
    Blob,
    Capture,
    CaptureSegment,
    CaptureSession,
    ResultRevision,
    RigRecording,
)


@dataclass(frozen=True)
class StoredFile:
    """One file of a capture in the media store, with the name its manifest gives it."""

    name: str  # as the manifest names it (sanitised before it is used as a path)
    sha256: str
    ext: str
    kind: str  # manifest, media or timestamps


@dataclass(frozen=True)
class CaptureFiles:
    capture_id: str
    info: dict[str, Any]  # device, origin, state, times, frame counts, manifest digest
    # the committed manifest first, then each segment and its timestamps
    files: tuple[StoredFile, ...]


@dataclass(frozen=True)
class RevisionDocument:
    number: int
    revision_id: str
    text: str  # the labrig.revision/1 document exactly as stored
    digest: str


@dataclass(frozen=True)
class ResultSnapshot:
    reviewed: ReviewedResult
    automatic_text: str  # the labrig.result/1 document exactly as published
    created_at: str
    session: dict[str, Any]  # session_id, subject_code, protocol, operator
    attempt_number: int
    revisions: tuple[RevisionDocument, ...]
    captures: tuple[CaptureFiles, ...]
    # the series of the tracks as a reviewer corrected them (None: no revision corrects them)
    effective: EffectiveSeries | None = None
    # what the kinematics were computed from (None: the result has no tracked markers)
    tracked: TrackedInput | None = None
    corrected: EffectiveTracks | None = None  # after the corrections in force (None: none)
    rig: RigSource | None = None  # a rig result's tracking and reconstruction outputs
    places: dict[str, str] = field(default_factory=dict)  # capture id → its place in the rig

    @property
    def automatic(self) -> dict[str, Any]:
        return json.loads(self.automatic_text)  # type: ignore[no-any-return]


class NothingToExportError(LabrigError):
    code = "LABRIG_NOTHING_TO_EXPORT"


def select_results(
    session: Session, refs: Sequence[str], everything: bool
) -> list[AnalysisResultRecord]:
    """The results named (ids or unique prefixes), or every published one; anything not
    published refused."""
    if everything:
        rows = list(
            session.scalars(
                select(AnalysisResultRecord)
                .where(AnalysisResultRecord.status == "published")
                .order_by(AnalysisResultRecord.created_at)
            )
        )
        if not rows:
            raise NothingToExportError(
                "there is no published result to export yet; analyse an attempt first "
                "(results blocked by a quality gate are never exported)"
            )
        return rows
    rows = list({row.id: row for row in (find_result(session, ref) for ref in refs)}.values())
    blocked = [row for row in rows if row.status != "published"]
    if blocked:
        names = ", ".join(f"{row.id} ({row.status})" for row in blocked)
        raise ResultNotPublishedError(
            f"only published results can be exported, and {names} is not. A blocked result did not "
            "pass its quality gates: fix the cause 'labrig review show' names and reprocess the "
            "attempt. Nothing was written"
        )
    return rows


def snapshot(
    session: Session, result: AnalysisResultRecord, store: Store, blobs: BlobStore
) -> ResultSnapshot:
    """What an export writes of ``result``, read in ``session``. ``store`` is where its media and
    calibrations are: the values and series of tracks a reviewer corrected are recomputed from
    them (:mod:`labrig.review.effective`)."""
    attempt = session.get(Attempt, result.attempt_id)
    sitting = session.get(CaptureSession, attempt.session_id) if attempt is not None else None
    history = list(
        session.scalars(
            select(ResultRevision)
            .where(ResultRevision.result_id == result.id)
            .order_by(ResultRevision.number)
        )
    )
    revisions = tuple(RevisionDocument(r.number, r.id, r.document, r.digest) for r in history)
    operations = operations_of(history)
    try:
        source: TrackedInput | None = tracked_input(store, session, result)
    except CorrectionUnsupportedError:  # no tracked markers (nothing for the point formats)
        source = None
    # the tracks after the corrections in force (None: none corrects them)
    corrected = effective_tracks(source, operations) if source is not None and operations else None
    capture_ids = session.scalars(
        select(AttemptCapture.capture_id)
        .where(AttemptCapture.attempt_id == result.attempt_id)
        .order_by(AttemptCapture.position)
    )
    return ResultSnapshot(
        reviewed=reviewed_in(session, result, store),
        automatic_text=result.document,
        created_at=result.created_at.isoformat(),
        session={
            "session_id": sitting.id,
            "subject_code": sitting.subject_code,
            "protocol": sitting.protocol,
            "operator": sitting.operator,
        }
        if sitting is not None
        else {},
        attempt_number=attempt.number if attempt is not None else 0,
        revisions=revisions,
        captures=tuple(capture_files(session, cid, blobs) for cid in capture_ids),
        effective=read_effective_series(source, corrected, history)
        if source is not None and corrected is not None
        else None,
        tracked=source,
        corrected=corrected,
        rig=rig_source(session, json.loads(result.document)),
        places=_places(session, result.attempt_id),
    )


def _places(session: Session, attempt_id: str) -> dict[str, str]:
    """Each capture of a rig's attempt by its place in the rig (front, plate …)."""
    recording = session.scalar(select(RigRecording).where(RigRecording.attempt_id == attempt_id))
    if recording is None:
        return {}
    return {
        str(d["capture_id"]): str(d["place"])
        for d in json.loads(recording.devices)
        if d.get("capture_id") and d.get("place")
    }


def capture_files(session: Session, capture_id: str, blobs: BlobStore) -> CaptureFiles:
    """A committed capture's files in the media store,
    named as its committed manifest names them."""
    capture = session.get(Capture, capture_id)
    # an attempt holds committed captures only
    assert capture is not None and capture.manifest_sha256 is not None
    ext = {
        b.sha256: b.ext
        for b in session.scalars(select(Blob).where(Blob.sha256.in_(_digests(session, capture))))
    }
    segments = list(
        session.scalars(
            select(CaptureSegment)
            .where(CaptureSegment.capture_id == capture_id)
            .order_by(CaptureSegment.position)
        )
    )
    names = _manifest_names(blobs, capture.manifest_sha256)
    files = [StoredFile("manifest.json", capture.manifest_sha256, ".json", "manifest")]
    for seg in segments:
        media_name, stamps_name = names.get(seg.position, ("", ""))
        media_ext = ext.get(seg.media_sha256, "")
        files.append(
            StoredFile(
                media_name or f"seg-{seg.position:05d}{media_ext}",
                seg.media_sha256,
                media_ext,
                "media",
            )
        )
        if seg.timestamps_sha256:
            files.append(
                StoredFile(
                    stamps_name or f"seg-{seg.position:05d}.ts.csv",
                    seg.timestamps_sha256,
                    ext.get(seg.timestamps_sha256, ".csv"),
                    "timestamps",
                )
            )
    info = {
        "capture_id": capture.id,
        "device_id": capture.device_id,
        "origin": capture.origin,
        "state": capture.state,
        "started_at": capture.started_at.isoformat(),
        "committed_at": capture.committed_at.isoformat() if capture.committed_at else None,
        "frame_count": capture.frame_count,
        "dropped_frames": capture.dropped_frames,
        "manifest_sha256": capture.manifest_sha256,
    }
    return CaptureFiles(capture.id, info, tuple(files))


def _digests(session: Session, capture: Capture) -> list[str]:
    rows = session.execute(
        select(CaptureSegment.media_sha256, CaptureSegment.timestamps_sha256).where(
            CaptureSegment.capture_id == capture.id
        )
    ).all()
    return [d for row in rows for d in row if d] + [capture.manifest_sha256 or ""]


def _manifest_names(blobs: BlobStore, manifest_sha256: str) -> dict[int, tuple[str, str]]:
    """Position → (media name, timestamps name) from the committed manifest; empty if it cannot be
    read (the export then fails on that blob with a clear error when it copies it, or uses
    fallback names)."""
    try:
        manifest = read_committed_manifest(blobs.path(manifest_sha256, ".json"), manifest_sha256)
    except (OSError, LabrigError):
        return {}
    return {n: (s.name, s.timestamps) for n, s in enumerate(manifest.segments)}
