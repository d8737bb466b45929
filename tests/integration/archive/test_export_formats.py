"""A reviewed rig result exported in every format (issue 20): the virtual rig's four cameras and
force plate recorded under the true cameras, reconstructed, one marker moved by a reviewer, signed
off, then exported with ``--format csv,c3d,trc,nwb,video``. Each file is read back by the library
its field uses (ezc3d, the ``c3d`` package, OpenSim, trc-data-reader, pynwb, nwbinspector, OpenCV)
and checked against the rig's true marker paths, the plate's recorded samples, and the other
files: one result, the same numbers in every format.
"""

from __future__ import annotations

import csv
import hashlib
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import c3d as c3d_package
import cv2
import ezc3d
import numpy as np
import pytest

from labrig.capture import load_capture
from labrig.capture.samples import read_chunk
from labrig.domain.corrections import parse_operation
from labrig.export import verify_bundle
from labrig.scenarios.rig_truth import matched
from labrig.store import open_store
from labrig.tasks import TaskCancelledError
from tests.support.analysis_runs import stage_output
from tests.support.rig_results import PlateRigResult, record_plate_rig_result
from tests.support.rig_truth import true_paths

pytestmark = pytest.mark.slow
EVERY = "csv,c3d,trc,nwb,video"
MOVED_TO = (123.0, -45.0, 678.0)
SUBJECT = {
    "species": "Homo sapiens",
    "age": "P30Y",
}  # given at export: the catalog has neither  # where the reviewer moves marker 0 at instant 7 (mm)


@dataclass
class Exported:
    rig: PlateRigResult
    bundle: Path
    folder: Path
    entry: dict[str, object]
    truth: np.ndarray  # instants × true markers × 3 (mm)
    markers: dict[int, int]  # true marker → reconstructed track id
    plate: np.ndarray  # the plate's recorded samples, S × 6


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Exported]:
    root = tmp_path_factory.mktemp("export-formats")
    store = open_store(root / "store")
    rig = record_plate_rig_result(store)
    reviews = rig.services.governance.revisions
    x, y, z = MOVED_TO
    reviews.correct(rig.result_id, [parse_operation("move", f"0@7={x},{y},{z}")], "slipped")
    reviews.sign_off(rig.result_id, "approved", "checked against the video")
    report = rig.services.export.export(
        [rig.result_id], root / "out", formats=EVERY, subject=SUBJECT
    )
    [entry] = report.results
    tracked = stage_output(rig.services, rig.attempt_id, "tracking.rig")
    rebuilt = stage_output(rig.services, rig.attempt_id, "reconstruction.3d")["reconstruction"]
    first = tracked["cameras"][0]["manifest_sha256"]
    truth = true_paths(store, rig.services.capture.virtual_rig, first)
    plate = next(
        load_capture(store, c.info["manifest_sha256"])
        for c in _captures(rig)
        if load_capture(store, c.info["manifest_sha256"]).device_id == "virtual:plate-1"
    )
    samples = np.concatenate([read_chunk(p).values for p in plate.segments])
    yield Exported(
        rig,
        report.bundle,
        report.bundle / str(entry["folder"]),
        entry,
        truth,
        {who: track for who, (track, _) in matched(rebuilt, truth).items()},
        samples,
    )
    rig.services.close()


def _captures(rig: PlateRigResult) -> list:  # type: ignore[type-arg]
    from labrig.export.snapshot import snapshot
    from labrig.review import find_result
    from labrig.store import BlobStore

    store = rig.services.store
    with store.read() as session:
        return list(
            snapshot(
                session, find_result(session, rig.result_id), store, BlobStore(store.media_dir)
            ).captures
        )


def test_every_format_is_in_the_bundle_and_sha256sums_covers_it(exported: Exported) -> None:
    names = {p.relative_to(exported.folder).as_posix() for p in exported.folder.rglob("*")}
    expected = {"markers-tidy.csv", "markers.c3d", "markers.trc", "instruments/plate.mot"}
    expected |= {"result.nwb"} | {f"video/{c}-overlay" for c in ("front", "right", "back", "left")}
    written = {n.rsplit(".", 1)[0] if n.startswith("video/") else n for n in names}
    assert expected <= written, sorted(names)
    assert exported.entry["formats_skipped"] == {}
    sums = (exported.bundle / "SHA256SUMS").read_text().splitlines()
    listed = {line.split("  ", 1)[1]: line.split("  ", 1)[0] for line in sums}
    for path in exported.folder.rglob("*"):
        if path.is_file():
            relative = path.relative_to(exported.bundle).as_posix()
            assert listed[relative] == hashlib.sha256(path.read_bytes()).hexdigest()
    checked = subprocess.run(
        ["sha256sum", "-c", "--strict", "--quiet", "SHA256SUMS"], cwd=exported.bundle
    )
    assert checked.returncode == 0
    assert verify_bundle(exported.bundle).intact


def _c3d_points(exported: Exported) -> tuple[list[str], np.ndarray, np.ndarray]:
    c3d = ezc3d.c3d(str(exported.folder / "markers.c3d"))
    labels = c3d["parameters"]["POINT"]["LABELS"]["value"]
    points = c3d["data"]["points"][:3].transpose(2, 1, 0)  # frames × markers × 3
    residuals = c3d["data"]["meta_points"]["residuals"][0].T
    return labels, points, residuals


def test_the_c3d_points_lie_on_the_true_paths_and_hold_the_reviewers_move(
    exported: Exported,
) -> None:
    labels, points, residuals = _c3d_points(exported)
    assert points.shape[0] == len(exported.truth)
    for who, track in exported.markers.items():
        column = labels.index(f"M{track}")
        seen = np.isfinite(points[:, column, 0])
        if track == 0:
            seen[7] = False  # moved by the reviewer, not where it truly was
            np.testing.assert_allclose(points[7, column], MOVED_TO, atol=1e-3)
        error = np.linalg.norm(points[seen, column] - exported.truth[seen, who], axis=1)
        assert error.mean() < 1.0, (track, error.mean())
        # a seen point's residual is its reprojection error (px), a missing one's -1
        assert (residuals[seen, column] >= 0).all() and (residuals[seen, column] < 2).all()
    c3d = ezc3d.c3d(str(exported.folder / "markers.c3d"))
    assert c3d["parameters"]["POINT"]["UNITS"]["value"] == ["mm"]
    assert c3d["parameters"]["LABRIG"]["RESULT_ID"]["value"] == [exported.rig.result_id]
    assert "approved" in c3d["parameters"]["LABRIG"]["SIGN_OFF"]["value"][0].lower()


def test_the_c3d_analog_channels_hold_the_plates_samples(exported: Exported) -> None:
    c3d = ezc3d.c3d(str(exported.folder / "markers.c3d"))
    analog = c3d["parameters"]["ANALOG"]
    assert len(analog["LABELS"]["value"]) == 6
    fz = c3d["data"]["analogs"][0][analog["LABELS"]["value"].index("plate_Fz")]
    recorded = exported.plate[:, 2]
    # resampled onto the analog rate: every recorded value's range is kept
    inside = fz[fz != 0]
    assert inside.min() >= recorded.min() - 1 and inside.max() <= recorded.max() + 1
    assert abs(np.median(inside) - np.median(recorded)) < 5.0


def test_the_pure_python_c3d_reader_reads_the_same_points(exported: Exported) -> None:
    labels, points, _ = _c3d_points(exported)
    with open(exported.folder / "markers.c3d", "rb") as fh:
        reader = c3d_package.Reader(fh)
        assert [s.strip() for s in reader.point_labels] == labels
        frames = [p for _, p, _ in reader.read_frames()]
    read = np.stack([p[:, :3] for p in frames])
    missing = np.stack([p[:, 3] for p in frames]) < 0
    np.testing.assert_array_equal(missing, ~np.isfinite(points[..., 0]))
    np.testing.assert_allclose(read[~missing], points[~missing], atol=1e-3)


def test_opensim_and_a_trc_reader_read_the_same_points_and_the_plate(exported: Exported) -> None:
    import opensim
    import trc

    opensim.Logger.removeFileSink()
    labels, points, _ = _c3d_points(exported)
    table = opensim.TimeSeriesTableVec3(str(exported.folder / "markers.trc"))
    assert list(table.getColumnLabels()) == labels
    assert table.getNumRows() == points.shape[0]
    for m, label in enumerate(labels):
        column = table.getDependentColumn(label)
        got = np.array([[column[i][k] for k in range(3)] for i in range(table.getNumRows())])
        np.testing.assert_allclose(got, points[:, m], atol=1e-3, equal_nan=True)
    data = trc.TRCData()
    data.load(str(exported.folder / "markers.trc"))
    assert data["NumFrames"] == points.shape[0] and data["Units"].strip() == "mm"
    mot = opensim.TimeSeriesTable(str(exported.folder / "instruments" / "plate.mot"))
    assert list(mot.getColumnLabels()) == ["Fx", "Fy", "Fz", "Mx", "My", "Mz"]
    fz = mot.getDependentColumn("Fz").to_numpy()
    np.testing.assert_allclose(fz, exported.plate[:, 2], rtol=1e-6)


def test_the_nwb_file_keeps_automatic_and_corrected_apart_and_passes_nwbinspector(
    exported: Exported,
) -> None:
    from nwbinspector import Importance, inspect_nwbfile
    from pynwb import NWBHDF5IO

    path = exported.folder / "result.nwb"
    labels, points, _ = _c3d_points(exported)
    with NWBHDF5IO(str(path), "r", load_namespaces=True) as io:
        nwb = io.read()
        assert nwb.subject.subject_id == "S-042"
        assert (nwb.subject.species, nwb.subject.age) == ("Homo sapiens", "P30Y")
        assert set(nwb.devices) >= {"front", "right", "back", "left"}
        behavior = nwb.processing["behavior"].data_interfaces
        automatic, corrected = behavior["rig_automatic"], behavior["rig_corrected"]
        moved = corrected.pose_estimation_series["M0"].data[:]
        np.testing.assert_allclose(moved[7], MOVED_TO, atol=1e-6)
        assert not np.allclose(automatic.pose_estimation_series["M0"].data[7], MOVED_TO)
        for m, label in enumerate(labels):
            np.testing.assert_allclose(
                corrected.pose_estimation_series[label].data[:],
                points[:, m],
                atol=1e-3,
                equal_nan=True,
            )
        plate = nwb.acquisition["plate"]
        np.testing.assert_allclose(plate.data[:][:, 2], exported.plate[:, 2], rtol=1e-9)
    serious = {
        (m.importance.name, m.check_function_name)
        for m in inspect_nwbfile(nwbfile_path=str(path))
        if m.importance in (Importance.CRITICAL, Importance.BEST_PRACTICE_VIOLATION)
    }
    # with the species and age given at export, nothing; without, only those two findings
    # (tests/unit/test_format_nwb.py)
    assert serious == set()


def test_the_tidy_csv_has_the_3d_points_beside_the_automatic_ones(exported: Exported) -> None:
    _, points, _ = _c3d_points(exported)
    with open(exported.folder / "markers-tidy.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["view"] == "3d"]
    assert len(rows) == points.shape[0] * points.shape[1]
    moved = next(r for r in rows if r["marker"] == "M0" and r["frame"] == "7")
    assert [float(moved[f"{a}_effective"]) for a in "xyz"] == list(MOVED_TO)
    assert moved["corrected"] == "1" and moved["x_automatic"] != moved["x_effective"]


def test_an_overlay_video_per_camera_plays_every_frame(exported: Exported) -> None:
    videos = sorted((exported.folder / "video").iterdir())
    assert len(videos) == 4
    for video in videos:
        capture = cv2.VideoCapture(str(video))
        frames = 0
        while capture.read()[0]:
            frames += 1
        capture.release()
        assert frames == 61 or frames >= 60, (video.name, frames)


class _CancelAfter:
    """A task that cancels the export once it has drawn ``frames`` video frames."""

    def __init__(self, frames: int) -> None:
        self.frames, self.seen = frames, 0

    @property
    def cancelled(self) -> bool:
        return self.seen >= self.frames

    def progress(self, fraction: float, message: str = "") -> None:
        if "overlay video" in message:
            self.seen += 1

    def check_cancelled(self) -> None:
        if self.cancelled:
            raise TaskCancelledError("cancelled")


def test_a_cancelled_export_leaves_nothing_behind(exported: Exported, tmp_path: Path) -> None:
    target = tmp_path / "out"
    with pytest.raises(TaskCancelledError):
        exported.rig.services.export.export(
            [exported.rig.result_id], target, formats="video", task=_CancelAfter(20)
        )
    assert list(target.iterdir()) == []
