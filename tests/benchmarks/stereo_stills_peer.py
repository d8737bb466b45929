"""Plain OpenCV stereo calibration on the same still pairs ``labrig calibrate-rig`` is given: the
peer for docs/rig-calibration.md, *On a real stereo camera*.

    .venv/bin/python tests/benchmarks/stereo_stills_peer.py FOLDER [--board SPEC]

FOLDER holds ``leftNN.jpg`` / ``rightNN.jpg`` pairs taken at the same instants (empty files are
skipped). The board is found by Labrig's detector (``boards.detect``) and numbered alike in both
cameras by ``board_order.consistent_order``: OpenCV's own stereo sample assumes both cameras number
a chessboard from the same corner, which a square board seen turned does not guarantee. Then each
lens by ``cv2.calibrateCamera`` (Labrig's lens model, ``camera.FLAGS``) and the pair by
``cv2.stereoCalibrate``, with the lenses fixed and free. Prints RMS, baseline and the angle
between the optical axes, to set beside ``labrig calibrate-rig --board SPEC --camera left …
--camera right …``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import cv2
import numpy as np

from labrig.calibration.board_order import consistent_order
from labrig.calibration.boards import detect, parse_board
from labrig.calibration.camera import FLAGS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--board", default="chessboard:7x7:25")
    args = parser.parse_args()
    board = parse_board(args.board)
    lefts = [p for p in sorted(args.folder.glob("left*.jpg")) if os.path.getsize(p)]
    rights = [p.with_name(p.name.replace("left", "right")) for p in lefts]
    images = [[cv2.imread(str(p)) for p in paths] for paths in (lefts, rights)]
    size = (images[0][0].shape[1], images[0][0].shape[0])
    found = [[detect(img, board) for img in per] for per in images]
    obj = board.object_points().astype(np.float32)
    lenses = []
    for per in found:
        seen = [d for d in per if d is not None]
        _, k, dist, _, _ = cv2.calibrateCamera(
            [obj[d.ids] for d in seen],
            [d.corners.astype(np.float32) for d in seen],
            size,
            None,
            None,
            flags=FLAGS,
        )
        lenses.append((k, dist))
    ordered = consistent_order(found, board, lenses)
    pairs = [
        (a, b)
        for a, b in zip(ordered[0], ordered[1], strict=True)
        if a is not None and b is not None and np.array_equal(a.ids, b.ids)
    ]
    for name, flags in (
        ("lenses fixed", cv2.CALIB_FIX_INTRINSIC),
        ("lenses free", FLAGS | cv2.CALIB_USE_INTRINSIC_GUESS),
    ):
        rms, k1, _, k2, _, rot, t, _, _ = cv2.stereoCalibrate(
            [obj[a.ids] for a, _ in pairs],
            [a.corners.astype(np.float32) for a, _ in pairs],
            [b.corners.astype(np.float32) for _, b in pairs],
            lenses[0][0].copy(),
            lenses[0][1].copy(),
            lenses[1][0].copy(),
            lenses[1][1].copy(),
            size,
            flags=flags,
        )
        axes = float(np.degrees(np.arccos(np.clip(rot[2, 2], -1.0, 1.0))))
        print(
            f"{args.folder.name}: cv2.stereoCalibrate ({name}), {len(pairs)} pairs: RMS {rms:.3f} "
            f"px, baseline {np.linalg.norm(t):.1f} mm, axes {axes:.1f} deg apart, fx "
            f"{k1[0, 0]:.1f}/{k2[0, 0]:.1f}, fy {k1[1, 1]:.1f}/{k2[1, 1]:.1f}"
        )


if __name__ == "__main__":
    main()
