"""The files an export writes for one result, built from its snapshot. Pure: no
database, no file system.

Schemas (each field documented in docs/export-sync.md):

- ``result.json`` — ``labrig.export.result/1``: every revisable metric with its automatic and
  effective value and the revision that set it, the revision history, status, reasons, units and QC.
- ``metrics.csv`` — the same fields, one row per track and metric.
- ``series.csv`` — the automatic smoothed positions and velocities per track and sample.
- ``series-effective.csv`` — only when a reviewer corrected the tracks: the same series of the
  corrected tracks, each sample with its frame and whether a gap fill interpolated it.
- ``provenance.json`` — ``labrig.export.provenance/1``: inputs, captures and their digests,
  calibration, release, jobs, revisions, and who exported it when, with the audit chain head.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from labrig.domain.revisions import FieldRef
from labrig.export.effective_series import EffectiveSeries
from labrig.export.plots import Curve, line_plot
from labrig.export.snapshot import ResultSnapshot

RESULT_SCHEMA = "labrig.export.result/1"
PROVENANCE_SCHEMA = "labrig.export.provenance/1"
EFFECTIVE_SERIES_NAME = "series-effective.csv"
LENGTH_METRICS = frozenset({"path_length", "displacement", "range_x", "range_y", "extent"})


def pretty_json(value: Any) -> bytes:
    """How exported JSON is written: indented, sorted keys, UTF-8, newline-terminated, no NaN."""
    return (
        json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    ).encode()


def metric_unit(metric: str, units: Mapping[str, Any] | None) -> str:
    length, time = (str((units or {}).get("length") or ""), str((units or {}).get("time") or ""))
    if metric in LENGTH_METRICS:
        return length
    if metric == "peak_speed":
        return f"{length}/{'frame' if time == 'frames' else time}"
    return time


def result_document(snap: ResultSnapshot) -> dict[str, Any]:
    r, automatic = snap.reviewed, snap.automatic
    fields = []
    for f in r.fields:
        ref = FieldRef.parse(f.field)
        fields.append(
            {
                "field": f.field,
                "track_id": ref.track_id,
                "metric": ref.metric,
                "unit": metric_unit(ref.metric, r.units),
                "automatic": f.automatic,
                "effective": f.effective,
                "revision": f.revision,
            }
        )
    return {
        "schema": RESULT_SCHEMA,
        "result_id": r.result_id,
        "attempt_id": r.attempt_id,
        "attempt_number": snap.attempt_number,
        "session": snap.session,
        "status": r.status,
        "degraded": r.degraded,
        "reasons": automatic.get("reasons") or [],
        "units": r.units,
        "published_at": snap.created_at,
        "automatic_digest": r.automatic_digest,
        "automatic_intact": r.automatic_intact,
        "superseded_by": r.superseded_by,
        "fields": fields,
        "track_notes": {
            str(m.get("track_id")): m.get("reason")
            for m in automatic.get("metrics") or []
            if m.get("reason")
        },
        "revisions": [v.to_json() for v in r.revisions],
        "qc": automatic.get("qc"),
        "sign_off": r.sign_off.to_json() if r.sign_off is not None else None,
        "effective_series": effective_series_document(snap.effective, automatic),
    }


def effective_series_document(
    effective: EffectiveSeries | None, automatic: Mapping[str, Any]
) -> dict[str, Any] | None:
    """What ``series-effective.csv`` holds and where it came from; None when no revision corrects
    the tracks (the series in force is then the automatic one, ``series.csv``)."""
    if effective is None:
        return None
    kept = {str(t.track_id) for t in effective.tracks}
    return {
        "file": EFFECTIVE_SERIES_NAME,
        "meaning": "effective: the tracks as the reviewer corrected them, with their kinematics "
        "recomputed as the automatic ones were",
        "revisions": list(effective.revisions),
        "units": effective.units,
        "tracks": [
            {"track_id": t.track_id, "samples": len(t.t), "filled_frames": t.filled_frames}
            for t in effective.tracks
        ],
        "emptied_tracks": [
            s.get("track_id")
            for s in automatic.get("series") or []
            if str(s.get("track_id")) not in kept
        ],
    }


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    return repr(float(value)) if isinstance(value, float) else value


def _csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([_cell(v) for v in row] for row in rows)
    return buffer.getvalue().encode()


def metrics_csv(document: Mapping[str, Any]) -> bytes:
    """One row per track and metric:
    unit, automatic value, effective value, revision that set it."""
    return _csv(
        ("track_id", "metric", "unit", "automatic", "effective", "revision"),
        (
            (f["track_id"], f["metric"], f["unit"], f["automatic"], f["effective"], f["revision"])
            for f in document["fields"]
        ),
    )


def _track_rows(track: Mapping[str, Any]) -> Iterable[Sequence[Any]]:
    velocity = track.get("velocity") or []
    # a rig's 3-D series holds ``xyz``: its x and y are written (z waits for the tidy CSV), its
    # speed is the 3-D one
    positions = track.get("xy") or track.get("xyz") or []
    for i, (t, xy) in enumerate(zip(track.get("t") or [], positions, strict=False)):
        v = velocity[i] if i < len(velocity) else None
        speed = math.hypot(*v) if v is not None else None
        yield (
            track.get("track_id"),
            t,
            xy[0],
            xy[1],
            v[0] if v else None,
            v[1] if v else None,
            speed,
        )


def _series_rows(series: Sequence[Mapping[str, Any]]) -> Iterable[Sequence[Any]]:
    for track in series:
        yield from _track_rows(track)


def series_csv(automatic: Mapping[str, Any]) -> bytes:
    """The automatic smoothed series: time, position, velocity and speed per track and sample."""
    return _csv(
        ("track_id", "t", "x", "y", "vx", "vy", "speed"),
        _series_rows(automatic.get("series") or []),
    )


def effective_series_csv(effective: EffectiveSeries) -> bytes:
    """The corrected tracks' smoothed series, as :func:`series_csv` writes the automatic one, each
    sample with the stored frame at its time and ``filled`` 1 when a gap fill interpolated it."""
    return _csv(
        ("track_id", "t", "x", "y", "vx", "vy", "speed", "frame", "filled"),
        (
            (*row, frame, int(filled))
            for track in effective.tracks
            for row, frame, filled in zip(
                _track_rows(track.document()), track.frames, track.filled, strict=True
            )
        ),
    )


def plots(automatic: Mapping[str, Any]) -> dict[str, bytes]:
    """``trajectories.png`` and ``speed.png`` in the result's own units."""
    units = automatic.get("units") or {}
    length, time = str(units.get("length") or ""), str(units.get("time") or "")
    per = "frame" if time == "frames" else time
    series = automatic.get("series") or []
    paths = [
        Curve(
            f"track {s.get('track_id')}",
            [p[0] for p in s.get("xy") or []],
            [p[1] for p in s.get("xy") or []],
        )
        for s in series
    ]
    speeds = [
        Curve(
            f"track {s.get('track_id')}",
            list(s.get("t") or []),
            [math.hypot(v[0], v[1]) for v in s.get("velocity") or []],
        )
        for s in series
        if s.get("velocity")
    ]
    return {
        "trajectories.png": line_plot(
            paths, "Trajectories", f"x ({length})", f"y ({length}, downwards)", flip_y=True
        ),
        "speed.png": line_plot(speeds, "Speed", f"time ({time})", f"speed ({length}/{per})"),
    }


def provenance(snap: ResultSnapshot, exported: Mapping[str, Any]) -> dict[str, Any]:
    automatic = snap.automatic
    return {
        "schema": PROVENANCE_SCHEMA,
        "result_id": snap.reviewed.result_id,
        "attempt_id": snap.reviewed.attempt_id,
        "automatic_digest": snap.reviewed.automatic_digest,
        "result_schema": automatic.get("schema"),
        "analysis": automatic.get("provenance") or {},
        "captures": [
            {
                **c.info,
                "files": [{"name": f.name, "sha256": f.sha256, "kind": f.kind} for f in c.files],
            }
            for c in snap.captures
        ],
        "revisions": [
            {"number": r.number, "revision_id": r.revision_id, "digest": r.digest}
            for r in snap.revisions
        ],
        "sign_off": sign_off_line(snap),
        "exported": dict(exported),
    }


def sign_off_line(snap: ResultSnapshot) -> str | None:
    """The result's latest sign-off in one line (and whether a later revision cleared it), or
    None when it was never signed off."""
    state = snap.reviewed.sign_off
    return state.describe() if state is not None else None


def format_provenance(snap: ResultSnapshot) -> dict[str, str]:
    """What the interchange formats carry of a result's provenance, as flat text (a C3D parameter
    group, an NWB file's notes): its ids and digest, calibration, release, revisions in force and
    sign-off."""
    automatic = snap.automatic.get("provenance") or {}
    release = automatic.get("release")
    return {
        "result_id": snap.reviewed.result_id,
        "attempt_id": snap.reviewed.attempt_id,
        "automatic_digest": snap.reviewed.automatic_digest,
        "calibration": str(
            automatic.get("rig_calibration_id") or automatic.get("calibration_id") or ""
        ),
        "release": json.dumps(release, sort_keys=True)
        if isinstance(release, dict)
        else str(release or ""),
        "revisions": ",".join(str(r.number) for r in snap.revisions),
        "corrections_from_revisions": ",".join(str(n) for n in snap.effective.revisions)
        if snap.effective is not None
        else "",
        "sign_off": sign_off_line(snap) or "",
        "published_at": snap.created_at,
    }
