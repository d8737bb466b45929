"""Results: an attempt's AnalysisResult built and published (``result.published``) once its stages
end, and what the Results screen and the CLI read about attempts and their results. Qt-free.

Modules: ``publish`` (the durable consumer that builds and publishes), ``views`` (the reads),
``flags`` (whether a result's calibration still holds).
"""

from labrig.results.flags import CalibrationFlag, CalibrationFlags, used_calibrations
from labrig.results.publish import PUBLISHER, WATCHED, build_document, publish_when_done
from labrig.results.views import (
    AttemptSummary,
    ResultDetail,
    ResultStatus,
    StageState,
    TrackSeries,
    list_attempts,
    load_result,
    refreshes_results,
    track_series,
    units_words,
)

__all__ = [
    "PUBLISHER",
    "WATCHED",
    "AttemptSummary",
    "CalibrationFlag",
    "CalibrationFlags",
    "ResultDetail",
    "ResultStatus",
    "StageState",
    "TrackSeries",
    "build_document",
    "list_attempts",
    "load_result",
    "publish_when_done",
    "refreshes_results",
    "track_series",
    "units_words",
    "used_calibrations",
]
