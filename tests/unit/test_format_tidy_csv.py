"""The tidy CSV: one row per frame × marker × view, read back with the csv module and checked
against the tables it was written from (automatic beside effective, gaps empty, fills marked)."""

from __future__ import annotations

import csv
import dataclasses
import io

import numpy as np

from labrig.export.formats.tidy_csv import COLUMNS, tidy_csv
from tests.support.export_tables import result_tables


def _read(data: bytes) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(data.decode()))
    assert tuple(reader.fieldnames or ()) == COLUMNS
    return list(reader)


def _number(cell: str) -> float:
    return float(cell) if cell else float("nan")


def test_a_rig_result_has_its_3d_points_then_every_camera_view() -> None:
    tables = result_tables("3d", frames=30, markers=2)
    rows = _read(tidy_csv(tables))
    # 30 frames × 2 markers for the points and for each of the two cameras
    assert len(rows) == 30 * 2 * 3
    assert [r["view"] for r in rows[:60]] == ["3d"] * 60
    assert {r["camera"] for r in rows[60:]} == {"virtual:0", "virtual:1"}
    points = tables.points
    for r in rows[:60]:
        f, m = int(r["frame"]), int(r["track_id"])
        auto = [_number(r[f"{a}_automatic"]) for a in "xyz"]
        force = [_number(r[f"{a}_effective"]) for a in "xyz"]
        np.testing.assert_allclose(auto, points.automatic[f, m], atol=1e-6)
        np.testing.assert_allclose(force, points.in_force[f, m], atol=1e-6)
        assert float(r["time_s"]) == round(float(points.times_s[f]), 9)
        assert r["units"] == "mm" and r["marker"] == f"M{m}"
    # marker 0's gap (frames 10–14): no automatic position, a filled effective one
    gap = [r for r in rows[:60] if r["marker"] == "M0" and 10 <= int(r["frame"]) <= 14]
    assert all(r["x_automatic"] == "" and r["x_effective"] != "" for r in gap)
    assert all(r["filled"] == "1" and r["corrected"] == "1" for r in gap)
    assert all(r["residual_px"] == "" for r in gap)
    moved = next(r for r in rows[:60] if r["marker"] == "M1" and r["frame"] == "20")
    assert moved["corrected"] == "1" and moved["filled"] == "0"
    assert float(moved["x_effective"]) - float(moved["x_automatic"]) == 5.0
    untouched = next(r for r in rows[:60] if r["marker"] == "M1" and r["frame"] == "21")
    assert untouched["corrected"] == "0" and float(untouched["residual_px"]) == 0.25
    # the camera views are 2-D: z is empty
    assert all(r["z_automatic"] == "" and r["units"] == "px" for r in rows[60:])


def test_a_result_in_px_is_not_written_twice_and_without_corrections_both_sides_agree() -> None:
    tables = result_tables("image", frames=20, markers=3)
    tables = dataclasses.replace(
        tables,
        points=dataclasses.replace(tables.points, effective=None, filled=None),
    )
    rows = _read(tidy_csv(tables))
    assert len(rows) == 20 * 3  # the points are the camera's picture: one view only
    assert {r["view"] for r in rows} == {"image"}
    assert all(r["corrected"] == "0" and r["filled"] == "0" for r in rows)
    assert all(r["x_automatic"] == r["x_effective"] for r in rows)
