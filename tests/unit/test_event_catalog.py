"""The 16 events are exactly seed 000's wire names; payload schemas refuse bad payloads with a
code."""

from __future__ import annotations

import pytest

from labrig.domain.events import CATALOG, SPECS, EventName, spec_for
from labrig.errors import InvalidEventPayloadError
from tests.contract import seed_event_names


def test_catalog_is_the_seeds_sixteen_names_in_order() -> None:
    assert [s.name.value for s in CATALOG] == seed_event_names()
    assert len(CATALOG) == 16
    assert [s.seed_id for s in CATALOG] == [f"EVT-{i:02d}" for i in range(1, 17)]
    assert [e.value for e in EventName] == seed_event_names()


def test_every_event_has_a_versioned_documented_schema() -> None:
    for spec in CATALOG:
        assert spec.version >= 1
        assert spec.fields, spec.name
        assert all(f.doc for f in spec.fields)
        assert len({f.name for f in spec.fields}) == len(spec.fields)


def _valid(spec_name: str) -> dict[str, object]:
    samples = {"str": "x", "int": 3, "float": 1.5, "bool": True, "list": ["a"], "object": {"k": 1}}
    return {f.name: samples[f.type] for f in SPECS[spec_name].fields}


@pytest.mark.parametrize("name", [e.value for e in EventName])
def test_valid_payload_passes(name: str) -> None:
    SPECS[name].validate(_valid(name))


def test_missing_unknown_and_mistyped_fields_are_all_named() -> None:
    payload = _valid("capture.committed")
    del payload["frame_count"]
    payload["dropped_frames"] = "seven"
    payload["colour"] = "red"
    with pytest.raises(InvalidEventPayloadError) as info:
        SPECS["capture.committed"].validate(payload)
    assert info.value.code == "LABRIG_INVALID_EVENT_PAYLOAD"
    message = info.value.message
    assert "missing field 'frame_count'" in message
    assert "field 'dropped_frames' must be int" in message
    assert "unknown field 'colour'" in message


def test_bool_is_not_accepted_as_a_number_and_null_only_where_nullable() -> None:
    payload = _valid("capture.committed") | {"frame_count": True}
    with pytest.raises(InvalidEventPayloadError):
        SPECS["capture.committed"].validate(payload)
    SPECS["analysis.stage.requested"].validate(
        _valid("analysis.stage.requested") | {"attempt_id": None}
    )
    with pytest.raises(InvalidEventPayloadError):
        SPECS["analysis.stage.requested"].validate(
            _valid("analysis.stage.requested") | {"job_id": None}
        )


def test_names_outside_the_catalog_have_no_spec() -> None:
    assert spec_for("capture.exploded") is None
    assert spec_for("capture.started") is SPECS["capture.started"]
