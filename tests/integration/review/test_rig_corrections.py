"""Corrections of a rig's 3-D result (the virtual rig recorded under its true cameras, tracked,
reconstructed and published): made on the reconstructed markers in mm, by the reconstruction's
instants; a 3-D gap filled by spline against the rig's true paths; the kinematics recomputed as
``kinematics.3d`` computed them; the automatic document byte-identical."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from labrig.domain.corrections import parse_operation
from labrig.errors import LabrigError
from labrig.scenarios.rig_truth import matched
from labrig.store import open_store
from tests.integration.review.test_rig_overlays import RigResult, record_rig_result
from tests.support.rig_truth import true_paths


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RigResult]:
    store = open_store(tmp_path_factory.mktemp("rig-corrections") / "store")
    built = record_rig_result(store)
    yield built
    built.services.close()


def test_a_3d_gap_filled_by_spline_lies_on_the_true_path_and_the_rest_is_untouched(
    rig: RigResult,
) -> None:
    reviews = rig.services.governance.revisions
    automatic = reviews.automatic_document(rig.result_id)
    source, unchanged = reviews.effective(rig.result_id)
    assert source.dims == 3 and unchanged.units == {"length": "mm", "time": "s"}
    # with no correction, the effective kinematics are the published ones, to the digit
    published = {str(k["track_id"]): k for k in rig.output("kinematics.3d")["tracks"]}
    for doc in unchanged.kinematics:
        assert doc["peak_speed"] == published[str(doc["track_id"])]["peak_speed"]
        assert doc["xyz"] == published[str(doc["track_id"])]["xyz"]

    rec = rig.output("reconstruction.3d")["reconstruction"]
    tracked = rig.output("tracking.rig")
    truth = true_paths(
        rig.services.store,
        rig.services.capture.virtual_rig,
        tracked["cameras"][0]["manifest_sha256"],
    )
    # the marker followed longest, and a stretch inside it with every instant reconstructed
    who, (marker, _) = max(matched(rec, truth).items(), key=lambda kv: len(kv[1][1]))
    name = str(marker)
    frames = source.tracks[name].frames
    run = next(
        int(frames[i]) for i in range(10, len(frames) - 20) if frames[i + 9] == frames[i] + 9
    )
    gap = range(run + 1, run + 9)
    reviews.correct(rig.result_id, [parse_operation("occlude", f"{name}@{gap[0]}-{gap[-1]}")], "x")
    reviews.correct(
        rig.result_id, [parse_operation("fill", f"{name}@{gap[0]}-{gap[-1]}:spline")], "gap"
    )
    _, filled = reviews.effective(rig.result_id)
    t = filled.tracks[name]
    assert t.filled == frozenset(gap) and t.xy.shape[1] == 3
    got = np.array([t.at(f) for f in gap])
    error_mm = float(np.sqrt(((got - truth[list(gap), who]) ** 2).sum(axis=1).mean()))
    tracked_error = float(
        np.sqrt(((source.tracks[name].xy - truth[frames, who]) ** 2).sum(axis=1).mean())
    )
    print(
        f"3-D gap of 8 instants filled by spline: {error_mm:.2f} mm from the true path "
        f"(the reconstruction itself: {tracked_error:.2f} mm)"
    )
    assert error_mm < 2.0, error_mm
    for other, track in unchanged.tracks.items():
        if other != name:
            np.testing.assert_array_equal(filled.tracks[other].xy, track.xy)
    doc = next(k for k in filled.kinematics if str(k["track_id"]) == name)
    assert doc["filled_frames"] == list(gap) and "xyz" in doc
    assert reviews.automatic_document(rig.result_id) == automatic


def test_a_3d_marker_is_moved_with_three_coordinates_only(rig: RigResult) -> None:
    reviews = rig.services.governance.revisions
    source, _ = reviews.effective(rig.result_id)
    # path_length is measured on the smoothed positions: the 9-sample fit makes a 40 mm lift of
    # one frame a 10 mm bump (its centre weight, 59/231) that rises at most 6 mm a frame, so on a
    # marker going up or down faster than that the path stays monotonic in z and keeps its length
    # (at a low point it even shortens). So a marker at one height is lifted: up and back down.
    name = min(source.tracks, key=lambda n: float(np.ptp(source.tracks[n].xy[:, 2])))
    # the middle frame: the first and last half-window are each one polynomial fit, which a frame
    # near an end reshapes as a whole; in the middle the lift is a centred bump, ends unchanged
    index = len(source.tracks[name].frames) // 2
    frame = int(source.tracks[name].frames[index])
    with pytest.raises(LabrigError) as refused:
        reviews.correct(rig.result_id, [parse_operation("move", f"{name}@{frame}=1,2")], "x")
    assert refused.value.code == "LABRIG_CORRECTION_REFUSED"
    assert "3 coordinates a frame" in refused.value.message
    x, y, z = source.tracks[name].xy[index]
    reviews.correct(
        rig.result_id, [parse_operation("move", f"{name}@{frame}={x},{y},{z + 40}")], "lifted"
    )
    _, moved = reviews.effective(rig.result_id)
    np.testing.assert_allclose(moved.tracks[name].at(frame), [x, y, z + 40])
    fields = {f.field: f for f in reviews.show(rig.result_id).fields}
    path = fields[f"track:{name}.path_length"]
    assert path.effective is not None and path.automatic is not None
    # up 40 mm and back down: a longer path, by millimetres (not a smoothing residue of 1e-3)
    assert path.effective > path.automatic + 1.0, (path.automatic, path.effective)
