"""Where the data root is and whether Labrig may write there.

The data root holds the catalog database (``labrig.db``) and the media store
(``media/``). It is chosen by ``--store DIR``, else ``LABRIG_STORE``, else the
per-user data folder of the platform.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

import platformdirs

from labrig.errors import NetworkFilesystemError, StoreUnwritableError
from labrig.fsutil import disk_full

ENV_VAR = "LABRIG_STORE"
#: a PostgreSQL URL: the catalog and queue on a server instead of SQLite in the data folder
DB_ENV_VAR = "LABRIG_DB"
#: filesystems whose locking SQLite cannot trust (a shared SQLite file on them gets corrupted)
NETWORK_FILESYSTEMS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "afs",
        "9p",
        "ncpfs",
        "coda",
        "fuse.sshfs",
        "fuse.rclone",
        "davfs",
        "fuse.davfs2",
        "glusterfs",
        "fuse.glusterfs",
        "ceph",
        "fuse.ceph",
        "lustre",
        "gpfs",
        "beegfs",
    }
)
MOUNTS_FILE = "/proc/self/mounts"
DB_FILENAME = "labrig.db"
MEDIA_DIRNAME = "media"
#: a committed capture's manifest in the media folder: <aa>/<sha256>.json
_MANIFEST_BLOB = re.compile(r"(?P<aa>[0-9a-f]{2})[0-9a-f]{62}\.json")


def resolve_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data root: the explicit path, else ``$LABRIG_STORE``, else the platform default."""
    if explicit:
        return Path(explicit).expanduser().absolute()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser().absolute()
    return Path(platformdirs.user_data_dir("Labrig", "Labrig"))


def ensure_writable(root: Path) -> None:
    """Create ``root`` if needed and prove it accepts a durable write, or raise.

    A probe file is written, fsynced and removed: permission bits alone do not
    tell (root ignores them; read-only mounts and full disks do not show in them).
    """
    # one probe per process: several processes (GUI, workers, CLI) may open the store at once
    probe = root / f".labrig-write-probe-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, b"labrig")
            os.fsync(fd)
        finally:
            os.close(fd)
            probe.unlink(missing_ok=True)
    except OSError as exc:
        if full := disk_full(
            exc, f"the data folder {root} takes no more writes; nothing was changed"
        ):
            raise full from exc
        raise StoreUnwritableError(
            f"cannot write to the data folder {root} ({exc.strerror or exc}). Choose a folder you "
            f"can write to with --store DIR or the {ENV_VAR} environment variable, or fix its "
            "permissions"
        ) from exc


def committed_manifests(root: Path) -> int:
    """How many committed captures' manifests the media folder of ``root`` holds (by name: none
    is opened, so a hostile file among them cannot stall the count)."""
    media = root / MEDIA_DIRNAME
    if not media.is_dir():
        return 0
    return sum(
        1
        for blob in media.glob("??/*.json")
        if (named := _MANIFEST_BLOB.fullmatch(blob.name)) and named["aa"] == blob.parent.name
    )


def filesystem_type(path: Path, mounts: str | None = None) -> str | None:
    """The type of the filesystem holding ``path`` (Linux: from the mount table), or
    None when unknown.

    A Windows UNC path (``\\\\server\\share``) is reported as ``smb``. ``mounts`` is the
    text of ``/proc/self/mounts`` (read when not given).
    """
    text = str(path)
    if text.startswith(("\\\\", "//")):
        return "smb"
    if mounts is None:
        try:
            mounts = Path(MOUNTS_FILE).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    best, kind = -1, None
    resolved = path.resolve().as_posix()
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = resolved == point or resolved.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best:
            best, kind = len(point), fields[2]
    return kind


def refuse_network_filesystem(root: Path, mounts: str | None = None) -> None:
    """Raise :class:`NetworkFilesystemError` if the SQLite catalog would live on a
    network filesystem."""
    kind = filesystem_type(root, mounts)
    if kind in NETWORK_FILESYSTEMS or kind == "smb":
        raise NetworkFilesystemError(
            f"the data folder {root} is on a network filesystem ({kind}). An SQLite catalog there "
            "gets corrupted when several computers use it. Keep the data folder on a local disk, "
            "or share one catalog through PostgreSQL: --db "
            "postgresql+psycopg://USER@SERVER/DATABASE (or LABRIG_DB), with the media folder on "
            "the share"
        )
