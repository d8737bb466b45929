"""installer/: the scripts refuse bad input with a message and an exit code, before doing any
work."""

from __future__ import annotations

import configparser
import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), cwd=REPO, capture_output=True, text=True, timeout=60, env=os.environ | env
    )


def test_build_refuses_an_unknown_argument_with_its_usage(tmp_path: Path) -> None:
    result = run("installer/build.sh", "--bogus", "--out", str(tmp_path))
    assert result.returncode == 2
    assert (
        "unknown argument '--bogus'" in result.stderr
        and "usage: installer/build.sh" in result.stderr
    )


def test_build_says_how_to_install_pyinstaller_when_it_is_missing(tmp_path: Path) -> None:
    result = run("installer/build.sh", "--out", str(tmp_path / "out"), PYTHON="/bin/false")
    assert result.returncode == 1
    assert (
        "PyInstaller is not installed" in result.stderr
        and "pip install -e '.[bundle]'" in result.stderr
    )
    assert not (tmp_path / "out" / "labrig").exists()


def test_the_debian_test_refuses_a_missing_or_bogus_package(tmp_path: Path) -> None:
    assert run("installer/test_deb_debian.sh").returncode == 2
    missing = run("installer/test_deb_debian.sh", str(tmp_path / "labrig_9_amd64.deb"))
    assert missing.returncode == 1 and "no such package file" in missing.stderr
    (tmp_path / "labrig_9_amd64.deb").write_text("not a package")
    bogus = run("installer/test_deb_debian.sh", str(tmp_path / "labrig_9_amd64.deb"))
    assert bogus.returncode == 1 and "not a readable Debian package" in bogus.stderr
    (tmp_path / "notes.txt").write_text("x")
    other = run("installer/test_deb_debian.sh", str(tmp_path / "notes.txt"))
    assert other.returncode == 1 and "is not a .deb file" in other.stderr


def test_the_desktop_entry_starts_the_window_with_the_packaged_icon() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    entry.read(REPO / "installer" / "labrig.desktop", encoding="utf-8")
    desktop = entry["Desktop Entry"]
    assert (
        desktop["Type"] == "Application"
        and desktop["Exec"] == "labrig"
        and desktop["Icon"] == "labrig"
    )
    assert desktop["Terminal"] == "false"
    assert (REPO / "resources" / "icons" / "labrig.png").is_file()


def test_the_windows_installer_keeps_lab_data_unless_asked() -> None:
    iss = (REPO / "installer" / "labrig.iss").read_text(encoding="utf-8")
    assert '{commonappdata}\\Labrig"; Permissions: users-modify; Flags: uninsneveruninstall' in iss
    assert "Box.Checked := False;" in iss and "{param:DELETEDATA|no}" in iss
    assert 'ValueName: "LABRIG_STORE"' in iss and "'--self-test'" in iss
    assert (REPO / "resources" / "icons" / "labrig.ico").read_bytes()[:4] == b"\x00\x00\x01\x00"
