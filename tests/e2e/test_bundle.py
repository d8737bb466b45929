"""The frozen bundle, built here with installer/build.sh (PyInstaller, app/labrig.spec), as
IT would ship it.

Built once for the module (~35 s on 2 cores; docs/performance-bundle.md), then run for real: the
self-test offscreen, the Qt probe through the launcher's ``-m``, and the bad inputs of issue 9 (a Qt
platform plugin missing from the bundle, a second window on one store, an unwritable data folder).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from labrig import __version__
from labrig.instance_lock import InstanceLock
from tests.e2e.test_cli_selftest import CHECKS

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``dist/labrig`` of a fresh ``installer/build.sh --bundle-only`` (which self-tests
    it once already)."""
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        pytest.fail("PyInstaller is not installed: ./setup.sh test installs the 'bundle' extra")
    out = tmp_path_factory.mktemp("dist")
    started = time.monotonic()
    build = subprocess.run(
        ["installer/build.sh", "--bundle-only", "--out", str(out)],
        cwd=REPO,
        text=True,
        capture_output=True,
        timeout=900,
        env=os.environ | {"PYTHON": sys.executable},
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    size_mb = (
        sum(
            f.stat().st_size
            for f in (out / "labrig").rglob("*")
            if f.is_file() and not f.is_symlink()
        )
        / 1e6
    )
    print(
        f"\nbundle built in {time.monotonic() - started:.0f} s (with its self-test), {size_mb:.0f} "
        "MB"
    )
    return out / "labrig"


def frozen(bundle: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = os.environ | {"QT_QPA_PLATFORM": "offscreen"} | env
    return subprocess.run(
        [str(bundle / "labrig"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=environ,
        cwd=bundle.parent,
    )


def statuses(stdout: str) -> dict[str, str]:
    return {m[2]: m[1] for m in re.finditer(r"^  (PASS|WARN|FAIL|SKIP)  (\S+)", stdout, flags=re.M)}


def test_the_frozen_self_test_passes(bundle: Path, tmp_path: Path) -> None:
    result = frozen(bundle, "--self-test", LABRIG_STORE=str(tmp_path / "ambient"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Labrig {__version__} self-test (frozen bundle in {bundle})" in result.stdout
    status = statuses(result.stdout)
    assert set(status) == set(CHECKS)
    assert all(s == "PASS" for name, s in status.items() if name != "qt-xcb"), result.stdout
    # every format library works frozen: its compiled parts and schema files are in the bundle
    export = next(line for line in result.stdout.splitlines() if "  export  " in line)
    assert all(f in export for f in ("tidy CSV", "C3D", "NWB", "video", "TRC", "MOT")), export
    # the xcb libraries are the host's, not the bundle's
    assert status["qt-xcb"] in ("PASS", "WARN")
    assert not (tmp_path / "ambient").exists()


def test_the_bundle_carries_qt_plugins_migrations_and_resources(bundle: Path) -> None:
    internal = bundle / "_internal"
    platforms = {p.name for p in (internal / "PySide6/Qt/plugins/platforms").iterdir()}
    assert {"libqoffscreen.so", "libqxcb.so"} <= platforms
    migrations = sorted(
        p.name for p in (REPO / "src/labrig/store/migrations/versions").glob("0*.py")
    )
    assert migrations and all(
        (internal / "labrig/store/migrations/versions" / m).is_file() for m in migrations
    )
    assert (internal / "labrig/store/migrations/env.py").is_file()
    assert (internal / "labrig/resources/inventory.json").is_file()
    assert (internal / "labrig/resources/icons/labrig.png").is_file()
    assert list(internal.glob("cv2/**/*.so")), "OpenCV's extension module is missing"
    assert frozen(bundle, "--version").stdout.strip() == f"labrig {__version__}"


def test_doctor_starts_qt_through_the_launchers_dash_m(bundle: Path, tmp_path: Path) -> None:
    result = frozen(bundle, "--store", str(tmp_path / "s"), "doctor")
    assert "qt         Qt 6" in result.stdout and "'offscreen'" in result.stdout, result.stdout
    refused = frozen(bundle, "-m", "json.tool")
    assert refused.returncode == 2 and "runs only Labrig's own modules" in refused.stderr


@pytest.fixture
def no_platform_plugins(bundle: Path) -> Iterator[None]:
    platforms = bundle / "_internal/PySide6/Qt/plugins/platforms"
    aside = bundle.parent / "platforms.removed"
    shutil.move(platforms, aside)
    try:
        yield
    finally:
        shutil.move(aside, platforms)


def test_platform_plugins_removed_from_the_bundle_fail_clearly(
    bundle: Path, tmp_path: Path, no_platform_plugins: None
) -> None:
    checked = frozen(bundle, "--self-test")
    assert checked.returncode == 1
    assert statuses(checked.stdout)["qt"] == "FAIL"
    assert 'Could not find the Qt platform plugin "offscreen"' in checked.stdout
    assert statuses(checked.stdout)["pipeline"] == "PASS"  # the headless core still works
    opened = frozen(bundle, "--store", str(tmp_path / "store"))
    assert opened.returncode == 2 and "LABRIG_QT_UNAVAILABLE" in opened.stderr
    assert "Aborted" not in opened.stderr and "Traceback" not in opened.stderr
    assert not (tmp_path / "store").exists()


def test_a_second_window_and_an_unwritable_folder_are_refused_frozen(
    bundle: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    with InstanceLock(store):  # as a running window holds it
        second = frozen(bundle, "--store", str(store))
    assert second.returncode == 2
    assert f"LABRIG_STORE_IN_USE: the data folder {store} is already open" in second.stderr
    assert f"process {os.getpid()}" in second.stderr and not (store / "labrig.db").exists()
    (tmp_path / "file").write_text("x")
    unwritable = frozen(bundle, "--store", str(tmp_path / "file" / "store"))
    assert unwritable.returncode == 2 and "LABRIG_STORE_UNWRITABLE" in unwritable.stderr
