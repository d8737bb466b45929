"""Random sequences of revise / reprocess / revise: automatic results stay byte-identical
throughout, the effective value is always the latest revision's, and the database refuses direct
edits at every step."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from labrig.access import AccessControl
from labrig.bootstrap import Services, bootstrap
from labrig.domain.idempotency import sha256_hex
from labrig.domain.revisions import REVISABLE, NoChangeError
from labrig.store import open_store
from labrig.store.models import AnalysisResultRecord
from tests.support.results import TemplateResults, copy_store, reprocess_kinematics

REVISE = st.tuples(
    st.just("revise"),
    st.integers(0, 50),
    st.integers(0, 2),
    st.sampled_from(REVISABLE),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
)
STEPS = st.lists(
    st.one_of(
        REVISE,
        st.tuples(st.just("reprocess"), st.integers(0, 50)),
        st.tuples(
            st.just("tamper"),
            st.integers(0, 50),
            st.sampled_from(
                [
                    "UPDATE analysis_results SET document = '{}' WHERE id = ?",
                    "UPDATE analysis_results SET digest = 'x' WHERE id = ?",
                    "DELETE FROM analysis_results WHERE id = ?",
                    "DELETE FROM result_revisions WHERE result_id = ?",
                    "UPDATE result_revisions SET document = '{}' WHERE result_id = ?",
                    "UPDATE audit_entries SET reason = 'nothing happened' WHERE object_id = ?",
                    "DELETE FROM audit_entries WHERE object_id = ?",
                ]
            ),
        ),
    ),
    min_size=1,
    max_size=8,
)


def _published(services: Services) -> list[AnalysisResultRecord]:
    with services.store.read() as session:
        return list(
            session.scalars(
                select(AnalysisResultRecord)
                .where(AnalysisResultRecord.status == "published")
                .order_by(AnalysisResultRecord.created_at)
            )
        )


def _check(
    services: Services, seen: dict[str, bytes], expected: dict[str, dict[str, float]]
) -> None:
    """Every automatic document is the one first seen, byte for byte; effective = latest
    revision's value."""
    with services.store.read() as session:
        rows = list(session.scalars(select(AnalysisResultRecord)))
    reviews = services.governance.revisions
    for row in rows:
        stored = reviews.automatic_document(row.id)
        assert sha256_hex(stored) == row.digest
        assert seen.setdefault(row.id, stored) == stored
        effective = {f.field: f.effective for f in reviews.show(row.id).fields}
        automatic = {
            m: v
            for t in json.loads(stored)["metrics"] or []
            for m, v in ((f"track:{t['track_id']}.{k}", t[k]) for k in REVISABLE)
        }
        assert effective == automatic | expected.get(row.id, {})


def _step(
    services: Services, db: Path, step: tuple[Any, ...], expected: dict[str, dict[str, float]]
) -> None:
    published = _published(services)
    target = published[step[1] % len(published)]
    if step[0] == "reprocess":
        reprocess_kinematics(services, target.id)
    elif step[0] == "revise":
        _, _, track, metric, value = step
        field = f"track:{track}.{metric}"
        try:
            services.governance.revisions.revise(target.id, {field: value}, f"step to {value}")
            expected.setdefault(target.id, {})[field] = value
        except NoChangeError:
            # the value was already in force
            assert services.governance.revisions.show(target.id).fields
    else:
        table = step[2].split(" ")[2 if step[2].startswith("DELETE") else 1]
        with sqlite3.connect(db) as conn:
            column = (
                "result_id"
                if table == "result_revisions"
                else "object_id"
                if table == "audit_entries"
                else "id"
            )
            if conn.execute(
                f"SELECT count(*) FROM {table} WHERE {column} = ?", (target.id,)
            ).fetchone()[0]:
                with pytest.raises(sqlite3.IntegrityError, match="LABRIG_APPEND_ONLY"):
                    conn.execute(step[2], (target.id,))


@pytest.fixture(scope="module")
def template_root(template: tuple[Path, TemplateResults]) -> Path:
    return template[0]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=STEPS)
def test_revise_reprocess_revise_keeps_every_automatic_result_byte_identical(
    template_root: Path, tmp_path: Path, steps: list[tuple[Any, ...]]
) -> None:
    root = tmp_path / "example"
    shutil.rmtree(root, ignore_errors=True)
    store = open_store(copy_store(template_root, root))
    services = bootstrap(
        store=store, access=AccessControl(store, user=lambda: "rita", host=lambda: "bench")
    )
    try:
        seen: dict[str, bytes] = {}
        expected: dict[str, dict[str, float]] = {}
        _check(services, seen, expected)
        for step in steps:
            _step(services, store.db_path, step, expected)
            _check(services, seen, expected)
        assert services.governance.audit.verify().intact
    finally:
        store.close()
