#!/usr/bin/env python3
"""aniposelib peer for the calibration / triangulation benchmark.

Runs in aniposelib's OWN virtualenv (see anipose_env.sh), never imports labrig:

    VENV/bin/python tests/benchmarks/anipose_peer.py IN.npz OUT.json
        [--board-pose {iterative,ransac}] [--warmup] [--repeats N] [--seed S] [--verbose]

IN.npz:
  names            (C,)       camera names
  sizes            (C, 2)     int (width, height)
  board_squares    (2,)       int (squares_x, squares_y); inner corners are (sx-1) x (sy-1)
  board_square_mm  ()         float, square edge in mm
  corners          (C,V,K,2)  float64 px, OpenCV chessboard order for pattern (sx-1, sy-1);
                              a view a camera did not see is all-NaN
  points2d         (C,P,2)    float64 px, NaN where a camera did not see a point

OUT.json keys (on success, exit 0):
  ok (true), tool, aniposelib_version, opencv_version, cameras[] (name, size, matrix,
  dist, rvec, tvec, center), frame, board_pose, calib_error, calib_error_kind,
  calib_seconds, calib_warm, calib_warmup_seconds, calib_settings, n_views,
  n_views_per_camera, n_views_multi_camera, reproj_rms_px, reproj_rms_board_px,
  reproj_n_obs, reproj_n_obs_single_camera, reproj_method, triangulation_seconds,
  triangulation_seconds_median, triangulation_first_call_seconds, triangulation_repeats,
  triangulation_n_points, triangulation_n_finite, triangulation_points_per_s, points3d
  (P x 3, null for NaN), seed.
  On failure OUT.json is {"ok": false, "error": "...", "stage": "..."}, the traceback
  goes to stderr and the exit status is 1.

--board-pose (default iterative): calibrate_rows always re-estimates each camera's
  board pose per view with Checkerboard.estimate_pose_points, which in aniposelib is
  cv2.solvePnPRansac(confidence=0.9, reprojectionError=30).  With boards that are
  small in the image (e.g. a 280x160 mm corner grid at 3 m, ~85 px wide) that returns
  the mirrored planar-PnP solution for a large share of views (about half in our
  synthetic check, with OpenCV 4.10 and 5.1 alike); those poses seed both the initial
  extrinsics and the board poses of every bundle adjustment, and the calibration
  diverges.  "iterative" swaps in cv2.solvePnP (SOLVEPNP_ITERATIVE) through a
  Checkerboard subclass, nothing else; "ransac" is stock aniposelib.
Timing: calib_seconds is one calibrate_rows call, imports (including jax, which
  aniposelib imports lazily) and file loading excluded.  It includes the JIT work
  aniposelib does on first use (numba object-mode compiles, ~2 s; jax compiles per new
  array shape) unless --warmup runs one untimed calibration first.

aniposelib conventions (0.8.0, read from its source):
  * Checkerboard(squaresX, squaresY, square_length) takes the INNER-corner counts (it
    passes (squaresX, squaresY) straight to cv2.findChessboardCorners); its object
    points are np.mgrid[0:sx, 0:sy].T.reshape(-1, 2) * square_length, i.e. OpenCV's
    row-major order, z = 0.
  * rvec/tvec of a camera are world->camera (x_cam = R x_world + t), in board units
    (mm here).  The world frame is camera 0's initial frame (camera 0 is the root of
    the extrinsics graph and starts at identity), but bundle adjustment does not pin
    any camera, so camera 0 drifts off the origin (55-250 mm in the synthetic check):
    compare rigs only after aligning frames.
  * Intrinsics: initCameraMatrix2D per camera (principal point ((w-1)/2, (h-1)/2),
    never refined), then bundle adjustment refines one focal length (fx = fy) and k1
    per camera; k2, p1, p2, k3 stay 0.
"""

import argparse
import json
import sys
import time

import numpy as np


def _make_board_class(Checkerboard, cv2):
    class IterativePnPCheckerboard(Checkerboard):
        """aniposelib Checkerboard whose per-view pose uses cv2.solvePnP (iterative)
        instead of solvePnPRansac; same guards as Checkerboard.estimate_pose_points."""

        def estimate_pose_points(self, camera, points, ids=None):
            if points is None or np.sum(~np.isnan(points)) // 2 < 7:
                return None, None
            points = np.reshape(points, (points.size // 2, 1, 2)).astype(np.float64)
            obj = self.get_object_points()
            if points.shape[0] != obj.shape[0]:
                return None, None
            ok, rvec, tvec = cv2.solvePnP(
                obj,
                points,
                camera.get_camera_matrix(),
                camera.get_distortions(),
                flags=cv2.SOLVEPNP_ITERATIVE,
            )
            return (rvec, tvec) if ok else (None, None)

    return IterativePnPCheckerboard


def _load(path):
    d = np.load(path, allow_pickle=False)
    names = [str(n) for n in d["names"]]
    sizes = np.asarray(d["sizes"], dtype=int).reshape(-1, 2)
    sq = np.asarray(d["board_squares"], dtype=int).ravel()
    square_mm = float(np.asarray(d["board_square_mm"]))
    corners = np.asarray(d["corners"], dtype=np.float64)
    points2d = np.asarray(d["points2d"], dtype=np.float64)
    C, _, K, _ = corners.shape
    if len(names) != C or sizes.shape[0] != C or points2d.shape[0] != C:
        raise ValueError("names/sizes/corners/points2d disagree on the camera count")
    if (sq[0] - 1) * (sq[1] - 1) != K:
        raise ValueError(
            f"corners has K={K} but board {sq.tolist()} squares has "
            f"{(sq[0] - 1) * (sq[1] - 1)} inner corners"
        )
    return names, sizes, (int(sq[0]), int(sq[1])), square_mm, corners, points2d


def _build_rows(corners):
    """aniposelib row format, one list per camera, as Checkerboard.detect_video makes it:
    {'framenum': (0, v), 'corners': (K,1,2) float, 'ids': (K,) int = arange(K),
     'filled': (K,1,2)} -- 'filled' is what extract_points reads; calibrate_rows
    only fills it in on the init_intrinsics path, so we add it here.
    Checkerboard.estimate_pose_points needs the full board (K points) and >= 7 valid
    corners, so a view with any NaN corner is left out for that camera."""
    C, V, K, _ = corners.shape
    all_rows = []
    for c in range(C):
        rows = []
        for v in range(V):
            cv = corners[c, v]
            if not np.all(np.isfinite(cv)):
                continue
            pts = np.ascontiguousarray(cv.reshape(K, 1, 2), dtype=np.float64)
            rows.append(
                {"framenum": (0, v), "corners": pts, "ids": np.arange(K), "filled": pts.copy()}
            )
        all_rows.append(rows)
    return all_rows


def _rms_triangulated(cgroup, corners):
    """Reprojection RMS (px) of all corner observations of views seen by >= 2 cameras:
    the board corners are triangulated by aniposelib (cgroup.triangulate, undistort=True,
    free points, not held to the board's shape) and reprojected with cgroup's own
    reprojection_error(p3d, p2d).  RMS is sqrt(mean(dx^2 + dy^2)) over observations.
    Returns (rms, triangulated corners, n observations scored, n single-camera
    observations that cannot be scored)."""
    C, _, K, _ = corners.shape
    obs = corners.copy()
    bad = ~np.all(np.isfinite(obs), axis=(2, 3))  # (C, V) whole view unusable
    obs[bad] = np.nan
    n_cams_view = np.sum(~bad, axis=0)  # (V,)
    single = int(np.sum(~bad[:, n_cams_view < 2]) * K)
    multi = n_cams_view >= 2
    p2d = obs[:, multi].reshape(C, -1, 2)
    if p2d.shape[1] == 0:
        return float("nan"), float("nan"), 0, single
    p3d = np.asarray(cgroup.triangulate(p2d, undistort=True), dtype=np.float64)
    err = cgroup.reprojection_error(p3d, p2d, mean=False)  # (C, N, 2)
    e2 = np.sum(err**2, axis=2)
    ok = np.isfinite(e2)
    rms = float(np.sqrt(np.mean(e2[ok])))
    return rms, p3d, int(ok.sum()), single


def _rms_rigid_board(cgroup, corners, p3d, objp):
    """Rigid-board variant: per view, the board model `objp` is fitted (Kabsch, no
    scale) to that view's triangulated corners and the fitted board is reprojected
    with cgroup.reprojection_error.  Closer to a board-pose RMS than free points."""
    C, _, K, _ = corners.shape
    obs = corners.copy()
    bad = ~np.all(np.isfinite(obs), axis=(2, 3))
    obs[bad] = np.nan
    multi = np.sum(~bad, axis=0) >= 2
    p2d = obs[:, multi].reshape(C, -1, 2)
    P = p3d.reshape(-1, K, 3)
    fitted = np.empty_like(P)
    mo = objp.mean(axis=0)
    for i in range(P.shape[0]):
        q = P[i]
        mq = q.mean(axis=0)
        U, _, Vt = np.linalg.svd((q - mq).T @ (objp - mo))
        D = np.eye(3)
        if np.linalg.det(U) * np.linalg.det(Vt) < 0:
            D[2, 2] = -1
        R = U @ D @ Vt
        fitted[i] = (objp - mo) @ R.T + mq
    err = cgroup.reprojection_error(fitted.reshape(-1, 3), p2d, mean=False)
    e2 = np.sum(err**2, axis=2)
    return float(np.sqrt(np.mean(e2[np.isfinite(e2)])))


def _num(x):
    """float, or None when not finite (JSON has no NaN)."""
    x = float(x)
    return x if np.isfinite(x) else None


def _nan_to_none(a):
    return [[None if not np.isfinite(x) else float(x) for x in row] for row in a]


def _calibrate(CameraGroup, board, names, sizes, corners, settings, seed):
    cgroup = CameraGroup.from_names(names, fisheye=False)
    for cam, (w, h) in zip(cgroup.cameras, sizes, strict=True):
        cam.set_size((int(w), int(h)))
    all_rows = _build_rows(corners)
    np.random.seed(seed)  # bundle_adjust_iter resamples points with np.random
    # calibrate_rows print()s the camera dicts unconditionally: keep stdout clean
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    try:
        t0 = time.perf_counter()
        err = cgroup.calibrate_rows(all_rows, board, **settings)
        dt = time.perf_counter() - t0
    finally:
        sys.stdout = real_stdout
    return cgroup, float(err), dt


def _fail(out_path, stage, exc):
    with open(out_path, "w") as f:
        json.dump(
            {"ok": False, "stage": stage, "error": f"{type(exc).__name__}: {exc}"}, f, indent=1
        )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument(
        "--board-pose",
        choices=("iterative", "ransac"),
        default="iterative",
        help="per-view board pose: cv2.solvePnP (default) or aniposelib's stock solvePnPRansac",
    )
    ap.add_argument(
        "--warmup",
        action="store_true",
        help="run one untimed calibration first (numba/jax JIT warm-up)",
    )
    ap.add_argument(
        "--repeats", type=int, default=5, help="timed triangulation runs after the first (JIT) call"
    )
    ap.add_argument(
        "--seed",
        type=int,
        default=0,
        help="np.random seed (bundle_adjust_iter resamples points at random)",
    )
    ap.add_argument(
        "--verbose", action="store_true", help="let calibrate_rows print its progress (to stderr)"
    )
    args = ap.parse_args(argv)

    import aniposelib
    import cv2
    import jax  # noqa: F401  aniposelib imports it lazily inside triangulate()
    from aniposelib.boards import Checkerboard
    from aniposelib.cameras import CameraGroup

    stage = "load"
    try:
        names, sizes, (sx, sy), square_mm, corners, points2d = _load(args.inp)
        V = corners.shape[1]

        # Checkerboard wants inner-corner counts; square length in mm -> mm extrinsics
        board_cls = (
            Checkerboard if args.board_pose == "ransac" else _make_board_class(Checkerboard, cv2)
        )
        board = board_cls(sx - 1, sy - 1, square_length=square_mm)
        seen = np.all(np.isfinite(corners), axis=(2, 3))  # (C, V)
        n_views_per_camera = [int(n) for n in seen.sum(axis=1)]
        n_multi = int(np.sum(seen.sum(axis=0) >= 2))
        blind = [n for n, k in zip(names, n_views_per_camera, strict=True) if k == 0]
        if blind:
            # calibrate_rows would die in `objp, imgp = zip(*mixed)` with an opaque
            # "not enough values to unpack": init_intrinsics needs >= 1 view per camera
            raise ValueError(f"cameras with no complete board view: {blind}")

        # aniposelib's defaults throughout (init_intrinsics/init_extrinsics=True,
        # min_corners_intrinsic=9, bundle_adjust_iter(n_iters=6, start_mu=15,
        # end_mu=1, max_nfev=200, ftol=1e-4, n_samp_iter=200, n_samp_full=1000,
        # error_threshold=0.3)); only verbose is turned off.
        settings = {
            "init_intrinsics": True,
            "init_extrinsics": True,
            "min_corners_intrinsic": 9,
            "verbose": bool(args.verbose),
        }

        stage = "calibrate"
        warmup_s = None
        if args.warmup:
            _, _, warmup_s = _calibrate(
                CameraGroup, board, names, sizes, corners, settings, args.seed
            )
        cgroup, calib_error, calib_seconds = _calibrate(
            CameraGroup, board, names, sizes, corners, settings, args.seed
        )

        stage = "reprojection"
        rms, p3d_corners, n_obs, n_single = _rms_triangulated(cgroup, corners)
        rms_board = (
            _rms_rigid_board(cgroup, corners, p3d_corners, board.get_object_points().reshape(-1, 3))
            if n_obs
            else float("nan")
        )

        # triangulation: first call on its own (jax traces + compiles for this
        # shape), then `repeats` timed calls; best and median reported
        stage = "triangulate"
        pts = np.ascontiguousarray(points2d, dtype=np.float64)
        t0 = time.perf_counter()
        p3d = cgroup.triangulate(pts.copy(), undistort=True)
        first_call = time.perf_counter() - t0
        times = []
        for _ in range(max(1, args.repeats)):
            inp = pts.copy()
            t0 = time.perf_counter()
            p3d = cgroup.triangulate(inp, undistort=True)
            times.append(time.perf_counter() - t0)
        p3d = np.asarray(p3d, dtype=np.float64).reshape(-1, 3)
        P = pts.shape[1]
        best = float(min(times))
    except Exception as exc:
        _fail(args.out, stage, exc)
        raise

    cams = []
    for cam in cgroup.cameras:
        rvec = np.asarray(cam.get_rotation(), dtype=np.float64).ravel()
        tvec = np.asarray(cam.get_translation(), dtype=np.float64).ravel()
        R = cv2.Rodrigues(rvec)[0]
        cams.append(
            {
                "name": cam.get_name(),
                "size": [int(s) for s in cam.get_size()],
                "matrix": np.asarray(cam.get_camera_matrix(), dtype=float).tolist(),
                "dist": np.asarray(cam.get_distortions(), dtype=float).ravel().tolist(),
                "rvec": rvec.tolist(),
                "tvec": tvec.tolist(),
                "center": (-R.T @ tvec).tolist(),
            }
        )

    out = {
        "ok": True,
        "tool": "aniposelib",
        "aniposelib_version": getattr(aniposelib, "__version__", None),
        "opencv_version": cv2.__version__,
        "cameras": cams,
        "frame": (
            "rvec/tvec world->camera (x_cam = R x_world + t), mm; world = camera "
            "0's initial frame (identity at init, not pinned during bundle "
            "adjustment); center = -R^T t"
        ),
        "board_pose": (
            "cv2.solvePnP iterative (Checkerboard subclass)"
            if args.board_pose == "iterative"
            else "stock aniposelib cv2.solvePnPRansac"
        ),
        "calib_error": _num(calib_error),
        "calib_error_kind": (
            "calibrate_rows return value: median over a random resample "
            "of board corners of the per-point mean (over cameras) "
            "reprojection error norm, px, after triangulation"
        ),
        "calib_seconds": calib_seconds,
        "calib_warm": bool(args.warmup),
        "calib_warmup_seconds": warmup_s,
        "calib_settings": settings,
        "n_views": int(V),
        "n_views_per_camera": n_views_per_camera,
        "n_views_multi_camera": n_multi,
        "reproj_rms_px": _num(rms),
        "reproj_rms_board_px": _num(rms_board),
        "reproj_n_obs": n_obs,
        "reproj_n_obs_single_camera": n_single,
        "reproj_method": (
            "corners of views seen by >=2 cameras triangulated with "
            "cgroup.triangulate(undistort=True) and reprojected with "
            "cgroup.reprojection_error; rms = sqrt(mean(dx^2+dy^2)). "
            "reproj_rms_board_px: same, but projecting the board model "
            "rigidly (Kabsch) fitted to each view's triangulated corners. "
            "Single-camera observations cannot be scored this way."
        ),
        "triangulation_seconds": best,
        "triangulation_seconds_median": float(np.median(times)),
        "triangulation_first_call_seconds": first_call,
        "triangulation_repeats": len(times),
        "triangulation_n_points": int(P),
        "triangulation_n_finite": int(np.sum(np.all(np.isfinite(p3d), axis=1))),
        "triangulation_points_per_s": P / best if best > 0 else None,
        "points3d": _nan_to_none(p3d),
        "seed": args.seed,
    }
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1, allow_nan=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
