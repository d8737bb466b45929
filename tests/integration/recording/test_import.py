"""Importing existing media: the same commit path; bad files refused with a code, nothing
changed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from sqlalchemy import func, select

from labrig.capture.commit import count_frames
from labrig.capture.importer import (
    AlreadyImportedError,
    ImportRefusedError,
    MediaTruncatedError,
    import_media,
)
from labrig.capture.recorder import provisional_root
from labrig.store import Store
from labrig.store.blobs import BlobStore
from labrig.store.models import Capture
from labrig.tasks import TaskCancelledError, TaskControl


def _video(path: Path, frames: int = 20, fourcc: str = "MJPG") -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*fourcc), 25.0, (160, 120))
    for i in range(frames):
        writer.write(np.full((120, 160, 3), i * 10 % 255, dtype=np.uint8))
    writer.release()
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _captures(store: Store) -> int:
    with store.read() as s:
        return s.scalar(select(func.count()).select_from(Capture)) or 0


def test_an_imported_file_is_committed_like_a_recording_and_left_untouched(
    store: Store, tmp_path: Path
) -> None:
    source = _video(tmp_path / "trial.avi")
    before = _digest(source)
    result = import_media(store, source)
    assert result.frame_count == 20 and result.segments == 1
    assert _digest(source) == before
    blob = BlobStore(store.media_dir).path(before, ".avi")
    assert count_frames(blob) == 20
    with store.read() as s:
        row = s.get(Capture, result.capture_id)
        assert row is not None and row.origin == "imported" and row.source_sha256 == before
    assert list(provisional_root(store).iterdir()) == []


def test_importing_the_same_file_twice_is_refused(store: Store, tmp_path: Path) -> None:
    source = _video(tmp_path / "trial.avi")
    import_media(store, source)
    with pytest.raises(AlreadyImportedError) as info:
        import_media(store, source)
    assert info.value.code == "LABRIG_ALREADY_IMPORTED"
    assert _captures(store) == 1 and list(provisional_root(store).iterdir()) == []


@pytest.mark.parametrize("content", [b"", b"not a video at all" * 100])
def test_a_file_that_is_not_media_is_refused(store: Store, tmp_path: Path, content: bytes) -> None:
    fake = tmp_path / "notes.mp4"
    fake.write_bytes(content)
    with pytest.raises(ImportRefusedError) as info:
        import_media(store, fake)
    assert info.value.code == "LABRIG_NOT_MEDIA" and "does not decode" in info.value.message
    assert _captures(store) == 0


def test_wrong_extension_and_missing_file_are_refused(store: Store, tmp_path: Path) -> None:
    doc = tmp_path / "protocol.pdf"
    doc.write_bytes(b"%PDF-1.4")
    with pytest.raises(ImportRefusedError, match="not a video Labrig imports"):
        import_media(store, doc)
    with pytest.raises(ImportRefusedError, match="not a file"):
        import_media(store, tmp_path / "gone.avi")


def test_a_truncated_file_is_refused_unless_partial_import_is_asked(
    store: Store, tmp_path: Path
) -> None:
    source = _video(tmp_path / "cut.avi", frames=60)
    data = source.read_bytes()
    cut = tmp_path / "cut-short.avi"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(MediaTruncatedError) as info:
        import_media(store, cut)
    assert info.value.code == "LABRIG_MEDIA_TRUNCATED" and "--accept-partial" in info.value.message
    assert _captures(store) == 0
    result = import_media(store, cut, accept_partial=True)
    assert 0 < result.frame_count < 60


def test_an_import_reports_its_progress_and_a_cancel_leaves_nothing(
    store: Store, tmp_path: Path
) -> None:
    source = _video(tmp_path / "long.avi", frames=300)
    before = _digest(source)
    seen: list[tuple[float, str]] = []
    import_media(store, source, task=TaskControl(lambda f, m: seen.append((f, m))))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert any(m.startswith("decoding frame") for _, m in seen) and any(
        m.startswith("copying") for _, m in seen
    )

    other = _video(tmp_path / "other.avi", frames=300, fourcc="XVID")
    cancelling = TaskControl(lambda _f, m: cancelling.cancel() if m.startswith("copying") else None)
    with pytest.raises(TaskCancelledError):
        import_media(store, other, task=cancelling)
    assert _captures(store) == 1  # only the first import
    assert list(provisional_root(store).iterdir()) == []  # its half-copied folder is gone
    assert _digest(source) == before
