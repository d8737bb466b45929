"""The pure parts of the Results and Calibration screens' read helpers: which events refresh,
ages, view order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from labrig.calibration.views import CalibrationDetail, CalibrationSummary, Validity, age_words
from labrig.domain.events import EventName as E
from labrig.results.attempt_list import AttemptSummary, ResultStatus
from labrig.results.views import (
    ADVICE,
    GENERAL_ADVICE,
    ResultDetail,
    StageState,
    refreshes_results,
    units_words,
)

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "payload", "refreshes"),
    [
        (E.RESULT_PUBLISHED, {"attempt_id": "a"}, True),
        (E.QUALITY_BLOCKED, {"attempt_id": "a"}, True),
        (E.ATTEMPT_CREATED, {"attempt_id": "a"}, True),
        (E.STAGE_REQUESTED, {"attempt_id": "a"}, True),
        # a job of no attempt (selftest, reference check)
        (E.STAGE_REQUESTED, {"attempt_id": None}, False),
        (E.STAGE_FAILED, {"retryable": False}, True),
        (E.STAGE_FAILED, {"retryable": True}, False),  # it runs again: nothing ended
        (E.STAGE_COMPLETED, {}, False),
        (E.STORAGE_PRESSURE_CHANGED, {}, False),
        ("plugin.something", {}, False),
    ],
)
def test_only_events_that_can_change_a_status_refresh_the_results(
    name: str, payload: dict[str, object], refreshes: bool
) -> None:
    assert refreshes_results(name, payload) is refreshes


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (-5, "just now"),
        (0, "just now"),
        (59, "just now"),
        (60, "1 min"),
        (3599, "59 min"),
        (3600, "1 h"),
        (86399, "23 h"),
        (86400 * 3 + 5, "3 d"),
    ],
)
def test_ages_read_as_a_technician_says_them(seconds: float, words: str) -> None:
    assert age_words(timedelta(seconds=seconds)) == words


def test_used_and_rejected_views_are_shown_in_capture_order_with_numbers_compared_as_numbers() -> (
    None
):
    summary = CalibrationSummary(
        "c" * 64, "cam", "640x360@30 BGR", NOW, 0.1, None, Validity.NOT_VALID, False
    )
    document = {
        "views": [{"name": "b.avi#100", "error_px": 0.1}, {"name": "b.avi#5", "error_px": 0.2}],
        "rejected": [{"name": "b.avi#40", "error_px": 3.0, "limit_px": 0.5}],
        "reasons": [{"code": "LABRIG_RMS_TOO_HIGH", "message": "too high"}],
    }
    detail = CalibrationDetail(summary, document)

    assert [(v.name, v.rejected) for v in detail.views] == [
        ("b.avi#5", False),
        ("b.avi#40", True),
        ("b.avi#100", False),
    ]
    assert detail.reasons == [("LABRIG_RMS_TOO_HIGH", "too high")]


def _detail(status: ResultStatus, *stages: StageState) -> ResultDetail:
    summary = AttemptSummary("a", 1, "S", "reach", NOW, status, (), None)
    return ResultDetail(summary, stages, None, None, None, previous=False)


def test_advice_is_given_for_blocked_results_only_and_falls_back_to_general_words() -> None:
    markers = StageState(
        "tracking.markers", "BlockedByQuality", "LABRIG_TOO_FEW_MARKERS", "too few"
    )
    odd = StageState("media.qc", "PermanentFailure", "LABRIG_SOMETHING_NEW", "broke")

    assert _detail(ResultStatus.BLOCKED, markers, markers).advice == [
        ADVICE["LABRIG_TOO_FEW_MARKERS"]
    ]
    assert _detail(ResultStatus.BLOCKED, odd).advice == [GENERAL_ADVICE]
    assert _detail(ResultStatus.DEGRADED, markers).advice == []


def test_units_read_as_words_not_as_a_dictionary() -> None:
    assert units_words({"length": "mm", "time": "s"}) == "mm, s"
    assert units_words({"length": "px", "time": "frames"}) == "px, frames"
    assert units_words(None) == "none (no kinematics ran)"
