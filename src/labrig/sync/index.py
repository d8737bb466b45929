"""What sync copies, indexed from the outbox: a durable consumer of ``capture.committed``,
``result.published`` and ``review.revised``.

For a committed (or salvaged) capture it indexes the capture's media, timestamps and committed
manifest (blobs of the media store); for a published result, and again after each revision, a
*result manifest* (``labrig.sync.result/1``): the automatic document exactly as published and every
revision document so far, with their digests. Objects are named by their SHA-256 and never change;
the index row is written in the consumer's inbox transaction, so a redelivered event indexes nothing
twice. The copying itself happens later, outside any database transaction
(:mod:`labrig.sync.service`).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from labrig.domain.events import EventName
from labrig.domain.idempotency import canonical_json, sha256_hex
from labrig.events import EventRecord
from labrig.store import utcnow
from labrig.store.models import (
    AnalysisResultRecord,
    AttemptCapture,
    Blob,
    Capture,
    CaptureSegment,
    ResultRevision,
    SyncObject,
)

SYNC_INDEXER = "sync.indexer"
INDEXED = frozenset(
    {
        EventName.CAPTURE_COMMITTED.value,
        EventName.RESULT_PUBLISHED.value,
        EventName.REVIEW_REVISED.value,
    }
)
RESULT_MANIFEST_SCHEMA = "labrig.sync.result/1"
#: media-store blob kind → (the event's object_kind, what it holds)
BLOB_KINDS = {
    "media": ("blob", "media"),
    "timestamps": ("blob", "timestamps"),
    "manifest": ("manifest", "capture-manifest"),
}


def index_for_sync(event: EventRecord, session: Session) -> None:
    """Dispatcher consumer: index the objects an event made available for sync (in the
    inbox's transaction)."""
    if event.name == EventName.CAPTURE_COMMITTED:
        _index_capture(session, str(event.payload["capture_id"]))
    elif event.name in (EventName.RESULT_PUBLISHED, EventName.REVIEW_REVISED):
        _index_result(session, str(event.payload["result_id"]))


def _add(session: Session, row: SyncObject) -> None:
    if session.get(SyncObject, row.sha256) is None:
        session.add(row)
        session.flush()


def _index_capture(session: Session, capture_id: str) -> None:
    capture = session.get(Capture, capture_id)
    if capture is None or capture.manifest_sha256 is None:
        return
    rows = session.execute(
        select(CaptureSegment.media_sha256, CaptureSegment.timestamps_sha256).where(
            CaptureSegment.capture_id == capture_id
        )
    ).all()
    digests = [capture.manifest_sha256, *(d for row in rows for d in row if d)]
    for blob in session.scalars(select(Blob).where(Blob.sha256.in_(digests))):
        kind, content = BLOB_KINDS.get(blob.kind, ("blob", blob.kind))
        _add(
            session,
            SyncObject(
                sha256=blob.sha256,
                kind=kind,
                content=content,
                ext=blob.ext,
                size=blob.size,
                ref_id=capture_id,
                body=None,
                indexed_at=utcnow(),
            ),
        )


def result_manifest(session: Session, result: AnalysisResultRecord) -> bytes:
    """The ``labrig.sync.result/1`` document of a result as it stands: automatic
    document and revisions."""
    revisions = session.scalars(
        select(ResultRevision)
        .where(ResultRevision.result_id == result.id)
        .order_by(ResultRevision.number)
    )
    captures = session.scalars(
        select(Capture.manifest_sha256)
        .join(AttemptCapture, AttemptCapture.capture_id == Capture.id)
        .where(AttemptCapture.attempt_id == result.attempt_id)
        .order_by(AttemptCapture.position)
    )
    return canonical_json(
        {
            "schema": RESULT_MANIFEST_SCHEMA,
            "result_id": result.id,
            "attempt_id": result.attempt_id,
            "status": result.status,
            "degraded": result.degraded,
            "published_at": result.created_at.isoformat(),
            "automatic_digest": result.digest,
            "automatic_document": result.document,
            "revisions": [
                {
                    "revision_id": r.id,
                    "number": r.number,
                    "digest": r.digest,
                    "document": r.document,
                }
                for r in revisions
            ],
            "capture_manifests": [c for c in captures if c],
        }
    )


def _index_result(session: Session, result_id: str) -> None:
    result = session.get(AnalysisResultRecord, result_id)
    if result is None or result.status != "published":
        return
    body = result_manifest(session, result)
    _add(
        session,
        SyncObject(
            sha256=sha256_hex(body),
            kind="manifest",
            content="result",
            ext=".json",
            size=len(body),
            ref_id=result.id,
            body=body.decode(),
            indexed_at=utcnow(),
        ),
    )
