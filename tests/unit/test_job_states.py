"""The job state machine is exactly seed 000's: every one of the 169 ordered pairs is checked."""

from __future__ import annotations

import itertools

import pytest

from labrig.domain.jobs import (
    ALLOWED,
    TERMINAL,
    TRANSITIONS,
    JobState,
    check_transition,
    is_terminal,
)
from labrig.errors import InvalidTransitionError, LabrigError, TerminalStateError
from tests.contract import seed_states, seed_transitions

ALL_PAIRS = list(itertools.product(JobState, repeat=2))
SEED_EDGES = seed_transitions()


def test_states_are_the_seeds_thirteen_in_order() -> None:
    assert [s.value for s in JobState] == seed_states()
    assert len(JobState) == 13


def test_transitions_are_exactly_the_seeds() -> None:
    assert {(t.source.value, t.target.value) for t in TRANSITIONS} == SEED_EDGES
    assert len(SEED_EDGES) == 25


def test_terminal_states_are_those_with_no_way_out() -> None:
    sources = {source for source, _ in SEED_EDGES}
    assert {s.value for s in TERMINAL} == {s.value for s in JobState} - sources
    assert {s.value for s in TERMINAL} == {
        "Succeeded",
        "SucceededDegraded",
        "PermanentFailure",
        "Cancelled",
        "Superseded",
    }


@pytest.mark.parametrize(
    ("source", "target"), ALL_PAIRS, ids=[f"{a.value}->{b.value}" for a, b in ALL_PAIRS]
)
def test_every_pair(source: JobState, target: JobState) -> None:
    if source.value in {s.value for s in TERMINAL}:
        with pytest.raises(TerminalStateError) as info:
            check_transition(source, target)
        assert info.value.code == "LABRIG_TERMINAL_STATE"
        assert "reprocess" in info.value.message
    elif (source.value, target.value) in SEED_EDGES:
        edge = check_transition(source, target)
        assert (edge.source, edge.target) == (source, target)
        assert edge.when
    else:
        with pytest.raises(InvalidTransitionError) as info:
            check_transition(source, target)
        assert info.value.code == "LABRIG_INVALID_TRANSITION"
        # the message names what is allowed, so a technician or developer knows the way forward
        for allowed in ALLOWED[source]:
            assert allowed.value in info.value.message


def test_errors_are_labrig_errors_with_distinct_stable_codes() -> None:
    assert issubclass(TerminalStateError, LabrigError)
    assert issubclass(InvalidTransitionError, LabrigError)
    assert TerminalStateError.code != InvalidTransitionError.code
    assert str(TerminalStateError("x")).startswith("LABRIG_TERMINAL_STATE: ")


def test_is_terminal_matches_terminal_set() -> None:
    assert [is_terminal(s) for s in JobState] == [s in TERMINAL for s in JobState]
