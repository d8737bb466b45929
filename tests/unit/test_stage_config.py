"""Stage configuration schemas: what a job's config may hold, refused with a typed error
otherwise."""

from __future__ import annotations

import re

import pytest

from labrig.errors import StageConfigError
from labrig.jobs.stages import Setting, Stage, StageOutput, in_range


def _stage(schema: dict[str, Setting] | None) -> Stage:
    return Stage(
        "t.cfg",
        1,
        True,
        run=lambda ctx: StageOutput({}),
        config_defaults={"n": 1, "f": 0.5},
        config_schema=schema,
    )


SCHEMA = {
    "n": Setting((int,), "how many", check=in_range(1, 10)),
    "f": Setting((float,), "a fraction", check=in_range(0, 1)),
    "name": Setting((str,), "a label", nullable=True),
    "on": Setting((bool,), "a switch", nullable=True),
}


def test_defaults_are_overlaid_by_the_given_config() -> None:
    assert _stage(SCHEMA).configure({"n": 3, "name": "x"}) == {"n": 3, "f": 0.5, "name": "x"}
    assert _stage(SCHEMA).configure(None) == {"n": 1, "f": 0.5}


def test_an_integer_is_a_valid_float_but_true_is_not_a_number() -> None:
    assert _stage(SCHEMA).configure({"f": 1})["f"] == 1
    with pytest.raises(StageConfigError, match="'n' must be int, not bool"):
        _stage(SCHEMA).configure({"n": True})
    with pytest.raises(StageConfigError, match="'on' must be bool or null, not int"):
        _stage(SCHEMA).configure({"on": 1})


@pytest.mark.parametrize(
    ("config", "words"),
    [
        (
            {"m": 1},
            "has no setting 'm'; its settings are: f (a fraction); n (how many); "
            "name (a label); on",
        ),
        ({"n": 0}, "'n' must be between 1 and 10, not 0"),
        ({"f": None}, "'f' must not be null"),
        ({"f": "half"}, "'f' must be float, not str"),
    ],
)
def test_a_bad_config_is_refused_with_what_to_change(config: dict[str, object], words: str) -> None:
    with pytest.raises(StageConfigError, match=re.escape(words)) as caught:
        _stage(SCHEMA).configure(config)
    assert caught.value.code == "LABRIG_STAGE_CONFIG"


def test_a_stage_without_a_schema_takes_any_config() -> None:
    assert _stage(None).configure({"anything": [1, 2]})["anything"] == [1, 2]
