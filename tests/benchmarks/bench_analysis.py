"""Analysis benchmark: the tracking stage against a bare OpenCV decode loop, calibration against a
plain OpenCV script.

    .venv/bin/python tests/benchmarks/bench_analysis.py [--quick] [--frames N]

Two figures, each beside a peer measured in the same run (alternating order, medians):
- tracking: frames/s of the tracking stage's work, ``track(iter_luma(path))`` (decode to the grey
  plane + marker detection + linking), on an MJPG AVI of the virtual camera's markers scene
  (1280x720, quality 90) against a plain ``while cap.read()[0]`` BGR loop on the same file (target
  ratio >= 0.8). A second peer, a plain loop decoding the same file to grey as the stage's reader
  does (raw MJPG packets, ``cv2.imdecode(..., IMREAD_GRAYSCALE)``), is timed in the same rounds and
  printed beside it: what detection and linking cost on top of the decode they need;
- calibration: ``calibrate_views`` on 20 views of the virtual board at 640x480 (detection,
  sub-pixel refinement, solve, reject-and-resolve, quality checks) against what a lab would write:
  ``findChessboardCorners`` + ``cornerSubPix`` per view, then one ``calibrateCamera`` (target ratio
  <= 1.2). The focal length of both is printed beside the truth (fx = 500 px at 640x480).
The last two lines are ``ratio_calibration=Y`` and ``ratio_vs_decode=X``.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

import labrig.calibration.camera as calibration  # noqa: E402
from labrig.calibration.boards import _CLASSIC, Board, parse_board  # noqa: E402
from labrig.calibration.camera import View, calibrate, calibrate_views, detect_views  # noqa: E402
from labrig.capture.media import iter_luma  # noqa: E402
from labrig.capture.sources import Mode  # noqa: E402
from labrig.capture.virtual import VirtualCamera  # noqa: E402
from labrig.pipeline.tracking import detect_markers, track  # noqa: E402

VIDEO_MODE = Mode(1280, 720, 60.0)
BOARD_MODE = Mode(640, 480, 30.0)
BOARD_SPEC = "chessboard:9x6:25"
TRUE_FX = 1000.0 * 640 / 1280
VIEWS, VIEW_EVERY = 20, 30
DETECT_SAMPLE = 60  # frames held in memory to time detection alone


def write_video(path: Path, count: int, api: int) -> tuple[float, bool]:
    """Render ``count`` markers frames into an MJPG AVI asking for quality 90; (size in MB,
    quality honoured)."""
    camera = VirtualCamera("markers", paced=False)
    camera.open(VIDEO_MODE)
    writer = cv2.VideoWriter(
        str(path),
        api,
        cv2.VideoWriter_fourcc(*"MJPG"),
        VIDEO_MODE.fps,
        (VIDEO_MODE.width, VIDEO_MODE.height),
    )
    honoured = bool(writer.set(cv2.VIDEOWRITER_PROP_QUALITY, 90))
    for i in range(count):
        writer.write(camera.render(i))
    writer.release()
    return path.stat().st_size / 1e6, honoured


@contextmanager
def warnings_silenced() -> Iterator[None]:
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
    try:
        yield
    finally:
        cv2.utils.logging.setLogLevel(level)


def decode_fps(path: Path) -> tuple[float, int]:
    started = time.perf_counter()
    cap = cv2.VideoCapture(str(path))
    n = 0
    while cap.read()[0]:
        n += 1
    cap.release()
    return n / (time.perf_counter() - started), n


def grey_decode_fps(path: Path) -> float:
    """The second peer: a plain loop decoding to grey, as fast as the stage's reader (MJPG packets
    → libjpeg-turbo)."""
    started = time.perf_counter()
    cap = cv2.VideoCapture(str(path))
    cap.set(cv2.CAP_PROP_FORMAT, -1)
    n = 0
    while True:
        ok, packet = cap.read()
        if not ok:
            break
        cv2.imdecode(packet, cv2.IMREAD_GRAYSCALE)
        n += 1
    cap.release()
    return n / (time.perf_counter() - started)


def tracking_fps(path: Path, count: int) -> tuple[float, Any]:
    """The tracking stage's work on one file, as ``stages._tracking`` does it: luma
    frames into ``track``."""
    started = time.perf_counter()
    result = track(iter_luma(path), total_frames=count)
    return result.frames_processed / (time.perf_counter() - started), result


def detect_ms(path: Path) -> float:
    """Mean ms of ``detect_markers`` alone per frame, on the first DETECT_SAMPLE frames (grey, as
    the stage reads)."""
    held = list(itertools.islice(iter_luma(path), DETECT_SAMPLE))
    started = time.perf_counter()
    for frame in held:
        detect_markers(frame)
    return (time.perf_counter() - started) * 1e3 / max(len(held), 1)


def board_views() -> list[View]:
    camera = VirtualCamera("board", paced=False)
    camera.open(BOARD_MODE)
    return [View(f"board#{i * VIEW_EVERY}", camera.render(i * VIEW_EVERY)) for i in range(VIEWS)]


def plain_detect(views: list[View], board: Board) -> tuple[list[Any], list[Any]]:
    """The lab script's detection: findChessboardCorners (default flags), cornerSubPix 11x11
    (the tutorial's)."""
    grid = board.corner_grid
    objp = board.object_points().astype(np.float32)
    objs, imgs = [], []
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.001)
    for view in views:
        gray = cv2.cvtColor(view.image, cv2.COLOR_BGR2GRAY)
        ok, corners = cv2.findChessboardCorners(gray, grid, None)
        if ok:
            imgs.append(cv2.cornerSubPix(gray, corners, (11, 11), (-1, -1), criteria))
            objs.append(objp)
    return objs, imgs


def plain_solve(objs: list[Any], imgs: list[Any], size: tuple[int, int]) -> tuple[float, Any]:
    rms, k, _, _, _ = cv2.calibrateCamera(objs, imgs, size, None, None)
    return float(rms), k


def plain_calibration(views: list[View], board: Board) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    objs, imgs = plain_detect(views, board)
    rms, k = plain_solve(objs, imgs, (views[0].image.shape[1], views[0].image.shape[0]))
    return time.perf_counter() - started, {
        "rms": rms,
        "fx": float(k[0, 0]),
        "fy": float(k[1, 1]),
        "views": len(objs),
    }


def labrig_calibration(views: list[View], board: Board) -> tuple[float, Any]:
    started = time.perf_counter()
    result = calibrate_views(views, board)
    return time.perf_counter() - started, result


def calibration_split(views: list[View], board: Board) -> dict[str, float]:
    """Seconds of detection and of the solve, each side, timed apart (one untimed-peer pass
    each)."""
    size = (views[0].image.shape[1], views[0].image.shape[0])
    t0 = time.perf_counter()
    detections, skipped, _ = detect_views(views, board)
    t1 = time.perf_counter()
    calibrate(detections, size, board, skipped=skipped)
    t2 = time.perf_counter()
    objs, imgs = plain_detect(views, board)
    t3 = time.perf_counter()
    plain_solve(objs, imgs, size)
    t4 = time.perf_counter()
    return {
        "labrig_detect": t1 - t0,
        "labrig_solve": t2 - t1,
        "plain_detect": t3 - t2,
        "plain_solve": t4 - t3,
    }


def labrig_path(views: list[View], board: Board) -> dict[str, int]:
    """How Labrig got there: views needing the sector-based fallback detector, and solves run."""
    grid = board.corner_grid
    fallback = sum(
        not cv2.findChessboardCorners(
            cv2.cvtColor(v.image, cv2.COLOR_BGR2GRAY), grid, flags=_CLASSIC
        )[0]
        for v in views
    )
    solves = 0
    real: Callable[..., Any] = calibration._solve

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal solves
        solves += 1
        return real(*args, **kwargs)

    calibration._solve = counted  # type: ignore[assignment]
    try:
        calibrate_views(views, board)
    finally:
        calibration._solve = real  # type: ignore[assignment]
    return {"fallback": fallback, "solves": solves}


def alternate(rounds: int, *sides: Callable[[], float]) -> tuple[list[float], ...]:
    """Each side's figure per round, the sides in the given order in even rounds and
    reversed in odd ones."""
    out: list[list[float]] = [[] for _ in sides]
    for r in range(rounds):
        order = range(len(sides) - 1, -1, -1) if r % 2 else range(len(sides))
        for i in order:
            out[i].append(sides[i]())
    return tuple(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run for CI")
    parser.add_argument(
        "--frames", type=int, default=600, help="frames in the test video (full run)"
    )
    args = parser.parse_args()
    count, rounds, cal_rounds = (150, 1, 3) if args.quick else (args.frames, 3, 5)
    board = parse_board(BOARD_SPEC)
    with tempfile.TemporaryDirectory(prefix="labrig-bench-analysis-") as tmp:
        # the brief's file: OpenCV's built-in MJPEG encoder, which honours quality 90
        video = Path(tmp) / "markers.avi"
        mb, _ = write_video(video, count, cv2.CAP_OPENCV_MJPEG)
        # the file as Labrig's sink writes it (backend chosen by OpenCV, as in capture/sink.py)
        sink_video = Path(tmp) / "markers-sink.avi"
        sink_mb, sink_honoured = write_video(sink_video, count, cv2.CAP_ANY)
        with warnings_silenced():
            sink_backend = cv2.VideoWriter(
                str(Path(tmp) / "probe.avi"), cv2.VideoWriter_fourcc(*"MJPG"), 1.0, (16, 16)
            ).getBackendName()
        decode_fps(video)  # warm the page cache and the codec before either side is timed
        results: list[Any] = []
        decoded: list[int] = []

        def ours() -> float:
            fps, result = tracking_fps(video, count)
            results.append(result)
            return fps

        def peer() -> float:
            fps, n = decode_fps(video)
            decoded.append(n)
            return fps

        trk, dec, grey_dec = alternate(rounds, ours, peer, lambda: grey_decode_fps(video))
        det_ms = detect_ms(video)
        decode_fps(sink_video)
        sink_trk, sink_dec = alternate(
            rounds, lambda: tracking_fps(sink_video, count)[0], lambda: decode_fps(sink_video)[0]
        )

    views = board_views()
    plain_info: dict[str, Any] = {}
    lab_results: list[Any] = []

    def lab_cal() -> float:
        seconds, result = labrig_calibration(views, board)
        lab_results.append(result)
        return seconds

    def plain_cal() -> float:
        seconds, info = plain_calibration(views, board)
        plain_info.update(info)
        return seconds

    lab_s, plain_s = alternate(cal_rounds, lab_cal, plain_cal)
    split = calibration_split(views, board)
    path = labrig_path(views, board)

    trk_fps, dec_fps = statistics.median(trk), statistics.median(dec)
    ratio_decode = trk_fps / dec_fps
    ratio_cal = statistics.median(lab_s) / statistics.median(plain_s)
    tr = results[-1]
    lab = lab_results[-1]
    per_frame_track, per_frame_decode = 1e3 / trk_fps, 1e3 / dec_fps
    print(
        f"video: {count} frames of the markers scene, 1280x720 MJPG q90 (cv2.CAP_OPENCV_MJPEG), "
        f"{mb * 1e3 / count:.0f} kB/frame; {decoded[-1]} frames decode"
    )
    print(
        f"tracking: labrig track(iter_luma) {trk_fps:.0f} fps vs plain cv2.VideoCapture read loop "
        f"(BGR) {dec_fps:.0f} fps (median of {rounds}, alternating); per round track "
        f"{' / '.join(f'{v:.0f}' for v in trk)}, decode {' / '.join(f'{v:.0f}' for v in dec)}"
    )
    grey_fps = statistics.median(grey_dec)
    print(
        "second peer, a plain loop decoding to grey (raw MJPG packets + cv2.imdecode "
        f"IMREAD_GRAYSCALE, the stage's decode alone): {grey_fps:.0f} fps, per round "
        f"{' / '.join(f'{v:.0f}' for v in grey_dec)}; track / grey decode {trk_fps / grey_fps:.2f} "
        "(not the headline)"
    )
    per_frame_grey = 1e3 / grey_fps
    print(
        f"tracking per frame: {per_frame_track:.2f} ms vs BGR decode alone {per_frame_decode:.2f} "
        f"ms and grey decode alone {per_frame_grey:.2f} ms, so detection + linking add "
        f"{per_frame_track - per_frame_grey:.2f} ms; detect_markers timed alone on {DETECT_SAMPLE} "
        f"held grey frames: {det_ms:.2f} ms (separate measurements: on a busy machine they need "
        "not add up)"
    )
    print(
        f"same frames as the sink writes them ({sink_backend} backend, quality 90 "
        f"{'honoured' if sink_honoured else 'IGNORED'}, {sink_mb * 1e3 / count:.0f} kB/frame): "
        f"track {statistics.median(sink_trk):.0f} fps vs decode {statistics.median(sink_dec):.0f} "
        f"fps (ratio {statistics.median(sink_trk) / statistics.median(sink_dec):.2f}, not the "
        "headline)"
    )
    print(
        f"tracking result: {len(tr.tracks)} tracks, {tr.frames_processed} frames, expected markers "
        f"{tr.expected_markers}, {tr.fraction_expected:.1%} of frames with all of them"
    )
    print(
        f"calibration, {VIEWS} views 640x480 ({BOARD_SPEC}): labrig calibrate_views "
        f"{statistics.median(lab_s) * 1e3:.0f} ms vs plain findChessboardCorners + cornerSubPix + "
        f"calibrateCamera {statistics.median(plain_s) * 1e3:.0f} ms (median of {cal_rounds}, "
        "alternating)"
    )
    print(
        f"calibration split (one more pass each): labrig detect {split['labrig_detect'] * 1e3:.0f} "
        f"ms + solve {split['labrig_solve'] * 1e3:.0f} ms; plain detect "
        f"{split['plain_detect'] * 1e3:.0f} ms + solve {split['plain_solve'] * 1e3:.0f} ms"
    )
    print(
        "labrig path: classic findChessboardCorners (adaptive, normalise, fast check) on every "
        f"view, findChessboardCornersSB fallback on {path['fallback']} of {VIEWS}; "
        f"{path['solves']} calibrateCameraExtended solve(s) (single-threaded, FIX_K3, 100 "
        f"iterations), {len(lab.rejected)} view(s) rejected, {len(lab.skipped)} skipped"
    )
    print(
        f"accuracy (true fx = {TRUE_FX:.1f} px): labrig fx {lab.camera_matrix[0, 0]:.2f} px "
        f"({lab.camera_matrix[0, 0] - TRUE_FX:+.2f}), rms {lab.rms_px:.3f} px, {lab.view_count} "
        f"views, valid={lab.valid}; plain fx {plain_info['fx']:.2f} px "
        f"({plain_info['fx'] - TRUE_FX:+.2f}), rms {plain_info['rms']:.3f} px, "
        f"{plain_info['views']} views"
    )
    print(f"ratio_calibration={ratio_cal:.2f}")
    print(f"ratio_vs_decode={ratio_decode:.2f}")


if __name__ == "__main__":
    main()
