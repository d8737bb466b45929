"""The corrections' operations as a revision stores them (plain JSON) and as the command line
writes them (:func:`parse_operation`; the syntax is in :mod:`labrig.domain.corrections`). Pure
Python: the command line reads it without loading numpy."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from labrig.errors import LabrigError

Kind = Literal["move", "occlude", "fill", "swap", "trim"]
KINDS: tuple[Kind, ...] = ("move", "occlude", "fill", "swap", "trim")
FILL_METHODS = ("linear", "spline")
#: fill's defaults: the longest gap it bridges (frames) and the valid frames it needs each side
MAX_GAP, MIN_VALID = 30, 2


class CorrectionRefusedError(LabrigError):
    """An operation that does not apply to the tracks as they are (no such track or frame, a gap
    too long to fill, nothing to change)."""

    code = "LABRIG_CORRECTION_REFUSED"


class CorrectionSyntaxError(LabrigError):
    code = "LABRIG_CORRECTION_SYNTAX"


@dataclass(frozen=True)
class Operation:
    kind: Kind
    tracks: tuple[str, ...] = ()  # the track(s) it names (swap: two; trim: none)
    start: int = 0  # frame (move, swap) or first frame of the range (occlude, fill, trim)
    end: int = 0  # last frame of the range (the same as start for move and swap)
    xy: tuple[float, ...] = ()  # move: the new position
    method: str = "linear"  # fill
    max_gap: int = MAX_GAP  # fill
    min_valid: int = MIN_VALID  # fill

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"kind": self.kind}
        if self.tracks:
            body["tracks"] = list(self.tracks)
        if self.kind in ("move", "swap"):
            body["frame"] = self.start
        else:
            body["frames"] = [self.start, self.end]
        if self.kind == "move":
            body["xy"] = list(self.xy)
        if self.kind == "fill":
            body |= {"method": self.method, "max_gap": self.max_gap, "min_valid": self.min_valid}
        return body

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> Operation:
        kind = body["kind"]
        start, end = (body["frame"],) * 2 if "frame" in body else body["frames"]
        return cls(
            kind,
            tuple(str(t) for t in body.get("tracks", ())),
            int(start),
            int(end),
            tuple(float(v) for v in body.get("xy", ())),
            body.get("method", "linear"),
            int(body.get("max_gap", MAX_GAP)),
            int(body.get("min_valid", MIN_VALID)),
        )

    def describe(self) -> str:
        """One line a reviewer reads in a history."""
        t = ", ".join(self.tracks)
        if self.kind == "move":
            return (
                f"moved track {t} at frame {self.start} to ({', '.join(f'{v:g}' for v in self.xy)})"
            )
        if self.kind == "occlude":
            return f"track {t} hidden from frame {self.start} to {self.end}"
        if self.kind == "fill":
            return f"track {t} filled ({self.method}) from frame {self.start} to {self.end}"
        if self.kind == "swap":
            return f"tracks {t} swapped from frame {self.start} on"
        return f"analysed frames {self.start} to {self.end} only"


_TRACK = r"([A-Za-z0-9_.-]+)"
_RANGE = r"(\d+)-(\d+)"
_NUMBER = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_SYNTAX: dict[Kind, tuple[re.Pattern[str], str]] = {
    "move": (
        re.compile(rf"^{_TRACK}@(\d+)={_NUMBER},{_NUMBER}(?:,{_NUMBER})?$"),
        "TRACK@FRAME=X,Y (X,Y,Z in mm for a rig's 3-D marker), e.g. 0@120=640.5,360",
    ),
    "occlude": (re.compile(rf"^{_TRACK}@{_RANGE}$"), "TRACK@A-B, e.g. 0@120-140"),
    "fill": (
        re.compile(rf"^{_TRACK}@{_RANGE}(?::(linear|spline))?$"),
        "TRACK@A-B:linear or TRACK@A-B:spline, e.g. 0@120-140:spline",
    ),
    "swap": (re.compile(rf"^{_TRACK},{_TRACK}@(\d+)$"), "T1,T2@FRAME, e.g. 0,1@200"),
    "trim": (re.compile(rf"^{_RANGE}$"), "A-B, e.g. 30-900"),
}


def parse_operation(
    kind: str, text: str, *, max_gap: int = MAX_GAP, min_valid: int = MIN_VALID
) -> Operation:
    """An operation from its command-line form (the module's docstring)."""
    if kind not in _SYNTAX:
        raise CorrectionSyntaxError(f"unknown correction '{kind}'; use one of {', '.join(KINDS)}")
    pattern, example = _SYNTAX[kind]
    m = pattern.match(text.strip())
    if m is None:
        raise CorrectionSyntaxError(f"--{kind} '{text}' is not understood; write {example}")
    g = m.groups()
    if kind == "move":
        xy = tuple(float(v) for v in g[2:5] if v is not None)
        return Operation("move", (g[0],), int(g[1]), int(g[1]), xy)
    if kind == "swap":
        if g[0] == g[1]:
            raise CorrectionSyntaxError(
                f"--swap '{text}' names track {g[0]} twice; name two tracks"
            )
        return Operation("swap", (g[0], g[1]), int(g[2]), int(g[2]))
    names, (a, b) = ((), g[0:2]) if kind == "trim" else ((g[0],), g[1:3])
    if int(a) > int(b):
        raise CorrectionSyntaxError(f"--{kind} '{text}': the range {a}-{b} runs backwards")
    if kind == "fill":
        if max_gap < 1 or min_valid < 1:
            raise CorrectionSyntaxError("a fill needs a maximum gap and valid frames of at least 1")
        return Operation(
            "fill",
            names,
            int(a),
            int(b),
            method=g[3] or "linear",
            max_gap=max_gap,
            min_valid=min_valid,
        )
    return Operation(kind, names, int(a), int(b))
