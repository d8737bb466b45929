"""The OpenSim writers: a TRC and a MOT read back, by OpenSim's own adapters and by the
trc-data-reader package, as the tables they were written from; a result in pixels is refused."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
import opensim
import pytest
import trc

from labrig.export.formats.opensim import FormatUnitsError, write_mot, write_trc
from labrig.export.tables import AnalogTable, PointKind, ResultTables
from tests.support.export_tables import FPS, analog_table, point_table, result_tables

opensim.Logger.removeFileSink()  # OpenSim logs to ./opensim.log as well as to the console
MM = 1e-4  # what a position must read back within
SIGNAL = [10.0, 20.0, 30.0]  # analog_table(): amplitudes of the 1, 2 and 3 Hz sines


def _uncorrected(kind: PointKind) -> ResultTables:
    """Marker 0 is not seen in frames 10–14, and no reviewer filled the gap."""
    tables = result_tables(kind)
    return dataclasses.replace(tables, points=point_table(kind, corrected=False))


def _xyz(tables: ResultTables) -> np.ndarray:
    """What the TRC should hold: the positions in force, z = 0 on a plane (NaN where unseen)."""
    pts = tables.points.in_force
    if pts.shape[2] == 3:
        return pts
    return np.concatenate([pts, np.where(np.isnan(pts[:, :, :1]), np.nan, 0.0)], axis=2)


def _opensim_trc(path: Path) -> tuple[list[str], np.ndarray, np.ndarray, dict[str, str]]:
    table = opensim.TimeSeriesTableVec3(str(path))
    labels = list(table.getColumnLabels())
    flat = table.flatten()  # kept: getMatrix() is a view into it (a temporary would crash)
    values = flat.getMatrix().to_numpy().reshape(table.getNumRows(), len(labels), 3)
    meta = {k: table.getTableMetaDataAsString(k) for k in table.getTableMetaDataKeys()}
    return labels, np.asarray(table.getIndependentColumn()), values, meta


def _trc_data_reader(path: Path) -> trc.TRCData:
    data = trc.TRCData()
    data.load(str(path))
    return data


@pytest.mark.parametrize("kind", ["3d", "plane"])
def test_opensim_reads_the_trc_as_the_positions_in_force(tmp_path: Path, kind: PointKind) -> None:
    tables = result_tables(kind)
    path = tmp_path / "markers.trc"
    write_trc(tables, path)

    labels, times, values, meta = _opensim_trc(path)
    assert labels == ["M0", "M1", "M2"] == [m.label for m in tables.points.markers]
    assert len(times) == 90
    np.testing.assert_allclose(times, tables.points.times_s, atol=1e-6)
    np.testing.assert_allclose(values, _xyz(tables), atol=MM, rtol=0)
    # the reviewer's correction is what the file holds, not the automatic position
    assert abs(values[20, 1, 0] - tables.points.automatic[20, 1, 0] - 5.0) < MM
    if kind == "plane":
        assert np.all(values[:, :, 2] == 0.0)
    assert meta["Units"] == "mm" and float(meta["DataRate"]) == FPS == float(meta["CameraRate"])
    assert (meta["NumFrames"], meta["NumMarkers"], meta["OrigNumFrames"]) == ("90", "3", "90")

    tables_read = opensim.TRCFileAdapter().read(str(path))
    adapted = tables_read["markers"]
    assert (adapted.getNumRows(), list(adapted.getColumnLabels())) == (90, labels)
    markers = opensim.MarkerData(str(path))  # what the inverse kinematics tool reads
    assert markers.getUnits().getAbbreviation() == "mm" and markers.getNumFrames() == 90
    assert markers.getDataRate() == pytest.approx(FPS)


@pytest.mark.parametrize("kind", ["3d", "plane"])
def test_trc_data_reader_reads_the_trc(tmp_path: Path, kind: PointKind) -> None:
    tables = result_tables(kind)
    path = tmp_path / "markers.trc"
    write_trc(tables, path)

    data = _trc_data_reader(path)
    assert data["PathFileType"] == "4" and data["DataFormat"] == "(X/Y/Z)"
    assert data["Markers"] == ["M0", "M1", "M2"]
    assert (data["NumFrames"], data["NumMarkers"], data["Units"]) == (90, 3, "mm")
    assert data["DataRate"] == FPS and data["OrigDataStartFrame"] == 1
    assert data["Frame#"] == list(range(1, 91))
    np.testing.assert_allclose(data["Time"], tables.points.times_s, atol=1e-6)
    values = np.stack([np.asarray(data[label]) for label in data["Markers"]], axis=1)
    np.testing.assert_allclose(values, _xyz(tables), atol=MM, rtol=0)


def test_missing_samples_read_back_as_nan_in_both_readers(tmp_path: Path) -> None:
    tables = _uncorrected("3d")
    path = tmp_path / "markers.trc"
    write_trc(tables, path)
    want = tables.points.automatic
    assert np.isnan(want[10:15, 0]).all()

    _, _, values, _ = _opensim_trc(path)
    np.testing.assert_allclose(values, want, atol=MM, rtol=0)  # NaN where NaN, equal elsewhere
    # trc-data-reader splits rows on whitespace: blank fields would shift M1 into M0
    data = _trc_data_reader(path)
    read = np.stack([np.asarray(data[label]) for label in data["Markers"]], axis=1)
    np.testing.assert_allclose(read, want, atol=MM, rtol=0)


def test_trc_data_reader_reads_it_on_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """trc-data-reader splits a file on os.linesep: on Windows an LF-only file is one line."""
    tables = _uncorrected("plane")
    path = tmp_path / "markers.trc"
    write_trc(tables, path)
    monkeypatch.setattr(os, "linesep", "\r\n")
    data = _trc_data_reader(path)
    assert data["Frame#"] == list(range(1, 91)) and data["FileName"] == "markers.trc"
    read = np.stack([np.asarray(data[label]) for label in data["Markers"]], axis=1)
    np.testing.assert_allclose(read, _xyz(tables), atol=MM, rtol=0)


def test_a_result_in_pixels_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "markers.trc"
    with pytest.raises(FormatUnitsError) as caught:
        write_trc(result_tables("image"), path)
    assert caught.value.code == "LABRIG_FORMAT_NEEDS_CALIBRATION"
    message = caught.value.message
    assert "pixels" in message and "OpenSim" in message and "--format" in message
    assert "Calibrate the camera" in message
    assert not path.exists() and not list(tmp_path.iterdir())


def _sines(analog: AnalogTable) -> np.ndarray:
    t = analog.times_s
    return np.column_stack([a * np.sin(2 * np.pi * (k + 1) * t) for k, a in enumerate(SIGNAL)])


@pytest.mark.parametrize("suffix", [".mot", ".sto"])
def test_opensim_reads_the_mot_as_the_known_sines(tmp_path: Path, suffix: str) -> None:
    analog = analog_table()
    path = tmp_path / f"plate{suffix}"
    write_mot(analog, path, zero_s=0.05)

    table = opensim.TimeSeriesTable(str(path))  # OpenSim's STOFileAdapter, for .mot and .sto
    assert list(table.getColumnLabels()) == ["Fx", "Fy", "Fz"]
    assert table.getNumRows() == 3000
    np.testing.assert_allclose(table.getIndependentColumn(), analog.times_s - 0.05, atol=1e-6)
    np.testing.assert_allclose(table.getMatrix().to_numpy(), _sines(analog), atol=1e-6)
    meta = {k: table.getTableMetaDataAsString(k) for k in table.getTableMetaDataKeys()}
    assert meta["header"] == "plate" and meta["inDegrees"] == "no"
    assert (meta["nRows"], meta["nColumns"]) == ("3000", "4")
    assert meta["units"] == "time:s Fx:N Fy:N Fz:N"

    adapter = opensim.FileAdapter.createAdapterFromExtension(str(path))
    tables_read = adapter.read(str(path))
    adapted = tables_read["table"]
    assert (adapted.getNumRows(), adapted.getNumColumns()) == (3000, 3)
    storage = opensim.Storage(str(path))  # the older reader (external loads, the GUI's plots)
    labels = storage.getColumnLabels()
    assert [labels.get(i) for i in range(labels.size())] == ["time", "Fx", "Fy", "Fz"]
    assert storage.getSize() == 3000 and storage.getFirstTime() == pytest.approx(0.05)


def test_a_missing_analog_sample_reads_back_as_nan(tmp_path: Path) -> None:
    analog = analog_table(seconds=0.01)
    values = analog.values.copy()
    values[3, 1] = np.nan
    path = tmp_path / "plate.mot"
    write_mot(dataclasses.replace(analog, name="plate = left\n", values=values), path)
    table = opensim.TimeSeriesTable(str(path))
    read = table.getMatrix().to_numpy()
    assert np.isnan(read[3, 1]) and np.isfinite(np.delete(read.ravel(), 3 * 3 + 1)).all()
    np.testing.assert_allclose(read, values, atol=1e-6)
    assert table.getTableMetaDataAsString("header") == "plate left"
