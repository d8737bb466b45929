"""``labrig verify`` on part of a large store: what was stored since a date, or what has not been
found whole for some days; each blob found whole records when, a damaged one does not."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from sqlalchemy import select, update

from labrig.store import open_store, utcnow
from labrig.store.models import Blob, Capture
from tests.e2e.test_cli_capture import _video, labrig


def _blobs(store: Path) -> dict[str, Blob]:
    s = open_store(store)
    try:
        with s.read() as session:
            return {b.sha256: b for b in session.scalars(select(Blob))}
    finally:
        s.close()


def _age(store: Path, digests: set[str], *, stored_days: int = 0, checked_days: int = 0) -> None:
    """Make these blobs look stored and last found whole so many days ago."""
    s = open_store(store)
    try:
        with s.write() as session:
            now = utcnow()
            values = {}
            if stored_days:
                values["created_at"] = now - timedelta(days=stored_days)
            if checked_days:
                values["verified_at"] = now - timedelta(days=checked_days)
            session.execute(update(Blob).where(Blob.sha256.in_(digests)).values(**values))
    finally:
        s.close()


def _verify(store: Path, *args: str) -> dict[str, object]:
    result = labrig(store, "verify", "--json", *args)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_a_partial_check_takes_what_was_stored_since_or_not_checked_for_days(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    assert labrig(store, "import", str(_video(tmp_path / "old.avi"))).returncode == 0
    old = set(_blobs(store))
    assert labrig(store, "import", str(_video(tmp_path / "new.avi", frames=9))).returncode == 0
    new = set(_blobs(store)) - old
    assert old and new
    _age(store, old, stored_days=30)

    full = _verify(store)
    assert full["ok"] is True and full["full"] is True and full["blobs_checked"] == len(old | new)
    checked = _blobs(store)
    assert all(b.verified_at is not None for b in checked.values())  # each found whole, recorded

    # what was stored in the last week: the new capture's files and its manifest
    recent = _verify(store, "--since", "7d")
    assert recent["full"] is False and recent["blobs_checked"] == len(new)
    assert recent["captures_checked"] == 1

    # one old file rots; a check of the last week does not read it, the full check finds it
    rotten = next(b for b in checked.values() if b.sha256 in old and b.ext == ".avi")
    path = next((store / "media").rglob(f"{rotten.sha256}{rotten.ext}"))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    assert _verify(store, "--since", "7d")["ok"] is True
    since_date = (utcnow() - timedelta(days=60)).astimezone().date().isoformat()
    found = _verify(store, "--since", since_date)
    assert found["ok"] is False and [p["subject"] for p in found["problems"]] == [rotten.sha256]  # type: ignore[index, union-attr]

    # nothing is unchecked for a day; blobs last found whole 10 days ago are, the rotten one too,
    # and a rotten blob keeps its last good check
    assert _verify(store, "--unchecked-days", "1")["blobs_checked"] == 0
    _age(store, old, checked_days=10)
    before = _blobs(store)[rotten.sha256].verified_at
    stale = _verify(store, "--unchecked-days", "7")
    assert stale["blobs_checked"] == len(old) and stale["ok"] is False
    after = _blobs(store)
    assert after[rotten.sha256].verified_at == before
    assert all(after[d].verified_at > before for d in old - {rotten.sha256})  # type: ignore[operator]


def test_a_since_that_is_not_a_date_is_refused_and_nothing_is_recorded(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert labrig(store, "import", str(_video(tmp_path / "a.avi"))).returncode == 0
    for bad in ("yesterday", "2026-13-01", "3 days"):
        result = labrig(store, "verify", "--since", bad)
        assert result.returncode == 2 and "LABRIG_USAGE" in result.stderr, (bad, result.stderr)
        assert "--since takes a date" in result.stderr
    negative = labrig(store, "verify", "--unchecked-days", "-1")
    assert negative.returncode == 2 and "cannot be negative" in negative.stderr
    assert all(b.verified_at is None for b in _blobs(store).values())
    s = open_store(store)
    try:
        with s.read() as session:
            assert len(list(session.scalars(select(Capture)))) == 1
    finally:
        s.close()
