"""Releases: versioned analysis pipelines, registered, health-checked, activated
(``deployment.activated``) and rolled back with a reason (``deployment.rolledback``), and the health
report a check returns. The check itself is a scenario the front ends pass in
(:mod:`labrig.scenarios.reference_check`). Qt-free.
"""

from labrig.releases.health import (
    Check,
    HealthCheck,
    HealthCheckMissingError,
    HealthReport,
    no_health_check,
)
from labrig.releases.service import (
    ReleaseNotHealthyError,
    ReleaseService,
    ReleaseView,
    UnknownReleaseError,
    active_release_digest,
    release_manifest,
)

__all__ = [
    "Check",
    "HealthCheck",
    "HealthCheckMissingError",
    "HealthReport",
    "ReleaseNotHealthyError",
    "ReleaseService",
    "ReleaseView",
    "UnknownReleaseError",
    "active_release_digest",
    "no_health_check",
    "release_manifest",
]
