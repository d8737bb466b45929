"""Running ``labrig`` as a user runs it (for the hostile-input tests of issue 16): a child process
with a deadline, so a hang fails the test instead of stalling CI, and stores built with the real
commands."""

from __future__ import annotations

import os
import subprocess
import sys
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
