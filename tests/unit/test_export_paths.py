"""Names from the catalog and from manifests become one safe path component; hostile bundle
paths are refused."""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labrig.export.paths import (
    MAX_COMPONENT,
    RESERVED,
    UnsafeBundlePathError,
    check_bundle_path,
    inside,
    is_safe_component,
    safe_component,
    safe_relpath,
)
from labrig.export.plots import nice_axis
from tests.support.hostile import KNOWN, hostile_names


def _one_component_everywhere(name: str) -> None:
    assert name and name not in (".", "..") and ".." not in name
    assert len(name) <= MAX_COMPONENT
    assert PurePosixPath(name).parts == (name,) and PureWindowsPath(name).parts == (name,)
    assert not PureWindowsPath(name).drive and not PureWindowsPath(name).is_absolute()
    assert name.split(".")[0].upper() not in RESERVED
    assert not name.endswith((".", " ")) and not name.startswith((".", "-"))
    assert all(c.isascii() and (c.isalnum() or c in "._-") for c in name)


@given(hostile_names)
@settings(max_examples=500)
def test_any_name_becomes_one_safe_component(name: str) -> None:
    safe = safe_component(name)
    _one_component_everywhere(safe)
    assert is_safe_component(safe)
    check_bundle_path(safe)  # what Labrig writes passes its own reader


@given(st.lists(hostile_names, min_size=1, max_size=4))
def test_joined_names_stay_inside_the_folder(
    tmp_path_factory: pytest.TempPathFactory, names: list[str]
) -> None:
    root = tmp_path_factory.getbasetemp() / "bundle-root"
    relpath = safe_relpath(*names)
    assert len(relpath.split("/")) == len(names)
    target = inside(root, relpath)
    assert root.resolve() in target.resolve().parents


def test_ordinary_names_keep_their_meaning() -> None:
    assert safe_component("seg-00000.avi") == "seg-00000.avi"
    assert safe_component("seg-00000.ts.csv") == "seg-00000.ts.csv"
    assert safe_component("REVIEW-1") == "REVIEW-1"
    assert safe_component("Müller reach") == "Muller_reach"
    assert safe_component("CON") == "_CON" and safe_component("nul.txt") == "_nul.txt"
    assert safe_component("../../etc/passwd") == "etc_passwd"
    assert safe_component("") == "unnamed" and safe_component("..", "result") == "result"


@pytest.mark.parametrize(
    "path",
    [p for p in KNOWN if p not in ("seg-00000.avi",)]
    + ["a//b", "a/./b", "results/../../x", "results/x/", "/results/x", "results\\x"],
)
def test_hostile_bundle_paths_are_refused(path: str) -> None:
    with pytest.raises(UnsafeBundlePathError) as refused:
        check_bundle_path(path)
    assert (
        refused.value.code == "LABRIG_BUNDLE_UNSAFE_PATH"
        and "nothing was read" in refused.value.message
    )


@given(hostile_names)
@settings(max_examples=500)
def test_a_bundle_path_is_accepted_only_if_every_part_is_safe(path: str) -> None:
    parts = path.split("/")
    if all(is_safe_component(p) for p in parts) and path:
        check_bundle_path(path)
    else:
        with pytest.raises(UnsafeBundlePathError):
            check_bundle_path(path)


def test_inside_refuses_a_link_that_points_out(tmp_path: Path) -> None:
    root = tmp_path / "bundle"
    root.mkdir()
    (root / "results").symlink_to(tmp_path)
    with pytest.raises(Exception) as refused:
        inside(root, "results/x.csv")
    assert getattr(refused.value, "code", "") == "LABRIG_EXPORT_UNSAFE_PATH"


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), max_size=50))
def test_plot_axes_cover_their_data_with_round_ticks(values: list[float]) -> None:
    axis = nice_axis(values)
    finite = [v for v in values if abs(v) < float("inf") and v == v]
    assert axis.low < axis.high and 2 <= len(axis.ticks) <= 12
    if finite:
        assert axis.low <= min(finite) and axis.high >= max(finite)
