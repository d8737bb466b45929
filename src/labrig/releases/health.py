"""A release's health report: what its check measured against the truth, and whether
every check passed.

The check itself is a whole-app scenario (:mod:`labrig.scenarios.reference_check`) that the front
ends hand to the composition root; the release service only runs it and stores the report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from labrig.errors import LabrigError


class HealthCheckMissingError(LabrigError):
    """These services were built without a release health check, so no release can be checked."""

    code = "LABRIG_HEALTH_CHECK_MISSING"


@dataclass(frozen=True)
class Check:
    """One measurement of the check beside the value it should have."""

    name: str
    measured: float
    expected: float
    tolerance: str  # in words, e.g. "±0.5 %"
    ok: bool

    def __post_init__(self) -> None:  # plain Python types: the report is stored as JSON
        object.__setattr__(self, "measured", float(self.measured))
        object.__setattr__(self, "ok", bool(self.ok))


@dataclass(frozen=True)
class HealthReport:
    """Every check, whether all passed, and a line saying what the pipeline published."""

    passed: bool
    checks: tuple[Check, ...]
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "checks": [asdict(c) for c in self.checks],
            "detail": self.detail,
        }


HealthCheck = Callable[[], HealthReport]


def no_health_check() -> HealthReport:
    """The check of services built without one: refuses, saying how to start Labrig with one."""
    raise HealthCheckMissingError(
        "this workstation's services were started without the release health check; start Labrig "
        "with the 'labrig' command (window or CLI), which supplies it"
    )
