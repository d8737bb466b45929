"""Results: an attempt's AnalysisResult built and published (``result.published``) once its stages
end, and what the Results screen and the CLI read about attempts and their results. Qt-free.

Modules: ``publish`` (the durable consumer that builds and publishes), ``attempt_list`` (the
attempts a page at a time, with their status), ``views`` (a result's detail and what else is read),
``flags`` (whether a result's calibration still holds).
"""

from typing import TYPE_CHECKING

from labrig.lazy import lazy_attributes

if TYPE_CHECKING:
    from labrig.results.attempt_list import AttemptSummary, ResultStatus, list_attempts
    from labrig.results.flags import CalibrationFlag, CalibrationFlags, used_calibrations
    from labrig.results.publish import (
        PUBLISHER,
        WATCHED,
        build_document,
        load_jobs,
        publish_when_done,
    )
    from labrig.results.views import (
        ResultDetail,
        StageState,
        TrackSeries,
        load_result,
        refreshes_results,
        track_series,
        units_words,
    )

#: each name and the module of this package that defines it, imported at first use
_FROM = {
    "CalibrationFlag": "flags",
    "CalibrationFlags": "flags",
    "used_calibrations": "flags",
    "PUBLISHER": "publish",
    "WATCHED": "publish",
    "build_document": "publish",
    "load_jobs": "publish",
    "publish_when_done": "publish",
    "AttemptSummary": "attempt_list",
    "ResultDetail": "views",
    "ResultStatus": "attempt_list",
    "StageState": "views",
    "TrackSeries": "views",
    "list_attempts": "attempt_list",
    "load_result": "views",
    "refreshes_results": "views",
    "track_series": "views",
    "units_words": "views",
}
__getattr__ = lazy_attributes(__name__, _FROM)

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
    "load_jobs",
    "load_result",
    "publish_when_done",
    "refreshes_results",
    "track_series",
    "units_words",
    "used_calibrations",
]
