"""Checking bundles: any single changed byte is found by ``sha256sum -c`` and ``labrig export
verify``; hostile names in a store never leave the export folder; hostile paths in a bundle are
refused before anything is read."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select, text

from labrig.bootstrap import bootstrap
from labrig.export import verify_bundle
from labrig.export.paths import UnsafeBundlePathError, check_bundle_path
from labrig.store import open_store
from labrig.store.models import CaptureSession
from tests.support.hostile import hostile_names
from tests.support.results import TemplateResults, copy_store

PER_EXAMPLE = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def bundle(
    archive_template: tuple[Path, TemplateResults], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    folder = tmp_path_factory.mktemp("bundle")
    services = bootstrap(copy_store(archive_template[0], folder / "store"))
    try:
        services.governance.revisions.revise(
            archive_template[1].published_id, {"track:0.extent": 1.5}, "ruler"
        )
        return services.export.export([], folder / "out", everything=True, media=True).bundle
    finally:
        services.close()


def listed_files(bundle: Path) -> list[str]:
    return [line.split("  ", 1)[1] for line in (bundle / "SHA256SUMS").read_text().splitlines()]


def detected_by_labrig(bundle: Path) -> bool:
    try:
        return not verify_bundle(bundle).intact
    except UnsafeBundlePathError:
        return True  # refusing the bundle is detecting it


def sha256sum_fails(bundle: Path) -> bool:
    return (
        subprocess.run(
            ["sha256sum", "-c", "--strict", "--quiet", "SHA256SUMS"],
            cwd=bundle,
            capture_output=True,
            timeout=60,
        ).returncode
        != 0
    )


def test_the_untouched_bundle_verifies(bundle: Path) -> None:
    assert not sha256sum_fails(bundle) and verify_bundle(bundle).intact
    assert any(
        p.endswith(".avi") for p in listed_files(bundle)
    ) and "manifest.json" in listed_files(bundle)


@given(data=st.data())
@PER_EXAMPLE
def test_any_single_byte_changed_in_an_exported_file_is_detected(
    bundle: Path, data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from([*listed_files(bundle), "SHA256SUMS"]), label="file")
    path = bundle / name
    original = path.read_bytes()
    position = data.draw(st.integers(0, len(original) - 1), label="position")
    flip = data.draw(st.integers(1, 255), label="xor")
    tampered = bytearray(original)
    tampered[position] ^= flip
    path.write_bytes(bytes(tampered))
    try:
        assert detected_by_labrig(bundle), f"labrig export verify missed byte {position} of {name}"
        # sha256sum reads the list itself case-insensitively (see docs/export-sync.md)
        if name != "SHA256SUMS":
            assert sha256sum_fails(bundle), f"sha256sum -c missed byte {position} of {name}"
    finally:
        path.write_bytes(original)
    assert verify_bundle(bundle).intact


@pytest.mark.parametrize("change", ["add", "remove"])
def test_added_or_removed_files_are_detected(bundle: Path, tmp_path: Path, change: str) -> None:
    copy = Path(shutil.copytree(bundle, tmp_path / "copy"))
    victim = next(p for p in listed_files(copy) if p.endswith(".png"))
    if change == "add":
        (copy / "results" / "extra.csv").write_text("1,2\n")
    else:
        (copy / victim).unlink()
        assert sha256sum_fails(copy)
    report = verify_bundle(copy)
    assert not report.intact and {p.path for p in report.problems} == (
        {"results/extra.csv"} if change == "add" else {victim}
    )


@given(subject=hostile_names, protocol=hostile_names)
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_hostile_names_in_the_store_never_leave_the_export_folder(
    archive_template: tuple[Path, TemplateResults],
    tmp_path_factory: pytest.TempPathFactory,
    subject: str,
    protocol: str,
) -> None:
    """Subject codes and protocols as another tool (or an older Labrig) may have written
    them to the catalog."""
    work = tmp_path_factory.mktemp("hostile")
    store = open_store(copy_store(archive_template[0], work / "store"))
    try:
        with store.write() as session:
            session.execute(
                text("UPDATE sessions SET subject_code = :s, protocol = :p"),
                {"s": subject, "p": protocol},
            )
        with store.read() as session:
            assert {
                (s.subject_code, s.protocol) for s in session.scalars(select(CaptureSession))
            } == {(subject, protocol)}
        target = work / "deep" / "out"
        report = bootstrap(store=store).export.export([], target, everything=True, media=True)
    finally:
        store.close()
    outside = {p for p in work.rglob("*")} - {work / "deep", target} - set(target.rglob("*"))
    assert all(p == work / "store" or work / "store" in p.parents for p in outside)
    assert [p.name for p in target.iterdir()] == [report.bundle.name]
    for path in report.bundle.rglob("*"):
        assert report.bundle.resolve() in path.resolve().parents
        check_bundle_path(path.relative_to(report.bundle).as_posix())
    assert verify_bundle(report.bundle).intact and not sha256sum_fails(report.bundle)


def _with_listed_path(bundle: Path, target: Path, hostile: str, where: str) -> Path:
    copy = Path(shutil.copytree(bundle, target))
    line = f"{hashlib.sha256(b'secret').hexdigest()}  {hostile}\n"
    if where == "SHA256SUMS":
        with open(copy / "SHA256SUMS", "a", encoding="utf-8", newline="") as fh:
            fh.write(line)
    else:
        manifest = json.loads((copy / "manifest.json").read_text())
        manifest["files"].append(
            {"path": hostile, "sha256": hashlib.sha256(b"secret").hexdigest(), "bytes": 6}
        )
        (copy / "manifest.json").write_text(json.dumps(manifest))
        sums = [
            ln
            for ln in (copy / "SHA256SUMS").read_text().splitlines(keepends=True)
            if not ln.endswith("  manifest.json\n")
        ]
        digest = hashlib.sha256((copy / "manifest.json").read_bytes()).hexdigest()
        (copy / "SHA256SUMS").write_text(
            "".join(
                sorted([*sums, f"{digest}  manifest.json\n"], key=lambda ln: ln.split("  ", 1)[1])
            )
        )
    return copy


@given(
    hostile=hostile_names.filter(lambda p: "\n" not in p and "\r" not in p),
    where=st.sampled_from(["SHA256SUMS", "manifest.json"]),
)
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_a_bundle_listing_a_hostile_path_is_refused(
    bundle: Path, tmp_path_factory: pytest.TempPathFactory, hostile: str, where: str
) -> None:
    try:
        check_bundle_path(hostile)
    except UnsafeBundlePathError:
        pass
    else:
        return  # a plain safe name: not what this test is about
    work = tmp_path_factory.mktemp("import")
    secret = work / "secret"
    secret.write_bytes(b"secret")  # a file outside whose digest the hostile line carries
    copy = _with_listed_path(bundle, work / "bundle", hostile, where)
    with pytest.raises(UnsafeBundlePathError) as refused:
        verify_bundle(copy)
    assert refused.value.code == "LABRIG_BUNDLE_UNSAFE_PATH"


@pytest.mark.parametrize(
    "hostile",
    [
        "../secret",
        "/etc/hostname",
        "C:/Windows/win.ini",
        "results/../../secret",
        "NUL",
        "results/CON.csv",
        "a\\..\\..\\secret",
    ],
)
def test_known_escapes_are_refused_from_either_list(
    bundle: Path, tmp_path: Path, hostile: str
) -> None:
    for where in ("SHA256SUMS", "manifest.json"):
        copy = _with_listed_path(bundle, tmp_path / where, hostile, where)
        with pytest.raises(UnsafeBundlePathError):
            verify_bundle(copy)


@pytest.mark.parametrize("kind", ["symlink", "fifo", "linked-folder"])
def test_links_and_special_files_in_a_bundle_are_reported_never_read(
    bundle: Path, tmp_path: Path, kind: str
) -> None:
    copy = Path(shutil.copytree(bundle, tmp_path / "copy"))
    secret = tmp_path / "secret.csv"
    secret.write_bytes(b"secret")
    victim = copy / next(p for p in listed_files(copy) if p.endswith("metrics.csv"))
    if kind == "symlink":
        victim.unlink()
        victim.symlink_to(secret)
    elif kind == "fifo":
        victim.unlink()
        os.mkfifo(victim)  # opening it would block the verifier forever
    else:
        folder = victim.parent
        shutil.move(folder, tmp_path / "moved")
        folder.symlink_to(tmp_path / "moved")
    report = verify_bundle(copy)
    assert not report.intact
    assert any("not read" in p.problem for p in report.problems), report.problems
