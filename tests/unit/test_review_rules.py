"""Pure rules of review: field names and values, roles, and the audit chain."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labrig.domain import roles
from labrig.domain.audit import CONTENT, GENESIS, ChainHead, change_digest, entry_hash, verify_chain
from labrig.domain.revisions import (
    FieldRef,
    FieldSyntaxError,
    NoChangeError,
    NotANumberError,
    UnknownFieldError,
    apply_changes,
    parse_assignments,
    plan_changes,
)
from labrig.domain.roles import Action, Role

METRICS = [
    {"track_id": 0, "path_length": 10.0, "peak_speed": None, "reason": "short"},
    {"track_id": 1, "path_length": 20.0, "peak_speed": 3.0, "reason": None},
]


def test_fields_parse_and_plan_with_the_value_they_replace() -> None:
    values = parse_assignments(["track:1.peak_speed=4.5", " track:0.peak_speed = 2"])
    changes = plan_changes(METRICS, values)
    assert [(c.field, c.track_id, c.old, c.new) for c in changes] == [
        ("track:0.peak_speed", 0, None, 2.0),
        ("track:1.peak_speed", 1, 3.0, 4.5),
    ]
    assert (
        apply_changes(METRICS, changes)[1]["peak_speed"] == 4.5 and METRICS[1]["peak_speed"] == 3.0
    )
    assert FieldRef.parse("track:a.b.path_length") == FieldRef("a.b", "path_length")


@pytest.mark.parametrize(
    ("texts", "error"),
    [
        (["track:0.path_length"], FieldSyntaxError),
        (["path_length=1"], FieldSyntaxError),
        (["track:.path_length=1"], FieldSyntaxError),
        (["track:0.=1"], FieldSyntaxError),
        (["track:0.path_length=1", "track:0.path_length=2"], FieldSyntaxError),
        ([], FieldSyntaxError),
        (["track:5.path_length=1"], UnknownFieldError),
        (["track:0.reason=1"], UnknownFieldError),
        (["track:0.path_length=ten"], NotANumberError),
        (["track:0.path_length=-inf"], NotANumberError),
        (["track:0.path_length=10"], NoChangeError),
    ],
)
def test_bad_fields_and_values_are_refused_with_a_code(
    texts: list[str], error: type[Exception]
) -> None:
    with pytest.raises(error):
        plan_changes(METRICS, parse_assignments(texts))


def test_roles_are_enforced_only_once_an_admin_exists_and_include_the_ones_below() -> None:
    roles.check(Action.RELEASES, "anyone", {})  # unconfigured: permissive
    roles.check(Action.RELEASES, "anyone", {"bob": Role.REVIEWER})  # still no admin
    staff = {"ada": Role.ADMIN, "rita": Role.REVIEWER, "tom": Role.TECHNICIAN}
    roles.check(Action.CAPTURE, "rita", staff)
    roles.check(Action.REVISE, "ada", staff)
    with pytest.raises(
        roles.RoleRequiredError,
        match=r"needs the reviewer role \(or admin\); 'tom' has the "
        r"technician role\. An admin \(ada\) can grant it",
    ):
        roles.check(Action.REVISE, "tom", staff)
    with pytest.raises(roles.RoleRequiredError, match="'eve' has no role"):
        roles.check(Action.CAPTURE, "eve", staff)
    with pytest.raises(roles.LastAdminError):
        roles.check_assignment("ada", "ada", None, staff)
    roles.check_assignment("ada", "ada", None, staff | {"rita": Role.ADMIN})
    with pytest.raises(roles.UnknownRoleError):
        roles.parse_role("boss")
    assert roles.parse_role(" None ") is None and roles.normalize_user("  Ada ") == "ada"


def _chain(contents: list[dict[str, object]]) -> list[tuple[object, ...]]:
    rows, prev = [], GENESIS
    for seq, content in enumerate(contents, start=1):
        content = {**content, "seq": seq}
        content["change_digest"] = change_digest(str(content["change"]))
        digest = entry_hash(prev, content)
        rows.append((*(content[k] for k in CONTENT), prev, digest))
        prev = digest
    return rows


ENTRY = st.fixed_dictionaries(
    {k: st.text(max_size=12) for k in CONTENT if k not in ("seq", "change_digest")}
)


@given(st.lists(ENTRY, min_size=1, max_size=8), st.data())
def test_changing_any_stored_character_breaks_the_chain_at_that_entry(
    contents: list[dict[str, object]], data: st.DataObject
) -> None:
    rows = _chain(contents)
    report = verify_chain(rows)
    assert report.intact and report.head == ChainHead(len(rows), str(rows[-1][-1]))
    index = data.draw(st.integers(0, len(rows) - 1))
    column = data.draw(st.integers(1, len(rows[index]) - 1))
    value = str(rows[index][column])
    new = data.draw(st.text(max_size=14).filter(lambda v: v != value))
    tampered = list(rows)
    tampered[index] = (*rows[index][:column], new, *rows[index][column + 1 :])
    report = verify_chain(tampered)
    assert (report.intact, report.first_broken) == (False, index + 1)
