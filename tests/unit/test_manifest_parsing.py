"""Manifests and timestamp sidecars from a damaged or hostile disk (issue 16): whatever the bytes,
parsing gives a valid manifest or a typed refusal, never another exception.

The fuzz draws random JSON, random bytes, truncations of a real manifest and real manifests with one
field replaced by a random value; the named cases are the damage seen in the attack on the command
line (a JSON array, no ``capture_id``, segments without ``sha256``, ``timestamps`` a number).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labrig.capture.manifest import (
    SCHEMA,
    ManifestError,
    ManifestV1,
    SegmentV1,
    parse_manifest,
    read_committed_manifest,
)
from labrig.capture.sink import read_timestamps
from labrig.domain.idempotency import sha256_hex

GOOD = ManifestV1(
    "0b7d9c36-5a43-4b4e-9d6e-2f2a8f1e3c11",
    None,
    {"device_id": "virtual:markers", "kind": "virtual"},
    {"width": 640, "height": 480, "fps": 30.0, "pixel_format": "MJPG"},
    {"measured_fps": 30.0},
    "2026-12-02T07:00:00+00:00",
    60.0,
    segments=(
        SegmentV1("seg-00000.avi", "seg-00000.ts.csv", 90, "a" * 64, 1234, 10, 3_000_000_010),
        SegmentV1("seg-00001.avi", "", 30, "b" * 64, 456, 3_033_000_010, 4_000_000_010),
    ),
    stopped_utc="2026-12-02T07:00:04+00:00",
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _parsed_or_refused(raw: bytes) -> ManifestV1 | None:
    """Parse ``raw``; a refusal must be :class:`ManifestError` (pytest reports anything else)."""
    try:
        manifest = parse_manifest(raw, "fuzzed.json")
    except ManifestError as exc:
        assert exc.code == "LABRIG_MANIFEST_INVALID" and "fuzzed.json" in exc.message
        return None
    # what was accepted is usable: it serialises and parses back to itself
    assert parse_manifest(manifest.to_bytes(), "again") == manifest
    return manifest


def test_a_real_manifest_parses_back_to_itself() -> None:
    assert parse_manifest(GOOD.to_bytes(), "m.json") == GOOD


def _with(change: dict[str, Any], *, segment: dict[str, Any] | None = None) -> bytes:
    data = asdict(GOOD)
    data.update(change)
    if segment is not None:
        data["segments"][0].update(segment)
    return json.dumps({k: v for k, v in data.items() if v is not _DROP}).encode()


_DROP = object()


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b"[1, 2]", f"not a {SCHEMA} manifest"),
        (_with({"capture_id": _DROP}), "lacks capture_id"),
        (_with({"capture_id": "../../x"}), "not a capture id"),
        (_with({}, segment={"sha256": None}), "segment 0 has no SHA-256"),
        (_with({}, segment={"timestamps": 7}), "timestamp file 7"),
        (_with({}, segment={"name": "../seg-00000.avi"}), "outside its folder"),
        (_with({}, segment={"frames": -1}), "frames' is negative"),
        (_with({}, segment={"frames": True}), "frames' is not a whole number"),
        (_with({"segments": 3}), "'segments' is not a list"),
        (_with({"mode": {"fps": "fast"}}), "'mode fps' is not a number"),
        (_with({"started_utc": "yesterday"}), "'started_utc' is not an ISO-8601 time"),
        (_with({"extra": 1}), "unknown fields extra"),
        (b"\xff\xfe not utf-8", "is not valid JSON"),
        (b"[" * 100_000, "is not valid JSON"),
        (b'{"schema": "labrig.manifest/1", "x": 1' + b"1" * 5000 + b"}", "is not valid JSON"),
    ],
)
def test_damage_seen_on_disk_is_refused_with_what_is_wrong(raw: bytes, said: str) -> None:
    with pytest.raises(ManifestError) as refused:
        parse_manifest(raw, "m.json")
    assert said in refused.value.message and refused.value.code == "LABRIG_MANIFEST_INVALID"


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_random_json_is_parsed_or_refused(value: Any) -> None:
    raw = json.dumps(value).encode()
    assert _parsed_or_refused(raw) is None  # none of these is a whole manifest
    # …nor with the right schema name added to an object
    if isinstance(value, dict):
        assert _parsed_or_refused(json.dumps(value | {"schema": SCHEMA}).encode()) is None


@settings(max_examples=300)
@given(st.binary(max_size=600))
def test_random_bytes_are_refused(raw: bytes) -> None:
    assert _parsed_or_refused(raw) is None


@settings(max_examples=300)
@given(st.integers(min_value=0, max_value=len(GOOD.to_bytes()) - 1))
def test_a_truncated_manifest_is_refused(cut: int) -> None:
    assert _parsed_or_refused(GOOD.to_bytes()[:cut]) is None


FIELDS = sorted(asdict(GOOD))
SEGMENT_FIELDS = sorted(asdict(GOOD.segments[0]))


@settings(max_examples=400)
@given(st.sampled_from(FIELDS), st.sampled_from(SEGMENT_FIELDS), json_values, st.booleans())
def test_one_field_replaced_by_anything_is_parsed_or_refused(
    field: str, segment_field: str, value: Any, in_segment: bool
) -> None:
    data = json.loads(GOOD.to_bytes())
    if in_segment:
        data["segments"][0][segment_field] = value
    else:
        data[field] = value
    manifest = _parsed_or_refused(json.dumps(data).encode())
    if manifest is not None:  # accepted only with every value of the type the schema says
        assert all(isinstance(s.frames, int) and len(s.sha256) == 64 for s in manifest.segments)
        assert isinstance(manifest.capture_id, str) and "/" not in manifest.capture_id


def test_a_committed_manifest_changed_in_place_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(GOOD.to_bytes())
    assert read_committed_manifest(path, sha256_hex(GOOD.to_bytes())) == GOOD
    path.write_bytes(GOOD.to_bytes().replace(b'"frames": 90', b'"frames": 91'))
    with pytest.raises(ManifestError, match="no longer matches its digest"):
        read_committed_manifest(path, sha256_hex(GOOD.to_bytes()))


SIDECAR = b"frame,mono_ns,utc_ns\n0,100,1700000000000000000\n1,200,1700000000033000000\n"


def test_a_sidecar_reads_its_whole_rows_only(tmp_path: Path) -> None:
    path = tmp_path / "s.ts.csv"
    path.write_bytes(SIDECAR + b"2,30")  # a killed writer's last row
    assert read_timestamps(path) == [100, 200]
    path.write_bytes(SIDECAR.replace(b"\n", b"\r\n"))  # written in text mode on Windows
    assert read_timestamps(path) == [100, 200]
    path.write_bytes(SIDECAR + "3,²,5\n".encode())  # a digit to str.isdigit, not to int()
    assert read_timestamps(path) == [100, 200]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sidecars") / "s.ts.csv"


@settings(max_examples=300)
@given(st.binary(max_size=400), st.integers(min_value=0, max_value=len(SIDECAR)))
def test_random_sidecar_bytes_give_whole_numbers_or_nothing(
    scratch: Path, raw: bytes, cut: int
) -> None:
    for body in (raw, SIDECAR[:cut] + raw):
        scratch.write_bytes(body)
        values = read_timestamps(scratch)
        assert all(isinstance(v, int) and v >= 0 for v in values)
        if body.startswith(SIDECAR[:cut]) and cut == len(SIDECAR):
            assert values[:2] == [100, 200]  # the whole rows before the damage are kept
