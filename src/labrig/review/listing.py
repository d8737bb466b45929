"""Every result as the review list shows it: its status, number of revisions, whether a reprocess
superseded it and whether the calibration it was made under changed since."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from labrig.results import CalibrationFlags, used_calibrations
from labrig.store import Store
from labrig.store.models import AnalysisResultRecord, Job, ResultRevision


@dataclass(frozen=True)
class ResultSummary:
    result_id: str
    attempt_id: str
    status: str
    degraded: bool
    created_at: str
    revisions: int
    superseded: bool
    # its calibration changed since (superseded, or the rig's cameras changed): why, one each
    flags: tuple[str, ...] = ()


def list_results(store: Store) -> list[ResultSummary]:
    """Every result, oldest first, with its number of revisions."""
    with store.read() as session:
        counts = {
            result_id: n
            for result_id, n in session.execute(
                select(ResultRevision.result_id, func.count()).group_by(ResultRevision.result_id)
            )
        }
        rows = list(
            session.scalars(select(AnalysisResultRecord).order_by(AnalysisResultRecord.created_at))
        )
        configs: dict[str, list[str]] = {}
        for attempt_id, config in session.execute(
            select(Job.attempt_id, Job.config).where(
                Job.stage_id.in_(("tracking.markers", "tracking.rig"))
            )
        ):
            configs.setdefault(attempt_id or "", []).append(config or "{}")
    latest = {r.attempt_id: r.id for r in rows}
    flags = CalibrationFlags(store)

    def flagged(r: AnalysisResultRecord) -> tuple[str, ...]:
        if r.status != "published":
            return ()
        used = used_calibrations(configs.get(r.attempt_id, []))
        return tuple(f.reason for f in flags.of_ids(*used))

    return [
        ResultSummary(
            r.id,
            r.attempt_id,
            r.status,
            r.degraded,
            r.created_at.isoformat(),
            counts.get(r.id, 0),
            latest[r.attempt_id] != r.id,
            flagged(r),
        )
        for r in rows
    ]
