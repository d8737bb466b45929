"""What the analysis stages share: the output that carries its degraded reasons, marker tracking
through one committed capture, and the check of a marker hue setting."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from labrig.jobs import Setting, StageContext, StageOutput, in_range

if TYPE_CHECKING:
    import numpy as np

    from labrig.capture.media import CaptureMedia
    from labrig.pipeline.tracking import Tracks
    from labrig.tasks import Task


def capture_digests(ctx: StageContext) -> list[str]:
    """The job's own inputs, the captures' manifest digests: its input digests are those, then
    the outputs of the jobs it waits on."""
    own = len(ctx.input_digests) - len(ctx.upstream)
    return list(ctx.input_digests[:own])


def output(body: dict[str, Any], degraded_reasons: list[str]) -> StageOutput:
    """The reasons travel in the output too, so the published result can say why it is degraded."""
    return StageOutput(body | {"degraded_reasons": degraded_reasons}, tuple(degraded_reasons))


def hue_problem(value: list[Any]) -> str | None:
    if len(value) != 2 or not all(
        isinstance(h, int | float) and not isinstance(h, bool) and 0 <= h <= 360 for h in value
    ):
        return f"must be two angles of 0-360 degrees, like [40, 65], not {value}"
    return None


#: how markers are found, for every stage that tracks them
MARKER_SETTINGS: Mapping[str, Setting] = {
    "expected_markers": Setting(
        (int,),
        "how many markers the scene has; null: as many as are found",
        nullable=True,
        check=in_range(1, 1000),
    ),
    "marker_hue": Setting(
        (list,),
        "[low, high] hue in degrees (0-360, wraps through red) of coloured markers; "
        "null: bright markers of any colour",
        nullable=True,
        check=hue_problem,
    ),
}
WINDOW_S = Setting((float,), "Savitzky-Golay smoothing window in seconds", check=in_range(0.01, 10))


# tracking and kinematics load scipy (0.5 s): imported when a stage runs, not at every `labrig`
# start
def track_media(
    media: CaptureMedia,
    config: Mapping[str, Any],
    undistort: tuple[np.ndarray, np.ndarray] | None,
    task: Task,
) -> Tracks:
    """Markers tracked through one committed capture, as the tracking settings in ``config`` say
    (``marker_hue``, ``expected_markers``), undistorted with ``undistort`` (matrix, distortion),
    each track with its marker's colour."""
    from labrig.pipeline.marker_colours import with_colours
    from labrig.pipeline.tracking import detect_markers, track

    # bright markers are found on the grey plane: decoding MJPG straight to luma is most of this
    # stage's speed
    hue = config.get("marker_hue")
    frames = media.luma_frames() if hue is None else media.frames()  # colour needs the BGR frames
    detect = (
        detect_markers
        if hue is None
        else partial(detect_markers, hue=(float(hue[0]), float(hue[1])))
    )
    tracks = track(
        frames,
        detect=detect,
        expected_markers=config.get("expected_markers"),
        undistort=undistort,
        total_frames=media.frame_count,
        task=task,
    )
    # the plots draw each track in its marker's colour: read from a few colour frames
    return with_colours(media.frames(), tracks, undistort)
