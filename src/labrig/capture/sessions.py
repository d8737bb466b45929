"""Sessions and attempts: a sitting of captures, and the trials that request analysis.

Creating an attempt records ``attempt.created`` and enqueues its analysis jobs
in the same transaction, so an attempt never exists without its requested analysis.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from labrig.domain.events import EventName
from labrig.errors import LabrigError
from labrig.events import record_event
from labrig.jobs import JobQueue
from labrig.store import Store, utcnow
from labrig.store.models import Attempt, AttemptCapture, Capture, CaptureSession

FIELD = re.compile(r"^[\w][\w .\-]{0,127}$")
USABLE = ("committed", "salvaged")


class InvalidFieldError(LabrigError):
    code = "LABRIG_INVALID_FIELD"


class CaptureNotUsableError(LabrigError):
    code = "LABRIG_CAPTURE_NOT_COMMITTED"


@dataclass(frozen=True)
class PipelineStep:
    """One stage an attempt's analysis runs, with its configuration."""

    stage_id: str
    config: Mapping[str, Any]
    after_previous: bool = False  # waits for the previous step's output


def _check(name: str, value: str) -> str:
    value = value.strip()
    if not FIELD.match(value):
        raise InvalidFieldError(
            f"{name} '{value}' is not valid: use 1–128 letters, digits, spaces, '.', '-' "
            "or '_', starting with a letter or digit"
        )
    return value


def create_session(queue: JobQueue, subject_code: str, protocol: str, operator: str) -> str:
    session_id = str(uuid.uuid4())
    with queue.store.write() as db:
        db.add(
            CaptureSession(
                id=session_id,
                subject_code=_check("Subject code", subject_code),
                protocol=_check("Protocol", protocol),
                operator=_check("Operator", operator),
                created_at=utcnow(),
            )
        )
    return session_id


def create_attempt(
    queue: JobQueue,
    session_id: str,
    capture_ids: Sequence[str],
    pipeline: Sequence[PipelineStep] = (),
    note: str | None = None,
    within: Callable[[Session, str], None] | None = None,
) -> str:
    """Group committed captures into an attempt, record it and enqueue its analysis, atomically.
    ``note``: why it is not a normal attempt (its recording was interrupted), kept on it.
    ``within(session, attempt_id)``: more to write in the same transaction (a rig recording's
    outcome)."""
    if not capture_ids:
        raise CaptureNotUsableError("an attempt needs at least one committed capture")
    with queue.store.write() as db:
        if db.get(CaptureSession, session_id) is None:
            raise InvalidFieldError(f"no session {session_id}; create the session first")
        captures = [db.get(Capture, cid) for cid in capture_ids]
        for cid, capture in zip(capture_ids, captures, strict=True):
            if capture is None or capture.state not in USABLE or not capture.manifest_sha256:
                state = capture.state if capture else "unknown"
                raise CaptureNotUsableError(
                    f"capture {cid} is {state}; only committed or salvaged captures "
                    "can form an attempt"
                )
        number = (
            db.scalar(select(func.max(Attempt.number)).where(Attempt.session_id == session_id)) or 0
        ) + 1
        attempt_id = str(uuid.uuid4())
        db.add(
            Attempt(
                id=attempt_id,
                session_id=session_id,
                number=number,
                created_at=utcnow(),
                note=note,
            )
        )
        db.flush()
        for position, cid in enumerate(capture_ids):
            db.add(AttemptCapture(attempt_id=attempt_id, capture_id=cid, position=position))
        record_event(
            db,
            EventName.ATTEMPT_CREATED,
            {"attempt_id": attempt_id, "session_id": session_id, "capture_ids": list(capture_ids)},
        )
        inputs = [c.manifest_sha256 for c in captures if c is not None and c.manifest_sha256]
        previous: list[str] = []
        for step in pipeline:
            job = queue.add_job(
                db,
                step.stage_id,
                inputs,
                step.config,
                attempt_id=attempt_id,
                depends_on=previous if step.after_previous else (),
            )
            previous = [job.id]
        if within is not None:
            within(db, attempt_id)
    return attempt_id


def attempt_names(store: Store, attempt_ids: Sequence[str]) -> dict[str, str]:
    """How a technician names each attempt: its session's subject and its number in the session,
    e.g. "DEMO-001 · attempt 2"; ids not found are left out."""
    if not attempt_ids:
        return {}
    with store.read() as session:
        rows = session.execute(
            select(Attempt.id, CaptureSession.subject_code, Attempt.number)
            .join(CaptureSession, CaptureSession.id == Attempt.session_id)
            .where(Attempt.id.in_(set(attempt_ids)))
        ).all()
    return {attempt_id: f"{subject} · attempt {number}" for attempt_id, subject, number in rows}
