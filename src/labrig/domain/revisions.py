"""Revisions of a published result's metrics: which fields a reviewer may change, and how.

A field is named ``track:ID.metric`` (e.g. ``track:0.peak_speed``); its value is a
finite number. A revision lists its changes with the value it replaces (the
effective value before it) and the new one; the effective metrics of a result
are its automatic metrics with every revision applied in order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from labrig.errors import LabrigError

SCHEMA = "labrig.revision/1"
#: a revision that corrects the tracked data or signs the result off: /1 plus its ``operations``
#: or its ``sign_off``
SCHEMA_CORRECTIONS = "labrig.revision/2"
#: what a sign-off says of the effective result, in the order a lab gives them
SIGN_OFF_MEANINGS = ("reviewed", "approved")
#: the metrics a reviewer may revise (``reason`` is prose and ``track_id`` an identity: neither is)
REVISABLE = (
    "path_length",
    "displacement",
    "peak_speed",
    "time_to_peak_speed",
    "range_x",
    "range_y",
    "extent",
)
EXAMPLE = "track:0.peak_speed=812.5"


class FieldSyntaxError(LabrigError):
    code = "LABRIG_FIELD_SYNTAX"


class UnknownFieldError(LabrigError):
    code = "LABRIG_UNKNOWN_FIELD"


class NotANumberError(LabrigError):
    code = "LABRIG_NOT_A_NUMBER"


class NoChangeError(LabrigError):
    code = "LABRIG_REVISION_NO_CHANGE"


class SignOffMeaningError(LabrigError):
    code = "LABRIG_SIGNOFF_MEANING"


def sign_off_meaning(text: str) -> str:
    """``reviewed`` or ``approved`` (any case); anything else refused, naming both."""
    meaning = text.strip().lower()
    if meaning not in SIGN_OFF_MEANINGS:
        raise SignOffMeaningError(
            f"'{text}' is not a sign-off meaning; give one of {', '.join(SIGN_OFF_MEANINGS)}"
        )
    return meaning


@dataclass(frozen=True)
class FieldRef:
    track_id: str
    metric: str

    @property
    def key(self) -> str:
        return f"track:{self.track_id}.{self.metric}"

    @classmethod
    def parse(cls, text: str) -> FieldRef:
        body = text.strip()
        track, dot, metric = body.removeprefix("track:").rpartition(".")
        if not body.startswith("track:") or not dot or not track or not metric:
            raise FieldSyntaxError(
                f"'{text}' does not name a field; write track:ID.metric, e.g. {EXAMPLE}"
            )
        return cls(track, metric)


@dataclass(frozen=True)
class Change:
    """One field of a revision: the value it replaced (may be null) and the reviewer's value."""

    field: str
    track_id: Any  # as the result document spells it (an integer for the marker tracker)
    metric: str
    old: float | None
    new: float

    def to_json(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "track_id": self.track_id,
            "metric": self.metric,
            "old": self.old,
            "new": self.new,
        }

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Change:
        return cls(data["field"], data["track_id"], data["metric"], data["old"], data["new"])


def parse_assignments(texts: Sequence[str]) -> dict[str, str]:
    """``["track:0.peak_speed=812.5", …]`` → field → value text; each field at most once."""
    values: dict[str, str] = {}
    for text in texts:
        field, eq, value = text.partition("=")
        if not eq:
            raise FieldSyntaxError(f"'{text}' has no value; write FIELD=VALUE, e.g. {EXAMPLE}")
        key = FieldRef.parse(field).key
        if key in values:
            raise FieldSyntaxError(f"{key} is given twice; give each field once")
        values[key] = value
    if not values:
        raise FieldSyntaxError(
            f"a revision changes at least one field; give --set FIELD=VALUE, e.g. {EXAMPLE}"
        )
    return values


def parse_number(field: str, value: Any) -> float:
    """A finite number from text or a number; anything else is refused naming the field."""
    if isinstance(value, bool):
        number = math.nan
    elif isinstance(value, int | float):
        number = float(value)
    else:
        try:
            number = float(str(value).strip())
        except ValueError:
            number = math.nan
    if not math.isfinite(number):
        raise NotANumberError(
            f"{field}: '{value}' is not a number; give a finite number such as 812.5 "
            "(in the result's units)"
        )
    return number


def plan_changes(metrics: Sequence[Mapping[str, Any]], values: Mapping[str, Any]) -> list[Change]:
    """The changes ``values`` make to the effective ``metrics``; unknown fields and
    no-op values refused."""
    tracks = {str(m.get("track_id")): m for m in metrics}
    changes = []
    for key, raw in values.items():
        ref = FieldRef.parse(key)
        track = tracks.get(ref.track_id)
        if track is None:
            raise UnknownFieldError(
                f"{key}: the result has no track {ref.track_id}; its tracks are "
                f"{', '.join(sorted(tracks)) or 'none'}"
            )
        if ref.metric not in REVISABLE:
            raise UnknownFieldError(
                f"{key}: '{ref.metric}' is not a metric a reviewer can revise; use one of "
                f"{', '.join(REVISABLE)}"
            )
        new = parse_number(key, raw)
        old = track.get(ref.metric)
        if old == new:
            continue
        changes.append(Change(ref.key, track.get("track_id"), ref.metric, old, new))
    if not changes:
        raise NoChangeError(
            "every value given equals the current (effective) value, so there is nothing to revise"
        )
    return sorted(changes, key=lambda c: c.field)


def apply_changes(
    metrics: Sequence[Mapping[str, Any]], changes: Sequence[Change]
) -> list[dict[str, Any]]:
    """A copy of ``metrics`` with ``changes`` applied."""
    out = [dict(m) for m in metrics]
    by_track = {str(m.get("track_id")): m for m in out}
    for change in changes:
        if str(change.track_id) in by_track:  # a track a correction trimmed away has no metrics
            by_track[str(change.track_id)][change.metric] = change.new
    return out
