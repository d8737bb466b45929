"""Running ``labrig`` as a user runs it (for the hostile-input tests of issue 16): a child process
with a deadline, so a hang fails the test instead of stalling CI, and stores built with the real
commands."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[2]
ENDS_WITHIN_S = 60  # a hang is a failure, not a wait


def labrig(store: Path, *args: str | bytes, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """``labrig --store STORE ARGS…`` in a child process, as a user runs it (bytes arguments are
    passed as the OS gives them: a file name that is not UTF-8)."""
    return subprocess.run(
        [sys.executable, "-m", "labrig", "--store", str(store), *args],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=ENDS_WITHIN_S,
        cwd=cwd,
        env=os.environ | {"QT_QPA_PLATFORM": "offscreen"},
    )


def worker(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """``labrig worker ARGS…`` started in a child process with ``env`` added to this one's (its
    output read through pipes)."""
    return subprocess.Popen(
        [sys.executable, "-m", "labrig", "worker", *args],
        cwd=REPO,
        env=os.environ | env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def lines_of(stream: Iterable[str] | None) -> queue.Queue[str]:
    """The stream's lines as they come, read on a thread of their own."""
    assert stream is not None
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    return lines


def read_until(lines: queue.Queue[str], text: str, times: int = 1) -> list[str]:
    """The lines read from ``lines`` until ``times`` of them hold ``text`` (each waited for up to
    two minutes: a worker that never says it fails the test)."""
    seen: list[str] = []
    while sum(text in line for line in seen) < times:
        seen.append(lines.get(timeout=120))
    return seen


def assert_typed(result: subprocess.CompletedProcess[str]) -> None:
    """Ended with words a user can act on: no Python traceback and no signal (a crash)."""
    assert result.returncode >= 0, f"killed by signal {-result.returncode}: {result.stderr}"
    assert "Traceback" not in result.stderr + result.stdout, result.stderr


def write_video(path: Path | bytes, frames: int = 12, seed: int = 0) -> None:
    """A small MJPG video of random frames (a bytes path is written through a UTF-8 name and
    renamed, since OpenCV cannot be given a name that is not UTF-8)."""
    target = Path(os.fsdecode(path))
    staging = target.with_name("staging-video.avi")
    writer = cv2.VideoWriter(str(staging), cv2.VideoWriter.fourcc(*"MJPG"), 25.0, (96, 64))
    rng = np.random.default_rng(seed)
    for _ in range(frames):
        writer.write(rng.integers(0, 255, (64, 96, 3), dtype=np.uint8))
    writer.release()
    os.replace(staging, path)


def store_with_a_capture(tmp_path: Path) -> tuple[Path, Path]:
    """A store holding one imported video; the store and its media blob."""
    video = tmp_path / "trial.avi"
    write_video(video)
    store = tmp_path / "store"
    imported = labrig(store, "import", str(video))
    assert imported.returncode == 0, imported.stdout + imported.stderr
    [blob] = list((store / "media").rglob("*.avi"))
    return store, blob
