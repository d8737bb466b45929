"""Releases: activated only after a passing health check; their digest enters every
analysis job's key."""

from __future__ import annotations

import pytest

from labrig.bootstrap import bootstrap
from labrig.errors import InvalidTransitionError
from labrig.events import events_after
from labrig.releases.health import Check, HealthReport
from labrig.releases.service import ReasonRequiredError, ReleaseNotHealthyError, ReleaseService
from labrig.scenarios.reference_check import run_reference_check
from labrig.store import Store
from labrig.store.models import ReleaseRecord
from labrig.store.types import utcnow


def _service(store: Store, passed: bool = True) -> tuple[ReleaseService, object]:
    services = bootstrap(store=store)
    report = HealthReport(
        passed, (Check("reference", 1.0, 1.0, "exact", passed),), "stand-in for the test"
    )
    return ReleaseService(store, services.queue, lambda: report), services


def test_the_reference_health_check_meets_its_tolerances() -> None:
    report = run_reference_check(bootstrap)
    assert report.passed, report.to_json()
    assert {c.name.split(" #")[0] for c in report.checks} >= {
        "focal length fx (px)",
        "marker path length",
        "rig sync spread p50 (ms)",
        "force plate rate (Hz)",
        "post-hoc flash offset, camera 3 (ms)",
        "3-D markers reconstructed",
        "3-D marker RMSE (mm)",
        "3-D steady marker peak speed (mm/s)",
    }
    # the virtual rig in 3-D against its true paths
    checks = {c.name: c for c in report.checks}
    assert checks["3-D markers reconstructed"].measured == 4
    assert 0 < checks["3-D marker RMSE (mm)"].measured <= 0.5
    assert abs(checks["3-D steady marker peak speed (mm/s)"].measured / 628.3185 - 1) <= 0.01
    # the virtual rig's truth: the 4 ms the second camera was given, the post-hoc starts
    spread = next(c for c in report.checks if c.name == "rig sync spread p50 (ms)")
    assert abs(spread.measured - 4.0) <= 0.5
    posthoc = next(c for c in report.checks if c.name.startswith("post-hoc flash offset, camera 2"))
    assert abs(posthoc.measured - 413.7) <= 1e3 / 60


def test_activation_needs_a_passing_check_and_changes_new_jobs_keys(store: Store) -> None:
    releases, services = _service(store)
    release = releases.register("2026.11")
    with pytest.raises(ReleaseNotHealthyError) as info:
        releases.activate(release.id)
    assert info.value.code == "LABRIG_RELEASE_NOT_HEALTHY"
    before = services.queue.enqueue("media.qc", ["capture-manifest"]).idempotency_key  # type: ignore[attr-defined]
    assert releases.check(release.id).passed
    active = releases.activate(release.id[:8])
    assert active.status == "active"
    after = services.queue.enqueue("media.qc", ["capture-manifest"]).idempotency_key  # type: ignore[attr-defined]
    assert after != before  # same inputs and config, another release: another logical output
    [event] = [e.payload for e in events_after(store, 0) if e.name == "deployment.activated"]
    assert event == {"release_id": release.id, "version": "2026.11", "previous_release_id": None}
    with pytest.raises(InvalidTransitionError):
        releases.activate(release.id)


def test_an_unhealthy_release_cannot_be_activated(store: Store) -> None:
    releases, _ = _service(store, passed=False)
    release = releases.register()
    assert not releases.check(release.id).passed
    assert releases.list()[0].status == "unhealthy"
    with pytest.raises(ReleaseNotHealthyError):
        releases.activate(release.id)


def test_rollback_needs_a_reason_and_restores_the_previous_release(store: Store) -> None:
    releases, services = _service(store)
    first = releases.register("1")
    releases.check(first.id)
    releases.activate(first.id)
    # a second, different release: another build's pipeline, already checked
    with store.write() as s:
        s.add(
            ReleaseRecord(
                id="r2",
                version="2",
                manifest="{}",
                digest="d" * 64,
                status="healthy",
                health='{"passed": true, "checks": []}',
                created_at=utcnow(),
            )
        )
    releases.activate("r2")
    with pytest.raises(ReasonRequiredError):
        releases.rollback("   ")
    restored = releases.rollback("peak speeds changed on reference data")
    assert restored is not None and restored.id == first.id and restored.status == "active"
    assert {r.id: r.status for r in releases.list()} == {first.id: "active", "r2": "rolled_back"}
    [event] = [e.payload for e in events_after(store, 0) if e.name == "deployment.rolledback"]
    assert event == {
        "release_id": "r2",
        "restored_release_id": first.id,
        "reason": "peak speeds changed on reference data",
    }
    assert services.queue.registry.get("media.qc").model_manifest_digest == first.digest  # type: ignore[attr-defined]
