"""Media QC on real segment files written by the sink: exact counts, injected timestamp gaps,
garbage and truncated files, and frames too dark or blurred."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from labrig.capture.media import iter_frames, iter_luma
from labrig.domain.idempotency import canonical_json
from labrig.errors import JobCancelledError
from labrig.pipeline.media_qc import (
    Thresholds,
    TimestampsUnreadableError,
    frame_measures,
    media_qc,
)
from labrig.tasks import TaskCancelledError as Cancelled
from labrig.tasks import TaskControl
from tests.integration.analysis.test_tracking import SMALL, Recording, record_markers


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    return record_markers(
        tmp_path_factory.mktemp("media_qc"), SMALL, frames=90, segment_seconds=1.5
    )


def check(
    rec: Recording,
    media: list[Path] | None = None,
    timestamps: list[Path | None] | None = None,
    expected: int | None = 90,
) -> dict[str, Any]:
    return media_qc(
        media or rec.media, timestamps or list(rec.timestamps), expected, SMALL.fps
    ).to_json()


def test_a_sound_recording_counts_exactly_and_reports_no_problem(recording: Recording) -> None:
    progress: list[float] = []
    qc = media_qc(
        recording.media,
        list(recording.timestamps),
        90,
        SMALL.fps,
        TaskControl(lambda fraction, _message: progress.append(fraction)),
    )
    assert len(recording.media) == 2 and [f.decoded_frames for f in qc.files] == [45, 45]
    assert qc.decoded_frames == 90 and [f.header_frames for f in qc.files] == [45, 45]
    assert [f.timestamp_rows for f in qc.files] == [45, 45]
    assert not (qc.undecodable or qc.header_mismatch or qc.count_mismatch) and qc.problems() == []
    assert (
        qc.gaps == 0
        and qc.missing_frames == 0
        and qc.largest_interval_s == pytest.approx(1 / 30, abs=1e-6)
    )
    assert qc.brightness.min is not None and 20 < qc.brightness.min <= qc.brightness.median <= 40
    assert qc.blur.flagged == qc.brightness.flagged == qc.clipped.flagged == 0
    assert progress == sorted(progress) and progress[-1] == 1.0
    body = qc.to_json()
    canonical_json(body)  # plain JSON types, no NaN
    assert body == json.loads(json.dumps(check(recording)))  # deterministic
    print(f"media QC: {json.dumps({k: body[k] for k in ('blur', 'brightness', 'clipped')})}")


def test_a_timestamp_gap_is_found_and_its_missing_frames_counted(
    recording: Recording, tmp_path: Path
) -> None:
    lines = recording.timestamps[1].read_text(encoding="ascii").splitlines(keepends=True)
    gapped = tmp_path / "gapped.ts.csv"
    # frames 20–22 of the segment lost
    gapped.write_text("".join(lines[:21] + lines[24:]), encoding="ascii")
    body = check(recording, timestamps=[recording.timestamps[0], gapped])
    assert (body["gaps"], body["missing_frames"]) == (1, 3)
    assert body["largest_interval_s"] == pytest.approx(4 / 30, abs=1e-6)
    assert body["files"][1]["timestamp_rows"] == 42
    assert any("1 timestamp gap(s), about 3 frame(s) missing" in p for p in body["problems"])
    # a segment without a sidecar breaks the chain: no gap is invented across it
    assert check(recording, timestamps=[None, recording.timestamps[1]])["gaps"] == 0


def test_a_garbage_file_is_undecodable(recording: Recording, tmp_path: Path) -> None:
    garbage = tmp_path / "seg-00009.avi"
    garbage.write_bytes(np.random.default_rng(0).integers(0, 256, 20_000, dtype=np.uint8).tobytes())
    body = check(
        recording, media=[recording.media[0], garbage], timestamps=[recording.timestamps[0], None]
    )
    assert body["undecodable"] and body["files"][1] == {
        "name": "seg-00009.avi",
        "header_frames": None,
        "decoded_frames": 0,
        "timestamp_rows": None,
        "undecodable": True,
    }
    assert body["count_mismatch"] and body["decoded_frames"] == 45
    assert (
        "seg-00009.avi could not be decoded (missing, damaged or not a video)" in body["problems"]
    )
    missing = check(recording, media=[tmp_path / "gone.avi"], timestamps=[None], expected=None)
    assert missing["undecodable"] and missing["files"][0]["header_frames"] is None


def test_a_listed_sidecar_that_cannot_be_read_is_refused_with_a_code(
    recording: Recording, tmp_path: Path
) -> None:
    with pytest.raises(TimestampsUnreadableError) as refused:
        check(recording, timestamps=[recording.timestamps[0], tmp_path / "gone.ts.csv"])
    assert (
        refused.value.code == "LABRIG_TIMESTAMPS_UNREADABLE"
        and "gone.ts.csv" in refused.value.message
    )


def test_a_truncated_file_decodes_fewer_frames_than_its_header_claims(
    recording: Recording, tmp_path: Path
) -> None:
    cut = tmp_path / recording.media[1].name
    data = recording.media[1].read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    body = check(recording, media=[recording.media[0], cut])
    second = body["files"][1]
    assert second["header_frames"] == 45 and 0 < second["decoded_frames"] < 45
    assert body["header_mismatch"] and body["count_mismatch"] and not body["undecodable"]
    assert any("header says 45 frames" in p for p in body["problems"])


def test_dark_blurred_frames_are_flagged(tmp_path: Path) -> None:
    path = tmp_path / "dark.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 30.0, (320, 240))
    for _ in range(8):
        writer.write(np.zeros((240, 320, 3), np.uint8))
    writer.release()
    qc = media_qc([path], [None], None, 30.0, thresholds=Thresholds(blur_min=5.0))
    assert qc.decoded_frames == 8 and qc.expected_frames is None and not qc.count_mismatch
    assert qc.blur.flagged == qc.brightness.flagged == qc.clipped.flagged == 8
    sharp = frame_measures(np.tile(np.array([[0, 255]], np.uint8), (64, 32)))
    soft = frame_measures(
        cv2.GaussianBlur(np.tile(np.array([[0, 255]], np.uint8), (64, 32)), (9, 9), 3)
    )
    assert sharp[0] > 100 * soft[0] and sharp[2] == 1.0


def test_cancelling_stops_with_a_cancelled_error(recording: Recording) -> None:
    calls: list[int] = []

    class CancelledAtTheSecondCheck(TaskControl):
        def check_cancelled(self) -> None:
            calls.append(1)
            if len(calls) > 1:
                self.cancel()
            super().check_cancelled()

    with pytest.raises(Cancelled) as stopped:
        media_qc(
            recording.media, list(recording.timestamps), 90, SMALL.fps, CancelledAtTheSecondCheck()
        )
    assert isinstance(stopped.value, JobCancelledError) and stopped.value.code == "LABRIG_CANCELLED"
    assert len(calls) == 2  # checked every few frames, not once per frame
    with pytest.raises(ValueError, match="one timestamps entry"):
        media_qc(recording.media, [], 90, SMALL.fps)


def grey(frames: list[np.ndarray]) -> list[np.ndarray]:
    return [cv2.cvtColor(f, cv2.COLOR_BGR2GRAY) for f in frames]


def test_luma_frames_are_the_same_frames_in_grey(recording: Recording, tmp_path: Path) -> None:
    """MJPG decoded straight to its grey plane: as many frames as decoding to BGR, and close to
    their grey (the Y plane differs only where subsampled chroma clips in BGR, at coloured
    edges)."""
    for path in recording.media:
        bgr, luma = list(iter_frames(path)), list(iter_luma(path))
        assert len(luma) == len(bgr) == 45
        assert all(y.shape == (SMALL.height, SMALL.width) and y.dtype == np.uint8 for y in luma)
        assert (
            max(
                float(np.abs(g.astype(np.int16) - y).mean())
                for g, y in zip(grey(bgr), luma, strict=True)
            )
            < 1
        )
    cut = tmp_path / "cut.avi"
    cut.write_bytes(recording.media[1].read_bytes()[: recording.media[1].stat().st_size // 2])
    assert len(list(iter_luma(cut))) == len(list(iter_frames(cut))) < 45
    garbage = tmp_path / "garbage.avi"
    garbage.write_bytes(np.random.default_rng(0).integers(0, 256, 20_000, dtype=np.uint8).tobytes())
    assert list(iter_luma(garbage)) == list(iter_luma(tmp_path / "gone.avi")) == []


def test_luma_frames_of_other_codecs_and_after_a_damaged_packet_are_the_bgr_frames_in_grey(
    recording: Recording, tmp_path: Path
) -> None:
    lossless = tmp_path / "ffv1.avi"
    writer = cv2.VideoWriter(
        str(lossless), cv2.VideoWriter.fourcc(*"FFV1"), SMALL.fps, (SMALL.width, SMALL.height)
    )
    for frame in list(iter_frames(recording.media[0]))[:10]:
        writer.write(frame)
    writer.release()
    expected = grey(list(iter_frames(lossless)))
    assert len(expected) == 10 and all(
        np.array_equal(a, b) for a, b in zip(iter_luma(lossless), expected, strict=True)
    )
    # the 11th packet loses its JPEG start marker: FFmpeg still decodes it, so from there the BGR
    # decoder takes over
    data = bytearray(recording.media[0].read_bytes())
    packets = [
        i + 8
        for i in range(len(data) - 10)
        if data[i : i + 4] == b"00dc" and data[i + 8 : i + 10] == b"\xff\xd8"
    ]
    data[packets[10] + 1] = 0
    damaged = tmp_path / "damaged.avi"
    damaged.write_bytes(bytes(data))
    luma, expected = list(iter_luma(damaged)), grey(list(iter_frames(damaged)))
    assert len(luma) == len(expected) == 45
    assert all(np.array_equal(a, b) for a, b in zip(luma[10:], expected[10:], strict=True))
