"""Where the data root is and whether Labrig may write there.

The data root holds the catalog database (``labrig.db``) and the media store
(``media/``). It is chosen by ``--store DIR``, else ``LABRIG_STORE``, else the
per-user data folder of the platform.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import platformdirs

from labrig.errors import StoreUnwritableError

ENV_VAR = "LABRIG_STORE"
DB_FILENAME = "labrig.db"
MEDIA_DIRNAME = "media"


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
        probe.unlink()
    except OSError as exc:
        raise StoreUnwritableError(
            f"cannot write to the data folder {root} ({exc.strerror or exc}). Choose a folder you "
            f"can write to with --store DIR or the {ENV_VAR} environment variable, or fix its permissions"
        ) from exc
