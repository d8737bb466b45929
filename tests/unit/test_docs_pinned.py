"""docs/events.md and docs/job-states.md are pinned to the code: a name in one place only fails."""

from __future__ import annotations

import re

from labrig.domain.events import CATALOG
from labrig.domain.jobs import TERMINAL, TRANSITIONS, JobState
from tests.contract import REPO

EVENTS_MD = (REPO / "docs" / "events.md").read_text(encoding="utf-8")
STATES_MD = (REPO / "docs" / "job-states.md").read_text(encoding="utf-8")


def _event_sections() -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    for block in re.split(r"^### ", EVENTS_MD, flags=re.M)[1:]:
        name = re.match(r"`([^`]+)`", block)
        assert name, block[:60]
        sections[name.group(1)] = re.findall(r"^\| `(\w+)` \|", block, flags=re.M)
    return sections


def test_every_catalogued_event_is_documented_and_nothing_else() -> None:
    assert list(_event_sections()) == [s.name.value for s in CATALOG]


def test_documented_payload_fields_match_the_schemas() -> None:
    sections = _event_sections()
    for spec in CATALOG:
        assert sections[spec.name.value] == [f.name for f in spec.fields], spec.name.value


def test_documented_versions_match() -> None:
    for spec in CATALOG:
        assert f"`{spec.name.value}` ({spec.seed_id}, v{spec.version})" in EVENTS_MD


def test_job_states_page_lists_every_state_with_its_terminal_flag() -> None:
    rows = dict(re.findall(r"^\| `(\w+)` \| (yes|no) \|$", STATES_MD, flags=re.M))
    assert rows == {s.value: ("yes" if s in TERMINAL else "no") for s in JobState}


def test_job_states_page_lists_exactly_the_transitions() -> None:
    rows = set(re.findall(r"^\| `(\w+)` \| `(\w+)` \|", STATES_MD, flags=re.M))
    assert rows == {(t.source.value, t.target.value) for t in TRANSITIONS}


def test_job_states_page_documents_both_error_codes() -> None:
    for code in ("LABRIG_TERMINAL_STATE", "LABRIG_INVALID_TRANSITION"):
        assert f"`{code}`" in STATES_MD
