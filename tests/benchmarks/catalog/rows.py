"""The rows generated: what each table is written with, and the records an attempt is made of
while it is generated."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from labrig.jobs.rows import JOB_COLUMNS
from labrig.store import Store
from tests.benchmarks.catalog.lab import Device, Rig, words

#: the columns written per table, in the order of each row's values (jobs: the queue's own order),
#: and the order the tables are written in (foreign keys first)
TABLES: dict[str, tuple[str, ...]] = {
    "devices": words(
        "device_id kind name info verified inventory_entry mode measured_fps reason_code reason "
        "checked_at"
    ),
    "rigs": ("name", "created_at", "created_by"),
    "rig_devices": ("rig_name", "position", "device_id", "mode", "place"),
    "sessions": ("id", "subject_code", "protocol", "operator", "created_at"),
    "blobs": ("sha256", "ext", "size", "kind", "created_at", "verified_at"),
    "captures": words(
        "id session_id device_id origin state mode verification started_at committed_at "
        "frame_count dropped_frames manifest_sha256 provisional_dir report source_sha256 "
        "purpose"
    ),
    "capture_segments": words(
        "capture_id position media_sha256 timestamps_sha256 frames first_mono_ns last_mono_ns"
    ),
    # result_status: pending until its result is inserted, which sets it (migration 0023's trigger)
    "attempts": ("id", "session_id", "number", "created_at", "note", "result_status"),
    "attempt_captures": ("attempt_id", "capture_id", "position"),
    "rig_recordings": words("id rig_name session_id state started_at devices sync attempt_id"),
    "jobs": JOB_COLUMNS,
    "job_dependencies": ("job_id", "depends_on_job_id"),
    "job_outputs": ("idempotency_key", "job_id", "fencing_token", "digest", "body", "committed_at"),
    "analysis_results": words("id attempt_id status degraded reasons document digest created_at"),
    "result_revisions": words(
        "id result_id number base_id reviewer reason document digest created_at"
    ),
    "result_sign_offs": ("result_id", "attempt_id", "meaning", "number"),
    "outbox_events": ("event_id", "name", "schema_version", "known", "payload", "recorded_at"),
    "audit_entries": words(
        "seq recorded_at actor host action object_type object_id reason change change_digest "
        "prev_hash entry_hash"
    ),
    "outbox_cursors": ("consumer", "seq", "names", "txid"),
}
#: columns the database fills itself
SERVER_FILLED = {"outbox_events": {"seq", "txid"}}


@dataclass(frozen=True)
class Template:
    """One synthetic rig analysis: the reconstruction.3d output's times and reconstruction, and the
    kinematics.3d output's tracks (computed with the pipeline's own kinematics)."""

    times_s: list[float]
    reconstruction: dict[str, Any]
    tracks: list[dict[str, Any]]


# -- what is generated -----------------------------------------------------------------------------


@dataclass(slots=True)
class JobRow:
    """A jobs row (times in µs), with the attributes build_document reads."""

    id: str
    stage_id: str
    attempt_id: str | None
    state: str
    created_at: int
    updated_at: int
    input_digests: str
    config: str
    config_digest: str
    model_manifest_digest: str
    schema_version: int
    idempotency_key: str | None
    deterministic: bool
    supersedes_job_id: str | None
    max_attempts: int
    priority: int = 0
    owner: str | None = None
    lease_host: str | None = None
    lease_boot_id: str | None = None
    lease_deadline_mono: float | None = None
    lease_expires_at: int | None = None
    fencing_token: int = 0
    attempts: int = 0
    next_attempt_at: int | None = None
    progress: float = 0.0
    progress_message: str = ""
    checkpoint: str | None = None
    cancel_requested: bool = False
    error_code: str | None = None
    error_message: str | None = None
    output_digest: str | None = None


JOB_TIMES = frozenset({"created_at", "updated_at", "lease_expires_at", "next_attempt_at"})


@dataclass(frozen=True)
class StageInfo:
    """What the queue takes from a registered stage when it enqueues a job for it."""

    stage_id: str
    schema_version: int
    deterministic: bool
    max_attempts: int
    model_manifest_digest: str
    settle: Callable[[Mapping[str, Any] | None], tuple[str, str]]


class OutputsSession:
    """What build_document reads through its session: the attempt's committed outputs (by
    idempotency key) and its release (none is registered: every job ran without one)."""

    def __init__(self) -> None:
        self.bodies: dict[str, str] = {}

    def get(self, _model: object, key: str) -> SimpleNamespace | None:
        body = self.bodies.get(key)
        return None if body is None else SimpleNamespace(body=body)

    def scalar(self, _statement: object) -> None:
        return None


@dataclass(frozen=True)
class SessionPlan:
    id: str
    subject: str
    protocol: str
    operator: str
    rig: Rig
    host: str  # the workstation it was recorded on
    created_us: int
    attempts: int
    first_attempt: int  # the global index of its first attempt (attempts are in time order)


@dataclass(frozen=True)
class CaptureRow:
    id: str
    manifest: str  # its manifest's digest
    device: Device
    place: str
    frames: int
    dropped: int
    started: int
    committed: int


@dataclass
class Draft:
    """One attempt being generated: what its parts share."""

    plan: SessionPlan
    number: int
    id: str
    created: int
    outcome: str  # published, degraded, blocked, failed or pending
    at: int  # the stage that degraded, stopped or is running (its index in STAGES)
    template: Template
    calibration: str  # the rig calibration id its tracking ran under
    captures: list[CaptureRow] = field(default_factory=list)
    sync: dict[str, Any] = field(default_factory=dict)
    events: list[Timed] = field(default_factory=list)

    @property
    def manifests(self) -> list[str]:
        return [c.manifest for c in self.captures]


@dataclass
class Timed:
    """A row written in time order: an outbox event or an audit entry."""

    us: int
    order: int  # the tie-break of rows with the same time: the order they were made in
    values: tuple[Any, ...]


@dataclass
class Chunk:
    """The rows of one transaction, by table."""

    rows: dict[str, list[tuple[Any, ...]]] = field(
        default_factory=lambda: {table: [] for table in TABLES}
    )

    def add(self, table: str, *values: Any) -> None:
        self.rows[table].append(values)


class State:
    """What the generator's parts share (set by :class:`~tests.benchmarks.catalog.plan.Catalog`);
    each part (events, jobs, results, recording, plan) is a layer of that class."""

    store: Store
    rng: random.Random
    now: int
    t: Callable[[int], Any]
    n: int
    pending_from: int
    templates: list[Template]
    stages: dict[str, StageInfo]
    settled: dict[tuple[str, str | None], tuple[str, str]]
    media_sha: str
    stamps_sha: str
    sessions: list[SessionPlan]
    events_later: list[Timed]
    audit_later: list[Timed]
    order: int
    audit_head: tuple[int, str]
    checked_events: int
    outputs: OutputsSession
    shared_outputs: dict[tuple[str, int, str], tuple[str, str]]
