"""``result.nwb``: one result as NWB 2 with the ndx-pose extension, for pynwb, NWB Widgets and
DANDI. Layout (each name documented in docs/export-sync.md):

- ``general``: identifier (the result id), session (id, start, protocol and attempt in the
  description, operator as experimenter), the subject (its code; Labrig records no species, sex or
  age, so sex is ``U``, unknown, and the other two are left out), the result's provenance as JSON
  in ``notes``; one ``Device`` per camera.
- ``processing/behavior``: a ``Skeletons`` (one ``Skeleton`` per set of markers, nodes only) and,
  per camera view, a ``PoseEstimation`` ``<camera>_automatic`` (pixels on the picture as recorded),
  plus ``<camera>_corrected`` where a reviewer corrected that view. A plane's points are
  ``plane_automatic`` / ``plane_corrected`` (millimetres on the plane). A rig's 3-D points are a
  ``MultiCameraPoseEstimation`` ``rig_automatic`` / ``rig_corrected`` (millimetres in the rig's
  world) holding the camera views as its children: ndx-pose 0.4 links one camera per
  ``PoseEstimation``. One ``PoseEstimationSeries`` per marker; NaN where it was not seen. In a
  corrected series ``confidence`` marks how each position was obtained: 1 tracked or placed by the
  reviewer, 0 interpolated by a gap fill, NaN missing.
- ``acquisition``: one ``TimeSeries`` per instrument, samples × channels.

Times are seconds from the attempt's zero (the first camera's first frame), as every format holds
them; ``session_start_time`` is when that camera started recording (its capture's start), a few
milliseconds before its first frame.
A regular grid (within 1 ns) is written as ``starting_time`` and ``rate``, else as timestamps that
the series of one view share (linked, not copied).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from ndx_pose import (
    MultiCameraPoseEstimation,
    PoseEstimation,
    PoseEstimationSeries,
    Skeleton,
    Skeletons,
)
from pynwb import NWBHDF5IO, NWBFile, TimeSeries
from pynwb.file import Subject

from labrig.export.tables import AnalogTable, Array, CameraInfo, Mask, PointTable, ResultTables

SOFTWARE = "Labrig"
BEHAVIOR = "behavior"
# the unit names nwbinspector accepts for positions (it flags "mm" and "px")
POSITION_UNITS = {"mm": "millimeters", "px": "pixels"}
FRAMES = {
    "image": "(0, 0) is the top-left corner of the camera's picture as recorded (distorted); "
    "x grows to the right, y grows downwards; pixels",
    "plane": "(0, 0) is the first inner corner of the calibration board lying on the measurement "
    "plane; x and y on that plane, y downwards as in the picture; millimetres",
    "3d": "(0, 0, 0) is the origin of the rig's world: the floor board's first corner (x along its "
    "first row, z up, the floor is z = 0), else the first camera's centre (x right, y down, "
    "z ahead); millimetres",
}
CONFIDENCE = (
    "Not a likelihood: how the corrected position was obtained. 1: tracked, or placed by the "
    "reviewer; 0: interpolated by a reviewer's gap fill; NaN: no position."
)
GRID_TOLERANCE_S = 1e-9


def _name(text: str) -> str:
    """An NWB object name: no slashes (nwbinspector: critical) and no colons (a suggestion)."""
    return re.sub(r"[/\\:]", "_", text)


def _regular_rate(times: Array, nominal: float) -> float | None:
    """The rate of ``times`` when they lie on a regular grid (the nominal rate first, else the one
    their ends give) within :data:`GRID_TOLERANCE_S`; None for fewer than two, or off a grid."""
    n = len(times)
    if n < 2 or not np.all(np.isfinite(times)) or times[-1] <= times[0]:
        return None
    steps = np.arange(n)
    for rate in (nominal, (n - 1) / (times[-1] - times[0])):
        if rate > 0 and np.max(np.abs(times - (times[0] + steps / rate))) <= GRID_TOLERANCE_S:
            return float(rate)
    return None


def _timing(times: Array, nominal: float, shared: Any) -> dict[str, Any]:
    """A series' time arguments: ``starting_time`` and ``rate`` on a regular grid, else
    ``shared`` (a series whose timestamps this one links to) or the timestamps themselves."""
    rate = _regular_rate(times, nominal)
    if rate is not None:
        return {"starting_time": float(times[0]), "rate": rate}
    return {"timestamps": shared if shared is not None else np.asarray(times, dtype=np.float64)}


def _pose(
    table: PointTable,
    positions: Array,
    *,
    name: str,
    description: str,
    scorer: str,
    device: Any,
    skeleton: Any,
    version: str | None,
    shared: Any,
    filled: Mask | None = None,
) -> Any:
    """One container of ``positions`` (N×M×D), one series per marker. ``filled`` (N×M, corrected
    positions only) adds the confidence that marks the positions a gap fill interpolated;
    ``shared``: the series whose timing every series of this one follows."""
    series = []
    for m, marker in enumerate(table.markers):
        data = np.asarray(positions[:, m, :], dtype=np.float64)
        confidence = None
        if filled is not None:
            missing = np.isnan(data).any(axis=1)
            confidence = np.where(missing, np.nan, np.where(filled[:, m], 0.0, 1.0))
        colour = "" if marker.colour_rgb is None else f", colour RGB {marker.colour_rgb}"
        one = PoseEstimationSeries(
            name=marker.label,
            description=f"{marker.description} (track {marker.track_id}{colour})",
            data=data,
            unit=POSITION_UNITS.get(table.units, "n.a."),
            reference_frame=FRAMES[table.kind],
            confidence=confidence,
            confidence_definition=CONFIDENCE if confidence is not None else None,
            **_timing(table.times_s, table.rate_hz, shared),
        )
        shared = shared if shared is not None else one
        series.append(one)
    kind = MultiCameraPoseEstimation if table.kind == "3d" else PoseEstimation
    extra = {} if table.kind == "3d" else {"device": device}
    return kind(
        name=name,
        pose_estimation_series=series,
        description=description,
        scorer=scorer,
        source_software=SOFTWARE,
        source_software_version=version,
        skeleton=skeleton,
        **extra,
    )


def _pair(
    table: PointTable, base: str, device: Any, skeleton: Any, tables: ResultTables
) -> tuple[Any, Any | None]:
    """``<base>_automatic`` and, where a reviewer corrected the table, ``<base>_corrected``."""
    version = tables.provenance.get("labrig_version")
    where = {"3d": "in the rig's world", "plane": "on the calibrated plane"}.get(
        table.kind, f"on camera {base}'s picture"
    )
    automatic = _pose(
        table,
        table.automatic,
        name=f"{base}_automatic",
        description=f"The markers {where} as Labrig's analysis published them (automatic).",
        scorer="Labrig automatic tracking",
        device=device,
        skeleton=skeleton,
        version=version,
        shared=None,
    )
    if table.effective is None:
        return automatic, None
    revisions = tables.provenance.get("revisions")
    by = f" (revisions {revisions})" if revisions else ""
    filled = table.filled if table.filled is not None else np.zeros(table.effective.shape[:2], bool)
    corrected = _pose(
        table,
        table.effective,
        name=f"{base}_corrected",
        description=f"The markers {where} as the reviewer corrected them{by}: the automatic "
        f"positions with the corrections in force. {int(filled.sum())} positions were "
        "interpolated by a gap fill (confidence 0); NaN where there is no position.",
        scorer=f"reviewer corrections{by}",
        device=device,
        skeleton=skeleton,
        version=version,
        shared=next(iter(automatic.pose_estimation_series.values()), None),
        filled=filled,
    )
    return automatic, corrected


def _camera(tables: ResultTables, key: str | None) -> CameraInfo | None:
    """The camera a table names, by device id or by name."""
    return next((c for c in tables.cameras if key in (c.device_id, c.name)), None)


def _instrument(table: AnalogTable, name: str) -> Any:
    """One instrument's samples × channels; the unit is ``mixed`` when the channels differ."""
    units = {c.unit for c in table.channels}
    unit = units.pop() if len(units) == 1 else "mixed"
    channels = ", ".join(f"{c.name} ({c.unit or 'no unit'})" for c in table.channels)
    return TimeSeries(
        name=name,
        description=f"Instrument {table.device_id} ({table.name}) at a nominal {table.rate_hz:g} "
        f"Hz; columns: {channels}.",
        comments=f"channels (columns): {', '.join(c.name for c in table.channels)}",
        data=np.asarray(table.values, dtype=np.float64),
        unit=unit or "n.a.",
        **_timing(table.times_s, table.rate_hz, None),
    )


def _start(tables: ResultTables) -> tuple[datetime, str]:
    """The session's start and, when the session has none, the substitution said in words."""
    text, note = tables.session.get("started_at"), ""
    if not text:
        text, note = (
            tables.created_at,
            " The recording's start is not known: the session starts when the result was "
            "published.",
        )
    start = datetime.fromisoformat(str(text))
    return (start if start.tzinfo else start.replace(tzinfo=UTC)), note


def write_nwb(
    tables: ResultTables,
    path: Path,
    *,
    exported_at: datetime | None = None,
    subject: Mapping[str, str] | None = None,
) -> None:
    """Write ``tables`` to ``path`` as one NWB file (overwriting it). ``exported_at`` is the file's
    creation date (now when None); ``subject`` the subject's ``species`` and ``age`` where the
    person exporting gave them (Labrig's catalog records neither)."""
    session = tables.session
    start, note = _start(tables)
    protocol = session.get("protocol") or "not recorded"
    operator = session.get("operator")
    nwb = NWBFile(
        session_description=f"Labrig result {tables.result_id}: protocol {protocol}, attempt "
        f"{tables.attempt_number} ({tables.attempt_id}). Times count from the attempt's first "
        f"camera frame; the session starts when that camera started recording.{note}",
        identifier=tables.result_id,
        session_start_time=start,
        file_create_date=exported_at or datetime.now(UTC),
        session_id=str(session["session_id"]) if session.get("session_id") else None,
        experimenter=[str(operator)] if operator else None,
        notes=json.dumps(tables.provenance, sort_keys=True, ensure_ascii=False),
    )
    if session.get("subject_code"):
        given = dict(subject or {})
        missing = [f for f in ("species", "age") if not given.get(f)]
        nwb.subject = Subject(
            subject_id=str(session["subject_code"]),
            sex="U",
            species=given.get("species") or None,
            age=given.get("age") or None,
            description="Labrig's catalog records the subject's code only: sex is U (unknown)"
            + ("; the species and age were given at export" if not missing else "")
            + (f"; {' and '.join(missing)} not recorded" if missing else "")
            + ".",
        )
    devices = {}
    for c in tables.cameras:
        devices[c.device_id] = nwb.create_device(
            name=_name(c.name),
            description=f"Camera {c.device_id} (capture {c.capture_id}): {c.width}x{c.height} px "
            f"at {c.fps:g} frames/s, {c.frame_count} frames stored.",
        )
    behavior = nwb.create_processing_module(
        name=BEHAVIOR, description="Marker positions tracked by Labrig, automatic and corrected."
    )
    skeletons: dict[tuple[str, ...], Any] = {}

    def skeleton(table: PointTable) -> Any:
        labels = tuple(m.label for m in table.markers)
        if labels not in skeletons:
            name = "markers" if not skeletons else f"markers_{len(skeletons) + 1}"
            skeletons[labels] = Skeleton(name=name, nodes=list(labels))
        return skeletons[labels]

    def device(key: str | None) -> Any:
        camera = _camera(tables, key)
        return None if camera is None else devices[camera.device_id]

    points = tables.points
    views = list(tables.views)
    if points.kind == "image" and _camera(tables, points.camera) not in [
        _camera(tables, v.camera) for v in views
    ]:
        views.insert(0, points)  # a result in px is its camera's view: not repeated otherwise
    pairs = []
    for view in views:
        camera = _camera(tables, view.camera)
        base = _name(camera.name if camera else str(view.camera))
        pairs.append(_pair(view, base, device(view.camera), skeleton(view), tables))
    if points.kind == "3d":  # the views go inside the rig's containers
        rig, rig_corrected = _pair(points, "rig", None, skeleton(points), tables)
        top = [c for c in (rig, rig_corrected) if c is not None]
        for automatic, corrected in pairs:
            rig.add_pose_estimation(automatic)
            if corrected is not None and rig_corrected is not None:
                rig_corrected.add_pose_estimation(corrected)
            elif corrected is not None:  # a rig's views are not corrected (docs): kept all the same
                top.append(corrected)
    else:
        if points.kind == "plane":
            pairs.append(_pair(points, "plane", device(points.camera), skeleton(points), tables))
        top = [c for pair in pairs for c in pair if c is not None]
    behavior.add(Skeletons(skeletons=list(skeletons.values())))
    for container in top:
        behavior.add(container)
    names: set[str] = set()
    for table in tables.analog:
        name = _name(table.name)
        name = name if name not in names else _name(f"{table.name}_{table.device_id}")
        names.add(name)
        nwb.add_acquisition(_instrument(table, name))
    with NWBHDF5IO(str(path), "w") as io:
        io.write(nwb)
