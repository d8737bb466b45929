"""The Review screen on a rig's 3-D result: its markers are corrected by frame (the reconstruction's
instants are the first camera's frames), not dragged; the speed plot shows their 3-D speeds."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from labrig.store import open_store
from labrig.ui.review.page import ReviewPage
from labrig.ui.shell.bridge import EventBridge
from tests.integration.review.test_rig_overlays import RigResult, record_rig_result
from tests.ui.review_helpers import WAIT_MS, open_result

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RigResult]:
    store = open_store(tmp_path_factory.mktemp("review-rig") / "store")
    built = record_rig_result(store)
    yield built
    built.services.close()


def test_a_rig_marker_is_hidden_over_a_range_of_frames_from_the_review_screen(
    qtbot: QtBot, rig: RigResult
) -> None:
    services = rig.services
    bridge = EventBridge()
    bridge.attach(services)
    page = ReviewPage(services.governance.reviewed, bridge)
    qtbot.addWidget(page)
    page.resize(1400, 900)
    page.show()
    try:
        qtbot.waitUntil(lambda: page.model.rowCount() >= 1, timeout=WAIT_MS)
        open_result(qtbot, page, rig.result_id)
        form = page.correction
        qtbot.waitUntil(form.hide_button.isEnabled, timeout=WAIT_MS)
        source, _ = services.governance.revisions.effective(rig.result_id)
        assert sorted(form.track_box.itemData(i) for i in range(form.track_box.count())) == sorted(
            source.tracks
        )
        assert not page.player.editable  # 3-D markers are not dragged on a picture
        assert page.curves.plot.getPlotItem().getAxis("left").labelText.startswith("speed (mm/s")
        name = form.track_box.itemData(0)
        frames = source.tracks[name].frames
        start = int(frames[10])
        form.track_box.setCurrentIndex(0)
        form.from_box.setValue(start)
        form.to_box.setValue(start + 4)
        qtbot.keyClicks(form.reason, "marker hidden by the arm")
        qtbot.mouseClick(form.hide_button, LEFT)
        qtbot.waitUntil(lambda: page.history.rowCount() == 1 and not page.busy, timeout=WAIT_MS)
        _, hidden = services.governance.revisions.effective(rig.result_id)
        assert [f for f in range(start, start + 5) if hidden.tracks[name].at(f) is not None] == []
        assert f"track {name} hidden from frame {start} to {start + 4}" in form.status.text()
    finally:
        page.shut_down(5000)
        bridge.detach(services)
