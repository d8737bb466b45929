"""Stages: registered analysis steps, and the context a running stage talks to.

A stage declares its id, schema version, whether it is deterministic, its model
manifest digest, its config defaults and schema, and a ``run(ctx)`` that returns
a :class:`StageOutput` or raises a typed :class:`~labrig.errors.StageFailure`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from labrig.domain.idempotency import canonical_json, sha256_hex
from labrig.errors import StageConfigError, UnknownStageError
from labrig.tasks import Task

NO_MODEL_DIGEST = sha256_hex(b"no-model")


@dataclass(frozen=True)
class StageOutput:
    """The logical output of a run: a JSON document, plus limitations when degraded."""

    body: Mapping[str, Any]
    degraded_reasons: tuple[str, ...] = ()

    @cached_property
    def canonical(self) -> bytes:
        """Computed once, where it is first asked for: on the worker's thread (see ``runner``)."""
        return canonical_json(dict(self.body))

    @cached_property
    def digest(self) -> str:
        return sha256_hex(self.canonical)


class StageContext(Task, Protocol):
    """What a running stage may use: a :class:`~labrig.tasks.Task` (progress, cancel) with the job's
    inputs, configuration and checkpoint. Every call runs on the worker's own thread.
    ``check_cancelled`` raises :class:`~labrig.errors.JobCancelledError` once an operator cancelled
    the job, and hands the job back (nothing is failed) when its worker is stopping; progress and
    checks also renew the job's lease."""

    job_id: str
    stage_id: str
    input_digests: list[str]
    config: dict[str, Any]
    checkpoint: dict[str, Any] | None
    upstream: dict[str, Mapping[str, Any]]  # committed outputs of the jobs it depends on, by job id

    def save_checkpoint(self, state: Mapping[str, Any]) -> None: ...


@dataclass(frozen=True)
class Setting:
    """One configuration key of a stage: the JSON types it takes, what it means, and an
    optional value check."""

    types: tuple[type, ...]
    help: str
    nullable: bool = False
    #: returns what is wrong with a value of the right type, or None
    check: Callable[[Any], str | None] | None = None

    def problem(self, value: Any) -> str | None:
        if value is None:
            return None if self.nullable else "must not be null"
        if not _is_a(value, self.types):
            names = " or ".join(t.__name__ for t in self.types) + (
                " or null" if self.nullable else ""
            )
            return f"must be {names}, not {type(value).__name__}"
        return self.check(value) if self.check is not None else None


def _is_a(value: Any, types: tuple[type, ...]) -> bool:
    """JSON's view of types: true is not a number, and an integer is a valid float."""
    if isinstance(value, bool):
        return bool in types
    if isinstance(value, int) and float in types:
        return True
    return isinstance(value, types)


def in_range(low: float, high: float) -> Callable[[Any], str | None]:
    """A :attr:`Setting.check`: a number between ``low`` and ``high`` inclusive."""
    return lambda v: None if low <= v <= high else f"must be between {low:g} and {high:g}, not {v}"


class WorkerStoppingError(Exception):
    """Raised inside a stage (``check_cancelled``) when its worker shuts down; the job is handed
    back, not failed."""


@dataclass(frozen=True)
class Stage:
    stage_id: str
    schema_version: int
    deterministic: bool
    run: Callable[[StageContext], StageOutput]
    model_manifest_digest: str = NO_MODEL_DIGEST
    config_defaults: Mapping[str, Any] = field(default_factory=dict)
    max_attempts: int = 3
    description: str = ""
    #: run in a child process (for stages that hold the GIL for long); ``run`` must be importable
    isolated: bool = False
    #: an isolated stage's process is given this long to end once a stop or a cancel has reached
    #: it; then it is killed, and its job handed back or cancelled as if it had ended itself
    stop_seconds: float = 10.0
    #: writes large outputs (media, renders): waits while storage pressure is high
    output_heavy: bool = False
    #: the keys its config may have; None accepts any config
    #: (stages of tests and plug-ins that declare none)
    config_schema: Mapping[str, Setting] | None = None

    def configure(self, config: Mapping[str, Any] | None) -> dict[str, Any]:
        """The defaults overlaid with ``config``, checked against the schema (raises
        StageConfigError)."""
        merged = {**self.config_defaults, **(config or {})}
        if self.config_schema is None:
            return merged
        unknown = sorted(set(merged) - set(self.config_schema))
        if unknown:
            settings = "; ".join(f"{k} ({s.help})" for k, s in sorted(self.config_schema.items()))
            raise StageConfigError(
                f"stage {self.stage_id} has no setting {', '.join(map(repr, unknown))}; "
                f"its settings are: {settings}"
            )
        for key, value in merged.items():
            problem = self.config_schema[key].problem(value)
            if problem:
                raise StageConfigError(
                    f"stage {self.stage_id}: setting '{key}' {problem} "
                    f"({self.config_schema[key].help})"
                )
        return merged

    def settle(self, config: Mapping[str, Any] | None) -> tuple[str, str]:
        """The canonical JSON text of :meth:`configure`'s result and its digest (the job's
        ``config`` and ``config_digest``); for the defaults alone, the usual case,
        computed once per stage."""
        return _settled(self.configure(config)) if config else self._settled_defaults

    @cached_property
    def _settled_defaults(self) -> tuple[str, str]:
        return _settled(self.configure(None))


def _settled(config: Mapping[str, Any]) -> tuple[str, str]:
    """A configuration's canonical JSON text and its digest."""
    canonical = canonical_json(config)
    return canonical.decode(), sha256_hex(canonical)


class StageRegistry:
    def __init__(self, stages: tuple[Stage, ...] = ()) -> None:
        self._stages: dict[str, Stage] = {}
        self._ids: dict[bool, tuple[str, ...]] = {}  # ids() by ``heavy``, until the next register()
        for stage in stages:
            self.register(stage)

    def register(self, stage: Stage) -> None:
        self._stages[stage.stage_id] = stage
        self._ids = {}

    def get(self, stage_id: str) -> Stage:
        try:
            return self._stages[stage_id]
        except KeyError:
            raise UnknownStageError(
                f"no stage '{stage_id}' is registered; known stages: "
                f"{', '.join(sorted(self._stages))}"
            ) from None

    def __contains__(self, stage_id: str) -> bool:
        return stage_id in self._stages

    def ids(self, *, heavy: bool = True) -> tuple[str, ...]:
        """Registered stage ids, sorted; ``heavy=False`` leaves out output-heavy stages
        (every claim asks)."""
        found = self._ids.get(heavy)
        if found is None:
            found = self._ids[heavy] = tuple(
                sorted(i for i, s in self._stages.items() if heavy or not s.output_heavy)
            )
        return found
