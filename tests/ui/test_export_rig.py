"""Issue 20's "done when", in the window: a reviewed rig result (the virtual rig's four cameras and
force plate, one marker moved by a reviewer, signed off) exported in every format from the Results
screen's Export dialog. The files' contents are checked by their readers in
tests/integration/archive/test_export_formats.py; here, that a person gets every one of them."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pynwb import NWBHDF5IO
from pytestqt.qtbot import QtBot

from labrig.domain.corrections import parse_operation
from labrig.export.interchange import FORMATS
from labrig.store import Store
from labrig.ui.results.page import ResultsPage
from labrig.ui.shell.bridge import EventBridge
from tests.support.rig_results import PlateRigResult, record_plate_rig_result
from tests.ui.analysis_helpers import WAIT_MS
from tests.ui.test_export_dialog import _bundles, _export, _open_dialog, _select

pytestmark = pytest.mark.slow


@pytest.fixture
def rig(store: Store) -> Iterator[PlateRigResult]:
    built = record_plate_rig_result(store)
    reviews = built.services.governance.revisions
    reviews.correct(built.result_id, [parse_operation("move", "0@7=120,-40,650")], "slipped")
    reviews.sign_off(built.result_id, "approved", "checked against the video")
    yield built
    built.services.close()


@pytest.fixture
def page(qtbot: QtBot, rig: PlateRigResult) -> Iterator[ResultsPage]:
    bridge = EventBridge()
    bridge.attach(rig.services)
    made = ResultsPage(rig.services.governance.reviewed, lambda: rig.services.export, bridge)
    qtbot.addWidget(made)
    made.resize(1280, 800)
    made.show()
    qtbot.waitExposed(made)
    qtbot.waitUntil(lambda: made.model.rowCount() == 1 and not made.reading, timeout=WAIT_MS)
    yield made
    made.shut_down(5000)
    bridge.detach(rig.services)


def test_a_reviewed_rig_result_is_exported_in_every_format_from_the_window(
    qtbot: QtBot, page: ResultsPage, rig: PlateRigResult, tmp_path: Path
) -> None:
    _select(qtbot, page, rig.attempt_id)
    dialog = _open_dialog(qtbot, page)
    target = tmp_path / "exports"
    # what NWB asks of the subject and the catalog does not hold, typed by the person exporting:
    # an age NWB cannot read is refused with its code, and nothing is written. The fields wait for
    # NWB to be ticked
    assert not dialog.species.isEnabled()
    dialog.format_boxes["nwb"].setChecked(True)
    assert dialog.species.isEnabled() and dialog.age.isEnabled()
    qtbot.keyClicks(dialog.species, "Homo sapiens")
    qtbot.keyClicks(dialog.age, "thirty")
    _export(qtbot, dialog, target, FORMATS)
    assert "LABRIG_NWB_SUBJECT" in dialog.outcome.toPlainText() and _bundles(target) == []
    dialog.age.clear()
    qtbot.keyClicks(dialog.age, "P30Y")

    _export(qtbot, dialog, target, FORMATS)

    [bundle] = _bundles(target)
    assert str(bundle) in dialog.outcome.toPlainText()
    manifest = json.loads((bundle / "manifest.json").read_text())
    [entry] = manifest["results"]
    assert entry["sign_off"] and "approved" in entry["sign_off"].lower()
    assert set(entry["formats"]) == set(FORMATS) and entry["formats_skipped"] == {}
    folder = bundle / entry["folder"]
    names = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert {"markers-tidy.csv", "markers.c3d", "markers.trc", "result.nwb"} <= names
    assert "instruments/plate.mot" in names
    assert {n.split("-overlay")[0] for n in names if n.startswith("video/")} == {
        f"video/{place}" for place in ("front", "right", "back", "left")
    }
    with NWBHDF5IO(str(folder / "result.nwb"), "r", load_namespaces=True) as io:
        subject = io.read().subject
        assert (subject.subject_id, subject.species, subject.age) == (
            "S-042",
            "Homo sapiens",
            "P30Y",
        )
    check = subprocess.run(
        ["sha256sum", "-c", "--strict", "--quiet", "SHA256SUMS"], cwd=bundle, capture_output=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
