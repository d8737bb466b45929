"""Capture benchmark: the virtual camera at 720p60 recorded for real, against raw
OpenCV and sha256sum.

    .venv/bin/python tests/benchmarks/bench_capture.py [--quick] [--seconds N]

Three figures, each beside a peer measured in the same run:
- drops: frames lost while recording 1280x720 at 60 fps for N seconds (target 0);
- writer: frames/s through Labrig's sink (segments, timestamps, fsync and SHA-256 at each
  segment close) against a bare ``cv2.VideoWriter`` loop with the same backend and codec on the
  same frames, alternating order (target ratio >= 0.9);
- commit: time from ``stop()`` to the committed capture against ``sha256sum`` of the same
  media bytes (target ratio <= 1.2).
The last line is ``ratio_vs_raw_writer=X drops=N``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cv2

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

from labrig.capture.devices import DeviceInfo, DeviceKind  # noqa: E402
from labrig.capture.recorder import Recorder  # noqa: E402
from labrig.capture.sink import FOURCC, SegmentSink  # noqa: E402
from labrig.capture.sources import Mode  # noqa: E402
from labrig.capture.virtual import VirtualCamera  # noqa: E402
from labrig.store import open_store  # noqa: E402
from labrig.store.blobs import BlobStore  # noqa: E402

MODE = Mode(1280, 720, 60.0)
DEVICE = DeviceInfo("virtual:markers", DeviceKind.VIRTUAL, "Labrig virtual camera", "markers")


def record(root: Path, seconds: float) -> dict[str, float]:
    store = open_store(root / "store")
    recorder = Recorder(store, VirtualCamera("markers"), DEVICE, MODE, segment_seconds=2.0)
    recorder.start()
    recorder.wait(seconds)
    status = recorder.status()
    stop_started = time.perf_counter()
    result = recorder.stop()
    commit_s = time.perf_counter() - stop_started
    blobs = BlobStore(store.media_dir)
    from labrig.store.models import CaptureSegment

    with store.read() as session:
        media = [
            str(blobs.path(s.media_sha256, ".avi")) for s in session.query(CaptureSegment).all()
        ]
    store.close()
    started = time.perf_counter()
    subprocess.run(["sha256sum", *media], check=True, capture_output=True)
    sha_s = time.perf_counter() - started
    return {
        "frames": result.frame_count,
        "drops": result.dropped_frames,
        "fps": status.fps,
        "commit_s": commit_s,
        "sha256sum_s": sha_s,
        "mb": sum(Path(m).stat().st_size for m in media) / 1e6,
    }


def frames(count: int) -> list:  # type: ignore[type-arg]
    camera = VirtualCamera("markers")
    camera.open(MODE)
    return [camera.render(i) for i in range(count)]


def sink_fps(folder: Path, images: list) -> float:  # type: ignore[type-arg]
    folder.mkdir()
    sink = SegmentSink(folder, MODE, 2.0, lambda seg, nxt: None)
    sink.setup()
    started = time.perf_counter()
    for i, image in enumerate(images):
        sink.append(image, i, i)
    sink.close()
    return len(images) / (time.perf_counter() - started)


def raw_fps(path: Path, images: list) -> float:  # type: ignore[type-arg]
    writer = cv2.VideoWriter(str(path), cv2.CAP_FFMPEG, FOURCC, MODE.fps, (MODE.width, MODE.height))
    started = time.perf_counter()
    for image in images:
        writer.write(image)
    writer.release()
    return len(images) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run for CI")
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    seconds = 8.0 if args.quick else args.seconds
    rounds, count = (1, 240) if args.quick else (3, 600)
    with tempfile.TemporaryDirectory(prefix="labrig-bench-capture-") as tmp:
        root = Path(tmp)
        rec = record(root, seconds)
        images = frames(count)
        ours, peers = [], []
        for r in range(rounds):
            if r % 2:
                peers.append(raw_fps(root / f"raw{r}.avi", images))
                ours.append(sink_fps(root / f"sink{r}", images))
            else:
                ours.append(sink_fps(root / f"sink{r}", images))
                peers.append(raw_fps(root / f"raw{r}.avi", images))
    writer_ratio = statistics.median(ours) / statistics.median(peers)
    commit_ratio = rec["commit_s"] / rec["sha256sum_s"]
    print(
        f"recording 1280x720@60 for {seconds:.0f} s: {rec['frames']:.0f} frames, "
        f"{rec['drops']:.0f} dropped, {rec['fps']:.1f} fps, {rec['mb']:.0f} MB"
    )
    print(
        f"writer: labrig sink {statistics.median(ours):.0f} fps vs raw cv2.VideoWriter "
        f"{statistics.median(peers):.0f} fps (median of {rounds}, alternating)"
    )
    print(
        f"commit: {rec['commit_s']:.2f} s vs sha256sum of the same bytes {rec['sha256sum_s']:.2f} "
        f"s (ratio {commit_ratio:.2f})"
    )
    print(f"ratio_vs_raw_writer={writer_ratio:.2f} drops={rec['drops']:.0f}")


if __name__ == "__main__":
    main()
