"""Damaged catalog pages (issue 16): bytes flipped in the last page of ``labrig.db``, the index of
imported digests, so SQLite's ``integrity_check`` reports a row missing from an index while the
``quick_check`` run at every open still passes. Every command accepted it, and the same file was
imported twice. Now ``labrig doctor`` and ``labrig worker`` (the window: tests/ui) find it, it is
recorded beside the catalog (``labrig.db.damaged``), every command that writes refuses and writes
nothing, reading goes on, and a restored or rebuilt catalog that passes ``labrig doctor`` writes
again.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import assert_typed, labrig, write_video
from tests.support.pages import MISSING_ROW, damage_the_imported_index, rows

CODE = "LABRIG_CATALOG_DAMAGED"
MARKER = "labrig.db.damaged"
TABLES = (
    "captures",
    "capture_segments",
    "blobs",
    "imported_sources",
    "outbox_events",
    "audit_entries",
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of two real imports, closed; its folder (with the videos beside it)."""
    folder = tmp_path_factory.mktemp("damage-template")
    for n in range(3):
        write_video(folder / f"trial-{n}.avi", frames=8 + n, seed=n)
    for n in range(2):
        imported = labrig(folder / "store", "import", str(folder / f"trial-{n}.avi"))
        assert imported.returncode == 0, imported.stdout + imported.stderr
    assert not (folder / "store" / "labrig.db-wal").exists()  # checkpointed: all in labrig.db
    return folder


@pytest.fixture
def damaged(template: Path, tmp_path: Path) -> Path:
    """A copy of the template whose index of imported digests lost its first row (a copy of the
    whole database from before is kept as tmp_path/backup.db); the store."""
    shutil.copytree(template, tmp_path, dirs_exist_ok=True)
    store = tmp_path / "store"
    shutil.copy(store / "labrig.db", tmp_path / "backup.db")
    damage_the_imported_index(store / "labrig.db")  # and checks quick_check passes, not the other
    return store


def _files(store: Path) -> list[str]:
    return sorted(str(p.relative_to(store)) for p in store.rglob("*") if p.is_file())


def _rows(store: Path) -> dict[str, int]:
    assert not (store / "labrig.db-wal").exists()  # every command closed it: all in labrig.db
    return rows(store / "labrig.db", TABLES)


def _pages_check(store: Path) -> tuple[int, dict[str, str]]:
    doctor = labrig(store, "doctor", "--json")
    assert_typed(doctor)
    [pages] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "pages"]
    return doctor.returncode, pages


def _refused(result: subprocess.CompletedProcess[str]) -> None:
    """Refused as a whole, with the code and the way out."""
    assert_typed(result)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith(f"labrig: {CODE}: the catalog "), result.stderr
    assert "restore labrig.db from a backup" in result.stderr
    assert "labrig recover --adopt" in result.stderr


def test_doctor_finds_an_index_missing_a_row_says_what_to_do_and_remembers_it(
    damaged: Path,
) -> None:
    assert len(labrig(damaged, "captures", "--json").stdout.splitlines()) == 2  # opens as before

    status, pages = _pages_check(damaged)

    assert status == 1
    assert pages["status"] == "fail"
    assert pages["detail"].startswith(f"{CODE}: SQLite's integrity_check found damage")
    assert MISSING_ROW in pages["detail"]
    assert "restore labrig.db from a backup" in pages["fix"]
    assert "labrig recover --adopt" in pages["fix"] and "labrig doctor" in pages["fix"]
    marker = json.loads((damaged / MARKER).read_bytes())
    assert marker["schema"] == "labrig.catalog-damage/1"
    assert marker["found_by"] == "labrig doctor" and marker["check"] == "integrity_check"
    [finding] = marker["findings"]
    assert MISSING_ROW in finding
    assert marker["store_id"] and marker["database"] == str(damaged / "labrig.db")


def test_the_worker_finds_the_damage_after_start_stops_and_exits_with_the_code(
    damaged: Path,
) -> None:
    worker = labrig(damaged, "worker", "--drain")

    _refused(worker)
    assert json.loads((damaged / MARKER).read_bytes())["found_by"] == "labrig worker"
    _refused(labrig(damaged, "worker", "--drain"))  # the next one claims nothing at all


def test_once_found_every_command_that_writes_refuses_and_writes_nothing(
    damaged: Path, tmp_path: Path
) -> None:
    assert labrig(damaged, "worker", "--drain").returncode == 2
    files, counted = _files(damaged), _rows(damaged)

    _refused(labrig(damaged, "import", str(tmp_path / "trial-2.avi")))
    _refused(labrig(damaged, "import", str(tmp_path / "trial-0.avi")))  # its index entry is lost
    _refused(labrig(damaged, "record", "--device", "virtual:markers", "--seconds", "1"))
    _refused(labrig(damaged, "recover", "--adopt"))  # into the damaged catalog: no

    assert _files(damaged) == files and _rows(damaged) == counted
    assert counted["captures"] == 2 and counted["imported_sources"] == 2
    listed = labrig(damaged, "captures", "--json")  # reading goes on: look, verify, export
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == 2
    verified = labrig(damaged, "verify", "--json")
    assert_typed(verified)
    assert verified.returncode == 0 and json.loads(verified.stdout)["captures_checked"] == 2
    assert _files(damaged) == files


def test_a_database_restored_from_a_backup_writes_again_once_doctor_passes(
    damaged: Path, tmp_path: Path
) -> None:
    assert _pages_check(damaged)[1]["status"] == "fail"
    shutil.copy(tmp_path / "backup.db", damaged / "labrig.db")
    _refused(labrig(damaged, "import", str(tmp_path / "trial-2.avi")))  # not checked yet

    status, pages = _pages_check(damaged)

    assert pages["status"] == "ok", pages
    assert f"{MARKER} was removed and writing is allowed again" in pages["detail"]
    assert not (damaged / MARKER).exists()
    assert status in (0, 1)  # the free space of this machine may fail its own check
    imported = labrig(damaged, "import", str(tmp_path / "trial-2.avi"))
    assert imported.returncode == 0, imported.stdout + imported.stderr
    again = labrig(damaged, "import", str(tmp_path / "trial-0.avi"))  # the index is whole again
    assert again.returncode == 1 and "LABRIG_ALREADY_IMPORTED" in again.stdout
    assert _rows(damaged)["captures"] == 3


def test_a_catalog_rebuilt_from_the_media_store_is_not_refused(
    damaged: Path, tmp_path: Path
) -> None:
    assert labrig(damaged, "worker", "--drain").returncode == 2
    (damaged / "labrig.db").rename(tmp_path / "damaged.db")

    adopted = labrig(damaged, "recover", "--adopt", "--json")

    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    assert [a["outcome"] for a in json.loads(adopted.stdout)].count("adopted") == 2
    imported = labrig(damaged, "import", str(tmp_path / "trial-2.avi"))  # another catalog: writes
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert _pages_check(damaged)[1]["status"] == "ok"
    assert not (damaged / MARKER).exists()


@pytest.mark.parametrize("marker", [b"", b"{not json", b'{"schema": "labrig.other/9"}', None])
def test_a_marker_that_cannot_be_read_still_refuses_until_doctor_passes(
    template: Path, tmp_path: Path, marker: bytes | None
) -> None:
    shutil.copytree(template, tmp_path, dirs_exist_ok=True)
    store = tmp_path / "store"
    if marker is None:
        (store / MARKER).mkdir()  # a folder where the marker would be
    else:
        (store / MARKER).write_bytes(marker)

    refused = labrig(store, "import", str(tmp_path / "trial-2.avi"))

    _refused(refused)
    assert f"{MARKER} records damage but cannot be read" in refused.stderr
    assert _pages_check(store)[1]["status"] == "ok"  # the catalog itself is whole
    assert not (store / MARKER).exists()
    assert labrig(store, "import", str(tmp_path / "trial-2.avi")).returncode == 0
