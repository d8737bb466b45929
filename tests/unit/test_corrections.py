"""Corrections of tracked data: each operation against what it must do to the tracks, the fills
against a known smooth path, refusals with their codes, and the automatic tracks never touched."""

from __future__ import annotations

import numpy as np
import pytest

from labrig.domain.corrections import (
    CorrectionRefusedError,
    CorrectionSyntaxError,
    Operation,
    Track,
    apply,
    parse_operation,
    suspicious_frames,
)


def circle(frames: np.ndarray) -> np.ndarray:
    """A marker going round a 100 px circle once every 90 frames."""
    a = 2 * np.pi * frames / 90.0
    return np.stack([320 + 100 * np.cos(a), 240 + 100 * np.sin(a)], axis=1)


def tracks() -> dict[str, Track]:
    f = np.arange(0, 120)
    return {
        "0": Track(f, circle(f)),
        "1": Track(f, np.stack([f * 2.0, np.full(len(f), 50.0)], axis=1)),
    }


def op(kind: str, text: str) -> Operation:
    return parse_operation(kind, text)


def test_move_sets_exactly_that_frame_and_adds_a_missing_one() -> None:
    before = tracks()
    after = apply(before, [op("move", "0@30=400.5,250")])
    np.testing.assert_array_equal(after["0"].at(30), [400.5, 250.0])
    changed = np.nonzero(np.any(after["0"].xy != before["0"].xy, axis=1))[0]
    assert changed.tolist() == [30]
    np.testing.assert_array_equal(before["0"].at(30), circle(np.array([30]))[0])  # untouched
    hidden = apply(before, [op("occlude", "0@30-30"), op("move", "0@30=1,2")])
    assert len(hidden["0"].frames) == 120 and hidden["0"].at(30).tolist() == [1.0, 2.0]


def test_occlude_removes_the_range_and_fill_bridges_it() -> None:
    hidden = apply(tracks(), [op("occlude", "0@40-49")])
    assert hidden["0"].at(40) is None and hidden["0"].at(49) is None
    assert len(hidden["0"].frames) == 110 and hidden["0"].at(50) is not None
    truth = circle(np.arange(40, 50))
    errors = {}
    for method in ("linear", "spline"):
        filled = apply(hidden, [op("fill", f"0@40-49:{method}")])["0"]
        assert len(filled.frames) == 120 and filled.filled == frozenset(range(40, 50))
        got = np.array([filled.at(f) for f in range(40, 50)])
        errors[method] = float(np.sqrt(((got - truth) ** 2).sum(axis=1).mean()))
    # a chord across 40 degrees of the circle runs up to 6 px inside it (5.6 px RMS); the spline
    # follows the curve (0.07 px)
    assert errors["spline"] < 0.1 and errors["linear"] > 4.0, errors


def test_fill_refuses_a_long_gap_and_one_without_valid_frames_around_it() -> None:
    hidden = apply(tracks(), [op("occlude", "0@20-79"), op("occlude", "1@0-5")])
    with pytest.raises(CorrectionRefusedError, match="60 frames, longer than the 30") as long:
        apply(hidden, [op("fill", "0@20-79")])
    assert long.value.code == "LABRIG_CORRECTION_REFUSED"
    with pytest.raises(CorrectionRefusedError, match="0 valid frames before it"):
        apply(hidden, [op("fill", "1@0-5")])
    longer = parse_operation("fill", "0@20-79:spline", max_gap=60)
    assert len(apply(hidden, [longer])["0"].frames) == 120
    with pytest.raises(CorrectionRefusedError, match="no gap to fill"):
        apply(tracks(), [op("fill", "0@3-9")])


def test_swap_exchanges_identities_from_that_frame_on() -> None:
    before = tracks()
    after = apply(before, [op("swap", "0,1@60")])
    np.testing.assert_array_equal(after["0"].xy[:60], before["0"].xy[:60])
    np.testing.assert_array_equal(after["0"].xy[60:], before["1"].xy[60:])
    np.testing.assert_array_equal(after["1"].xy[60:], before["0"].xy[60:])
    assert apply(after, [op("swap", "0,1@60")])["0"].xy.tolist() == before["0"].xy.tolist()


def test_trim_keeps_the_analysed_range_in_every_track() -> None:
    after = apply(tracks(), [op("trim", "10-19")])
    assert all(t.frames.tolist() == list(range(10, 20)) for t in after.values())
    with pytest.raises(CorrectionRefusedError, match="no track has a position"):
        apply(tracks(), [op("trim", "500-600")])


def test_operations_round_trip_as_json_and_refuse_bad_syntax() -> None:
    for kind, text in (
        ("move", "0@30=400.5,-2e1"),
        ("occlude", "0@1-2"),
        ("fill", "1@3-9:spline"),
        ("swap", "0,1@5"),
        ("trim", "3-90"),
    ):
        parsed = parse_operation(kind, text)
        assert Operation.of(parsed.to_json()) == parsed
    for kind, text, why in (
        ("move", "0@30=400", "write TRACK@FRAME=X,Y"),
        ("occlude", "0@9-3", "runs backwards"),
        ("fill", "0@3-9:cubic", "linear or TRACK@A-B:spline"),
        ("swap", "0,0@5", "twice"),
        ("delete", "0@5", "unknown correction"),
    ):
        with pytest.raises(CorrectionSyntaxError, match=why) as refused:
            parse_operation(kind, text)
        assert refused.value.code == "LABRIG_CORRECTION_SYNTAX"
    with pytest.raises(CorrectionRefusedError, match="no track 7; its tracks are 0, 1"):
        apply(tracks(), [op("move", "7@3=1,1")])


def test_suspicious_frames_name_jumps_gaps_fills_and_lost_tracks() -> None:
    before = tracks()
    assert suspicious_frames(before, last_frame=119) == []  # a smooth circle and a line
    corrected = apply(
        before,
        [
            op("move", "1@40=500,50"),  # a 420 px jump in and out
            op("occlude", "0@60-64"),
            op("occlude", "0@80-83"),
            op("fill", "0@80-83:spline"),
            op("trim", "0-110"),
        ],
    )
    found = [
        (s.frame, s.track_id, s.why.split()[0])
        for s in suspicious_frames(corrected, last_frame=119)
    ]
    assert found == [
        (40, "1", "jumps"),
        (41, "1", "jumps"),
        (60, "0", "missing"),
        (80, "0", "filled"),
        (111, "0", "lost"),
        (111, "1", "lost"),
    ]
