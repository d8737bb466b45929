"""AnalysisResult: built when an attempt's stages are all done, published unless a gate blocks it.

The publisher is a durable consumer of the outbox: it looks at an attempt each
time one of its stages ends, and writes the result (and ``result.published``) in
the same transaction as its inbox entry, so a redelivery publishes nothing twice.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from labrig.domain.events import EventName
from labrig.domain.idempotency import canonical_json, sha256_hex
from labrig.domain.jobs import JobState
from labrig.domain.revisions import REVISABLE
from labrig.events import EventRecord, record_event
from labrig.store import utcnow
from labrig.store.models import AnalysisResultRecord, Job, JobOutput, ReleaseRecord

PUBLISHER = "analysis.publisher"
WATCHED = frozenset({EventName.STAGE_COMPLETED.value, EventName.STAGE_FAILED.value})
SCHEMA = "labrig.result/1"
S = JobState
FINISHED = {
    S.SUCCEEDED.value,
    S.SUCCEEDED_DEGRADED.value,
    S.BLOCKED_BY_QUALITY.value,
    S.PERMANENT_FAILURE.value,
    S.CANCELLED.value,
}


def _live_jobs(session: Session, attempt_id: str) -> list[Job]:
    jobs = list(
        session.scalars(select(Job).where(Job.attempt_id == attempt_id).order_by(Job.created_at))
    )
    return [j for j in jobs if j.state != S.SUPERSEDED.value]


def load_jobs(events: Sequence[EventRecord], session: Session) -> list[Job]:
    """The jobs of a batch of events, read in one statement before the batch is handled: the
    handler then finds each in the session instead of reading it (one statement an event)."""
    ids = sorted({str(e.payload["job_id"]) for e in events if e.payload.get("job_id")})
    return list(session.scalars(select(Job).where(Job.id.in_(ids)))) if ids else []


def publish_when_done(event: EventRecord, session: Session) -> None:
    """Dispatcher consumer: when every stage of the job's attempt has ended, record
    its AnalysisResult."""
    job = session.get(Job, event.payload["job_id"])
    if job is None or job.attempt_id is None:
        return
    jobs = _live_jobs(session, job.attempt_id)
    waiting_on_blocked = any(j.state == S.BLOCKED_BY_QUALITY.value for j in jobs)
    if not waiting_on_blocked and any(j.state not in FINISHED for j in jobs):
        return  # stages still to run
    document = build_document(session, job.attempt_id, jobs)
    digest = sha256_hex(canonical_json(document))
    if session.scalar(select(AnalysisResultRecord.id).where(AnalysisResultRecord.digest == digest)):
        return  # this very result exists already
    result_id = str(uuid.uuid4())
    session.add(
        AnalysisResultRecord(
            id=result_id,
            attempt_id=job.attempt_id,
            status=document["status"],
            degraded=document["degraded"],
            reasons=json.dumps(document["reasons"]),
            document=canonical_json(document).decode(),
            digest=digest,
            created_at=utcnow(),
        )
    )
    if document["status"] == "published":
        record_event(
            session,
            EventName.RESULT_PUBLISHED,
            {
                "result_id": result_id,
                "attempt_id": job.attempt_id,
                "result_digest": digest,
                "degraded": document["degraded"],
            },
        )


def build_document(session: Session, attempt_id: str, jobs: Sequence[Job]) -> dict[str, Any]:
    outputs = {j.stage_id: _output(session, j) for j in jobs}
    blocked = [j for j in jobs if j.state == S.BLOCKED_BY_QUALITY.value]
    failed = [j for j in jobs if j.state in (S.PERMANENT_FAILURE.value, S.CANCELLED.value)]
    reasons = [f"{j.stage_id}: {j.error_message}" for j in blocked + failed]
    degraded_reasons = [
        r
        for j in jobs
        if j.state == S.SUCCEEDED_DEGRADED.value
        for r in (outputs.get(j.stage_id) or {}).get("degraded_reasons", [])
    ]
    # a calibrated rig's attempt has 3-D kinematics instead of the first camera's 2-D ones
    kin = outputs.get("kinematics.3d") or outputs.get("kinematics") or {}
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "attempt_id": attempt_id,
        "status": "blocked" if blocked or failed else "published",
        "degraded": bool(degraded_reasons),
        "reasons": reasons + degraded_reasons,
        "units": kin.get("units"),
        "metrics": [_pick(t, METRICS, ("range_z",)) for t in kin.get("tracks", [])],
        "series": [_pick(t, SERIES, ("xyz",)) for t in kin.get("tracks", [])],
        # a rig's attempt: how well its cameras were in sync (None for one camera)
        "sync": (outputs.get("rig.sync") or {}).get("sync"),
        "qc": {
            k: (outputs.get("media.qc") or {}).get("qc", {}).get(k)
            for k in ("decoded_frames", "expected_frames", "gaps", "missing_frames", "problems")
        },
        "provenance": {
            "inputs": json.loads(jobs[0].input_digests)[:1] if jobs else [],
            "calibration_id": (outputs.get("tracking.markers") or {}).get("calibration_id"),
            "release": _release(session, jobs),
            "jobs": [
                {
                    "job_id": j.id,
                    "stage_id": j.stage_id,
                    "state": j.state,
                    "idempotency_key": j.idempotency_key,
                    "output_digest": j.output_digest,
                    "error_code": j.error_code,
                }
                for j in jobs
            ],
        },
    }
    if "reconstruction.3d" in outputs or "tracking.rig" in outputs:
        document["provenance"]["inputs"] = json.loads(jobs[0].input_digests) if jobs else []
        document["provenance"]["rig_calibration_id"] = (outputs.get("tracking.rig") or {}).get(
            "rig_calibration_id"
        )
        document["reconstruction"] = _reconstruction(outputs.get("reconstruction.3d"))
    return document


METRICS = ("track_id", *REVISABLE, "reason")  # the revisable metrics are every number measured
SERIES = ("track_id", "t", "xy", "velocity", "colour_rgb")


def _pick(track: dict[str, Any], keys: Sequence[str], if_there: Sequence[str]) -> dict[str, Any]:
    """``keys`` of a track, and ``if_there`` only where it has them (a 3-D track's z), so a 2-D
    result's document reads as it always has."""
    return {k: track.get(k) for k in keys} | {k: track[k] for k in if_there if k in track}


def _reconstruction(body: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a reviewer reads of the 3-D reconstruction: per marker its frames, gaps (s), how many
    cameras solved it and its reprojection error over time; the tracks no camera pair matched."""
    if body is None:
        return None
    rec, times = body["reconstruction"], body["times_s"]
    markers = []
    for m in rec["markers"]:
        at = [times[i] for i in m["instants"]]
        markers.append(
            {
                k: m[k]
                for k in (
                    "track_id",
                    "colour_rgb",
                    "frames",
                    "gap_instants",
                    "two_camera_share",
                    "error_rms_px",
                    "error_p95_px",
                    "cameras_used",
                    "members",
                )
            }
            | {
                "gaps_s": [[times[a], times[b]] for a, b in m["gaps"]],
                "t": at,
                "cameras": [bin(v).count("1") for v in m["views"]],
                "error_px": m["error_px"],
            }
        )
    return {
        "world": body.get("world"),
        "cameras": rec["cameras"],
        "instants": rec["instants"],
        "error_rms_px": rec["error_rms_px"],
        "error_p95_px": rec["error_p95_px"],
        "unmatched_tracks": rec["unmatched_tracks"],
        "markers": markers,
    }


def _output(session: Session, job: Job) -> dict[str, Any] | None:
    if job.idempotency_key is None or job.output_digest is None:
        return None
    row = session.get(JobOutput, job.idempotency_key)
    return json.loads(row.body) if row is not None else None


def _release(session: Session, jobs: Sequence[Job]) -> dict[str, str] | None:
    """The release the jobs ran under (its manifest digest is in their idempotency keys)."""
    digests = {j.model_manifest_digest for j in jobs}
    row = session.scalar(select(ReleaseRecord).where(ReleaseRecord.digest.in_(digests)).limit(1))
    return (
        {"release_id": row.id, "version": row.version, "digest": row.digest}
        if row is not None
        else None
    )
