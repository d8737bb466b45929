"""Calibration boards: their definitions, the ``--board`` spec grammar, the named boards in
``resources/``, and finding a board's corners in an image (:func:`detect`).

A board is pure data (:class:`Board`); its object points are in millimetres on the board's plane (z
= 0), indexed by corner id, so every detector hands back ``(ids, image points)`` and calibration
needs no board-specific code. Specs:

* ``chessboard:COLSxROWS:SQUARE_MM``: COLS×ROWS *inner* corners (where four squares meet), e.g.
  ``chessboard:9x6:25``;
* ``charuco:COLSxROWS:SQUARE_MM:MARKER_MM:DICT``: COLS×ROWS *squares*, ArUco markers of MARKER_MM
  from the OpenCV dictionary DICT, e.g. ``charuco:5x7:30:22:DICT_4X4_50``;
* a name from ``resources/boards.json`` (schema ``labrig.boards/1``, see ``docs/calibration.md``).

Pure and thread-safe: loading reads one resource file, detection touches only its arguments;
nothing is cached.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt

from labrig.errors import LabrigError

SCHEMA = "labrig.boards/1"
BoardKind = Literal["chessboard", "charuco"]
_SIZE = re.compile(r"^(\d+)[x×](\d+)$")
_MAX_SIDE = 100  # more corners than any printable board has: a typo, not a board


class BoardSpecError(LabrigError):
    """A ``--board`` spec or a boards file entry that does not describe a usable board."""

    code = "LABRIG_BOARD_INVALID"


@dataclass(frozen=True)
class Board:
    """A planar calibration target. ``cols``/``rows``: inner corners (chessboard) or
    squares (ChArUco)."""

    kind: BoardKind
    cols: int
    rows: int
    square_mm: float
    marker_mm: float | None = None  # ChArUco only: side of the ArUco markers
    # ChArUco only: an OpenCV predefined dictionary name, e.g. DICT_4X4_50
    dictionary: str | None = None
    name: str | None = None  # the boards.json name it was loaded by, if any

    @property
    def corner_grid(self) -> tuple[int, int]:
        """Inner corners across and down."""
        return (
            (self.cols, self.rows) if self.kind == "chessboard" else (self.cols - 1, self.rows - 1)
        )

    @property
    def corner_count(self) -> int:
        return self.corner_grid[0] * self.corner_grid[1]

    def object_points(self) -> npt.NDArray[np.float64]:
        """Corner positions (N×3 mm, z = 0) in corner-id order: row by row from the
        first inner corner."""
        if self.kind == "charuco":
            return np.asarray(charuco_board(self).getChessboardCorners(), dtype=np.float64).reshape(
                -1, 3
            )
        gx, gy = np.meshgrid(
            np.arange(self.cols, dtype=np.float64), np.arange(self.rows, dtype=np.float64)
        )
        return np.stack([gx.ravel(), gy.ravel(), np.zeros(gx.size)], axis=1) * self.square_mm

    def spec(self) -> str:
        """The canonical spec string, which :func:`parse_board` turns back into this
        board (name aside)."""
        base = f"{self.kind}:{self.cols}x{self.rows}:{self.square_mm:g}"
        return base if self.kind == "chessboard" else f"{base}:{self.marker_mm:g}:{self.dictionary}"

    def describe(self) -> str:
        if self.kind == "chessboard":
            return (
                f"chessboard, {self.cols}x{self.rows} inner corners, {self.square_mm:g} mm squares"
            )
        return (
            f"ChArUco, {self.cols}x{self.rows} squares of {self.square_mm:g} mm, "
            f"{self.marker_mm:g} mm {self.dictionary} markers"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "cols": self.cols,
            "rows": self.rows,
            "square_mm": self.square_mm,
            "marker_mm": self.marker_mm,
            "dictionary": self.dictionary,
            "spec": self.spec(),
        }


def charuco_board(board: Board) -> Any:
    """The ``cv2.aruco.CharucoBoard`` for a ChArUco :class:`Board`, with lengths in millimetres."""
    if board.kind != "charuco" or board.dictionary is None or board.marker_mm is None:
        raise BoardSpecError(f"{board.spec()} is not a ChArUco board")
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, board.dictionary))
    return cv2.aruco.CharucoBoard(
        (board.cols, board.rows), board.square_mm, board.marker_mm, dictionary
    )


def _check(board: Board) -> Board:
    def fail(why: str) -> BoardSpecError:
        return BoardSpecError(f"board {board.spec()}: {why}")

    least = 3  # fewer a side cannot pin a perspective down (and a 2x2 ChArUco has a single corner)
    if not (least <= board.cols <= _MAX_SIDE and least <= board.rows <= _MAX_SIDE):
        unit = "inner corners" if board.kind == "chessboard" else "squares"
        raise fail(f"needs {least} to {_MAX_SIDE} {unit} on each side")
    if not board.square_mm > 0:
        raise fail("the square size must be a positive number of millimetres")
    if board.kind == "chessboard":
        return board
    if board.marker_mm is None or not 0 < board.marker_mm < board.square_mm:
        raise fail("the marker size must be positive and smaller than the square size")
    code = getattr(cv2.aruco, board.dictionary or "", None)
    if not (board.dictionary or "").startswith("DICT_") or not isinstance(code, int):
        raise fail(
            f"unknown ArUco dictionary {board.dictionary!r}; use an OpenCV name such as DICT_4X4_50"
        )
    available = cv2.aruco.getPredefinedDictionary(code).bytesList.shape[0]
    if available < board.cols * board.rows // 2:
        raise fail(
            f"{board.dictionary} has {available} markers but the board needs "
            f"{board.cols * board.rows // 2}; pick a larger dictionary (e.g. DICT_4X4_100)"
        )
    return board


def _number(text: str, what: str, spec: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise BoardSpecError(
            f"board {spec!r}: {what} {text!r} is not a number of millimetres"
        ) from None


def parse_board(spec: str) -> Board:
    """A board from a spec (``chessboard:9x6:25``, ``charuco:5x7:30:22:DICT_4X4_50``) or a
    boards.json name."""
    parts = spec.strip().split(":")
    if len(parts) == 1:
        return named_board(parts[0])
    kind, fields = parts[0].lower(), parts[1:]
    size = _SIZE.match(fields[0].lower()) if fields else None
    expected = {"chessboard": 2, "charuco": 4}.get(kind)
    if expected is None or len(fields) != expected or size is None:
        raise BoardSpecError(
            f"board {spec!r} is not understood; write chessboard:COLSxROWS:SQUARE_MM, "
            "charuco:COLSxROWS:SQUARE_MM:MARKER_MM:DICT, or a board name from "
            f"{', '.join(sorted(load_boards()))}"
        )
    cols, rows = int(size.group(1)), int(size.group(2))
    square = _number(fields[1], "square size", spec)
    if kind == "chessboard":
        return _check(Board("chessboard", cols, rows, square))
    marker = _number(fields[2], "marker size", spec)
    return _check(Board("charuco", cols, rows, square, marker, fields[3].upper()))


def _entry(raw: Any, index: int) -> Board:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise BoardSpecError(f'boards.json entry {index} must be an object with a "name"')
    try:
        board = Board(
            raw["kind"],
            int(raw["cols"]),
            int(raw["rows"]),
            float(raw["square_mm"]),
            None if raw.get("marker_mm") is None else float(raw["marker_mm"]),
            raw.get("dictionary"),
            raw["name"],
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise BoardSpecError(
            f"boards.json entry {raw['name']!r} is incomplete or mistyped ({exc})"
        ) from None
    if board.kind not in ("chessboard", "charuco"):
        raise BoardSpecError(
            f"boards.json entry {board.name!r}: kind must be chessboard or charuco"
        )
    return _check(board)


def load_boards(text: str | None = None) -> dict[str, Board]:
    """The named boards: from ``text`` (a boards.json document) or the file shipped in
    ``labrig.resources``."""
    if text is None:
        text = (resources.files("labrig.resources") / "boards.json").read_text(encoding="utf-8")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BoardSpecError(
            f"boards.json is not valid JSON ({exc.msg}, line {exc.lineno})"
        ) from None
    if (
        not isinstance(doc, dict)
        or doc.get("schema") != SCHEMA
        or not isinstance(doc.get("boards"), list)
    ):
        raise BoardSpecError(f'boards.json must be a {SCHEMA} document with a "boards" list')
    boards = [_entry(raw, i) for i, raw in enumerate(doc["boards"])]
    return {b.name: b for b in boards if b.name is not None}


def named_board(name: str) -> Board:
    boards = load_boards()
    if name not in boards:
        raise BoardSpecError(
            f"no board named {name!r}; known boards: {', '.join(sorted(boards))} "
            "(or write a spec such as chessboard:9x6:25)"
        )
    return boards[name]


@dataclass(frozen=True)
class Detection:
    """One board found in one image: ``ids`` index :meth:`Board.object_points`; ``corners``
    are N×2 image px."""

    name: str  # the file, or ``video.avi#frame``, it came from
    ids: npt.NDArray[np.int64]
    corners: npt.NDArray[np.float64]


# fewer interpolated corners pin a view's pose down too loosely to help a calibration
MIN_CHARUCO_CORNERS = 6
_SUBPIX = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 50, 1e-3)
_CLASSIC = cv2.CALIB_CB_ADAPTIVE_THRESH | cv2.CALIB_CB_NORMALIZE_IMAGE | cv2.CALIB_CB_FAST_CHECK
_SECTOR = cv2.CALIB_CB_NORMALIZE_IMAGE | cv2.CALIB_CB_EXHAUSTIVE | cv2.CALIB_CB_ACCURACY
#: pictures up to this many pixels (640x480) always get the sector-based search (`_chessboard`)
SECTOR_ALWAYS_PX = 640 * 480
#: the Gaussian blur (px) of the picture OpenCV's sub-pixel step reads (`_chessboard`)
SUBPIX_SIGMA = 1.0


def detect(image: npt.NDArray[np.uint8], board: Board, name: str = "") -> Detection | None:
    """The board's corners in ``image`` (BGR or grey) to sub-pixel accuracy, or None when it is
    not (fully) seen."""
    gray = np.asarray(
        image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), dtype=np.uint8
    )
    found = _chessboard(gray, board) if board.kind == "chessboard" else _charuco(gray, board)
    return None if found is None else Detection(name, *found)


def _chessboard(gray: npt.NDArray[np.uint8], board: Board) -> tuple[Any, Any] | None:
    grid = board.corner_grid
    ok, corners = cv2.findChessboardCorners(gray, grid, flags=_CLASSIC)
    if ok:
        corners = _subpixel(gray, corners, grid)
    elif gray.size <= SECTOR_ALWAYS_PX or cv2.checkChessboard(gray, grid):
        # the sector-based detector finds boards the classic one misses (small squares, grain),
        # but takes half a second a 1280x720 picture: on larger pictures it is tried only where
        # OpenCV's quick check sees a chessboard, not on the many pictures a rig's camera takes
        # with no whole board in them. The quick check misses boards of squares under ~12 px, so
        # up to 640x480 (a tenth of a second) it is always tried. Its corners are its own
        # (CALIB_CB_ACCURACY): on a real 320x240 webcam's ~10 px squares the sub-pixel step
        # below made them worse (calibration RMS 0.267 -> 0.277 px).
        ok, corners = cv2.findChessboardCornersSB(gray, grid, flags=_SECTOR)
    if not ok:
        return None
    pts = np.asarray(corners, dtype=np.float64).reshape(-1, 2)
    if np.linalg.norm(pts[0]) > np.linalg.norm(pts[-1]):
        pts = pts[
            ::-1
        ].copy()  # a chessboard reads the same turned 180°: put corner 0 nearer the image origin
    return np.arange(len(pts), dtype=np.int64), pts


def _subpixel(gray: npt.NDArray[np.uint8], corners: Any, grid: tuple[int, int]) -> Any:
    """The classic search's corners refined by OpenCV's sub-pixel step, on the picture blurred by
    :data:`SUBPIX_SIGMA`. The step reads the edges' slopes by finite differences, which on a sharp
    picture are skewed where an edge crosses a pixel, by up to a tenth of a pixel depending on
    where the corner falls; a slightly blurred picture's are not. Against the virtual rig's truth,
    0.057 px RMS sharp and 0.028 blurred; on a real 320x240 stereo webcam's two sets, calibration
    RMS 0.286 -> 0.267 and 0.290 -> 0.280 px (docs/rig-calibration.md)."""
    pts = np.asarray(corners, dtype=np.float64).reshape(grid[1], grid[0], 2)
    spacing = min(
        float(np.linalg.norm(np.diff(pts, axis=1), axis=2).min()),
        float(np.linalg.norm(np.diff(pts, axis=0), axis=2).min()),
    )
    # a window wider than half a square, across or down, drifts to the next corner
    half = int(np.clip(spacing * 0.4, 2, 11))
    smooth = cv2.GaussianBlur(gray, (0, 0), SUBPIX_SIGMA)
    return cv2.cornerSubPix(smooth, corners, (half, half), (-1, -1), _SUBPIX)


def _charuco(gray: npt.NDArray[np.uint8], board: Board) -> tuple[Any, Any] | None:
    target = charuco_board(board)
    corners, ids, _, _ = cv2.aruco.CharucoDetector(target).detectBoard(gray)
    if ids is None or len(ids) < MIN_CHARUCO_CORNERS or target.checkCharucoCornersCollinear(ids):
        return None
    flat = np.asarray(ids, dtype=np.int64).ravel()
    order = np.argsort(flat)
    return flat[order], np.asarray(corners, dtype=np.float64).reshape(-1, 2)[order]
