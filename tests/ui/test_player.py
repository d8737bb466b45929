"""The review player on a real result (30 frames of the virtual camera, each carrying its index in
its corner, recorded and analysed through the queue): every step, seek and play shows exactly the
frame asked for, read back from the pixels on screen; the tracked markers are drawn over it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from labrig.bootstrap import Services, bootstrap
from labrig.capture.frame_tags import read_frame_tag
from labrig.domain.corrections import parse_operation
from labrig.store import open_store
from labrig.ui.common.player import PlayerWidget
from tests.support.results import TemplateResults, copy_store, make_results


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TemplateResults]:
    root = tmp_path_factory.mktemp("player-template") / "store"
    return root, make_results(root)


@pytest.fixture
def player(
    qtbot: QtBot, template: tuple[Path, TemplateResults], tmp_path: Path
) -> Iterator[tuple[PlayerWidget, Services, str]]:
    store = open_store(copy_store(template[0], tmp_path / "store"))
    services = bootstrap(store=store)
    widget = PlayerWidget()
    qtbot.addWidget(widget)
    widget.resize(900, 420)
    widget.show()
    yield widget, services, template[1].published_id
    widget.shut_down(10_000)
    store.close()


def shown(qtbot: QtBot, widget: PlayerWidget, frame: int) -> int:
    """Wait until the player shows ``frame``; the index drawn in the picture on screen."""
    qtbot.waitUntil(lambda: widget.shown_index == frame and not widget.busy, timeout=10_000)
    picture = widget.shown_frames[0]
    assert picture is not None
    return read_frame_tag(picture)


def test_every_step_seek_and_key_shows_exactly_the_frame_asked_for(
    qtbot: QtBot, player: tuple[PlayerWidget, Services, str]
) -> None:
    widget, services, result_id = player
    media = services.governance.reviewed.media(result_id)
    assert media.frame_count == 30 and len(media.cameras) == 1
    widget.set_media(media)
    assert shown(qtbot, widget, 0) == 0
    for frame in (17, 3, 29, 28, 0, 12):
        widget.seek(frame)
        assert shown(qtbot, widget, frame) == frame
    widget.setFocus()
    keys = Qt.Key
    for key, frame in (
        (keys.Key_Right, 13),
        (keys.Key_Right, 14),
        (keys.Key_Left, 13),
        (keys.Key_End, 29),
        (keys.Key_Home, 0),
    ):
        qtbot.keyClick(widget, key)
        assert shown(qtbot, widget, frame) == frame
    widget.slider.setValue(21)  # as a drag of the slider ends
    assert shown(qtbot, widget, 21) == 21
    assert widget.frame_box.value() == 21 and "Frame 21 of 30" in widget.status.text()


def test_playing_advances_frame_by_frame_and_stops_at_the_end(
    qtbot: QtBot, player: tuple[PlayerWidget, Services, str]
) -> None:
    widget, services, result_id = player
    widget.set_media(services.governance.reviewed.media(result_id))
    shown(qtbot, widget, 0)
    seen: list[int] = []
    widget.frame_shown.connect(lambda n: seen.append(read_frame_tag(widget.shown_frames[0])))
    widget.speed_box.setCurrentIndex(widget.speed_box.findData(4.0))
    widget.play(1)
    # playing stops once the last frame is asked for; it is shown when its decoding ends, which
    # on a busy machine may be after that
    qtbot.waitUntil(lambda: not widget.playing and bool(seen) and seen[-1] == 29, timeout=20_000)
    assert seen and seen[-1] == 29
    assert seen == sorted(seen) and len(set(seen)) == len(seen)  # on, never back or twice


def test_the_tracks_are_drawn_and_a_correction_shows_at_its_frame(
    qtbot: QtBot, player: tuple[PlayerWidget, Services, str]
) -> None:
    widget, services, result_id = player
    reviewed = services.governance.reviewed
    media = reviewed.media(result_id)
    assert len(media.overlays) == 3
    overlay = next(o for o in media.overlays if o.track_id == "1")
    assert overlay.effective is not None and len(overlay.effective.frames) == 30
    # a track's drawn position is the marker's in the picture: the tracker's own px, no lens
    widget.set_media(media)
    shown(qtbot, widget, 0)
    x, y = overlay.automatic.at(12)
    services.governance.revisions.correct(
        result_id, [parse_operation("move", f"1@12={x + 40},{y}")], "mistracked"
    )
    corrected = reviewed.media(result_id)
    moved = next(o for o in corrected.overlays if o.track_id == "1")
    assert moved.effective is not None
    assert moved.effective.at(12).tolist() == [x + 40, y]
    assert moved.automatic.at(12).tolist() == [x, y]
    widget.set_overlays(corrected.overlays)
    widget.seek(12)
    assert shown(qtbot, widget, 12) == 12
    image = widget.views[0].grab().toImage()
    view = widget.views[0]
    area = view.target()
    scale = area.width() / media.cameras[0].width
    # the grey cross of the automatic position and the circle of the corrected one are drawn
    cx = int(area.left() + (x + 0.5) * scale)
    cy = int(area.top() + (y + 0.5) * scale)
    pixel = image.pixelColor(cx, cy)
    assert abs(pixel.red() - 150) < 40 and abs(pixel.green() - 150) < 40, pixel.name()


def test_the_frames_to_look_at_are_listed_and_stepped_through_with_n_and_p(
    qtbot: QtBot, player: tuple[PlayerWidget, Services, str]
) -> None:
    widget, services, result_id = player
    widget.set_media(services.governance.reviewed.media(result_id))
    shown(qtbot, widget, 0)
    assert (
        widget.looking.suspicious == [] and "nothing to look at" in widget.looking.left_label.text()
    )
    x, y = services.governance.revisions.effective(result_id)[0].tracks["1"].at(20)
    services.governance.revisions.correct(
        result_id,
        [
            parse_operation("occlude", "0@8-11"),
            parse_operation("move", f"1@20={x + 200},{y}"),
        ],
        "a hand over marker 0; marker 1 mistracked",
    )
    widget.set_overlays(services.governance.reviewed.media(result_id).overlays)
    # the hidden frames, and the moved point's jump out and back
    assert [(s.frame, s.track_id) for s in widget.looking.suspicious] == [
        (8, "0"),
        (20, "1"),
        (21, "1"),
    ]
    assert widget.looking.left_label.text() == "3 of 3 left"
    assert "frame 8 · track 0: missing from frame 8 to 11" in widget.looking.look_box.itemText(0)
    widget.setFocus()
    for frame, left in ((8, 2), (20, 1), (21, 0)):
        qtbot.keyClick(widget, Qt.Key.Key_N)
        assert shown(qtbot, widget, frame) == frame
        assert widget.looking.left_label.text() == f"{left} of 3 left"
    qtbot.keyClick(widget, Qt.Key.Key_P)
    assert shown(qtbot, widget, 20) == 20
