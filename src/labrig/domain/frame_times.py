"""Which recorded frame is at a time: the frame whose recorded time is nearest, the earlier of two
at the same distance. Shared by the player (a camera's frame at another's time, a plot's click),
the rig overlays (the player's frame at an instant) and exports (a sample's frame)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def nearest_frames(times: npt.ArrayLike, at: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """For each time of ``at``, the index of the nearest of the sorted ``times`` (not empty)."""
    ts = np.asarray(times, dtype=np.float64)
    wanted = np.asarray(at, dtype=np.float64)
    if len(ts) < 2:
        return np.zeros(wanted.shape, dtype=np.int64)
    right = np.clip(np.searchsorted(ts, wanted), 1, len(ts) - 1)
    earlier = np.abs(wanted - ts[right - 1]) <= np.abs(ts[right] - wanted)
    return np.asarray(np.where(earlier, right - 1, right), dtype=np.int64)
