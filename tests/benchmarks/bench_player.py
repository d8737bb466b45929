"""Player benchmark: showing an arbitrary frame of a committed recording, and the next one, beside
OpenCV decoding up to that frame; and recomputing a result after one correction.

    .venv/bin/python tests/benchmarks/bench_player.py [--quick]

- **recording**: the virtual camera's markers scene, 1280x720 at 30 fps, each frame's index drawn
  in its corner (``tag_frames``), written by the recording sink (``SegmentSink``: MJPEG AVI in 10 s
  segments, as a recording is committed): 60 s (``--quick`` 20 s).
- two recordings: the scene as drawn (mostly black: a few kB a JPEG), and the same frames under a
  fixed grainy texture, as large as a real camera's JPEGs; the targets are read on the second.
- **seek** (ours): ``FrameReader.frame(k)`` for random k, the reader opened once; every frame shown
  is checked to be frame k by the index in its pixels. **Peer**: OpenCV as a player written
  without an index would do it, ``cv2.VideoCapture`` on the segment holding k, ``grab()`` up to k,
  then ``read()``: the only way OpenCV lands on k for sure. Also printed, not a target: OpenCV's
  ``CAP_PROP_POS_FRAMES`` seek, how long it takes and how often it lands on another frame.
- **next frame**: ``frame(k + 1)`` after ``frame(k)``, through the whole recording.
- **recompute**: the effective tracks and kinematics after one correction (a marker moved at one
  frame) of the recording's 6 tracked markers, 60 s each (``review.effective.effective_tracks``,
  what ``labrig review show`` recomputes; the catalog reads around it are not timed).

Targets: seek p99 <= 50 ms; next frame p99 <= 16 ms; recompute <= 1 s. The last line is
``seek_p99_ms=… next_p99_ms=… seek_vs_sequential=… recompute_s=…`` (seek_vs_sequential: the
peer's median over ours).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

from labrig.capture.frame_access import FrameReader  # noqa: E402
from labrig.capture.frame_tags import read_frame_tag, write_frame_tag  # noqa: E402
from labrig.capture.manifest import SegmentV1  # noqa: E402
from labrig.capture.media import CaptureMedia  # noqa: E402
from labrig.capture.sink import SegmentSink  # noqa: E402
from labrig.capture.sources import Mode  # noqa: E402
from labrig.capture.virtual import VirtualCamera  # noqa: E402
from labrig.domain.corrections import Track, parse_operation  # noqa: E402
from labrig.review.effective import TrackedInput, effective_tracks  # noqa: E402

MODE = Mode(1280, 720, 30.0)
PERIOD_NS = round(1e9 / MODE.fps)
SEEK_P99_MS, NEXT_P99_MS, RECOMPUTE_S = 50.0, 16.0, 1.0


def record(folder: Path, frames: int, textured: bool) -> tuple[list[Path], list[dict]]:
    """The recording, and the scene's true marker positions (px) at each frame. ``textured``: a
    fixed grainy texture over the whole picture, so each JPEG is as large as a real camera's
    (the markers scene alone is mostly black and compresses to a few kB)."""
    camera = VirtualCamera("markers", paced=False, tag_frames=True)
    camera.open(MODE)
    texture = np.random.default_rng(3).integers(0, 90, (MODE.height, MODE.width, 3), np.uint8)
    closed: list[SegmentV1] = []
    sink = SegmentSink(folder, MODE, 10.0, lambda s, _n: closed.append(s))
    sink.setup()
    truth = []
    for n in range(frames):
        img = camera.render(n)
        if textured:
            img = cv2.add(img, texture)
            write_frame_tag(img, n)
        sink.append(img, n * PERIOD_NS, n * PERIOD_NS)
        truth.append(camera.truth(n))
    sink.close()
    return [folder / s.name for s in closed], truth


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def opencv_sequential(paths: list[Path], per_segment: int, k: int) -> tuple[float, int]:
    """Open the segment holding ``k``, grab up to it, read it: seconds, and the frame shown."""
    started = time.perf_counter()
    cap = cv2.VideoCapture(str(paths[k // per_segment]))
    for _ in range(k % per_segment):
        cap.grab()
    ok, frame = cap.read()
    cap.release()
    return time.perf_counter() - started, read_frame_tag(frame) if ok else -1


def opencv_pos_frames(paths: list[Path], per_segment: int, k: int) -> tuple[float, int]:
    started = time.perf_counter()
    cap = cv2.VideoCapture(str(paths[k // per_segment]))
    cap.set(cv2.CAP_PROP_POS_FRAMES, k % per_segment)
    ok, frame = cap.read()
    cap.release()
    return time.perf_counter() - started, read_frame_tag(frame) if ok else -1


def measure(
    frames: int, seeks: int, peer_seeks: int, textured: bool, rng: np.random.Generator
) -> dict[str, Any]:
    """Seek and step through one recording, ours and OpenCV's; print and return the figures."""
    ms = 1000.0
    with tempfile.TemporaryDirectory(prefix="labrig-bench-player-") as tmp:
        started = time.perf_counter()
        paths, truth = record(Path(tmp), frames, textured)
        size = sum(p.stat().st_size for p in paths) / frames / 1000
        kind = "textured frames" if textured else "the markers scene"
        print(
            f"\n== {kind}: {frames} frames {MODE.label()}, {size:.0f} kB a frame, {len(paths)} "
            f"MJPEG segments written by the sink in {time.perf_counter() - started:.0f} s",
            flush=True,
        )
        media = CaptureMedia(
            "bench",
            "virtual:markers",
            {"fps": MODE.fps},
            frames,
            0,
            tuple(paths),
            (None,) * len(paths),
        )
        per_segment = round(10.0 * MODE.fps)
        reader = FrameReader(media)
        assert reader.frame_count == frames, (reader.frame_count, frames)
        reader.frame(0)  # files opened, the decoder warm
        ours, wrong = [], 0
        for k in rng.integers(0, frames, seeks):
            t0 = time.perf_counter()
            image = reader.frame(int(k))
            ours.append(time.perf_counter() - t0)
            wrong += read_frame_tag(image) != k
        nexts = []
        for k in range(frames - 1):
            t0 = time.perf_counter()
            image = reader.frame(k + 1)
            nexts.append(time.perf_counter() - t0)
            wrong += read_frame_tag(image) != k + 1
        reader.close()
        peer, peer_wrong, pos, pos_wrong = [], 0, [], 0
        for k in rng.integers(0, frames, peer_seeks):
            s, shown = opencv_sequential(paths, per_segment, int(k))
            peer.append(s)
            peer_wrong += shown != k
            s, shown = opencv_pos_frames(paths, per_segment, int(k))
            pos.append(s)
            pos_wrong += shown != k
    seek_p99, next_p99 = percentile(ours, 99) * ms, percentile(nexts, 99) * ms
    print(
        f"seek, ours (FrameReader.frame, {seeks} random frames): median "
        f"{statistics.median(ours) * ms:.1f} ms, p99 {seek_p99:.1f} ms; frames shown that were "
        f"not the frame asked for: {wrong} (of {seeks + frames - 1}, seeks and steps)"
    )
    print(
        f"seek, OpenCV sequential (open the segment, grab to k, read; {peer_seeks} random frames): "
        f"median {statistics.median(peer) * ms:.1f} ms, p99 {percentile(peer, 99) * ms:.1f} ms; "
        f"wrong frames {peer_wrong}"
    )
    print(
        f"  (not a target) OpenCV CAP_PROP_POS_FRAMES: median {statistics.median(pos) * ms:.1f} "
        f"ms, p99 {percentile(pos, 99) * ms:.1f} ms; landed on another frame {pos_wrong} of "
        f"{peer_seeks} times"
    )
    print(
        f"next frame, ours ({frames - 1} steps): median {statistics.median(nexts) * ms:.1f} ms, "
        f"p99 {next_p99:.1f} ms",
        flush=True,
    )
    return {
        "truth": truth,
        "seek_p99": seek_p99,
        "next_p99": next_p99,
        "ratio": statistics.median(peer) / statistics.median(ours),
        "wrong": wrong,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 s of recording, fewer seeks")
    args = parser.parse_args()
    seconds = 20 if args.quick else 60
    frames = int(seconds * MODE.fps)
    seeks, peer_seeks = (100, 20) if args.quick else (400, 60)
    rng = np.random.default_rng(7)
    figures = {textured: measure(frames, seeks, peer_seeks, textured, rng) for textured in (0, 1)}
    truth = figures[0]["truth"]
    seek_p99, next_p99 = figures[1]["seek_p99"], figures[1]["next_p99"]
    ratio, wrong = figures[1]["ratio"], figures[0]["wrong"] + figures[1]["wrong"]

    # one correction recomputed: the scene's markers as tracks of the whole recording
    names = [m["name"] for m in truth[0]["markers"]]
    xy = np.array([[m["image_px"] for m in t["markers"]] for t in truth])  # frames x markers x 2
    tracks = {str(i): Track(np.arange(frames), xy[:, i, :].copy()) for i in range(len(names))}
    extra = {  # six markers, as the benchmark's markers scene of a rig shows
        str(len(names) + i): Track(np.arange(frames), xy[:, i, :] + 40.0)
        for i in range(6 - len(names))
    }
    tracks |= extra
    source = TrackedInput(
        tracks,
        {n: int(n) for n in tracks},
        dict.fromkeys(tracks),
        np.arange(frames) / MODE.fps,
        MODE.fps,
        None,
        0.25,
    )
    operation = parse_operation("move", f"0@{frames // 2}=640,360")
    effective_tracks(source, [operation])  # warm
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        effective_tracks(source, [operation])
        runs.append(time.perf_counter() - t0)
    recompute = statistics.median(runs)
    print(
        f"recompute after one correction ({len(tracks)} tracks x {frames} frames, median of 5): "
        f"{recompute:.3f} s"
    )
    misses = [
        text
        for ok, text in (
            (seek_p99 <= SEEK_P99_MS, f"seek p99 {seek_p99:.1f} ms > {SEEK_P99_MS:g} ms"),
            (next_p99 <= NEXT_P99_MS, f"next frame p99 {next_p99:.1f} ms > {NEXT_P99_MS:g} ms"),
            (recompute <= RECOMPUTE_S, f"recompute {recompute:.2f} s > {RECOMPUTE_S:g} s"),
            (wrong == 0, f"{wrong} frames shown were not the frame asked for"),
        )
        if not ok
    ]
    for text in misses:
        print(f"MISSED: {text}")
    if not misses:
        print("every target met")
    print(
        f"seek_p99_ms={seek_p99:.1f} next_p99_ms={next_p99:.1f} seek_vs_sequential={ratio:.1f} "
        f"recompute_s={recompute:.3f}"
    )


if __name__ == "__main__":
    main()
