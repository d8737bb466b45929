"""Releases: a versioned analysis pipeline, activated only after its health check passes.

A release's manifest lists the analysis stages with their schema versions,
determinism and parameters; its digest enters every analysis job's idempotency
key, so activating a new release re-analyses only what a user asks to reprocess.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

import labrig
from labrig.access import AccessControl
from labrig.domain.audit import ReasonRequiredError, require_reason
from labrig.domain.events import EventName
from labrig.domain.idempotency import canonical_json, sha256_hex
from labrig.domain.roles import Action
from labrig.errors import InvalidTransitionError, LabrigError
from labrig.events import record_audit, record_event
from labrig.jobs import NO_MODEL_DIGEST, JobQueue
from labrig.pipeline import analysis_stages
from labrig.releases.health import HealthCheck, HealthReport, no_health_check
from labrig.store import Store, utcnow
from labrig.store.models import ReleaseRecord

SCHEMA = "labrig.release/1"
DEFAULT_ACTIVATION_REASON = "its health check passed"
__all__ = [
    "ReasonRequiredError",
    "ReleaseNotHealthyError",
    "ReleaseService",
    "ReleaseView",
    "UnknownReleaseError",
]


class ReleaseNotHealthyError(LabrigError):
    code = "LABRIG_RELEASE_NOT_HEALTHY"


class UnknownReleaseError(LabrigError):
    code = "LABRIG_UNKNOWN_RELEASE"


@dataclass(frozen=True)
class ReleaseView:
    id: str
    version: str
    digest: str
    status: str
    health: dict[str, Any] | None
    activated_at: str | None
    note: str | None

    @classmethod
    def of(cls, row: ReleaseRecord) -> ReleaseView:
        return cls(
            row.id,
            row.version,
            row.digest,
            row.status,
            json.loads(row.health) if row.health else None,
            row.activated_at.isoformat() if row.activated_at else None,
            row.note,
        )


def release_manifest(store: Store, version: str) -> dict[str, Any]:
    stages = [
        {
            "stage_id": s.stage_id,
            "schema_version": s.schema_version,
            "deterministic": s.deterministic,
            "parameters": dict(s.config_defaults),
        }
        for s in analysis_stages(store)
    ]
    return {"schema": SCHEMA, "version": version, "labrig": labrig.__version__, "stages": stages}


def active_release_digest(store: Store) -> str:
    with store.read() as session:
        digest = session.scalar(
            select(ReleaseRecord.digest).where(ReleaseRecord.status == "active")
        )
    return digest or NO_MODEL_DIGEST


class ReleaseService:
    """Releases; activating and rolling back need the admin role and write the audit trail."""

    def __init__(
        self,
        store: Store,
        queue: JobQueue,
        health_check: HealthCheck = no_health_check,
        access: AccessControl | None = None,
    ) -> None:
        self.store, self.queue, self.health_check = store, queue, health_check
        self.access = access or AccessControl(store)

    def register(self, version: str | None = None) -> ReleaseView:
        """Record the pipeline this build runs as a release
        (the same manifest is registered once)."""
        manifest = release_manifest(self.store, version or labrig.__version__)
        digest = sha256_hex(canonical_json(manifest))
        with self.store.write() as session:
            row = session.scalar(select(ReleaseRecord).where(ReleaseRecord.digest == digest))
            if row is None:
                row = ReleaseRecord(
                    id=str(uuid.uuid4()),
                    version=manifest["version"],
                    digest=digest,
                    manifest=canonical_json(manifest).decode(),
                    status="registered",
                    created_at=utcnow(),
                )
                session.add(row)
            return ReleaseView.of(row)

    def list(self) -> list[ReleaseView]:
        with self.store.read() as session:
            rows = session.scalars(select(ReleaseRecord).order_by(ReleaseRecord.created_at))
            return [ReleaseView.of(r) for r in rows]

    def _get(self, release_id: str) -> ReleaseView:
        for release in self.list():
            if release.id == release_id or release.id.startswith(release_id):
                return release
        raise UnknownReleaseError(
            f"no release '{release_id}'; list them with 'labrig releases list'"
        )

    def check(self, release_id: str) -> HealthReport:
        """Run the health check on reference data with known truth and store its report."""
        release = self._get(release_id)
        report = self.health_check()
        with self.store.write() as session:
            row = session.get(ReleaseRecord, release.id)
            assert row is not None
            row.health = json.dumps(report.to_json())
            if row.status in ("registered", "healthy", "unhealthy"):
                row.status = "healthy" if report.passed else "unhealthy"
        return report

    def activate(self, release_id: str, reason: str | None = None) -> ReleaseView:
        """Make a release whose health check passed the active one → ``deployment.activated``."""
        release = self._get(release_id)
        with self.store.write() as session:
            actor = self.access.authorize(session, Action.RELEASES)
            if not (release.health and release.health.get("passed")):
                raise ReleaseNotHealthyError(
                    f"release {release.version} ({release.id[:8]}) has no passing health "
                    "check; run 'labrig releases check' first and read its report"
                )
            previous = session.scalar(select(ReleaseRecord).where(ReleaseRecord.status == "active"))
            if previous is not None and previous.id == release.id:
                raise InvalidTransitionError(f"release {release.version} is already active")
            if previous is not None:
                previous.status = "retired"
            row = session.get(ReleaseRecord, release.id)
            assert row is not None
            row.status, row.activated_at = "active", utcnow()
            change = {
                "release_id": row.id,
                "version": row.version,
                "previous_release_id": previous.id if previous is not None else None,
            }
            record_event(session, EventName.DEPLOYMENT_ACTIVATED, change)
            record_audit(
                session,
                actor,
                "release.activate",
                "release",
                row.id,
                (reason or "").strip() or DEFAULT_ACTIVATION_REASON,
                change | {"digest": row.digest},
            )
        self._use(release.digest)
        return self._get(release.id)

    def rollback(self, reason: str) -> ReleaseView | None:
        """Retire the active release and bring back the one before it →
        ``deployment.rolledback``."""
        why = require_reason(reason, "a rollback")
        with self.store.write() as session:
            actor = self.access.authorize(session, Action.RELEASES)
            active = session.scalar(select(ReleaseRecord).where(ReleaseRecord.status == "active"))
            if active is None:
                raise InvalidTransitionError(
                    "no release is active, so there is nothing to roll back"
                )
            restored = session.scalar(
                select(ReleaseRecord)
                .where(ReleaseRecord.status == "retired")
                .order_by(ReleaseRecord.activated_at.desc())
                .limit(1)
            )
            active.status, active.note = "rolled_back", why
            if restored is not None:
                restored.status, restored.activated_at = "active", utcnow()
            change = {
                "release_id": active.id,
                "restored_release_id": restored.id if restored else None,
                "reason": why,
            }
            record_event(session, EventName.DEPLOYMENT_ROLLEDBACK, change)
            record_audit(session, actor, "release.rollback", "release", active.id, why, change)
            digest = restored.digest if restored is not None else NO_MODEL_DIGEST
            restored_view = ReleaseView.of(restored) if restored is not None else None
        self._use(digest)
        return restored_view

    def _use(self, digest: str) -> None:
        """New analysis jobs in this process carry the new digest (other processes at
        their next start)."""
        for stage in analysis_stages(self.store, digest):
            self.queue.registry.register(stage)
