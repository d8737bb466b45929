"""Safe paths inside an export bundle: what Labrig writes, and what it accepts when
it reads one back.

Names that come from the catalog or from manifests (result ids, subject codes, protocol names,
segment file names) become single path components through :func:`safe_component`: ASCII letters,
digits, ``.``, ``-`` and ``_`` only, never ``.``/``..``, never a leading dot, never a Windows device
name (``CON``, ``NUL.txt``, ``COM1``…) nor a trailing dot or space, at most :data:`MAX_COMPONENT`
characters. Whatever the input, the result names one entry directly inside its folder, on Linux,
macOS and Windows alike.

A bundle read back (``labrig export verify``) may have been made by anyone:
:func:`check_bundle_path` refuses, without touching the file system, any listed path that could
leave the bundle or mean something else on another system (absolute, drive letters, UNC,
backslashes, ``..``, device names, control characters, alternate data streams).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path, PurePosixPath

from labrig.errors import LabrigError

MAX_COMPONENT = 80
MAX_PATH = 240  # below Windows' classic MAX_PATH once the bundle's own folder is added
#: device names Windows reserves in every folder, with any extension
RESERVED = frozenset(
    {
        "CON",
        "PRN",
        "AUX",
        "NUL",
        "CONIN$",
        "CONOUT$",
        "CLOCK$",
        *(f"COM{i}" for i in range(10)),
        *(f"LPT{i}" for i in range(10)),
    }
)
_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
_SAFE_COMPONENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")


class UnsafeBundlePathError(LabrigError):
    """A bundle lists a path that could escape its folder; nothing was read through it."""

    code = "LABRIG_BUNDLE_UNSAFE_PATH"


class UnsafeTargetError(LabrigError):
    """A path Labrig was about to write resolves outside the export folder (a bug or
    a hostile link)."""

    code = "LABRIG_EXPORT_UNSAFE_PATH"


def _is_reserved(name: str) -> bool:
    stem = name.split(".", 1)[0].rstrip(" ").upper()
    return stem in RESERVED


def safe_component(text: object, fallback: str = "unnamed") -> str:
    """``text`` as one safe file or folder name (``fallback``, itself safe, when nothing
    usable is left)."""
    ascii_text = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode("ascii")
    name = _UNSAFE_CHARS.sub("_", ascii_text)
    name = re.sub(r"\.{2,}", ".", name)  # no "..", even inside a name
    # nothing hidden, nothing a shell takes for an option
    name = re.sub(r"_{2,}", "_", name).strip("._- ")
    name = name[:MAX_COMPONENT].rstrip("._ ")
    if not name:
        return fallback
    if _is_reserved(name):
        name = f"_{name}"[:MAX_COMPONENT].rstrip("._ ")
    return name


def is_safe_component(name: str) -> bool:
    """True for a name :func:`safe_component` could have produced (what a bundle may contain)."""
    return (
        bool(_SAFE_COMPONENT.match(name))
        and len(name) <= MAX_COMPONENT
        and ".." not in name
        and not name.endswith(".")
        and not _is_reserved(name)
    )


def safe_relpath(*components: object) -> str:
    """A bundle-relative path (``/``-separated) of safe components."""
    return "/".join(safe_component(c) for c in components)


def check_bundle_path(text: str) -> PurePosixPath:
    """A path listed in a bundle, if it stays inside the bundle on every system; else
    :class:`UnsafeBundlePathError` naming it."""
    shown = text.encode("unicode_escape").decode("ascii")
    parts = text.split("/")
    if not text or len(text) > MAX_PATH or not all(is_safe_component(p) for p in parts):
        raise UnsafeBundlePathError(
            f"the bundle lists the path '{shown}', which could leave the bundle's folder or mean "
            "another file on another system (absolute, '..', a drive, a device name or unusual "
            "characters). The bundle was not made by Labrig or was altered: nothing was read "
            "through that path; ask the sender for a new export"
        )
    return PurePosixPath(text)


def inside(root: Path, relpath: str) -> Path:
    """``root / relpath``, after checking that it resolves (links followed) inside ``root``."""
    target = root.joinpath(*relpath.split("/"))
    resolved_root = root.resolve()
    resolved = target.resolve()
    if resolved != resolved_root and resolved_root not in resolved.parents:
        raise UnsafeTargetError(
            f"'{relpath}' resolves to {resolved}, outside {resolved_root}; nothing was "
            "written there. Export into a folder without links pointing elsewhere"
        )
    return target
