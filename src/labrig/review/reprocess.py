"""Reprocessing a result under the calibrations current now, in one action: the Results screen's
*Reprocess under the current calibration* and ``labrig review reprocess RESULT``. The result's
attempt is analysed again as a new attempt of the same captures (:func:`labrig.pipeline.reanalyse`);
the result itself, its attempt and its revisions stay as they were."""

from __future__ import annotations

from dataclasses import dataclass

from labrig.access import AccessControl
from labrig.domain.roles import Action
from labrig.jobs import JobQueue
from labrig.review.revisions import find_result


@dataclass(frozen=True)
class Reprocessed:
    result_id: str  # the result reprocessed (kept as it was)
    from_attempt_id: str
    attempt_id: str  # the new attempt, its analysis requested

    def to_json(self) -> dict[str, str]:
        return dict(vars(self))


class ReprocessService:
    def __init__(self, queue: JobQueue, access: AccessControl) -> None:
        self.queue, self.access = queue, access

    def reprocess(self, result_ref: str) -> Reprocessed:
        """Analyse ``result_ref``'s attempt again under the current calibrations (a technician or
        above: it records a new attempt)."""
        self.access.require(Action.CAPTURE)
        with self.queue.store.read() as session:
            result = find_result(session, result_ref)
            result_id, attempt_id = result.id, result.attempt_id
        from labrig.pipeline import reanalyse  # the capture and calibration modules: at first use

        return Reprocessed(result_id, attempt_id, reanalyse(self.queue, attempt_id))
