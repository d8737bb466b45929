"""Review, the reviewer's domain: revisions stored beside the automatic result (never over it), with
the roles that allow them and the audit entries that record them, and what the Review and Results
screens read about them. The pure rules (field syntax, applying changes, roles, the audit chain)
stay in :mod:`labrig.domain`. Qt-free.

Modules: ``revisions`` (the revision service: values revised, tracked data corrected, undone,
signed off), ``records`` (stored revisions read back), ``effective`` (the corrected tracks and their
kinematics), ``reviewed`` (a result as a reviewer reads it), ``listing`` (every result as the review
list shows it), ``player`` (what the review player shows: every camera of the attempt in step, the
tracks to draw), ``views`` (the screens' reads), ``reprocess`` (a result analysed again under the
current calibrations).
"""

from typing import TYPE_CHECKING

from labrig.lazy import lazy_attributes

if TYPE_CHECKING:
    from labrig.review.effective import CorrectionUnsupportedError, EffectiveTracks
    from labrig.review.listing import ResultQuery, ResultStatusFilter, ReviewFilter
    from labrig.review.player import Overlay, PlayerCamera, ResultMedia
    from labrig.review.reprocess import Reprocessed, ReprocessService
    from labrig.review.reviewed import SignOffState
    from labrig.review.revisions import (
        FieldValue,
        ResultNotPublishedError,
        ReviewedResult,
        RevisionConflictError,
        RevisionService,
        RevisionView,
        find_result,
        reviewed_in,
    )
    from labrig.review.views import (
        ReviewedResults,
        ReviewerState,
        ReviewListRow,
        RevisedValue,
        Shown,
        head_of,
        local_time,
        read_review_list,
        read_reviewer,
        read_revised,
        revised_values,
    )

#: each name and the module of this package that defines it: imported at first use, so a reader of
#: one module (the CLI's page of results reads ``listing``) does not load OpenCV and numpy with
#: ``effective`` and ``player``
_FROM = {
    "CorrectionUnsupportedError": "effective",
    "EffectiveTracks": "effective",
    "ResultQuery": "listing",
    "ResultStatusFilter": "listing",
    "ReviewFilter": "listing",
    "Overlay": "player",
    "PlayerCamera": "player",
    "ResultMedia": "player",
    "ReprocessService": "reprocess",
    "Reprocessed": "reprocess",
    "SignOffState": "reviewed",
    "FieldValue": "revisions",
    "ResultNotPublishedError": "revisions",
    "ReviewedResult": "revisions",
    "RevisionConflictError": "revisions",
    "RevisionService": "revisions",
    "RevisionView": "revisions",
    "find_result": "revisions",
    "reviewed_in": "revisions",
    "ReviewListRow": "views",
    "ReviewedResults": "views",
    "ReviewerState": "views",
    "RevisedValue": "views",
    "Shown": "views",
    "head_of": "views",
    "local_time": "views",
    "read_review_list": "views",
    "read_reviewer": "views",
    "read_revised": "views",
    "revised_values": "views",
}
__getattr__ = lazy_attributes(__name__, _FROM)

__all__ = [
    "CorrectionUnsupportedError",
    "EffectiveTracks",
    "FieldValue",
    "Overlay",
    "PlayerCamera",
    "ReprocessService",
    "Reprocessed",
    "ResultMedia",
    "ResultNotPublishedError",
    "ResultQuery",
    "ResultStatusFilter",
    "ReviewFilter",
    "ReviewListRow",
    "ReviewedResult",
    "ReviewedResults",
    "ReviewerState",
    "RevisedValue",
    "RevisionConflictError",
    "RevisionService",
    "RevisionView",
    "Shown",
    "SignOffState",
    "find_result",
    "head_of",
    "local_time",
    "read_review_list",
    "read_reviewer",
    "read_revised",
    "reviewed_in",
    "revised_values",
]
