"""Export formats: the time to write one result in each interchange format, against the format's own
library writing the same points.

    .venv/bin/python tests/benchmarks/bench_export.py [--quick] [--store DIR] [--repeat N]
        [--formats csv,c3d,trc,nwb,video] [--profile]

The result: the virtual rig's 4 cameras (1280x720 at 30 fps) and its 1 kHz 6-channel force plate,
recorded in real time for 60 s (1800 frames; ``--quick`` 10 s, 300 frames) under the true cameras,
analysed in 3-D through the queue and published (``tests/support/rig_results.py``).
``--store DIR`` keeps the store there and reuses it when it already holds the result.

Per format, printed as one line ``format=X labrig_s=… service_s=… peer_s=… ratio=…``: each figure
the median of ``--repeat`` (3) measurements, Labrig's and the peer's alternating which goes first;
a measurement is the mean time of as many calls as fill 1 s (one call of a writer that takes a
second or more, tens of one that takes a few ms), each into a fresh folder after ``os.sync()``:

- **labrig_s**, the writer alone: the result's snapshot and tables are read once, as
  ``ExportService._sources`` reads them, then the format's writer is timed on those tables into a
  fresh folder (``tidy_csv`` + writing its bytes; ``write_c3d``; ``write_trc`` + ``write_mot``
  per instrument; ``write_nwb``; ``write_overlay_video`` per camera).
- **service_s**: the whole ``labrig export --format X`` call (``ExportService.export(…,
  formats=(X,))``): the snapshot, the tables, the bundle's own files (result.json, the CSVs,
  plots, provenance, SHA256SUMS) and the format. The bundle alone (``formats=()``, what every
  export writes) is printed as ``format=bundle``.
- **peer_s**: the format's library alone writing the same points (the same arrays of the same
  tables) the minimal way its documentation shows, starting from the same numpy arrays, the
  conversion into what the library takes included:

  - csv: the ``csv`` module's ``writerows`` of the same rows (columns assembled with numpy, then
    ``tolist``; no per-cell formatting: floats as ``csv`` prints them, ``nan`` where missing);
  - c3d: ``ezc3d.c3d()`` with ``POINT`` rate and labels, ``data['points']`` (4×M×N) and the plate
    as ``data['analogs']`` at Labrig's analog rate (the samples as recorded, not resampled), then
    ``write``;
  - trc: ``trc-data-reader``'s ``TRCData.save`` (the header keys, markers and per-frame rows it
    holds), and the plate's ``.mot`` by ``numpy.savetxt`` (the library has no MOT writer);
  - nwb: pynwb + ndx-pose as its multi-camera example: one ``PoseEstimation`` per camera view
    (one ``PoseEstimationSeries`` per marker, the first with the timestamps, the others linking
    them), the 3-D points in a ``MultiCameraPoseEstimation`` holding the views, the plate as a
    ``TimeSeries``;
  - video: ``cv2.VideoWriter`` with the same fourcc and size writing every frame of each camera as
    ``cv2.VideoCapture`` decodes it, with nothing drawn. Decoding is timed on both sides.

  The ratio is labrig_s / peer_s (target <= 1.5).

``--profile``: cProfile of Labrig's writer of each format whose ratio misses the target, its top
entries. The last line is ``export_ratios csv=… c3d=… trc=… nwb=… video=… worst=…``.
"""

from __future__ import annotations

import argparse
import cProfile
import csv
import io
import json
import math
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from labrig.bootstrap import Services, bootstrap  # noqa: E402
from labrig.export import documents as docs  # noqa: E402
from labrig.export.interchange import FORMATS  # noqa: E402
from labrig.export.result_tables import result_tables  # noqa: E402
from labrig.export.snapshot import select_results, snapshot  # noqa: E402
from labrig.export.tables import ResultTables  # noqa: E402
from labrig.review.player import ResultMedia, result_media  # noqa: E402
from labrig.review.revisions import RevisionService  # noqa: E402
from labrig.store import BlobStore, open_store  # noqa: E402

TARGET_RATIO = 1.5
FULL_FRAMES, QUICK_FRAMES = 1800, 300  # 60 s and 10 s at 30 fps
MARK = "bench-export.json"  # in --store DIR: the result recorded there


# -- the result -----------------------------------------------------------------------------------


@dataclass
class Bench:
    services: Services
    result_id: str
    frames: int


def open_result(root: Path, frames: int) -> Bench:
    """The store in ``root`` with a published plate-rig result of ``frames`` frames: reused when
    ``root`` already holds one (:data:`MARK`), else recorded, analysed and published there."""
    mark = root / MARK
    if mark.exists():
        saved = json.loads(mark.read_text())
        if saved["frames"] == frames:
            store = open_store(root / "store")
            print(f"reusing result {saved['result_id']} ({frames} frames) in {root}", flush=True)
            return Bench(bootstrap(store=store), saved["result_id"], frames)
        raise SystemExit(f"{root} holds a result of {saved['frames']} frames, not {frames}")
    import tests.support.rig_results as rig_results

    root.mkdir(parents=True, exist_ok=True)
    store = open_store(root / "store")
    started = time.perf_counter()
    rig = rig_results.record_plate_rig_result(store, frames=frames)
    print(
        f"recorded, analysed and published result {rig.result_id} ({frames} frames x 4 cameras "
        f"+ plate) in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    mark.write_text(json.dumps({"result_id": rig.result_id, "frames": frames}))
    return Bench(rig.services, rig.result_id, frames)


def read_sources(services: Services, result_id: str) -> tuple[ResultTables, ResultMedia]:
    """The result's tables and media, read as ``ExportService._sources`` reads them."""
    store = services.store
    with store.read() as session:
        [row] = select_results(session, [result_id], False)
        snap = snapshot(session, row, store, BlobStore(store.media_dir))
    media = result_media(store, RevisionService(store, services.export.access), result_id)
    tables = result_tables(store, snap, media, docs.format_provenance(snap))
    assert tables is not None, "the result has no tracked markers"
    return tables, media


# -- Labrig's writers, on the tables read once ----------------------------------------------------


def labrig_writer(fmt: str, tables: ResultTables, media: ResultMedia) -> Callable[[Path], None]:
    """Labrig's writer of ``fmt`` as the export calls it (``interchange.write_formats``), into a
    folder."""
    if fmt == "csv":
        from labrig.export.formats.tidy_csv import tidy_csv

        return lambda out: (out / "markers-tidy.csv").write_bytes(tidy_csv(tables))  # type: ignore[return-value]
    if fmt == "c3d":
        from labrig.export.formats.c3d import write_c3d

        return lambda out: write_c3d(tables, out / "markers.c3d")
    if fmt == "trc":
        from labrig.export.formats.opensim import write_mot, write_trc

        def trc(out: Path) -> None:
            write_trc(tables, out / "markers.trc")
            for analog in tables.analog:
                write_mot(analog, out / f"{analog.name}.mot")

        return trc
    if fmt == "nwb":
        from labrig.export.formats.nwb import write_nwb

        now = datetime.now(UTC)
        return lambda out: write_nwb(tables, out / "result.nwb", exported_at=now)
    if fmt == "video":
        from labrig.export.formats.overlay_video import video_codec, write_overlay_video

        fourcc, ext = video_codec()

        def video(out: Path) -> None:
            for k, camera in enumerate(tables.cameras):
                path = out / f"{camera.name}-overlay{ext}"
                write_overlay_video(media, k, path, fourcc, step=lambda _n, _t: None)

        return video
    raise ValueError(fmt)


# -- the peers: each format's library alone, on the same arrays -----------------------------------


def _xyz(grid: np.ndarray, rows: int) -> np.ndarray:
    """N×M×D positions as (N·M)×3 (NaN for a missing z)."""
    flat = grid.reshape(rows, -1)
    pad = np.full((rows, 3 - flat.shape[1]), np.nan)
    return np.hstack([flat, pad]) if pad.shape[1] else flat


def peer_csv(tables: ResultTables, out: Path) -> None:
    """The same rows (view, camera, frame, time, marker, track id, units, automatic and in-force
    x/y/z, corrected, filled, residual) by ``csv.writer``: columns built with numpy, no per-cell
    formatting."""
    from labrig.export.formats.tidy_csv import COLUMNS

    points = tables.points
    blocks = [(points, points.kind)] + [
        (v, "image")
        for v in tables.views
        if not (points.kind == "image" and v.camera == points.camera)
    ]
    with open(out / "markers-tidy.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(COLUMNS)
        for table, view in blocks:
            n, m = table.automatic.shape[:2]
            rows = n * m

            auto, force = _xyz(table.automatic, rows), _xyz(table.in_force, rows)
            same = ((np.isnan(auto) & np.isnan(force)) | (auto == force)).all(axis=1)
            filled = np.zeros(rows, bool) if table.filled is None else table.filled.reshape(rows)
            residual = (
                np.full(rows, np.nan)
                if table.residual_px is None
                else table.residual_px.reshape(rows)
            )
            columns = [
                [view] * rows,
                [table.camera or ""] * rows,
                np.repeat(table.frames, m).tolist(),
                np.repeat(table.times_s, m).tolist(),
                [mk.label for mk in table.markers] * n,
                [str(mk.track_id) for mk in table.markers] * n,
                [table.units] * rows,
                *(auto[:, d].tolist() for d in range(3)),
                *(force[:, d].tolist() for d in range(3)),
                (~same).astype(np.int8).tolist(),
                filled.astype(np.int8).tolist(),
                residual.tolist(),
            ]
            writer.writerows(zip(*columns, strict=True))


def peer_c3d(tables: ResultTables, out: Path) -> None:
    """ezc3d as its README writes a file: ``POINT`` rate and labels, ``data['points']`` (4×M×N,
    the homogeneous row of ones), the instrument's channels as ``data['analogs']`` (1×C×S) at the
    same whole number of samples per frame as Labrig's (the samples as recorded, not resampled:
    truncated or padded with 0), then ``write``."""
    import ezc3d  # type: ignore[import-untyped]

    points = tables.points
    n, m = points.in_force.shape[:2]
    c3d = ezc3d.c3d()
    c3d["parameters"]["POINT"]["RATE"]["value"] = [points.rate_hz]
    c3d["parameters"]["POINT"]["LABELS"]["value"] = [mk.label for mk in points.markers]
    data = np.ones((4, m, n))
    data[:3] = np.transpose(points.in_force, (2, 1, 0))
    c3d["data"]["points"] = data
    if tables.analog:
        # C3D's analog rate is a whole multiple of the frame rate: the same one as Labrig's
        per_frame = max(1, math.ceil(tables.analog[0].rate_hz / points.rate_hz - 1e-9))
        values = np.hstack([a.values for a in tables.analog])  # S×C, as recorded
        samples = np.zeros((n * per_frame, values.shape[1]))
        take = min(len(values), len(samples))
        samples[:take] = values[:take]
        c3d["parameters"]["ANALOG"]["RATE"]["value"] = [points.rate_hz * per_frame]
        c3d["parameters"]["ANALOG"]["LABELS"]["value"] = [
            f"{a.name[:8]}_{c.name}"[:16] for a in tables.analog for c in a.channels
        ]
        c3d["parameters"]["ANALOG"]["UNITS"]["value"] = [
            c.unit for a in tables.analog for c in a.channels
        ]
        c3d["data"]["analogs"] = samples.T[np.newaxis]
    c3d.write(str(out / "markers.c3d"))


def peer_trc(tables: ResultTables, out: Path) -> None:
    """trc-data-reader's ``TRCData.save`` (its header keys, markers and one row per frame, with
    OpenSim's trailing tab); each instrument's ``.mot`` by ``numpy.savetxt`` (the library writes
    no MOT)."""
    from trc import TRCData  # type: ignore[import-untyped]

    points = tables.points
    xyz = np.asarray(points.in_force, dtype=np.float64)
    n, m = xyz.shape[:2]
    data = TRCData()
    data.update(
        PathFileType=4,
        DataFormat="X/Y/Z",
        FileName="markers.trc",
        DataRate=points.rate_hz,
        CameraRate=points.rate_hz,
        NumFrames=n,
        NumMarkers=m,
        Units=points.units,
        OrigDataRate=points.rate_hz,
        OrigDataStartFrame=1,
        OrigNumFrames=n,
        Markers=[mk.label for mk in points.markers],
    )
    data["Frame#"] = list(range(1, n + 1))
    for frame, t, row in zip(data["Frame#"], points.times_s.tolist(), xyz.tolist(), strict=True):
        data[frame] = (t, row)
    data.save(str(out / "markers.trc"), add_trailing_tab=True)
    for analog in tables.analog:
        header = "\n".join(
            [
                analog.name,
                "version=1",
                f"nRows={len(analog.times_s)}",
                f"nColumns={len(analog.channels) + 1}",
                "inDegrees=no",
                "endheader",
                "\t".join(["time", *(c.name for c in analog.channels)]),
            ]
        )
        np.savetxt(
            out / f"{analog.name}.mot",
            np.column_stack([analog.times_s, analog.values]),
            fmt="%.9g",
            delimiter="\t",
            header=header,
            comments="",
        )


def peer_nwb(tables: ResultTables, out: Path) -> None:
    """pynwb + ndx-pose as the multi-camera example writes them: a ``Device`` per camera, one
    ``Skeleton``, one ``PoseEstimation`` per camera view (a ``PoseEstimationSeries`` per marker, the
    first holding the timestamps and the others linking them), the 3-D points in a
    ``MultiCameraPoseEstimation`` holding the views, each instrument as a ``TimeSeries``."""
    from ndx_pose import (  # type: ignore[import-untyped]
        MultiCameraPoseEstimation,
        PoseEstimation,
        PoseEstimationSeries,
        Skeleton,
        Skeletons,
    )
    from pynwb import NWBHDF5IO, NWBFile, TimeSeries  # type: ignore[import-untyped]

    nwb = NWBFile(
        session_description="bench",
        identifier=tables.result_id,
        session_start_time=datetime.now(UTC),
    )
    devices = {c.device_id: nwb.create_device(name=c.name) for c in tables.cameras}
    points = tables.points
    skeleton = Skeleton(name="markers", nodes=[mk.label for mk in points.markers])
    behavior = nwb.create_processing_module(name="behavior", description="markers")
    behavior.add(Skeletons(skeletons=[skeleton]))

    def series(table: Any, unit: str, frame: str) -> list[Any]:
        out_: list[Any] = []
        for k, marker in enumerate(table.markers):
            out_.append(
                PoseEstimationSeries(
                    name=marker.label,
                    data=table.automatic[:, k, :],
                    unit=unit,
                    reference_frame=frame,
                    timestamps=out_[0] if out_ else table.times_s,
                )
            )
        return out_

    views = [
        PoseEstimation(
            name=next(c.name for c in tables.cameras if c.device_id == view.camera),
            pose_estimation_series=series(view, "pixels", "top-left corner"),
            device=devices[view.camera],
            skeleton=skeleton,
        )
        for view in tables.views
    ]
    behavior.add(
        MultiCameraPoseEstimation(
            name="rig",
            pose_estimation_series=series(points, "millimeters", "the rig's world"),
            pose_estimations=views,
            skeleton=skeleton,
        )
    )
    for analog in tables.analog:
        nwb.add_acquisition(
            TimeSeries(name=analog.name, data=analog.values, unit="n.a.", timestamps=analog.times_s)
        )
    with NWBHDF5IO(str(out / "result.nwb"), "w") as nwb_io:
        nwb_io.write(nwb)


def peer_video(media: ResultMedia, out: Path) -> None:
    """Each camera's frames as ``cv2.VideoCapture`` decodes them (segment after segment), written
    by ``cv2.VideoWriter`` with the same fourcc, size and rate; nothing drawn."""
    import cv2

    from labrig.export.formats.overlay_video import video_codec

    fourcc, ext = video_codec()
    for k, capture in enumerate(media.media):
        writer = None
        for segment in capture.segments:
            reader = cv2.VideoCapture(str(segment))
            while True:
                ok, frame = reader.read()
                if not ok:
                    break
                if writer is None:
                    size = (frame.shape[1], frame.shape[0])
                    path = str(out / f"camera{k}{ext}")
                    writer = cv2.VideoWriter(
                        path, cv2.VideoWriter.fourcc(*fourcc), capture.fps, size
                    )
                writer.write(frame)
            reader.release()
        if writer is not None:
            writer.release()


def peer_writer(fmt: str, tables: ResultTables, media: ResultMedia) -> Callable[[Path], None]:
    if fmt == "video":
        return lambda out: peer_video(media, out)
    peer = {"csv": peer_csv, "c3d": peer_c3d, "trc": peer_trc, "nwb": peer_nwb}[fmt]
    return lambda out: peer(tables, out)


PEERS = {
    "csv": "csv.writer.writerows, columns by numpy",
    "c3d": "ezc3d.c3d().write",
    "trc": "trc-data-reader TRCData.save + numpy.savetxt (.mot)",
    "nwb": "pynwb + ndx-pose, minimal multi-camera",
    "video": "cv2.VideoCapture -> cv2.VideoWriter, nothing drawn, decoding included",
}


# -- timing ---------------------------------------------------------------------------------------


def timed(write: Callable[[Path], None], scratch: Path, min_s: float = 1.0) -> float:
    """Seconds ``write`` takes into an empty folder (removed after; the disk synced before each
    call), averaged over as many calls as fill ``min_s``: one for a writer of a second or more,
    tens for one of a few ms, whose single calls the scheduler would make noise of."""
    total, calls = 0.0, 0
    while calls == 0 or total < min_s:
        out = Path(tempfile.mkdtemp(dir=scratch))
        os.sync()
        started = time.perf_counter()
        write(out)
        total += time.perf_counter() - started
        calls += 1
        shutil.rmtree(out)
    return total / calls


def service_call(bench: Bench, formats: Sequence[str], scratch: Path) -> float:
    """Seconds of ``ExportService.export([result], …, formats=formats)``: ``labrig export
    --format …`` without the command line."""

    def export(out: Path) -> None:
        bench.services.export.export([bench.result_id], out, formats=tuple(formats))

    return timed(export, scratch)


def profile(write: Callable[[Path], None], scratch: Path, top: int = 18) -> str:
    out = Path(tempfile.mkdtemp(dir=scratch))
    profiler = cProfile.Profile()
    profiler.enable()
    write(out)
    profiler.disable()
    shutil.rmtree(out)
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return text.getvalue()


@dataclass
class Row:
    fmt: str
    labrig: list[float]
    peer: list[float]
    service: list[float]

    @property
    def ratio(self) -> float:
        return statistics.median(self.labrig) / statistics.median(self.peer)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 s (300 frames) instead of 60 s")
    parser.add_argument("--store", type=Path, help="keep (and reuse) the recorded store here")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement")
    parser.add_argument("--formats", default=",".join(FORMATS), help="the formats to measure")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the writers that miss the target"
    )
    args = parser.parse_args()
    frames = QUICK_FRAMES if args.quick else FULL_FRAMES
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    unknown = set(formats) - set(FORMATS)
    if unknown:
        raise SystemExit(f"unknown formats: {', '.join(sorted(unknown))}")
    scratch = Path(tempfile.mkdtemp(prefix="labrig-bench-export-"))
    root = args.store or scratch / "result"
    began = time.perf_counter()
    try:
        bench = open_result(root, frames)
        try:
            rows = run(bench, formats, args.repeat, scratch, args.profile)
        finally:
            bench.services.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    worst = max((r.ratio for r in rows), default=float("nan"))
    ratios = " ".join(f"{r.fmt}={r.ratio:.2f}" for r in rows)
    missed = [r.fmt for r in rows if r.ratio > TARGET_RATIO]
    print(f"total {time.perf_counter() - began:.0f} s")
    if missed:
        print(f"MISSED: ratio > {TARGET_RATIO} for {', '.join(missed)}")
    print(f"export_ratios {ratios} worst={worst:.2f}")


def run(
    bench: Bench, formats: list[str], repeat: int, scratch: Path, want_profile: bool
) -> list[Row]:
    started = time.perf_counter()
    tables, media = read_sources(bench.services, bench.result_id)
    read_s = time.perf_counter() - started
    points = tables.points
    frames = sum(c.frame_count for c in tables.cameras)
    plates = ", ".join(
        f"{a.name} {a.values.shape[0]}x{a.values.shape[1]} @ {a.rate_hz:g} Hz"
        for a in tables.analog
    )
    print(
        f"result {bench.result_id}: {points.kind} points {points.automatic.shape[0]} instants x "
        f"{len(points.markers)} markers ({points.units}), {len(tables.views)} views, "
        f"{frames} camera frames, instruments "
        f"{plates}; "
        f"snapshot + tables read in {read_s:.2f} s",
        flush=True,
    )
    if "video" in formats:
        from labrig.export.formats.overlay_video import video_codec

        print(f"video codec: {video_codec()}", flush=True)
    for fmt in formats:  # warm: the format's library imported, its caches filled
        if fmt != "video":  # long enough to need none
            timed(labrig_writer(fmt, tables, media), scratch, 0.0)
            timed(peer_writer(fmt, tables, media), scratch, 0.0)
    bundle = [service_call(bench, (), scratch) for _ in range(repeat)]
    print(
        f"format=bundle service_s={statistics.median(bundle):.3f} "
        f"(the files every export writes, no interchange format; runs "
        f"{' '.join(f'{s:.3f}' for s in bundle)})",
        flush=True,
    )
    rows = []
    for fmt in formats:
        mine, peer = labrig_writer(fmt, tables, media), peer_writer(fmt, tables, media)
        row = Row(fmt, [], [], [])
        for k in range(repeat):  # alternating which goes first
            first, second = (mine, peer) if k % 2 == 0 else (peer, mine)
            a, b = timed(first, scratch), timed(second, scratch)
            row.labrig.append(a if k % 2 == 0 else b)
            row.peer.append(b if k % 2 == 0 else a)
        row.service = [service_call(bench, (fmt,), scratch) for _ in range(repeat)]
        rows.append(row)
        med = statistics.median
        print(
            f"format={fmt} labrig_s={med(row.labrig):.3f} service_s={med(row.service):.3f} "
            f"peer_s={med(row.peer):.3f} ratio={row.ratio:.2f} "
            f"target<={TARGET_RATIO} {'met' if row.ratio <= TARGET_RATIO else 'MISSED'} "
            f"(peer: {PEERS[fmt]}; runs labrig {' '.join(f'{s:.3f}' for s in row.labrig)}, "
            f"peer {' '.join(f'{s:.3f}' for s in row.peer)}, "
            f"service {' '.join(f'{s:.3f}' for s in row.service)})",
            flush=True,
        )
        if want_profile and row.ratio > TARGET_RATIO:
            print(f"--- profile of Labrig's {fmt} writer ---")
            print(profile(mine, scratch), flush=True)
    return rows


if __name__ == "__main__":
    main()
