"""docs/errors.md is pinned to the code: a stable error code in one place only fails.

The codes are read from the source files (never imported: some modules need Qt). A code is
any string literal that is exactly ``LABRIG_…`` (a class's ``code = …``, a ``code=…`` argument,
a module constant, an enum member, a problem tuple, a dict key), or a ``LABRIG_…:`` that starts a
message inside a literal (the SQLite triggers' refusal). Environment variable names are not codes.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter
from pathlib import Path

from tests.contract import REPO

SRC = REPO / "src" / "labrig"
DOCS = REPO / "docs"
ERRORS_MD = DOCS / "errors.md"

CODE = re.compile(r"LABRIG_[A-Z0-9]+(?:_[A-Z0-9]+)*")
WHOLE = re.compile(rf"^{CODE.pattern}$")
PREFIX = re.compile(rf"(?<![A-Za-z0-9_$]){CODE.pattern}(?=: )")
# Names that look like codes and are not: environment variables, each assigned to an ``…ENV_VAR``.
NOT_CODES = {"LABRIG_STORE": "the data folder", "LABRIG_DB": "the catalog database URL"}
ROW = re.compile(r"^\|\s*`(LABRIG_[A-Z0-9_]+)`\s*\|(.*)\|\s*$", re.M)


@functools.cache
def _sources() -> list[tuple[Path, str, ast.Module]]:
    files = sorted(SRC.rglob("*.py"))
    assert len(files) > 30, SRC
    return [(p, (text := p.read_text(encoding="utf-8")), ast.parse(text, str(p))) for p in files]


def _env_var_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            continue
        if any(isinstance(t, ast.Name) and t.id.endswith("ENV_VAR") for t in node.targets):
            names.add(node.value.value)
    return names


@functools.cache
def source_codes() -> dict[str, set[str]]:
    """Every stable code in src/labrig, with the files it is defined or used in."""
    found: dict[str, set[str]] = {}
    for path, _, tree in _sources():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            codes = [node.value] if WHOLE.match(node.value) else PREFIX.findall(node.value)
            for code in codes:
                if code not in NOT_CODES:
                    found.setdefault(code, set()).add(str(path.relative_to(SRC)))
    return found


def documented_rows() -> list[tuple[str, list[str]]]:
    text = ERRORS_MD.read_text(encoding="utf-8")
    return [(code, [c.strip() for c in rest.split("|")]) for code, rest in ROW.findall(text)]


def test_every_code_in_the_source_is_documented_and_nothing_else() -> None:
    in_source = source_codes()
    documented = {code for code, _ in documented_rows()}
    missing = {c: sorted(files) for c, files in sorted(in_source.items()) if c not in documented}
    gone = sorted(documented - set(in_source))
    assert not missing and not gone, (
        f"in the source but not in docs/errors.md: {missing}; "
        f"in docs/errors.md but no longer in the source: {gone}"
    )
    assert len(in_source) >= 77


def test_each_code_is_documented_once_with_a_meaning_and_what_to_do() -> None:
    rows = documented_rows()
    twice = sorted(code for code, n in Counter(code for code, _ in rows).items() if n > 1)
    assert not twice, f"codes with more than one row in docs/errors.md: {twice}"
    for code, cells in rows:
        assert len(cells) == 2 and all(cells), f"{code}: a row is code | meaning | what to do"


def test_every_code_like_name_is_accounted_for() -> None:
    """A LABRIG_… name anywhere (docstrings and comments too) is a collected code or a known
    non-code, so a code the collection cannot see, or a stale mention, fails here."""
    codes = set(source_codes())
    env_vars: set[str] = set()
    stray = set()
    for path, text, tree in _sources():
        env_vars |= _env_var_names(tree)
        stray |= {
            f"{name} ({path.relative_to(SRC)})"
            for name in CODE.findall(text)
            if name not in codes and name not in NOT_CODES
        }
    assert not stray, f"names that look like codes but are not collected ones: {sorted(stray)}"
    assert set(NOT_CODES) <= env_vars, "NOT_CODES should list environment variable names only"
    doc_names = set(CODE.findall(ERRORS_MD.read_text(encoding="utf-8")))
    assert not doc_names - codes - set(NOT_CODES), sorted(doc_names - codes - set(NOT_CODES))


def _anchors(page: Path) -> set[str]:
    seen: Counter[str] = Counter()
    anchors = set()
    for title in re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        anchors.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
        seen[slug] += 1
    return anchors


def test_links_to_the_area_docs_resolve() -> None:
    links = re.findall(r"\]\(([\w.-]+\.md)(?:#([\w-]+))?\)", ERRORS_MD.read_text(encoding="utf-8"))
    assert links
    for page, anchor in links:
        assert (DOCS / page).is_file(), page
        assert not anchor or anchor in _anchors(DOCS / page), f"{page}#{anchor}"
