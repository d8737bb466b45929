"""Sync: copy every indexed object to the configured destination, acknowledge only what
re-hashes right.

A batch: index what the outbox announced (the ``sync.indexer`` consumer), list the objects without
an acknowledgement for this destination (and, unless retrying now, whose backoff has passed)
together with the audit chain head in one read transaction, then copy each one outside any
transaction. An object is acknowledged (a ``sync_acks`` row and ``sync.object.acknowledged``, in one
transaction) only when the destination's copy, read back, hashes to the object's SHA-256; a failure
is recorded with its code and message (:mod:`labrig.sync.faults`) and a backoff (1 s, 2 s, 4 s … 5
min), and the batch goes on with the other objects. The batch ends with a record at the destination
(``batches/…json``) naming the objects it acknowledged and the chain head.

Why a worker over an index rather than copying in the dispatcher's consumer: a consumer runs inside
a write transaction, and a media copy to a share can take minutes; the catalog's state (index,
acknowledgements, failures) is all a batch needs to resume after any crash, and every step is
idempotent — a copy already at the destination with the right digest is acknowledged without
copying, and an object is acknowledged at most once per destination. Nothing local is deleted or
changed by sync, ever.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import and_, exists, select
from sqlalchemy.orm import Session

from labrig.access import AccessControl
from labrig.domain.audit import ChainHead, require_reason
from labrig.domain.events import EventName
from labrig.domain.roles import Action
from labrig.errors import LabrigError
from labrig.events import Dispatcher, Outcome, chain_head, record_audit, record_event, retry_delay
from labrig.store import Store, utcnow
from labrig.store.models import SyncAck, SyncBatch, SyncDestination, SyncFailure, SyncObject
from labrig.sync.destination import (
    BATCHES,
    OBJECTS,
    Destination,
    DestinationConfig,
    DestinationUnavailableError,
    FolderDestination,
    read_marker,
)
from labrig.sync.faults import at_destination, described, said
from labrig.sync.index import SYNC_INDEXER
from labrig.sync.source import NEXT, CheckedReader, open_source
from labrig.tasks import UNTRACKED, Share, Task, TaskCancelledError

BATCH_SCHEMA = "labrig.sync.batch/1"
DestinationFactory = Callable[[DestinationConfig], Destination]


class SyncNotConfiguredError(LabrigError):
    code = "LABRIG_SYNC_NOT_CONFIGURED"


class SyncDigestMismatchError(LabrigError):
    code = "LABRIG_SYNC_DIGEST_MISMATCH"


class InvalidDestinationError(LabrigError):
    code = "LABRIG_SYNC_DESTINATION_INVALID"


@dataclass
class BatchReport:
    batch_id: str
    destination: str
    audit_chain_head: ChainHead
    pending: int = 0  # objects the batch set out to copy
    acknowledged: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # sha256 → message
    failed_codes: dict[str, str] = field(default_factory=dict)  # sha256 → its code
    # why the batch stopped (the destination is unavailable), or that it was cancelled, or that
    # its record could not be written; with its code (None for a cancel)
    error: str | None = None
    error_code: str | None = None
    batch_file: str | None = None

    def fail(self, sha256: str, exc: LabrigError) -> None:
        """Record that one object failed (the batch goes on)."""
        self.failed[sha256], self.failed_codes[sha256] = exc.message, exc.code

    def stop(self, exc: LabrigError) -> None:
        """Record why the batch went no further (the first reason is kept)."""
        if self.error is None:
            self.error, self.error_code = exc.message, exc.code

    def said_failure(self, sha256: str) -> str:
        """An object's failure as it is kept and shown: ``CODE: message``."""
        return said(self.failed_codes[sha256], self.failed[sha256])

    def said_error(self) -> str | None:
        """The batch's error as it is kept and shown: ``CODE: message`` (a cancel has no code)."""
        return None if self.error is None else said(self.error_code, self.error)

    def to_json(self) -> dict[str, Any]:
        return {
            "batch_id": self.batch_id,
            "destination": self.destination,
            "pending": self.pending,
            "acknowledged": self.acknowledged,
            "failed": self.failed,
            "failed_codes": self.failed_codes,
            "error": self.error,
            "error_code": self.error_code,
            "batch_file": self.batch_file,
            "audit_chain_head": self.audit_chain_head.to_json(),
        }


def object_path(obj: SyncObject) -> str:
    """Where an object lives at the destination: by content, like the media store."""
    return f"{OBJECTS}/{obj.sha256[:2]}/{obj.sha256}{obj.ext}"


def _config(row: SyncDestination) -> DestinationConfig:
    return DestinationConfig(
        row.destination_id,
        row.name,
        row.kind,
        row.location,
        row.configured_by,
        row.configured_at.isoformat(),
    )


def current_destination(session: Session) -> DestinationConfig | None:
    row = session.scalar(select(SyncDestination).order_by(SyncDestination.seq.desc()).limit(1))
    return _config(row) if row is not None else None


class SyncService:
    """Configuring the destination and running sync batches. Thread-safe (no state but its parts); a
    batch calls its task on the thread that runs it."""

    def __init__(
        self,
        store: Store,
        dispatcher: Dispatcher,
        access: AccessControl,
        destination: DestinationFactory = FolderDestination,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.store, self.dispatcher, self.access = store, dispatcher, access
        self.make_destination, self.clock = destination, clock

    # -- configuration --

    def current(self) -> DestinationConfig | None:
        with self.store.read() as session:
            return current_destination(session)

    def configure(
        self, location: str | Path, reason: str, name: str | None = None
    ) -> DestinationConfig:
        """Make the folder ``location`` the destination (admin once roles are enforced; audited)."""
        why = require_reason(reason, "configuring the sync destination")
        folder = Path(location).expanduser().absolute()
        actor = self.access.require(Action.SETTINGS)
        if not folder.is_dir():
            raise DestinationUnavailableError(
                f"{folder} is not a folder that exists here (is the share mounted?); "
                "create it or mount the share, then configure again"
            )
        marker = read_marker(folder) or {}
        destination_id = str(marker.get("destination_id") or uuid.uuid4())
        label = _name(name or str(marker.get("name") or "") or folder.name or "archive")
        try:
            FolderDestination.prepare(folder, destination_id, label, actor.user)
        except OSError as exc:
            raise DestinationUnavailableError(
                f"cannot write into {folder} ({exc.strerror}); give Labrig's user "
                "write access to it, then configure again"
            ) from exc
        with self.store.write() as session:
            actor = self.access.authorize(session, Action.SETTINGS)
            previous = current_destination(session)
            row = SyncDestination(
                destination_id=destination_id,
                name=label,
                kind="folder",
                location=str(folder),
                configured_by=actor.user,
                configured_at=utcnow(),
            )
            session.add(row)
            session.flush()
            record_audit(
                session,
                actor,
                "sync.configure",
                "sync_destination",
                destination_id,
                why,
                {
                    "name": label,
                    "kind": "folder",
                    "location": str(folder),
                    "previous": previous.to_json() if previous else None,
                },
            )
            return _config(row)

    # -- running --

    def index(self) -> int:
        """Deliver pending outbox events to the sync indexer; how many were handled."""
        consumer, handled = self.dispatcher.consumers[SYNC_INDEXER], 0
        # each event delivered is then in the inbox, or failed and waiting for its backoff: the
        # loop ends; it waits for a dispatcher delivering them now, so the batch sees its work
        while any((done := self.dispatcher.deliver_pending(consumer, wait=True)).values()):
            handled += done[Outcome.HANDLED]
        return handled

    def run_once(self, *, retry_now: bool = False, task: Task = UNTRACKED) -> BatchReport:
        """One batch over everything pending. ``retry_now`` also retries objects still in
        their backoff (a person asking for a sync now); the background loop leaves them until
        their time comes.

        Progress goes to ``task`` by bytes copied. A cancel ends the batch early and is said in its
        ``error``: what was acknowledged stays so, the object being copied is not (its partial copy
        is removed), and the rest waits for the next batch."""
        config = self.current()
        if config is None:
            raise SyncNotConfiguredError(
                "no sync destination is configured; an admin sets one: labrig sync "
                'configure --to DIR --reason "…"'
            )
        self.access.require(Action.SYNC)
        self.index()
        destination = self.make_destination(config)
        with self.store.read() as session:
            pending = self._pending(session, config.destination_id, retry_now)
            report = BatchReport(str(uuid.uuid4()), config.name, chain_head(session), len(pending))
        started = utcnow()
        if pending:
            self._copy_all(destination, pending, report, task)
            self._record_batch(destination, config, report, pending, started)
        return report

    def _pending(self, session: Session, destination_id: str, retry_now: bool) -> list[SyncObject]:
        acked = exists().where(
            and_(SyncAck.destination_id == destination_id, SyncAck.sha256 == SyncObject.sha256)
        )
        waiting = exists().where(
            and_(
                SyncFailure.destination_id == destination_id,
                SyncFailure.sha256 == SyncObject.sha256,
                SyncFailure.next_attempt_at > self.clock(),
            )
        )
        query = select(SyncObject).where(~acked).order_by(SyncObject.indexed_at, SyncObject.sha256)
        return list(session.scalars(query if retry_now else query.where(~waiting)))

    def _copy_all(
        self, destination: Destination, pending: list[SyncObject], report: BatchReport, task: Task
    ) -> None:
        total, done = max(sum(o.size for o in pending), 1), 0
        for number, obj in enumerate(pending, start=1):
            try:
                destination.check()
            except DestinationUnavailableError as exc:
                report.stop(exc)
                return
            share = Share(
                task,
                done / total,
                (done + obj.size) / total,
                f"copying {obj.content} {obj.sha256[:12]}… ({number} of {len(pending)})",
            )
            done += obj.size
            try:
                task.check_cancelled()
                self._sync_one(destination, obj, report.batch_id, share)
                report.acknowledged.append(obj.sha256)
            except TaskCancelledError:
                report.error = (
                    f"cancelled: {len(pending) - len(report.acknowledged) - len(report.failed)} "
                    "objects are left for the next batch"
                )
                return
            except LabrigError as exc:
                report.fail(obj.sha256, exc)
                self._record_failure(
                    destination.config.destination_id, obj.sha256, report.said_failure(obj.sha256)
                )

    def _sync_one(
        self, destination: Destination, obj: SyncObject, batch_id: str, task: Task
    ) -> None:
        """Copy one object unless the destination holds it whole, and acknowledge it. Every
        failure is a :class:`LabrigError` (:mod:`labrig.sync.faults`)."""
        relpath = object_path(obj)
        try:
            # already there and whole (another workstation, a resume)
            if destination.digest(relpath) != obj.sha256:
                self._put(destination, obj, relpath, task)
                copied = destination.digest(relpath)
                if copied != obj.sha256:
                    raise SyncDigestMismatchError(
                        f"the destination's copy of {described(obj)} "
                        f"{'is missing' if copied is None else f'hashes to {copied[:12]}…'} after "
                        "the copy; it is not acknowledged and will be copied again"
                    )
        except OSError as exc:  # the local side raises typed errors only: this is the destination's
            raise at_destination(exc, destination.config, described(obj), NEXT) from exc
        self._acknowledge(destination.config, obj, relpath, batch_id)

    def _put(self, destination: Destination, obj: SyncObject, relpath: str, task: Task) -> None:
        source, where = open_source(obj, self.store.media_dir)
        with source:
            destination.put(relpath, CheckedReader(source, obj, where), obj.size, task)

    def _acknowledge(
        self, config: DestinationConfig, obj: SyncObject, relpath: str, batch_id: str
    ) -> None:
        with self.store.write() as session:
            if session.get(SyncAck, (config.destination_id, obj.sha256)) is not None:
                return  # another runner acknowledged it first: one acknowledgement, one event
            session.add(
                SyncAck(
                    destination_id=config.destination_id,
                    sha256=obj.sha256,
                    destination_name=config.name,
                    path=relpath,
                    batch_id=batch_id,
                    acknowledged_at=utcnow(),
                )
            )
            failure = session.get(SyncFailure, (config.destination_id, obj.sha256))
            if failure is not None:
                session.delete(failure)
            record_event(
                session,
                EventName.SYNC_ACKNOWLEDGED,
                {"object_sha256": obj.sha256, "object_kind": obj.kind, "destination": config.name},
            )

    def _record_failure(self, destination_id: str, sha256: str, error: str) -> None:
        with self.store.write() as session:
            failure = session.get(SyncFailure, (destination_id, sha256))
            if failure is None:
                failure = SyncFailure(destination_id=destination_id, sha256=sha256, attempts=0)
                session.add(failure)
            failure.attempts += 1
            failure.last_error, failure.failed_at = error, self.clock()
            failure.next_attempt_at = self.clock() + retry_delay(failure.attempts)

    def _record_batch(
        self,
        destination: Destination,
        config: DestinationConfig,
        report: BatchReport,
        pending: list[SyncObject],
        started: datetime,
    ) -> None:
        if report.acknowledged:
            self._write_batch_file(destination, config, report, pending, started)
        with self.store.write() as session:
            session.add(
                SyncBatch(
                    id=report.batch_id,
                    destination_id=config.destination_id,
                    started_at=started,
                    finished_at=utcnow(),
                    chain_seq=report.audit_chain_head.seq,
                    chain_hash=report.audit_chain_head.entry_hash,
                    acknowledged=len(report.acknowledged),
                    failed=len(report.failed),
                    error=report.said_error(),
                    batch_file=report.batch_file,
                )
            )

    def _write_batch_file(
        self,
        destination: Destination,
        config: DestinationConfig,
        report: BatchReport,
        pending: list[SyncObject],
        started: datetime,
    ) -> None:
        by_sha = {o.sha256: o for o in pending}
        body = json.dumps(
            {
                "schema": BATCH_SCHEMA,
                "batch_id": report.batch_id,
                "destination_id": config.destination_id,
                "destination": config.name,
                "store_id": self.store.meta("store_id"),
                "host": self.access.actor().host,
                "started_at": started.isoformat(),
                "finished_at": utcnow().isoformat(),
                "audit_chain_head": report.audit_chain_head.to_json(),
                "objects": [
                    {
                        "sha256": s,
                        "kind": by_sha[s].kind,
                        "content": by_sha[s].content,
                        "ref_id": by_sha[s].ref_id,
                        "path": object_path(by_sha[s]),
                    }
                    for s in report.acknowledged
                ],
            },
            indent=1,
            sort_keys=True,
        ).encode()
        relpath = f"{BATCHES}/{started.strftime('%Y%m%dT%H%M%S%fZ')}-{report.batch_id}.json"
        kept = "its objects stay archived (each was confirmed on its own); only this record is lost"
        try:
            destination.check()
            destination.put(relpath, io.BytesIO(body), len(body))
            if destination.digest(relpath) != hashlib.sha256(body).hexdigest():
                raise SyncDigestMismatchError(
                    f"the batch record {relpath} did not read back as written; {kept}"
                )
            report.batch_file = relpath
        except OSError as exc:
            report.stop(at_destination(exc, config, f"the batch record {relpath}", kept))
        except LabrigError as exc:
            report.stop(exc)

    def run_forever(
        self,
        stop: threading.Event,
        *,
        poll_seconds: float = 5.0,
        on_batch: Callable[[BatchReport], None] | None = None,
        wake: threading.Event | None = None,
    ) -> None:
        """Run batches until ``stop`` is set: after each local commit that recorded events, else
        every ``poll_seconds`` (failed objects wait for their backoff). Whoever sets ``stop`` sets
        ``wake`` too, so the wait between batches ends at once; a batch under way is finished."""
        wake = wake or threading.Event()
        self.store.on_events_committed(wake.set)
        while not stop.is_set():
            wake.clear()
            report = self.run_once()
            if on_batch is not None:
                on_batch(report)
            if report.pending and not report.error and not report.failed:
                continue  # there may be more than one batch's worth
            wake.wait(poll_seconds)
            if stop.is_set():
                break


def _name(text: str) -> str:
    label = text.strip()
    if not label or len(label) > 128 or any(ord(c) < 32 for c in label):
        raise InvalidDestinationError(
            f"'{text}' cannot name a destination: give 1-128 printable characters (--name)"
        )
    return label
