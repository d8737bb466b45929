"""The event catalog of seed 000: 16 wire names, each with a versioned payload schema.

Wire names are exactly the seed's. Every event is delivered
AtLeastOnceWithIdempotentConsumer: written to the outbox in the transaction of
the state change that causes it, and remembered by each consumer that handled
it. ``docs/events.md`` is pinned to :data:`CATALOG` by a test.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from labrig.errors import InvalidEventPayloadError

DELIVERY = "AtLeastOnceWithIdempotentConsumer"


class EventName(StrEnum):
    DEVICE_CONNECTED = "capture.device.connected"
    CAPTURE_STARTED = "capture.started"
    CAPTURE_COMMITTED = "capture.committed"
    ATTEMPT_CREATED = "attempt.created"
    CALIBRATION_VALIDATED = "calibration.validated"
    STAGE_REQUESTED = "analysis.stage.requested"
    STAGE_COMPLETED = "analysis.stage.completed"
    STAGE_FAILED = "analysis.stage.failed"
    QUALITY_DEGRADED = "quality.degraded"
    QUALITY_BLOCKED = "quality.blocked"
    RESULT_PUBLISHED = "result.published"
    REVIEW_REVISED = "review.revised"
    SYNC_ACKNOWLEDGED = "sync.object.acknowledged"
    DEPLOYMENT_ACTIVATED = "deployment.activated"
    DEPLOYMENT_ROLLEDBACK = "deployment.rolledback"
    STORAGE_PRESSURE_CHANGED = "storage.pressure.changed"


_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
    "list": (list, tuple),
    "object": (dict,),
}


@dataclass(frozen=True)
class Field:
    """One payload field: its name, JSON type, whether it may be null, and what it is."""

    name: str
    type: str
    doc: str
    nullable: bool = False

    def accepts(self, value: Any) -> bool:
        if value is None:
            return self.nullable
        if self.type in ("int", "float") and isinstance(value, bool):
            return False
        return isinstance(value, _TYPES[self.type])


@dataclass(frozen=True)
class EventSpec:
    """A catalogued event: seed id, wire name, meaning and payload schema version."""

    seed_id: str
    name: EventName
    meaning: str
    version: int
    fields: tuple[Field, ...]

    def validate(self, payload: Mapping[str, Any]) -> None:
        """Raise :class:`InvalidEventPayloadError` unless ``payload`` fits this schema exactly."""
        known = {f.name for f in self.fields}
        problems = [f"unknown field '{k}'" for k in payload if k not in known]
        for f in self.fields:
            if f.name not in payload:
                problems.append(f"missing field '{f.name}'")
            elif not f.accepts(payload[f.name]):
                problems.append(
                    f"field '{f.name}' must be {f.type}{' or null' if f.nullable else ''}"
                )
        if problems:
            raise InvalidEventPayloadError(
                f"{self.name.value} v{self.version} payload is invalid: {'; '.join(problems)}; "
                "see docs/events.md for the fields of each event"
            )


def _spec(seed_id: str, name: EventName, meaning: str, *fields: Field) -> EventSpec:
    return EventSpec(seed_id, name, meaning, 1, fields)


F = Field
_JOB = (
    F("job_id", "str", "the job the stage runs as"),
    F("stage_id", "str", "registered stage id, e.g. tracking.markers"),
    F(
        "idempotency_key",
        "str",
        "H(stage_id + ordered input digests + model manifest + config + schema)",
    ),
)

CATALOG: tuple[EventSpec, ...] = (
    _spec(
        "EVT-01",
        EventName.DEVICE_CONNECTED,
        "Inventory match and probe confirmed the device.",
        F("device_id", "str", "stable id of the device in the catalog"),
        F("kind", "str", "uvc, ip, usb_instrument, watch_folder or virtual"),
        F("inventory_entry", "str", "id of the matched compatibility-inventory entry"),
        F("mode", "object", "verified mode: width, height, fps, pixel_format"),
        F("measured_fps", "float", "frame rate measured by the probe"),
    ),
    _spec(
        "EVT-02",
        EventName.CAPTURE_STARTED,
        "Recording started with a provisional manifest.",
        F("capture_id", "str", "id of the capture"),
        F(
            "session_id",
            "str",
            "the session it belongs to (null for a recording outside a session)",
            nullable=True,
        ),
        F("device_id", "str", "the verified device recording it"),
        F("manifest_path", "str", "where the provisional manifest was written"),
    ),
    _spec(
        "EVT-03",
        EventName.CAPTURE_COMMITTED,
        "Media durable and its hash verified.",
        F("capture_id", "str", "id of the capture"),
        F("state", "str", "committed (stopped normally), or salvaged (recovered after a crash)"),
        F(
            "manifest_sha256",
            "str",
            "SHA-256 of the committed manifest, which lists every segment's digest",
        ),
        F("segments", "int", "number of media segments, each stored under its own SHA-256"),
        F(
            "frame_count",
            "int",
            "frames counted back after the final fsync (a recorded segment's whole JPEG frames in "
            "its AVI structure; imported or salvaged media decoded)",
        ),
        F("dropped_frames", "int", "frames detected as dropped during recording"),
    ),
    _spec(
        "EVT-04",
        EventName.ATTEMPT_CREATED,
        "Attempt created and ready for analysis.",
        F("attempt_id", "str", "id of the attempt (trial)"),
        F("session_id", "str", "the session it belongs to"),
        F("capture_ids", "list", "its committed captures, in order"),
    ),
    _spec(
        "EVT-05",
        EventName.CALIBRATION_VALIDATED,
        "Calibration fit for metric outputs.",
        F("calibration_id", "str", "id of the calibration"),
        F("device_id", "str", "device (serial + mode) it is bound to"),
        F("rms_px", "float", "RMS reprojection error in pixels"),
        F("valid_until", "str", "UTC ISO-8601 time after which it is stale"),
    ),
    _spec(
        "EVT-06",
        EventName.STAGE_REQUESTED,
        "Job enqueued with immutable inputs.",
        *_JOB,
        F("attempt_id", "str", "the attempt analysed, when there is one", nullable=True),
    ),
    _spec(
        "EVT-07",
        EventName.STAGE_COMPLETED,
        "Output committed and indexed.",
        *_JOB,
        F("output_digest", "str", "SHA-256 of the committed output"),
    ),
    _spec(
        "EVT-08",
        EventName.STAGE_FAILED,
        "Typed failure with its retry policy.",
        *_JOB,
        F("error_code", "str", "stable LABRIG_* code of the failure"),
        F("retryable", "bool", "true when the job will be retried after a backoff"),
    ),
    _spec(
        "EVT-09",
        EventName.QUALITY_DEGRADED,
        "Product allowed with limitations.",
        F("attempt_id", "str", "the attempt whose result is degraded"),
        F("job_id", "str", "the job whose outputs the gate judged", nullable=True),
        F("reasons", "list", "one sentence per limitation"),
    ),
    _spec(
        "EVT-10",
        EventName.QUALITY_BLOCKED,
        "Publication forbidden by a quality gate.",
        F("attempt_id", "str", "the attempt whose result is blocked"),
        F("job_id", "str", "the job whose outputs the gate judged", nullable=True),
        F("reasons", "list", "one sentence per blocking reason"),
    ),
    _spec(
        "EVT-11",
        EventName.RESULT_PUBLISHED,
        "AnalysisResult available for UI and export.",
        F("result_id", "str", "id of the published result"),
        F("attempt_id", "str", "the attempt it describes"),
        F("result_digest", "str", "SHA-256 of the result document"),
        F("degraded", "bool", "true when published with limitations"),
    ),
    _spec(
        "EVT-12",
        EventName.REVIEW_REVISED,
        "Human revision stored beside the automatic result.",
        F("revision_id", "str", "id of the revision"),
        F("result_id", "str", "the automatic result it revises (kept unchanged)"),
        F("reviewer", "str", "who made the revision"),
        F("reason", "str", "the mandatory reason given"),
    ),
    _spec(
        "EVT-13",
        EventName.SYNC_ACKNOWLEDGED,
        "Blob or manifest confirmed by the destination.",
        F("object_sha256", "str", "digest the destination confirmed"),
        F("object_kind", "str", "blob or manifest"),
        F("destination", "str", "name of the sync destination"),
    ),
    _spec(
        "EVT-14",
        EventName.DEPLOYMENT_ACTIVATED,
        "Release activated after its health checks passed.",
        F("release_id", "str", "id of the release"),
        F("version", "str", "release version"),
        F("previous_release_id", "str", "release it replaced", nullable=True),
    ),
    _spec(
        "EVT-15",
        EventName.DEPLOYMENT_ROLLEDBACK,
        "Rollback completed, with its reason.",
        F("release_id", "str", "the release rolled back"),
        F("restored_release_id", "str", "the release active again", nullable=True),
        F("reason", "str", "why it was rolled back"),
    ),
    _spec(
        "EVT-16",
        EventName.STORAGE_PRESSURE_CHANGED,
        "Storage pressure level changed.",
        F("volume", "str", "path of the media volume"),
        F("previous_level", "str", "level before: normal, elevated, high or critical"),
        F("level", "str", "level now"),
        F("free_bytes", "int", "free bytes measured"),
        F(
            "minutes_left",
            "float",
            "minutes until full at the current data rate (null when idle)",
            nullable=True,
        ),
    ),
)

SPECS: dict[str, EventSpec] = {spec.name.value: spec for spec in CATALOG}


def spec_for(name: str) -> EventSpec | None:
    """The catalogued spec for a wire name, or None for a name outside the catalog."""
    return SPECS.get(name)
