"""Exporting a real published result a reviewer corrected and signed off: the values in force are
those of the corrected tracks, the corrected series is written beside the automatic one (which
stays byte for byte what it was), its filled frames marked, every file in SHA256SUMS, and the
sign-off in the result's JSON and its provenance."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path
from typing import Any

from labrig.domain.corrections import parse_operation
from labrig.export import ExportReport, verify_bundle
from tests.integration.archive.conftest import Lab
from tests.integration.archive.test_export import sha256sum_check

GAP = range(10, 18)
EFFECTIVE_HEADER = "track_id,t,x,y,vx,vy,speed,frame,filled"


def folder_of(report: ExportReport) -> Path:
    [listed] = report.results
    return report.bundle / listed["folder"]


def sums_of(bundle: Path) -> dict[str, str]:
    lines = (bundle / "SHA256SUMS").read_text().splitlines()
    return {path: digest for digest, path in (line.split("  ", 1) for line in lines)}


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def cell(value: Any) -> str:
    """A value as the exported CSV writes it."""
    return "" if value is None else repr(float(value))


def correct_track_0(lab: Lab) -> None:
    """Track 0 hidden over frames 10–17 (revision 1), the gap then filled by spline (revision 2)."""
    reviews = lab.services.governance.revisions
    reviews.correct(lab.published_id, [parse_operation("occlude", "0@10-17")], "hidden by a hand")
    reviews.correct(lab.published_id, [parse_operation("fill", "0@10-17:spline")], "spline fill")


def test_a_corrected_signed_off_result_exports_its_effective_values_and_series(
    lab: Lab, tmp_path: Path
) -> None:
    reviews = lab.services.governance.revisions
    before = folder_of(lab.services.export.export([lab.published_id], tmp_path / "before"))
    correct_track_0(lab)
    signed = reviews.sign_off(lab.published_id, "approved")
    shown = reviews.show(lab.published_id)
    report = lab.services.export.export([lab.published_id], tmp_path / "after")
    folder = folder_of(report)

    # the values in force are the corrected tracks', as the review shows them
    rows = {(r["track_id"], r["metric"]): r for r in rows_of(folder / "metrics.csv")}
    changed = []
    for f in shown.fields:
        track_id, metric = f.field.removeprefix("track:").split(".")
        row = rows[track_id, metric]
        assert (row["automatic"], row["effective"]) == (cell(f.automatic), cell(f.effective))
        assert row["revision"] == ("" if f.revision is None else str(f.revision))
        if row["effective"] != row["automatic"]:
            changed.append((track_id, metric, row["revision"]))
    assert changed and {(t, r) for t, _, r in changed} == {("0", "2")}, changed
    document = json.loads((folder / "result.json").read_text())
    assert [(f["field"], f["effective"], f["revision"]) for f in document["fields"]] == [
        (f.field, f.effective, f.revision) for f in shown.fields
    ]

    # the corrected series beside the automatic one, named, hashed and with its fill marked
    effective_path = folder / "series-effective.csv"
    data = effective_path.read_bytes()
    assert data.decode().splitlines()[0] == EFFECTIVE_HEADER
    relpath = effective_path.relative_to(report.bundle).as_posix()
    assert sums_of(report.bundle)[relpath] == hashlib.sha256(data).hexdigest()
    manifest = json.loads((report.bundle / "manifest.json").read_text())
    assert {f["path"]: f["sha256"] for f in manifest["files"]}[relpath] == sums_of(report.bundle)[
        relpath
    ]
    assert manifest["results"][0]["effective_series"] == relpath
    assert sha256sum_check(report.bundle).returncode == 0 and verify_bundle(report.bundle).intact
    series = rows_of(effective_path)
    filled = {(r["track_id"], int(r["frame"])) for r in series if r["filled"] == "1"}
    assert filled == {("0", f) for f in GAP}
    assert {r["filled"] for r in series} == {"0", "1"}
    _, effective = reviews.effective(lab.published_id)
    track_0 = next(k for k in effective.kinematics if str(k["track_id"]) == "0")
    exported_0 = [r for r in series if r["track_id"] == "0"]
    assert [(float(r["t"]), float(r["x"]), float(r["y"])) for r in exported_0] == [
        (t, xy[0], xy[1]) for t, xy in zip(track_0["t"], track_0["xy"], strict=True)
    ]
    assert document["effective_series"] == {
        "file": "series-effective.csv",
        "meaning": document["effective_series"]["meaning"],
        "revisions": [1, 2],
        "units": document["units"],
        "tracks": [
            {"track_id": t, "samples": len(s), "filled_frames": list(GAP) if t == 0 else []}
            for t, s in ((t, [r for r in series if r["track_id"] == str(t)]) for t in (0, 1, 2))
        ],
        "emptied_tracks": [],
    }
    assert document["effective_series"]["meaning"].startswith("effective: ")

    # the automatic series and document are what they were before the correction
    for name in ("series.csv", "automatic.json"):
        assert (folder / name).read_bytes() == (before / name).read_bytes(), name
    assert not (before / "series-effective.csv").exists()

    # the sign-off, in the result's JSON and as one line in its provenance and the manifest
    assert shown.sign_off is not None and signed.sign_off is not None
    assert document["sign_off"] == shown.sign_off.to_json()
    assert document["sign_off"]["in_force"] is True
    assert document["sign_off"]["meaning"] == "approved"
    assert document["sign_off"]["approved_digest"] == signed.sign_off.approved_digest
    line = shown.sign_off.describe()
    assert line.startswith("Approved by ada at ") and line.endswith("(revision 3)")
    assert json.loads((folder / "provenance.json").read_text())["sign_off"] == line
    assert manifest["results"][0]["sign_off"] == line


def test_a_sign_off_a_later_correction_cleared_is_exported_as_cleared(
    lab: Lab, tmp_path: Path
) -> None:
    reviews = lab.services.governance.revisions
    reviews.sign_off(lab.published_id, "reviewed")
    reviews.correct(lab.published_id, [parse_operation("trim", "2-27")], "settling")
    folder = folder_of(lab.services.export.export([lab.published_id], tmp_path))
    document = json.loads((folder / "result.json").read_text())
    assert document["sign_off"]["in_force"] is False and document["sign_off"]["cleared_by"] == 2
    assert document["effective_series"]["revisions"] == [2]
    line = json.loads((folder / "provenance.json").read_text())["sign_off"]
    assert line.startswith("Sign-off cleared: reviewed by ada at ")
    series = rows_of(folder / "series-effective.csv")
    assert {r["filled"] for r in series} == {"0"}
    assert {int(r["frame"]) for r in series} == set(range(2, 28))


def test_a_result_without_corrections_has_no_effective_series(lab: Lab, tmp_path: Path) -> None:
    plain = folder_of(lab.services.export.export([lab.published_id], tmp_path / "plain"))
    document = json.loads((plain / "result.json").read_text())
    assert document["sign_off"] is None and document["effective_series"] is None
    assert json.loads((plain / "provenance.json").read_text())["sign_off"] is None

    # a value set by hand and a sign-off change no tracked data: still no effective series
    reviews = lab.services.governance.revisions
    reviews.revise(lab.published_id, {"track:1.extent": 9}, "board edge")
    reviews.sign_off(lab.published_id, "approved")
    report = lab.services.export.export([lab.published_id], tmp_path / "revised")
    folder = folder_of(report)
    assert not (folder / "series-effective.csv").exists()
    assert not any("series-effective" in path for path in sums_of(report.bundle))
    document = json.loads((folder / "result.json").read_text())
    assert document["effective_series"] is None and document["sign_off"]["in_force"] is True
    manifest = json.loads((report.bundle / "manifest.json").read_text())
    assert manifest["results"][0]["effective_series"] is None
    assert (folder / "series.csv").read_bytes() == (plain / "series.csv").read_bytes()
