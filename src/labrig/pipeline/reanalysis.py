"""Analysing an attempt again under the calibrations current now: a new attempt of the same
captures in the same session, with the pipeline a new recording would get (the device's current
calibration, or the rig's current rig calibration and the same post-hoc sync). The earlier attempt
and its result stay exactly as they were; the new attempt's note names it.

Why a new attempt and not new jobs of the old one: the old result was published from that
attempt's jobs, and it must keep reading as it was made (a reviewer compares the two)."""

from __future__ import annotations

import json

from sqlalchemy import select

from labrig.capture import create_attempt
from labrig.capture.rigs import Rig, RigNotFoundError, get_rig
from labrig.errors import LabrigError
from labrig.jobs import JobQueue
from labrig.pipeline.attempts import attempt_pipeline
from labrig.pipeline.rig_attempts import rig_pipeline
from labrig.store import Store
from labrig.store.models import Attempt, AttemptCapture, Job, RigRecording

REANALYSIS = "Re-analysis of attempt"  # how a re-analysis attempt's note begins


def reanalyses_of(store: Store, attempt_id: str) -> list[int]:
    """The numbers of the attempts that re-analyse ``attempt_id`` (by their notes), oldest
    first."""
    with store.read() as db:
        rows = db.scalars(
            select(Attempt.number)
            .where(Attempt.note.like(f"{REANALYSIS} % ({attempt_id})%"))
            .order_by(Attempt.created_at)
        )
        return [int(n) for n in rows]


class NothingToReanalyseError(LabrigError):
    code = "LABRIG_NOTHING_TO_REANALYSE"


def reanalyse(queue: JobQueue, attempt_id: str) -> str:
    """A new attempt of ``attempt_id``'s captures with its analysis requested under the current
    calibrations; its id. Refused for an attempt with no captures or one kept for calibration
    (never analysed)."""
    with queue.store.read() as db:
        attempt = db.get(Attempt, attempt_id)
        if attempt is None:
            raise NothingToReanalyseError(
                f"no attempt {attempt_id}; 'labrig review list' lists them"
            )
        captures = list(
            db.scalars(
                select(AttemptCapture.capture_id)
                .where(AttemptCapture.attempt_id == attempt_id)
                .order_by(AttemptCapture.position)
            )
        )
        jobs = list(db.scalars(select(Job).where(Job.attempt_id == attempt_id)))
        session_id, number = attempt.session_id, attempt.number
    if not captures or not jobs:
        raise NothingToReanalyseError(
            f"attempt {number} was never analysed (a board recording kept for calibration, or "
            "no captures): there is nothing to analyse again"
        )
    sync = next((j for j in jobs if j.stage_id == "rig.sync"), None)
    if sync is None:
        pipeline = attempt_pipeline(queue.store, captures[0])
    else:
        config = json.loads(sync.config or "{}")
        pipeline = rig_pipeline(queue, captures, config, _rig_of(queue, captures))
    note = (
        f"{REANALYSIS} {number} ({attempt_id}) under the calibrations current now; "
        "its earlier result is kept as it was."
    )
    return create_attempt(queue, session_id, captures, pipeline, note)


def _rig_of(queue: JobQueue, captures: list[str]) -> Rig | None:
    """The rig whose recording (or import) holds these captures, as it is now."""
    with queue.store.read() as db:
        for row in db.scalars(select(RigRecording)):
            held = {d.get("capture_id") for d in json.loads(row.devices or "[]")}
            if captures[0] in held:
                try:
                    return get_rig(queue.store, row.rig_name)
                except RigNotFoundError:
                    return None
    return None
