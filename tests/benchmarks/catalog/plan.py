"""The plan: the sessions spread over the years before ``--now`` (subjects, protocols, operators,
workstations, times), the lab's own rows, and the generator that makes the catalog chunk by
chunk."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Sequence
from typing import Any

from labrig.domain.audit import GENESIS
from labrig.domain.idempotency import sha256_hex
from labrig.pipeline.stages import analysis_stages
from labrig.store import Store
from tests.benchmarks.catalog.lab import (
    AT_STAGE,
    ATTEMPTS_PER_SESSION,
    DAY,
    HOSTS,
    HOUR,
    MEDIA_BYTES,
    MINUTE,
    OPERATORS,
    OUTCOMES,
    PLACES,
    PROTOCOLS,
    RIGS,
    SPAN_DAYS,
    STAGES,
    STAMPS_BYTES,
    SUBJECTS,
    Rig,
    pg_time,
    rig_for,
    sqlite_time,
    uuid4_text,
)
from tests.benchmarks.catalog.outputs import make_templates
from tests.benchmarks.catalog.recording import Recording
from tests.benchmarks.catalog.rows import (
    Chunk,
    Draft,
    OutputsSession,
    SessionPlan,
    StageInfo,
    Timed,
)


class Catalog(Recording):
    """Everything generated, chunk by chunk, from one seeded random stream."""

    def __init__(self, store: Store, attempts: int, seed: int, now_us: int, points: int) -> None:
        self.store = store
        self.rng = random.Random(seed)
        self.now = now_us
        self.t: Callable[[int], Any] = sqlite_time if store.dialect == "sqlite" else pg_time
        self.n = attempts
        self.pending_from = attempts - max(3, attempts // 1000)  # the newest attempts are pending
        self.templates = make_templates(seed, 32, points)
        registered = {s.stage_id: s for s in analysis_stages(store)}
        self.stages = {
            stage_id: StageInfo(
                s.stage_id,
                s.schema_version,
                s.deterministic,
                s.max_attempts,
                s.model_manifest_digest,
                s.settle,
            )
            for stage_id, s in ((stage_id, registered[stage_id]) for stage_id in STAGES)
        }
        self.settled: dict[tuple[str, str | None], tuple[str, str]] = {}
        self.media_sha, self.stamps_sha = sha256_hex(MEDIA_BYTES), sha256_hex(STAMPS_BYTES)
        self.sessions = self._plan_sessions()
        self.events_later: list[Timed] = []
        self.audit_later: list[Timed] = []
        self.order = 0
        self.audit_head = (0, GENESIS)
        self.checked_events = 0
        self.outputs = OutputsSession()
        #: outputs that are the same text for every attempt of one template and rig calibration
        self.shared_outputs: dict[tuple[str, int, str], tuple[str, str]] = {}

    def _plan_sessions(self) -> list[SessionPlan]:
        """Every session, in time order: on working days over the span, the newest 6 h ago."""
        rng = self.rng
        subjects = [f"S{i:04d}" for i in range(1, SUBJECTS + 1)]
        subject_weights = [1.0 / rank**0.8 for rank in range(1, SUBJECTS + 1)]
        studies = {s: rng.sample(PROTOCOLS, rng.randint(2, 4)) for s in subjects}
        operator_weights = [1.0 / rank**0.7 for rank in range(1, len(OPERATORS) + 1)]
        latest = self.now - 6 * HOUR
        start_day = (latest - SPAN_DAYS * DAY) // DAY
        times: list[int] = []
        while len(times) < math.ceil(self.n / ATTEMPTS_PER_SESSION):
            day = start_day + rng.randrange(SPAN_DAYS + 1)
            if (day + 3) % 7 >= 5:  # 1970-01-01 was a Thursday: no Saturdays nor Sundays
                continue
            when = day * DAY + 7 * HOUR + rng.randrange(11 * HOUR)
            if when <= latest:
                times.append(when)
        times.sort()
        times[-1] = latest
        plans, first = [], 0
        for k, when in enumerate(times):
            subject = rng.choices(subjects, subject_weights)[0]
            protocol = rng.choice(studies[subject])
            attempts = min(ATTEMPTS_PER_SESSION, self.n - k * ATTEMPTS_PER_SESSION)
            operator = rng.choices(OPERATORS, operator_weights)[0]
            plans.append(
                SessionPlan(
                    uuid4_text(rng),
                    subject,
                    protocol,
                    operator,
                    rig_for(protocol, rng),
                    rng.choice(HOSTS),
                    when,
                    attempts,
                    first,
                )
            )
            first += attempts
        return plans

    @staticmethod
    def rig_calibration_id(rig: Rig, when: int) -> str:
        """The rig calibration current at ``when`` (recalibrated every 120 days; none is stored)."""
        return sha256_hex(f"rig-calibration:{rig.name}:{when // (120 * DAY)}".encode())

    # -- the lab's own rows -------------------------------------------------------------------

    def lab(self) -> Chunk:
        """Rigs, their devices, and the two real files every capture segment shares."""
        chunk = Chunk()
        first = self.sessions[0].created_us
        for rig in RIGS.values():
            chunk.add("rigs", rig.name, self.t(first - 10 * DAY), rig.created_by)
            for position, (device, place) in enumerate(zip(rig.devices, PLACES, strict=True)):
                mode = json.dumps(device.mode())
                chunk.add("rig_devices", rig.name, position, device.device_id, mode, place)
                chunk.add(
                    "devices",
                    device.device_id,
                    device.kind,
                    device.name,
                    json.dumps(device.info()),
                    True,
                    device.inventory_entry,
                    mode,
                    device.verification()["measured_fps"],
                    None,
                    None,
                    self.t(self.sessions[-1].created_us - 5 * MINUTE),
                )
        for sha, ext, body, kind in (
            (self.media_sha, ".avi", MEDIA_BYTES, "media"),
            (self.stamps_sha, ".csv", STAMPS_BYTES, "timestamps"),
        ):
            chunk.add("blobs", sha, ext, len(body), kind, self.t(first - DAY), None)
            path = self.store.media_dir / sha[:2] / f"{sha}{ext}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(body)
        return chunk

    # -- one chunk of sessions ------------------------------------------------------------------

    def chunk(self, sessions: Sequence[SessionPlan], until: int | None) -> Chunk:
        """The sessions' rows; ``until``: when the next chunk's first session began (None: the
        last chunk)."""
        chunk = Chunk()
        for plan in sessions:
            chunk.add(
                "sessions",
                plan.id,
                plan.subject,
                plan.protocol,
                plan.operator,
                self.t(plan.created_us),
            )
            when = plan.created_us + self.rng.randrange(2 * MINUTE, 6 * MINUTE)
            for number in range(1, plan.attempts + 1):
                self.attempt(chunk, self._draft(plan, number, when))
                when += self.rng.randrange(2 * MINUTE, 7 * MINUTE)
        self.flush_timed(chunk, until)
        return chunk

    def _draft(self, plan: SessionPlan, number: int, created: int) -> Draft:
        rng = self.rng
        if plan.first_attempt + number - 1 >= self.pending_from:
            outcome, at = "pending", rng.randrange(len(STAGES))
        else:
            r = rng.random()
            outcome = next(name for name, upto in OUTCOMES if r < upto)
            weights = AT_STAGE["degraded" if outcome == "degraded" else "blocked"]
            at = rng.choices(range(len(STAGES)), weights)[0]
        return Draft(
            plan,
            number,
            uuid4_text(rng),
            created,
            outcome,
            at,
            rng.choice(self.templates),
            self.rig_calibration_id(plan.rig, created),
        )
