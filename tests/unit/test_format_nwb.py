"""``result.nwb`` reads back, with pynwb and ndx-pose, as the result's tables: every marker's
automatic and corrected positions, their times, the cameras, the subject, the session and the
instrument's known sines; and nwbinspector finds nothing that Labrig's catalog could avoid."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
from nwbinspector import Importance, inspect_nwbfile
from pynwb import NWBHDF5IO

from labrig.export.formats.nwb import write_nwb
from labrig.export.tables import PointTable, ResultTables
from tests.support.export_tables import result_tables

EXPORTED = datetime(2026, 12, 5, 9, 30, tzinfo=UTC)
# What nwbinspector reports at CRITICAL or BEST_PRACTICE_VIOLATION that Labrig's catalog cannot
# avoid: it records a subject's code only. Guessing a species or an age would put a falsehood in
# the file; sex is written as "U" (unknown), which nwbinspector accepts. Any other finding fails.
UNAVOIDABLE = {
    ("CRITICAL", "check_subject_age"),  # no age nor date of birth in the catalog
    ("BEST_PRACTICE_VIOLATION", "check_subject_species_exists"),  # no species in the catalog
}


def _write(tables: ResultTables, path: Path) -> Path:
    write_nwb(tables, path, exported_at=EXPORTED)
    return path


@pytest.fixture(scope="module", params=["3d", "plane", "image"])
def written(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    tables = result_tables(request.param)
    path = _write(tables, tmp_path_factory.mktemp("nwb") / "result.nwb")
    return tables, path


@pytest.fixture
def nwb(written: Any) -> Iterator[tuple[ResultTables, Any]]:
    tables, path = written
    with NWBHDF5IO(str(path), "r", load_namespaces=True) as io:
        yield tables, io.read()


def _equal(actual: Any, expected: np.ndarray) -> None:
    np.testing.assert_array_equal(np.asarray(actual), expected)  # NaN equals NaN here


def _check_pose(container: Any, table: PointTable, positions: np.ndarray) -> None:
    assert list(container.pose_estimation_series) == [m.label for m in table.markers]
    assert list(container.skeleton.nodes[:]) == [m.label for m in table.markers]
    for m, series in enumerate(container.pose_estimation_series.values()):
        _equal(series.data[:], positions[:, m, :])
        np.testing.assert_allclose(series.get_timestamps(), table.times_s, rtol=0, atol=1e-9)
        assert series.unit == {"mm": "millimeters", "px": "pixels"}[table.units]
        if table.kind == "image":
            assert "top-left" in series.reference_frame
    assert container.source_software == "Labrig"


def _check_corrected(container: Any, table: PointTable) -> None:
    assert table.effective is not None and table.filled is not None
    _check_pose(container, table, table.effective)
    assert (
        "reviewer corrected" in container.description and "revisions 1,2" in container.description
    )
    for m, series in enumerate(container.pose_estimation_series.values()):
        expected = np.where(table.filled[:, m], 0.0, 1.0)
        expected[np.isnan(table.effective[:, m]).any(axis=1)] = np.nan
        _equal(series.confidence[:], expected)
        assert "gap fill" in series.confidence_definition


def test_positions_read_back_automatic_and_corrected(nwb: tuple[ResultTables, Any]) -> None:
    tables, f = nwb
    behavior = f.processing["behavior"]
    points = tables.points
    views = behavior.data_interfaces
    if points.kind == "3d":
        assert sorted(behavior.data_interfaces) == ["Skeletons", "rig_automatic", "rig_corrected"]
        rig = behavior["rig_automatic"]
        _check_pose(rig, points, points.automatic)
        _check_corrected(behavior["rig_corrected"], points)
        assert "world" in next(iter(rig.pose_estimation_series.values())).reference_frame
        views = rig.pose_estimations  # each camera view inside the rig (one device each)
        assert not behavior["rig_corrected"].pose_estimations  # a rig's views: automatic only
    elif points.kind == "plane":
        _check_pose(behavior["plane_automatic"], points, points.automatic)
        _check_corrected(behavior["plane_corrected"], points)
        assert behavior["plane_automatic"].device.name == "cam-a"
    else:  # a result in px is its camera's view, not repeated
        assert sorted(behavior.data_interfaces) == [
            "Skeletons",
            "cam-a_automatic",
            "cam-a_corrected",
        ]
    for view, camera in zip(tables.views, tables.cameras, strict=True):
        automatic = views[f"{camera.name}_automatic"]
        _check_pose(automatic, view, view.automatic)
        assert automatic.device.name == camera.name
        if view.effective is not None:
            _check_corrected(views[f"{camera.name}_corrected"], view)


def test_session_subject_devices_and_provenance(nwb: tuple[ResultTables, Any]) -> None:
    tables, f = nwb
    assert f.identifier == tables.result_id
    assert f.session_id == "ses0123456789"
    assert f.session_start_time == datetime(2026, 12, 5, 8, 0, tzinfo=UTC)
    assert f.file_create_date[0] == EXPORTED
    assert "reach" in f.session_description and "attempt 2" in f.session_description
    assert list(f.experimenter) == ["tech"]
    assert f.subject.subject_id == "S-007" and f.subject.sex == "U"
    assert f.subject.species is None and f.subject.age is None  # not in the catalog: not guessed
    assert json.loads(f.notes) == tables.provenance
    assert sorted(f.devices) == sorted(c.name for c in tables.cameras)
    for camera in tables.cameras:
        description = f.devices[camera.name].description
        assert camera.device_id in description and "640x480" in description and "30" in description


def test_instrument_holds_the_known_sines(nwb: tuple[ResultTables, Any]) -> None:
    tables, f = nwb
    (plate,) = tables.analog
    series = f.acquisition["plate"]
    times = np.asarray(series.get_timestamps()[:])  # computed from the rate, or stored
    np.testing.assert_allclose(times, plate.times_s, rtol=0, atol=1e-9)
    sines = np.column_stack([(k + 1) * 10 * np.sin(2 * np.pi * (k + 1) * times) for k in range(3)])
    np.testing.assert_allclose(series.data[:], sines, atol=1e-9)
    _equal(series.data[:], plate.values)
    assert series.unit == "N" and series.comments == "channels (columns): Fx, Fy, Fz"
    assert plate.device_id in series.description


def _findings(path: Path) -> set[tuple[str, str]]:
    """nwbinspector's findings at BEST_PRACTICE_VIOLATION and above: (importance, check)."""
    return {
        (m.importance.name, m.check_function_name)
        for m in inspect_nwbfile(
            nwbfile_path=str(path), importance_threshold=Importance.BEST_PRACTICE_VIOLATION
        )
    }


def test_nwbinspector_finds_only_what_the_catalog_cannot_fill(written: Any) -> None:
    _, path = written
    assert _findings(path) == UNAVOIDABLE


def test_a_species_and_age_given_at_export_leave_nwbinspector_nothing(tmp_path: Path) -> None:
    path = tmp_path / "given.nwb"
    write_nwb(
        result_tables("3d", frames=30),
        path,
        exported_at=datetime(2026, 12, 5, 9, 0, tzinfo=UTC),
        subject={"species": "Mus musculus", "age": "P8W"},
    )
    with NWBHDF5IO(str(path), "r", load_namespaces=True) as io:
        subject = io.read().subject
        assert (subject.species, subject.age) == ("Mus musculus", "P8W")
        assert "given at export" in subject.description
    assert _findings(path) == set()


def _jittered(table: PointTable, rng: np.random.Generator) -> PointTable:
    return dataclasses.replace(
        table, times_s=table.times_s + rng.uniform(0, 2e-3, table.times_s.size)
    )


def test_irregular_times_are_shared_timestamps(tmp_path: Path) -> None:
    """Measured frame times (not on a grid) are written once per view, and linked by its other
    series; the instrument's too; nwbinspector is as content as with a grid."""
    rng = np.random.default_rng(7)
    tables = result_tables("plane")
    plate = tables.analog[0]
    tables = dataclasses.replace(
        tables,
        points=_jittered(tables.points, rng),
        views=tuple(_jittered(v, rng) for v in tables.views),
        analog=(dataclasses.replace(plate, times_s=plate.times_s + rng.uniform(0, 1e-4, 3000)),),
    )
    path = _write(tables, tmp_path / "result.nwb")
    with NWBHDF5IO(str(path), "r", load_namespaces=True) as io:
        f = io.read()
        behavior = f.processing["behavior"]
        for name, table in (
            ("plane_corrected", tables.points),
            ("cam-a_automatic", tables.views[0]),
        ):
            for series in behavior[name].pose_estimation_series.values():
                assert series.rate is None
                _equal(series.timestamps[:], table.times_s)
        _equal(f.acquisition["plate"].timestamps[:], tables.analog[0].times_s)
    with h5py.File(path, "r") as h5:
        base = "processing/behavior/plane_automatic"
        for name in ("plane_automatic/M1", "plane_automatic/M2", "plane_corrected/M0"):
            link = h5.get(f"processing/behavior/{name}/timestamps", getlink=True)
            assert isinstance(link, h5py.SoftLink) and link.path == f"/{base}/M0/timestamps"
    assert _findings(path) == UNAVOIDABLE


def test_a_missing_session_start_is_the_publication_said_so(tmp_path: Path) -> None:
    tables = result_tables("image", analog=False)
    session = {k: v for k, v in tables.session.items() if k not in ("started_at", "operator")}
    path = _write(dataclasses.replace(tables, session=session), tmp_path / "result.nwb")
    with NWBHDF5IO(str(path), "r", load_namespaces=True) as io:
        f = io.read()
        assert f.session_start_time == datetime(2026, 12, 5, 8, 10, tzinfo=UTC)
        assert "when the result was published" in f.session_description
        assert f.experimenter is None and not f.acquisition
