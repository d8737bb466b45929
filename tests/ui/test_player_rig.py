"""The review player on a rig's 3-D result (the built-in virtual rig recorded for real under its
true cameras, analysed in 3-D): each camera's view gets that camera's markers, each shows the frame
``frames_at`` chose for it (read back from the tag the virtual rig draws in every frame), the
markers are drawn detection beside reprojection, none can be dragged, and the frames to look at
are the reconstruction's."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from pytestqt.qtbot import QtBot

from labrig.capture.frame_tags import read_frame_tag
from labrig.review import Overlay
from labrig.store import open_store
from labrig.ui.common.frame_view import FrameView
from labrig.ui.common.marks import DIAMOND
from labrig.ui.common.player import PlayerWidget
from tests.integration.review.test_rig_overlays import RigResult, device_frames, record_rig_result


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RigResult]:
    store = open_store(tmp_path_factory.mktemp("player-rig") / "store")
    built = record_rig_result(store)
    yield built
    built.services.close()  # its dispatcher, then the store


@pytest.fixture
def player(qtbot: QtBot) -> Iterator[PlayerWidget]:
    widget = PlayerWidget()
    qtbot.addWidget(widget)
    widget.resize(1400, 420)
    widget.show()
    yield widget
    widget.shut_down(10_000)


def shown(qtbot: QtBot, widget: PlayerWidget, frame: int) -> None:
    qtbot.waitUntil(lambda: widget.shown_index == frame and not widget.busy, timeout=10_000)


def coloured(
    view: FrameView, overlays: list[Overlay], points: list[QPointF], colour: np.ndarray
) -> list[bool]:
    """Whether ``view``, drawing only ``overlays``, paints ``colour`` at each of ``points`` (a
    pixel of the 3×3 around it: a 1.5 px pen, antialiased, covers one whole)."""
    view.overlays = overlays
    image = view.grab().toImage()
    out = []
    for p in points:
        x, y = round(p.x() - 0.5), round(p.y() - 0.5)
        near = [image.pixelColor(x + dx, y + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)]
        rgb = np.asarray([[c.red(), c.green(), c.blue()] for c in near])
        out.append(bool((np.abs(rgb - colour).max(axis=1) < 60).any()))
    return out


def test_each_camera_shows_its_own_frame_and_its_own_markers(
    qtbot: QtBot, player: PlayerWidget, rig: RigResult
) -> None:
    media = rig.media()
    numbers = [device_frames(m) for m in media.media]
    player.set_media(media)
    shown(qtbot, player, 0)
    assert len(player.views) == 4
    for frame in (37, 5, 52):
        player.seek(frame)
        shown(qtbot, player, frame)
        wanted = media.frames_at(frame)
        for n, (view, picture, index) in enumerate(
            zip(player.views, player.shown_frames, wanted, strict=True)
        ):
            # the camera's own markers, and the frame frames_at chose for it, tag and all
            assert view.overlays == media.overlays_by_camera[n] and len(view.overlays) == 4
            assert index is not None and view.index == index
            assert picture is not None and read_frame_tag(picture) == numbers[n][index]
            for o in view.overlays:
                assert o.reprojected is not None
            view.grab()  # paints every marker at this frame


def test_a_rig_marker_is_drawn_beside_its_reprojection_and_cannot_be_dragged(
    qtbot: QtBot, player: PlayerWidget, rig: RigResult
) -> None:
    media = rig.media()
    player.set_editable(True)
    player.set_media(media)
    shown(qtbot, player, 0)
    player.seek(20)
    shown(qtbot, player, 20)
    view = player.views[0]
    o = next(o for o in view.overlays if o.automatic.at(20) is not None)
    assert o.reprojected is not None
    at = view.screen_point(o.automatic.at(20))
    assert view.marker_near(at) is None  # a rig's marker is not corrected by hand
    qtbot.mousePress(view, Qt.MouseButton.LeftButton, pos=at.toPoint())
    qtbot.mouseRelease(view, Qt.MouseButton.LeftButton, pos=at.toPoint())
    # each marker's reprojection: a diamond in its colour where the 3-D point projects. Its edges
    # are checked where the picture, the trail and the detection's circle leave them uncoloured
    checked = 0
    for o in list(view.overlays):
        assert o.reprojected is not None
        frames = list(o.reprojected.frames)
        if 20 not in frames or o.automatic.at(20) is None:
            continue
        diamond = view.screen_point(o.reprojected.xy[frames.index(20)])
        edges = [
            diamond + QPointF(dx * DIAMOND / 2, dy * DIAMOND / 2)
            for dx in (-1, 1)
            for dy in (-1, 1)
        ]
        colour = np.asarray(o.colour_rgb or (255, 200, 0))

        free = [
            not c for c in coloured(view, [replace(o, reprojected=None)], edges, colour)
        ]  # the circle alone
        if sum(free) < 2:
            continue
        drawn = coloured(view, [o], edges, colour)
        assert all(d for d, f in zip(drawn, free, strict=True) if f), (o.track_id, free, drawn)
        checked += 1
    assert checked >= 2


def test_the_frames_to_look_at_are_the_reconstructions(
    qtbot: QtBot, player: PlayerWidget, rig: RigResult
) -> None:
    media = rig.media()
    player.set_media(media)
    shown(qtbot, player, 0)
    assert media.rig_looks is not None
    assert player.looking.suspicious == media.rig_looks
    if not media.rig_looks:
        assert "no gaps or reprojection errors" in player.looking.left_label.text()
        return
    first = media.rig_looks[0]
    assert f"frame {first.frame} · track {first.track_id}: " in player.looking.look_box.itemText(0)
    player.setFocus()
    qtbot.keyClick(player, Qt.Key.Key_N)
    shown(qtbot, player, first.frame)
