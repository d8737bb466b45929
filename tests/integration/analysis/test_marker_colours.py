"""Each track records its marker's colour as the video shows it: a real recording of the virtual
camera through the real tracking stage, against the colours the scene paints (``MARKERS``, BGR)."""

from __future__ import annotations

import numpy as np
import pytest

from labrig.bootstrap import Services, bootstrap
from labrig.capture.virtual_scenes import MARKERS
from labrig.store import Store
from tests.support.analysis_runs import analyse, new_session, record, stage_output

# JPEG's subsampled chroma and the sensor noise move a marker's core by a few levels
TOLERANCE = 12


@pytest.fixture
def services(store: Store) -> Services:
    return bootstrap(store=store)


def test_each_track_records_its_markers_colour_and_the_result_carries_it(
    services: Services,
) -> None:
    session_id = new_session(services)
    attempt_id = analyse(services, session_id, record(services, session_id, seconds=1.0))
    tracks = stage_output(services, attempt_id, "tracking.markers")["tracks"]["tracks"]
    painted = {tuple(reversed(bgr)) for _, bgr, _ in MARKERS}  # as RGB
    found = [tuple(t["colour_rgb"]) for t in tracks]
    assert len(found) == len(MARKERS)
    for rgb in found:
        nearest = min(painted, key=lambda p: float(np.abs(np.subtract(p, rgb)).max()))
        print(f"track colour {rgb}, marker painted {nearest}")
        assert np.abs(np.subtract(nearest, rgb)).max() <= TOLERANCE
        painted.remove(nearest)  # each marker once
    series = stage_output(services, attempt_id, "kinematics")["tracks"]
    assert [s["colour_rgb"] for s in series] == [t["colour_rgb"] for t in tracks]
