"""The job state machine of seed 000, expressed once, as data.

The thirteen states and the allowed transitions below are the contract; the
queue, the CLI, the GUI and ``docs/job-states.md`` all read them from here.
Any other change is an error with a stable code, never a silent no-op.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from labrig.errors import InvalidTransitionError, TerminalStateError


class JobState(StrEnum):
    CREATED = "Created"
    INPUTS_PENDING = "InputsPending"
    READY = "Ready"
    LEASED = "Leased"
    RUNNING = "Running"
    CHECKPOINTED = "Checkpointed"
    SUCCEEDED = "Succeeded"
    SUCCEEDED_DEGRADED = "SucceededDegraded"
    RETRY_WAITING = "RetryWaiting"
    BLOCKED_BY_QUALITY = "BlockedByQuality"
    PERMANENT_FAILURE = "PermanentFailure"
    CANCELLED = "Cancelled"
    SUPERSEDED = "Superseded"


@dataclass(frozen=True)
class Transition:
    """One allowed edge of the state machine, with the condition that takes it."""

    source: JobState
    target: JobState
    when: str


S = JobState

TRANSITIONS: tuple[Transition, ...] = (
    Transition(S.CREATED, S.INPUTS_PENDING, "some inputs are not committed yet"),
    Transition(S.CREATED, S.READY, "all inputs are committed"),
    Transition(S.CREATED, S.CANCELLED, "cancelled before scheduling"),
    Transition(S.INPUTS_PENDING, S.READY, "the last missing input was committed"),
    Transition(S.INPUTS_PENDING, S.PERMANENT_FAILURE, "an input can never be produced"),
    Transition(S.INPUTS_PENDING, S.CANCELLED, "cancelled while waiting for inputs"),
    Transition(S.READY, S.LEASED, "a worker claimed it"),
    Transition(S.READY, S.CANCELLED, "cancelled before a worker claimed it"),
    Transition(S.READY, S.SUPERSEDED, "a reprocess replaced it before it ran"),
    Transition(S.LEASED, S.RUNNING, "the worker started the stage"),
    Transition(S.LEASED, S.READY, "the lease expired before the stage started"),
    Transition(S.RUNNING, S.CHECKPOINTED, "the stage saved a checkpoint"),
    Transition(S.RUNNING, S.SUCCEEDED, "output committed, every quality gate passed"),
    Transition(S.RUNNING, S.SUCCEEDED_DEGRADED, "output committed with limitations"),
    Transition(S.RUNNING, S.RETRY_WAITING, "transient failure, attempts remain"),
    Transition(S.RUNNING, S.BLOCKED_BY_QUALITY, "a quality gate forbids publication"),
    Transition(S.RUNNING, S.PERMANENT_FAILURE, "permanent failure or attempts exhausted"),
    Transition(S.CHECKPOINTED, S.RUNNING, "the stage resumed from its checkpoint"),
    Transition(S.CHECKPOINTED, S.RETRY_WAITING, "the worker was lost after a checkpoint"),
    Transition(S.RETRY_WAITING, S.READY, "the backoff delay elapsed"),
    Transition(S.RETRY_WAITING, S.PERMANENT_FAILURE, "no attempts remain"),
    Transition(S.RETRY_WAITING, S.CANCELLED, "cancelled while waiting to retry"),
    Transition(S.BLOCKED_BY_QUALITY, S.READY, "new evidence or configuration"),
    Transition(S.BLOCKED_BY_QUALITY, S.SUPERSEDED, "a reprocess replaced it"),
    Transition(S.BLOCKED_BY_QUALITY, S.CANCELLED, "cancelled by a reviewer"),
)

ALLOWED: dict[JobState, frozenset[JobState]] = {
    state: frozenset(t.target for t in TRANSITIONS if t.source is state) for state in JobState
}

TERMINAL: frozenset[JobState] = frozenset(
    state for state, targets in ALLOWED.items() if not targets
)


#: where a lab's history of jobs rests: ended well, or set aside for good
SETTLED: tuple[JobState, ...] = (S.SUCCEEDED, S.SUCCEEDED_DEGRADED, S.CANCELLED, S.SUPERSEDED)
#: every other state, in the state machine's order: the live queue and the jobs that need an
#: operator (the queue's counts and their pages read a partial index of these: migration 0020)
UNSETTLED: tuple[JobState, ...] = tuple(s for s in JobState if s not in SETTLED)


def is_terminal(state: JobState) -> bool:
    return state in TERMINAL


def check_transition(source: JobState, target: JobState) -> Transition:
    """Return the edge ``source → target`` or raise a typed error.

    Raises :class:`TerminalStateError` for any change of a terminal job and
    :class:`InvalidTransitionError` for any other edge seed 000 does not list.
    """
    if source in TERMINAL:
        raise TerminalStateError(
            f"the job is {source.value}, a terminal state, and can never change; "
            "reprocess it to create a new job linked by supersedes_job_id"
        )
    for transition in TRANSITIONS:
        if transition.source is source and transition.target is target:
            return transition
    allowed = ", ".join(sorted(t.value for t in ALLOWED[source]))
    raise InvalidTransitionError(
        f"a job cannot go from {source.value} to {target.value}; from {source.value} "
        f"it may only go to: {allowed}"
    )
