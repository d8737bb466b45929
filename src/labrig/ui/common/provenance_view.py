"""Where a result came from: its id and digest, the captures, the calibration (or rig
calibration), the release and every job with its key and output digest.

Threading contract: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem

from labrig.results import ResultDetail

NO_RELEASE = "none active — this result was not made under an activated release"


class ProvenanceTree(QTreeWidget):
    """The Provenance tab; :meth:`show_detail` fills it."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("provenanceTree")
        self.setHeaderLabels(["Item", "Value"])
        self.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)

    def show_detail(self, detail: ResultDetail) -> None:
        if detail.document is None:
            self._branch("Result", [("document", "not written yet: the analysis has not finished")])
            return
        prov = detail.document.get("provenance") or {}
        release = prov.get("release")
        self._branch(
            "Result",
            [
                ("result id", detail.summary.result_id),
                ("digest (SHA-256)", detail.digest),
                (
                    "stored",
                    f"{detail.created_at:%Y-%m-%d %H:%M:%S %Z}" if detail.created_at else None,
                ),
                ("attempt", detail.summary.attempt_id),
            ],
        )
        self._branch("Inputs", [("capture manifest", d) for d in prov.get("inputs", [])])
        if "rig_calibration_id" in prov:
            self._branch(
                "Rig calibration",
                [("rig calibration id", prov.get("rig_calibration_id") or "none: no 3-D")],
            )
        else:
            self._branch(
                "Calibration",
                [("calibration id", prov.get("calibration_id") or "none: results in pixels")],
            )
        self._branch(
            "Release",
            [
                ("version", release["version"]),
                ("release id", release["release_id"]),
                ("manifest digest", release["digest"]),
            ]
            if release
            else [("release", NO_RELEASE)],
        )
        jobs = self._branch("Jobs", [])
        for job in prov.get("jobs", []):
            item = QTreeWidgetItem(jobs, [job["stage_id"], job["state"]])
            for key in ("job_id", "idempotency_key", "output_digest", "error_code"):
                QTreeWidgetItem(item, [key.replace("_", " "), job.get(key) or "—"])
        self.expandAll()

    def _branch(self, title: str, rows: Sequence[tuple[str, str | None]]) -> QTreeWidgetItem:
        top = QTreeWidgetItem(self, [title, ""])
        for key, value in rows:
            QTreeWidgetItem(top, [key, value or "—"])
        return top
