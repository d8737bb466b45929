"""The C3D writer: a file read back, by ezc3d and by the pure-Python ``c3d`` package, as the tables
it was written from: the positions in force, missing points as invalid, residuals, the
instrument's known sines resampled onto the frames' clock, and the ``LABRIG`` provenance."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path
from typing import Any

import c3d
import ezc3d
import numpy as np
import pytest

from labrig.export.formats.c3d import write_c3d
from labrig.export.tables import PointKind, ResultTables
from tests.support.export_tables import FPS, analog_table, point_table, result_tables

SIGNAL = [10.0, 20.0, 30.0]  # analog_table(): amplitudes of the 1, 2 and 3 Hz sines
SPAN = (0.1, 0.1 + 2999 / 1000)  # analog_table(3 s): its first and last sample times
RATIO = 34  # ⌈1000 Hz / 30 Hz⌉ analog samples a frame
INTERPOLATION = 2e-3  # linear interpolation of a 30 N, 3 Hz sine sampled at 1 kHz: ≤ 1.3e-3


def _uncorrected(kind: PointKind, analog: bool = True) -> ResultTables:
    """Marker 0 is not seen in frames 10–14, and no reviewer filled the gap."""
    tables = result_tables(kind, analog=analog)
    return dataclasses.replace(tables, points=point_table(kind, corrected=False))


def _written(tables: ResultTables, tmp_path: Path, name: str = "result.c3d") -> Path:
    path = tmp_path / name
    write_c3d(tables, path)
    return path


def _xyz(tables: ResultTables) -> np.ndarray:
    """What the file should hold: the positions in force, z = 0 on a plane (NaN where unseen)."""
    pts = tables.points.in_force
    if pts.shape[2] == 3:
        return pts
    return np.concatenate([pts, np.where(np.isnan(pts[:, :, :1]), np.nan, 0.0)], axis=2)


def _param(c: Any, group: str, name: str) -> Any:
    return c["parameters"][group][name]["value"]


def _c3d_package(path: Path) -> tuple[c3d.Reader, np.ndarray, np.ndarray]:
    """The reader, N×M×5 points (x, y, z, residual, cameras) and C×(N·ratio) analog samples."""
    with open(path, "rb") as fh, warnings.catch_warnings():
        warnings.filterwarnings("ignore", "No analog data found")  # a result without instruments
        reader = c3d.Reader(fh)
        frames = list(reader.read_frames())
    points = np.array([p for _, p, _ in frames])
    if not reader.analog_used:
        return reader, points, np.zeros((0, len(frames)))
    return reader, points, np.concatenate([a for _, _, a in frames], axis=1)


@pytest.mark.parametrize("kind", ["3d", "plane", "image"])
def test_ezc3d_reads_the_positions_in_force(tmp_path: Path, kind: PointKind) -> None:
    tables = result_tables(kind, analog=kind != "image")
    c = ezc3d.c3d(str(_written(tables, tmp_path)))

    expected = _xyz(tables)
    assert not np.isnan(expected).any()  # the reviewer's fill and correction are in force
    points = c["data"]["points"]
    assert points.shape == (4, 3, 90)
    np.testing.assert_allclose(points[:3].transpose(2, 1, 0), expected, rtol=1e-6)
    assert _param(c, "POINT", "LABELS") == ["M0", "M1", "M2"]
    assert _param(c, "POINT", "DESCRIPTIONS") == ["track 0", "track 1", "track 2"]
    assert _param(c, "POINT", "UNITS") == ["px" if kind == "image" else "mm"]
    assert _param(c, "POINT", "RATE")[0] == FPS
    assert c["header"]["points"]["first_frame"] == 0  # written 1-based: the table's frame 0 + 1

    residuals = c["data"]["meta_points"]["residuals"][0].T  # N×M
    expected_residuals = np.zeros((90, 3))
    if kind == "3d":  # 0.25 px rounded up; 0 where the reviewer filled (10–14) or moved (20)
        expected_residuals[:] = 1.0
        expected_residuals[10:15, 0] = 0.0
        expected_residuals[20, 1] = 0.0
    np.testing.assert_array_equal(residuals, expected_residuals)


@pytest.mark.parametrize("kind", ["3d", "plane"])
def test_missing_points_are_invalid_for_both_readers(tmp_path: Path, kind: PointKind) -> None:
    tables = _uncorrected(kind)
    path = _written(tables, tmp_path)
    missing = np.zeros((90, 3), dtype=bool)
    missing[10:15, 0] = True

    c = ezc3d.c3d(str(path))
    points = c["data"]["points"][:3].transpose(2, 1, 0)
    residuals = c["data"]["meta_points"]["residuals"][0].T
    assert np.isnan(points[missing]).all() and not np.isnan(points[~missing]).any()
    np.testing.assert_allclose(points, _xyz(tables), rtol=1e-6)  # NaN where NaN
    assert (residuals[missing] == -1).all() and (residuals[~missing] >= 0).all()
    if kind == "3d":  # every seen point solved: its 0.25 px error rounded up
        assert (residuals[~missing] == 1).all()
    assert _param(c, "LABRIG", "DATA") == ["automatic"]

    _, read, _ = _c3d_package(path)
    assert (read[missing, 3] < 0).all() and (read[~missing, 3] >= 0).all()
    assert (read[missing, :3] == 0).all()


@pytest.mark.parametrize("kind", ["3d", "plane"])
def test_the_c3d_package_reads_the_same_file(tmp_path: Path, kind: PointKind) -> None:
    tables = result_tables(kind)
    reader, points, analog = _c3d_package(_written(tables, tmp_path))

    assert [label.strip() for label in reader.point_labels] == ["M0", "M1", "M2"]
    assert reader.frame_count == 90 and points.shape == (90, 3, 5)
    assert reader.first_frame == 1
    assert reader.point_rate == FPS
    assert reader.get("POINT:UNITS").string_value.strip() == "mm"
    np.testing.assert_allclose(points[:, :, :3], _xyz(tables), rtol=1e-6)
    assert (points[:, :, 3] >= 0).all()  # every point valid: the reviewer filled the gap

    labels = [label.strip() for label in reader.analog_labels]
    assert labels == ["plate_Fx", "plate_Fy", "plate_Fz"]
    assert reader.analog_rate == FPS * RATIO and analog.shape == (3, 90 * RATIO)
    np.testing.assert_allclose(analog, _expected_analog(), atol=INTERPOLATION)
    assert reader.get("LABRIG:RESULT_ID").string_value.strip() == tables.result_id


def _expected_analog() -> np.ndarray:
    """analog_table()'s sines at the C3D's analog sample times, 0 before its first sample."""
    t = np.arange(90 * RATIO) / (FPS * RATIO)
    inside = (t >= SPAN[0]) & (t <= SPAN[1])
    return np.array([a * np.sin(2 * np.pi * (k + 1) * t) * inside for k, a in enumerate(SIGNAL)])


def test_ezc3d_reads_the_instrument_resampled_onto_the_frames(tmp_path: Path) -> None:
    c = ezc3d.c3d(str(_written(result_tables("3d"), tmp_path)))

    assert _param(c, "ANALOG", "RATE")[0] == FPS * RATIO
    assert _param(c, "ANALOG", "LABELS") == ["plate_Fx", "plate_Fy", "plate_Fz"]
    assert _param(c, "ANALOG", "UNITS") == ["N", "N", "N"]
    description = _param(c, "ANALOG", "DESCRIPTIONS")[0]
    assert "virtual-instrument:0" in description and "1000 Hz" in description
    values = c["data"]["analogs"][0]
    expected = _expected_analog()
    np.testing.assert_allclose(values, expected, atol=INTERPOLATION)
    before = np.arange(90 * RATIO) / (FPS * RATIO) < SPAN[0]
    assert before.any() and (values[:, before] == 0).all()
    assert _param(c, "LABRIG", "ANALOG_RATES") == ["plate=1000"]


def test_instruments_of_different_rates_share_one_rate(tmp_path: Path) -> None:
    """Two instruments of one name: their labels are made unique; the slower one is
    interpolated onto the faster one's rate, and is 0 after its shorter recording ends."""
    slow = analog_table(seconds=2.0, rate_hz=250.0)
    tables = dataclasses.replace(result_tables("3d"), analog=(analog_table(), slow))
    c = ezc3d.c3d(str(_written(tables, tmp_path)))

    labels = _param(c, "ANALOG", "LABELS")
    assert labels[:3] == ["plate_Fx", "plate_Fy", "plate_Fz"] and len(set(labels)) == 6
    assert _param(c, "ANALOG", "RATE")[0] == FPS * RATIO
    values = c["data"]["analogs"][0]
    t = np.arange(90 * RATIO) / (FPS * RATIO)
    inside = (t >= 0.1) & (t <= 0.1 + 499 / 250)
    expected = np.array(
        [a * np.sin(2 * np.pi * (k + 1) * t) * inside for k, a in enumerate(SIGNAL)]
    )
    np.testing.assert_allclose(values[3:], expected, atol=0.05)  # 250 Hz: error ≤ 0.03 N
    assert (values[3:, t > 2.1] == 0).all()
    assert _param(c, "LABRIG", "ANALOG_RATES") == ["plate=1000; plate=250"]


def test_a_result_without_instruments_has_no_analog(tmp_path: Path) -> None:
    c = ezc3d.c3d(str(_written(result_tables("image", analog=False), tmp_path)))

    assert c["data"]["analogs"].shape[1] == 0
    assert _param(c, "ANALOG", "USED")[0] == 0
    assert _param(c, "POINT", "UNITS") == ["px"]


def test_the_labrig_group_holds_the_provenance(tmp_path: Path) -> None:
    tables = result_tables("plane")
    long_note = "reviewed: " + "é" * 300  # 610 bytes: more than one C3D string holds
    tables = dataclasses.replace(tables, provenance={**tables.provenance, "note x": long_note})
    c = ezc3d.c3d(str(_written(tables, tmp_path)))

    labrig = {k: v["value"] for k, v in c["parameters"]["LABRIG"].items() if k != "__METADATA__"}
    for key, value in tables.provenance.items():
        if key != "note x":
            assert labrig[key.upper()] == [value]
    assert "".join(labrig["NOTE_X"]) == long_note
    assert all(len(piece.encode()) <= 255 for piece in labrig["NOTE_X"])
    assert labrig["RESULT_ID"] == [tables.result_id]
    assert labrig["ATTEMPT_ID"] == [tables.attempt_id]
    assert labrig["SUBJECT"] == ["S-007"] and labrig["PROTOCOL"] == ["reach"]
    assert labrig["DATA"] == ["effective"]
    assert labrig["KIND"] == ["plane"] and labrig["CAMERA"] == ["virtual:0"]
    assert _param(c, "SUBJECTS", "NAMES") == ["S-007"]


def test_the_first_frame_is_the_tables_and_the_path_is_written_as_given(tmp_path: Path) -> None:
    tables = result_tables("plane", analog=False)
    points = dataclasses.replace(tables.points, frames=tables.points.frames + 100)
    path = _written(dataclasses.replace(tables, points=points), tmp_path, "markers.bin")

    assert sorted(p.name for p in tmp_path.iterdir()) == ["markers.bin"]  # no .c3d appended
    c = ezc3d.c3d(str(path))
    assert c["header"]["points"]["first_frame"] == 100  # 0-based here: 101 in the file
    assert _param(c, "LABRIG", "FIRST_FRAME") == ["100"]
    reader, points_read, _ = _c3d_package(path)
    assert reader.first_frame == 101 and reader.frame_count == 90 == len(points_read)
