"""Saving a rig recording as one attempt: all its committed captures, its sync figures and how each
device ended, in one transaction, with the rig pipeline requested (rig.sync, then the default
pipeline on the first camera)."""

from __future__ import annotations

import json
from dataclasses import replace

from sqlalchemy.orm import Session

from labrig.capture import PipelineStep, create_attempt
from labrig.capture.rig_recorder import RigResult
from labrig.errors import LabrigError
from labrig.jobs import JobQueue
from labrig.pipeline.attempts import attempt_pipeline
from labrig.store.models import RigRecording


class RigNotSavedError(LabrigError):
    """No device of the rig recording committed a frame: there is nothing to make an attempt of."""

    code = "LABRIG_RIG_NOTHING_RECORDED"


def rig_pipeline(queue: JobQueue, capture_ids: list[str]) -> list[PipelineStep]:
    """rig.sync over every capture (two or more), then the default pipeline after it."""
    steps = attempt_pipeline(queue.store, capture_ids[0])
    if len(capture_ids) < 2:
        return steps
    return [PipelineStep("rig.sync", {}), replace(steps[0], after_previous=True), *steps[1:]]


def save_rig_attempt(queue: JobQueue, result: RigResult, interrupted: str = "") -> str:
    """Make ``result``'s committed captures one attempt of its session, and store the rig
    recording's outcome with it; the attempt's id. ``interrupted``: why the recording ended
    other than by Stop (a crash), marked on the attempt."""
    captures = result.committed_ids
    if not captures:
        _mark(queue, result, "failed")
        raise RigNotSavedError(
            f"no device of the rig '{result.rig}' recorded a frame: nothing was saved as an "
            f"attempt. {result.note or ''} Check the devices and record again".replace("  ", " ")
        )
    parts = [f"Interrupted: {interrupted}." if interrupted else "", result.note]
    note = " ".join(p for p in parts if p) or None

    def within(db: Session, attempt_id: str) -> None:
        _write_outcome(db, result, "interrupted" if interrupted else "saved", attempt_id)

    return create_attempt(
        queue, result.session_id, captures, rig_pipeline(queue, captures), note, within
    )


def _write_outcome(db: Session, result: RigResult, state: str, attempt_id: str | None) -> None:
    row = db.get(RigRecording, result.recording_id)
    if row is None:
        return
    row.state, row.attempt_id = state, attempt_id
    row.devices = json.dumps([c.to_json() for c in result.captures])
    row.sync = json.dumps(result.sync.to_json()) if result.sync else None


def _mark(queue: JobQueue, result: RigResult, state: str) -> None:
    with queue.store.write() as db:
        _write_outcome(db, result, state, None)
