"""Catalog rows changed outside Labrig into text that is not UTF-8 (issue 16): every command reads
them (the bad bytes shown as U+FFFD), ``labrig verify`` names each such row, and no command changes
it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.support.cli import assert_typed, labrig
from tests.support.results import TemplateResults, copy_store, make_results

BAD = b"imported:trial-\xff\xfe.avi"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TemplateResults]:
    root = tmp_path_factory.mktemp("rows-template") / "store"
    return root, make_results(root)


def _stored(db: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        conn.text_factory = bytes
        return conn.execute(sql).fetchall()


def test_text_that_is_not_utf8_is_read_reported_and_left_as_it_is(
    template: tuple[Path, TemplateResults], tmp_path: Path
) -> None:
    store = copy_store(template[0], tmp_path / "store")
    db = store / "labrig.db"
    with sqlite3.connect(db) as conn:
        [capture_id] = [r[0] for r in conn.execute("SELECT id FROM captures LIMIT 1")]
        conn.execute(
            "UPDATE captures SET device_id = CAST(? AS TEXT) WHERE id = ?", (BAD, capture_id)
        )
    before = _stored(db, "SELECT * FROM captures ORDER BY id")

    listed = labrig(store, "captures", "--json")
    assert_typed(listed)
    assert listed.returncode == 0
    rows = {(r := json.loads(line))["id"]: r for line in listed.stdout.splitlines()}
    assert rows[capture_id]["device_id"] == "imported:trial-\ufffd\ufffd.avi"

    exported = labrig(store, "export", "--all", "--to", str(tmp_path / "bundle"), "--media")
    assert_typed(exported)
    assert exported.returncode == 0, exported.stdout + exported.stderr

    verified = labrig(store, "verify", "--json")
    assert_typed(verified)
    report = json.loads(verified.stdout)
    assert verified.returncode == 1 and not report["ok"]
    [problem] = report["problems"]
    assert problem["subject"] == f"captures {capture_id}"
    assert "device_id holds text that is not valid UTF-8" in problem["problem"]

    assert _stored(db, "SELECT * FROM captures ORDER BY id") == before  # the row is as it was


def test_a_blob_row_whose_digest_is_a_path_is_reported_and_never_opened(
    template: tuple[Path, TemplateResults], tmp_path: Path
) -> None:
    """A catalog row edited to name ``../../secret`` as a stored file's digest: Labrig would open
    a file outside the media store by it. ``verify`` names it and opens nothing."""
    store = copy_store(template[0], tmp_path / "store")
    secret = tmp_path / "secret.avi"
    secret.write_bytes(b"not Labrig's")
    hostile = "../" * 8 + str(secret.with_suffix("")).lstrip("/")
    with sqlite3.connect(store / "labrig.db") as conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute(
            "INSERT INTO blobs (sha256, ext, size, kind, created_at) VALUES (?, '.avi', 12, "
            "'media', '2026-12-02 07:00:00.000000')",
            (hostile,),
        )

    verified = labrig(store, "verify", "--json")

    assert_typed(verified)
    report = json.loads(verified.stdout)
    assert verified.returncode == 1
    [problem] = [p for p in report["problems"] if p["subject"] == hostile]
    assert "not a digest Labrig writes" in problem["problem"]
    assert "hashes to" not in problem["problem"]  # the file it points at was never read
