"""Correcting the tracks and signing off on the Review page, as a reviewer does it: a marker dragged
on the video, a gap hidden and filled with the range marked by I / O, a sign-off that a later
correction clears, on the Review and Results pages alike. Everything is read back through the
services; the automatic document stays byte-identical."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from pytestqt.qtbot import QtBot

from labrig.capture.frame_tags import read_frame_tag
from labrig.domain.corrections import parse_operation
from labrig.ui.review.page import ReviewPage
from tests.ui.review_helpers import LEFT, WAIT_MS, Bench, Rig, counts, open_result, open_tab


def _at_frame(qtbot: QtBot, page: ReviewPage, frame: int) -> None:
    qtbot.waitUntil(lambda: page.player.shown_index is not None, timeout=WAIT_MS)
    page.player.seek(frame)
    qtbot.waitUntil(
        lambda: page.player.shown_index == frame and not page.player.busy, timeout=WAIT_MS
    )


def _saved(qtbot: QtBot, page: ReviewPage, revisions: int) -> None:
    """Wait until the page shows ``revisions`` revisions and the player has redrawn them (the
    page reads the tracks again when the number of revisions changes)."""
    qtbot.waitUntil(lambda: page.history.rowCount() == revisions and not page.busy, timeout=WAIT_MS)


def test_a_marker_dragged_on_the_video_moves_that_track_at_that_frame_only(
    qtbot: QtBot, rig: Rig, bench: Bench
) -> None:
    page, services = bench.review_page("rita")
    reviews = services.governance.revisions
    automatic = reviews.automatic_document(rig.published_id)
    open_result(qtbot, page, rig.published_id)
    _at_frame(qtbot, page, 12)
    view = page.player.views[0]
    track = next(o for o in view.overlays if o.track_id == "1")
    assert track.effective is not None
    grab = view.screen_point(track.effective.at(12)).toPoint()
    drop = grab + QPoint(40, -25)

    def drag() -> None:
        qtbot.mousePress(view, LEFT, pos=grab)
        qtbot.mouseMove(view, pos=grab + QPoint(20, -10))
        qtbot.mouseMove(view, pos=drop)
        qtbot.mouseRelease(view, LEFT, pos=drop)

    # without a reason nothing is stored, and the form says what to do
    before = counts(rig.store)
    drag()
    assert "say why in Why first" in page.correction.status.text()
    assert counts(rig.store) == before

    qtbot.keyClicks(page.correction.reason, "tracker jumped to the wrong blob")
    source, unchanged = reviews.effective(rig.published_id)
    drag()
    _saved(qtbot, page, 1)
    [revision] = reviews.show(rig.published_id).revisions
    [move] = revision.operations
    assert (move.kind, move.tracks, move.start) == ("move", ("1",), 12)
    # dropped where the mouse was released, in the tracks' px
    assert page.player.media is not None
    want = page.player.media.tracked_px(*view.picture_point(drop.toPointF()))
    np.testing.assert_allclose(move.xy, want, atol=0.01)
    _, moved = reviews.effective(rig.published_id)
    for name, before_track in unchanged.tracks.items():
        after = moved.tracks[name]
        differs = np.any(after.xy != before_track.xy, axis=1)
        expected = [12] if name == "1" else []
        assert after.frames[differs].tolist() == expected, name
    np.testing.assert_allclose(moved.tracks["1"].at(12), want, atol=0.01)
    assert source.tracks["1"].at(12) is not None
    # the redrawn overlay shows the marker where it was dropped, the automatic one as a cross
    redrawn = next(o for o in page.player.views[0].overlays if o.track_id == "1")
    assert redrawn.effective is not None
    landed = page.player.views[0].screen_point(redrawn.effective.at(12))
    assert abs(landed.x() - drop.x()) < 1.0 and abs(landed.y() - drop.y()) < 1.0
    assert "moved track 1 at frame 12" in page.history.item(0, 3).text()
    assert reviews.automatic_document(rig.published_id) == automatic


def test_a_gap_is_hidden_then_filled_with_the_range_marked_on_the_video(
    qtbot: QtBot, rig: Rig, bench: Bench
) -> None:
    page, services = bench.review_page("rita")
    reviews = services.governance.revisions
    automatic = reviews.automatic_document(rig.published_id)
    open_result(qtbot, page, rig.published_id)
    form = page.correction
    assert page.action_tabs.currentWidget() is form  # the first thing a reviewer does
    qtbot.waitUntil(form.hide_button.isEnabled, timeout=WAIT_MS)
    form.track_box.setCurrentIndex(form.track_box.findData("0"))
    for frame, key in ((10, Qt.Key.Key_I), (17, Qt.Key.Key_O)):
        _at_frame(qtbot, page, frame)
        page.player.setFocus()
        qtbot.keyClick(page.player, key)
    assert (form.from_box.value(), form.to_box.value()) == (10, 17)
    qtbot.keyClicks(form.reason, "marker 0 under the hand")
    qtbot.mouseClick(form.hide_button, LEFT)
    _saved(qtbot, page, 1)
    assert "Revision 1 saved: track 0 hidden from frame 10 to 17" in form.status.text()
    form.method_box.setCurrentIndex(form.method_box.findData("spline"))
    # the longest gap a fill bridges, as the form sets it: 8 frames are more than 5
    form.max_gap_box.setValue(5)
    stored = counts(rig.store)
    qtbot.mouseClick(form.fill_button, LEFT)
    qtbot.waitUntil(lambda: form.status.text().startswith("Not saved"), timeout=WAIT_MS)
    assert "5" in form.status.text() and counts(rig.store) == stored
    form.max_gap_box.setValue(8)
    qtbot.mouseClick(form.fill_button, LEFT)
    _saved(qtbot, page, 2)
    _, filled = reviews.effective(rig.published_id)
    assert filled.tracks["0"].filled == frozenset(range(10, 18))
    overlay = next(o for o in page.player.views[0].overlays if o.track_id == "0")
    assert overlay.effective is not None and overlay.effective.filled == frozenset(range(10, 18))
    # the values recomputed from the corrected tracks show in the table
    fields = {f.field: f for f in reviews.show(rig.published_id).fields}
    assert fields["track:0.path_length"].revision == 2
    # a fill over frames that have positions is refused in words, nothing stored
    before = counts(rig.store)
    form.from_box.setValue(2)
    form.to_box.setValue(5)
    qtbot.mouseClick(form.fill_button, LEFT)
    qtbot.waitUntil(lambda: form.status.text().startswith("Not saved"), timeout=WAIT_MS)
    assert "no gap" in form.status.text() or "nothing to fill" in form.status.text()
    assert counts(rig.store) == before
    assert reviews.automatic_document(rig.published_id) == automatic


def test_a_sign_off_shows_on_both_pages_and_a_later_correction_clears_it(
    qtbot: QtBot, rig: Rig, bench: Bench
) -> None:
    page, services = bench.review_page("rita")
    open_result(qtbot, page, rig.published_id)
    open_tab(qtbot, page, page.signing)
    assert page.signing.state.text() == "Not signed off."
    page.signing.meaning_box.setCurrentIndex(page.signing.meaning_box.findData("approved"))
    qtbot.mouseClick(page.signing.button, LEFT)
    qtbot.waitUntil(
        lambda: page.signing.state.text().startswith("Approved by rita at "), timeout=WAIT_MS
    )
    assert "Signed off as approved (revision 1)" in page.signing.status.text()

    results, _ = bench.results_page("rita")
    badge = results.detail.badges["signOffBadge"]
    qtbot.waitUntil(lambda: badge.isVisible() and badge.text() == "APPROVED", timeout=WAIT_MS)
    assert "Approved by rita" in badge.toolTip()

    # a colleague's correction, arriving through the bridge, clears it on both pages
    services.governance.revisions.correct(
        rig.published_id, [parse_operation("trim", "2-27")], "settling time"
    )
    qtbot.waitUntil(
        lambda: page.signing.state.text().startswith("Sign-off cleared: approved by rita"),
        timeout=WAIT_MS,
    )
    assert "then revision 2 by rita changed the data" in page.signing.state.text()
    qtbot.waitUntil(lambda: badge.text() == "SIGN-OFF CLEARED", timeout=WAIT_MS)


def test_the_speed_plot_follows_the_video_and_a_click_on_it_seeks_the_video(
    qtbot: QtBot, rig: Rig, bench: Bench
) -> None:
    page, services = bench.review_page("rita")
    source, _ = services.governance.revisions.effective(rig.published_id)
    x, y = source.tracks["0"].at(20)
    services.governance.revisions.correct(
        rig.published_id, [parse_operation("move", f"0@20={x + 30},{y}")], "reflection"
    )
    open_result(qtbot, page, rig.published_id)
    open_tab(qtbot, page, page.curves)
    qtbot.waitUntil(lambda: page.player.media is not None and not page.busy, timeout=WAIT_MS)
    media = page.player.media
    assert media is not None and media.curves is not None
    # the moved track's automatic speed is drawn dashed beside the corrected one; only that one
    assert page.curves.changed == ["0"]
    _at_frame(qtbot, page, 8)
    assert page.curves.time_cursor.time == pytest.approx(media.time_of(8))
    # a click on the plot at the time of frame 25 shows frame 25
    view_box = page.curves.item.vb
    scene = view_box.mapViewToScene(QPointF(media.time_of(25), 50.0))
    at = page.curves.plot.mapFromScene(scene)
    qtbot.mouseClick(page.curves.plot.viewport(), LEFT, pos=at)
    qtbot.waitUntil(lambda: page.player.shown_index == 25 and not page.player.busy, timeout=WAIT_MS)
    assert read_frame_tag(page.player.shown_frames[0]) == 25
    assert page.curves.time_cursor.time == pytest.approx(media.time_of(25))


def test_the_results_page_plays_the_recording_and_its_speed_plot_seeks_it(
    qtbot: QtBot, rig: Rig, bench: Bench
) -> None:
    results, _ = bench.results_page("rita")
    player = results.player
    qtbot.waitUntil(lambda: player.shown_index == 0 and not player.busy, timeout=WAIT_MS)
    assert player.media is not None and player.media.result_id == rig.published_id
    assert {o.track_id for o in player.views[0].overlays} == {"0", "1", "2"}
    # a click on the speed plot at the time of frame 17 opens the recording there
    plot = results.detail.plots.speed
    scene = plot.getPlotItem().vb.mapViewToScene(QPointF(player.media.time_of(17), 50.0))
    qtbot.mouseClick(plot.viewport(), LEFT, pos=plot.mapFromScene(scene))
    qtbot.waitUntil(lambda: player.shown_index == 17 and not player.busy, timeout=WAIT_MS)
    assert results.detail.tabs.currentWidget() is player
    assert read_frame_tag(player.shown_frames[0]) == 17
    # stepping the video moves the plot's cursor to the frame's time
    player.setFocus()
    qtbot.keyClick(player, Qt.Key.Key_Right)
    qtbot.waitUntil(lambda: player.shown_index == 18 and not player.busy, timeout=WAIT_MS)
    assert results.detail.plots.time_cursor.time == pytest.approx(player.media.time_of(18))
    # and a dot where each track is then on the trajectories
    plots = results.detail.plots
    t = player.media.time_of(18)
    dots = plots.positions.data
    assert len(dots) == len(plots._tracks) == 3
    for dot, track in zip(dots, plots._tracks, strict=True):
        assert dot["x"] == pytest.approx(np.interp(t, track.t, track.x))
        assert dot["y"] == pytest.approx(np.interp(t, track.t, track.y))


def test_a_correction_is_undone_from_the_history_and_the_tracks_come_back(
    qtbot: QtBot, rig: Rig, bench: Bench
) -> None:
    page, services = bench.review_page("rita")
    reviews = services.governance.revisions
    _, before = reviews.effective(rig.published_id)
    reviews.correct(rig.published_id, [parse_operation("occlude", "2@3-9")], "hidden")
    reviews.sign_off(rig.published_id, "reviewed")
    open_result(qtbot, page, rig.published_id)
    open_tab(qtbot, page, page.history_tab)
    qtbot.waitUntil(lambda: page.history.rowCount() == 2, timeout=WAIT_MS)
    # a sign-off cannot be undone: selecting it leaves the button off
    page.history.selectRow(1)
    assert not page.undo_bar.button.isEnabled()
    page.history.selectRow(0)
    assert page.undo_bar.button.isEnabled() and page.undo_bar.button.text() == "Undo revision 1"
    qtbot.mouseClick(page.undo_bar.button, LEFT)  # no reason yet: refused in words
    assert "say why first" in page.undo_bar.status.text()
    assert counts(rig.store)[0] == 2
    qtbot.keyClicks(page.undo_bar.reason, "the marker was visible")
    qtbot.mouseClick(page.undo_bar.button, LEFT)
    _saved(qtbot, page, 3)
    assert "undoes revision 1" in page.history.item(2, 3).text()
    assert "(undone by revision 3)" in page.history.item(0, 3).text()
    _, after = reviews.effective(rig.published_id)
    np.testing.assert_array_equal(after.tracks["2"].xy, before.tracks["2"].xy)
    overlay = next(o for o in page.player.views[0].overlays if o.track_id == "2")
    assert overlay.effective is not None and overlay.effective.at(5) is not None
    assert page.signing.state.text().startswith("Sign-off cleared")


def test_corrections_and_a_sign_off_made_in_the_window_survive_a_restart(
    qtbot: QtBot, rig: Rig, bench: Bench
) -> None:
    page, services = bench.review_page("rita")
    open_result(qtbot, page, rig.published_id)
    form = page.correction
    # the form opens once the recording and its tracks are read
    qtbot.waitUntil(form.hide_button.isEnabled, timeout=WAIT_MS)
    form.track_box.setCurrentIndex(form.track_box.findData("0"))
    form.from_box.setValue(10)
    form.to_box.setValue(17)
    qtbot.keyClicks(form.reason, "marker 0 under the hand")
    qtbot.mouseClick(form.hide_button, LEFT)
    _saved(qtbot, page, 1)
    qtbot.mouseClick(form.fill_button, LEFT)
    _saved(qtbot, page, 2)
    open_tab(qtbot, page, page.signing)
    page.signing.meaning_box.setCurrentIndex(page.signing.meaning_box.findData("approved"))
    qtbot.mouseClick(page.signing.button, LEFT)
    _saved(qtbot, page, 3)
    shown_before = services.governance.revisions.show(rig.published_id)
    bench.close()  # the window and its services are gone, as when the app is quit

    again = Bench(qtbot, rig)
    try:
        page, services = again.review_page("rita")
        open_result(qtbot, page, rig.published_id)
        qtbot.waitUntil(lambda: page.player.media is not None and not page.busy, timeout=WAIT_MS)
        assert page.history.rowCount() == 3
        assert page.signing.state.text().startswith("Approved by rita at ")
        overlay = next(o for o in page.player.views[0].overlays if o.track_id == "0")
        assert overlay.effective is not None
        assert overlay.effective.filled == frozenset(range(10, 18))
        assert page.curves.changed == ["0"]
        assert services.governance.revisions.show(rig.published_id).fields == shown_before.fields
        audit = services.governance.audit
        assert audit.verify().intact
        actions = [e.action for e in audit.entries(rig.published_id)]
        assert actions == ["review.revise", "review.revise", "review.sign_off"]
    finally:
        again.close()
