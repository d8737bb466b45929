"""Checking a bundle: every listed file re-hashed, nothing unlisted, and the lists exactly as
Labrig writes them.

A bundle may come from anywhere, so its lists are read as hostile: a path that could leave the
bundle (see :func:`~labrig.export.paths.check_bundle_path`) refuses the whole bundle before any file
is opened, and a listed entry that is a link, a folder, a FIFO or a device is reported, never read
(a FIFO would block the reader). ``SHA256SUMS`` must be byte for byte what Labrig writes for the
entries it lists, and ``manifest.json`` must list the same files with the same digests, so a single
changed byte anywhere in a bundle is reported.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labrig.errors import LabrigError
from labrig.export.bundle import MANIFEST_NAME, SUMS_NAME, FileEntry, sums_text
from labrig.export.paths import check_bundle_path
from labrig.fsutil import sha256_file

EXPORT_SCHEMA = "labrig.export/1"
_SUM_LINE = re.compile(r"^([0-9a-f]{64}) [ *](.*)$")


class NotABundleError(LabrigError):
    code = "LABRIG_NOT_A_BUNDLE"


@dataclass(frozen=True)
class Problem:
    path: str
    problem: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "problem": self.problem}


@dataclass
class VerifyReport:
    bundle: str
    checked: int = 0
    problems: list[Problem] = field(default_factory=list)
    audit_chain_head: dict[str, Any] | None = None

    @property
    def intact(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "bundle": self.bundle,
            "intact": self.intact,
            "checked": self.checked,
            "problems": [p.to_json() for p in self.problems],
            "audit_chain_head": self.audit_chain_head,
        }


def _read_sums(root: Path) -> tuple[bytes, list[tuple[str, str]]]:
    path = _regular_file(root, SUMS_NAME)
    if isinstance(path, str):
        raise NotABundleError(
            f"{root} has no {SUMS_NAME} file, so it is not a Labrig export bundle (give the "
            "folder named labrig-export-…)"
        )
    raw = path.read_bytes()
    entries = []
    # "\n" only, as sha256sum reads it (not str.splitlines)
    lines = raw.decode("utf-8", "replace").split("\n")
    for line in lines[:-1] if lines[-1] == "" else lines:
        match = _SUM_LINE.match(line)
        if match is None:  # garbled: reported, and nothing is opened through it
            entries.append(("", line))
            continue
        check_bundle_path(match.group(2))
        entries.append((match.group(1), match.group(2)))
    return raw, entries


def _regular_file(root: Path, relpath: str) -> Path | str:
    """The file, or why it cannot be read safely."""
    path = root.joinpath(*relpath.split("/"))
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a link, folder or device); not read"
    if any(p.is_symlink() for p in path.parents if p != root and root in p.parents):
        return "is inside a linked folder; not read"
    return path


def _manifest_entries(root: Path, report: VerifyReport) -> dict[str, str] | None:
    path = _regular_file(root, MANIFEST_NAME)
    if isinstance(path, str):
        report.problems.append(Problem(MANIFEST_NAME, path))
        return None
    try:
        data = json.loads(path.read_bytes())
        files = {str(f["path"]): str(f["sha256"]) for f in data["files"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        report.problems.append(
            Problem(MANIFEST_NAME, f"cannot be read as a {EXPORT_SCHEMA} manifest ({exc})")
        )
        return None
    for path in files:
        check_bundle_path(path)
    if data.get("schema") != EXPORT_SCHEMA:
        report.problems.append(Problem(MANIFEST_NAME, f"is not a {EXPORT_SCHEMA} manifest"))
    head = data.get("audit_chain_head")
    report.audit_chain_head = head if isinstance(head, dict) else None
    return files


def _unlisted(root: Path, listed: set[str]) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(root):
        rel = Path(folder).relative_to(root).as_posix()
        for name in [*files, *(d for d in dirs if Path(folder, d).is_symlink())]:
            path = name if rel == "." else f"{rel}/{name}"
            if path not in listed and path != SUMS_NAME:
                found.append(path)
    return sorted(found)


def verify_bundle(root: Path) -> VerifyReport:
    """Re-hash the bundle at ``root``; :class:`~labrig.export.paths.UnsafeBundlePathError`
    for a hostile list."""
    root = Path(root)
    if not root.is_dir():
        raise NotABundleError(f"{root} is not a folder; give the bundle folder (labrig-export-…)")
    raw, sums = _read_sums(root)
    report = VerifyReport(str(root))
    manifest = _manifest_entries(root, report) if any(p == MANIFEST_NAME for _, p in sums) else None
    if manifest is None and not report.problems:
        report.problems.append(Problem(MANIFEST_NAME, f"is not listed in {SUMS_NAME}"))
    for digest, path in sums:
        report.checked += 1
        if not digest:
            report.problems.append(
                Problem(SUMS_NAME, f"has a line that is not '<sha256>  <path>': {path!r}")
            )
            continue
        target = _regular_file(root, path)
        if isinstance(target, str):
            report.problems.append(Problem(path, target))
        elif sha256_file(target)[0] != digest:
            report.problems.append(
                Problem(path, f"does not match its SHA-256 in {SUMS_NAME} (changed or damaged)")
            )
    _cross_check(raw, sums, manifest, report)
    report.problems.extend(
        Problem(p, f"is not listed in {SUMS_NAME}") for p in _unlisted(root, {p for _, p in sums})
    )
    return report


def _cross_check(
    raw: bytes, sums: list[tuple[str, str]], manifest: dict[str, str] | None, report: VerifyReport
) -> None:
    listed = {p: d for d, p in sums if d}
    if sums_text([FileEntry(p, d, 0) for d, p in sums if d]) != raw or len(listed) != len(sums):
        report.problems.append(
            Problem(
                SUMS_NAME,
                "is not exactly as Labrig writes it (edited, reordered, "
                "duplicated lines or changed spacing)",
            )
        )
    if manifest is None:
        return
    expected = {p: d for p, d in listed.items() if p != MANIFEST_NAME}
    for path in sorted(set(expected) | set(manifest)):
        if expected.get(path) != manifest.get(path):
            report.problems.append(
                Problem(path, f"is listed differently in {MANIFEST_NAME} and {SUMS_NAME}")
            )
