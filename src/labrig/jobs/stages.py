"""Stages: registered analysis steps, and the context a running stage talks to.

A stage declares its id, schema version, whether it is deterministic, its model
manifest digest and config defaults, and a ``run(ctx)`` that returns a
:class:`StageOutput` or raises a typed :class:`~labrig.errors.StageFailure`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from labrig.domain.idempotency import canonical_json, sha256_hex
from labrig.errors import UnknownStageError

NO_MODEL_DIGEST = sha256_hex(b"no-model")


@dataclass(frozen=True)
class StageOutput:
    """The logical output of a run: a JSON document, plus limitations when degraded."""

    body: Mapping[str, Any]
    degraded_reasons: tuple[str, ...] = ()

    @property
    def canonical(self) -> bytes:
        return canonical_json(dict(self.body))

    @property
    def digest(self) -> str:
        return sha256_hex(self.canonical)


class StageContext(Protocol):
    """What a running stage may use. Every call runs on the worker's own thread."""

    job_id: str
    stage_id: str
    input_digests: list[str]
    config: dict[str, Any]
    checkpoint: dict[str, Any] | None
    upstream: dict[str, Mapping[str, Any]]  # committed outputs of the jobs it depends on, by job id

    def progress(self, fraction: float, message: str = "") -> None: ...

    def save_checkpoint(self, state: Mapping[str, Any]) -> None: ...

    @property
    def cancelled(self) -> bool: ...

    def check_cancelled(self) -> None: ...


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
    #: writes large outputs (media, renders): waits while storage pressure is high
    output_heavy: bool = False


class StageRegistry:
    def __init__(self, stages: tuple[Stage, ...] = ()) -> None:
        self._stages: dict[str, Stage] = {}
        for stage in stages:
            self.register(stage)

    def register(self, stage: Stage) -> None:
        self._stages[stage.stage_id] = stage

    def get(self, stage_id: str) -> Stage:
        try:
            return self._stages[stage_id]
        except KeyError:
            raise UnknownStageError(
                f"no stage '{stage_id}' is registered; known stages: {', '.join(sorted(self._stages))}"
            ) from None

    def __contains__(self, stage_id: str) -> bool:
        return stage_id in self._stages

    def ids(self, *, heavy: bool = True) -> list[str]:
        """Registered stage ids; ``heavy=False`` leaves out output-heavy stages."""
        return sorted(i for i, s in self._stages.items() if heavy or not s.output_heavy)
