"""Whole-app scenarios, above the composition root: each builds or drives complete services.
``labrig demo`` (the product end to end on the virtual camera, or with ``--rig virtual`` on the
virtual rig in 3-D), the release health check (the
pipeline on reference data with known truth, in a scratch store) and ``labrig --self-test`` (this
installation, in a scratch folder). Qt-free.
"""

from labrig.scenarios.demo import DemoSummary, run_demo
from labrig.scenarios.reference_check import release_health_check, run_reference_check
from labrig.scenarios.rig_demo import run_rig_demo
from labrig.scenarios.selftest import run_self_test

__all__ = [
    "DemoSummary",
    "release_health_check",
    "run_demo",
    "run_reference_check",
    "run_rig_demo",
    "run_self_test",
]
