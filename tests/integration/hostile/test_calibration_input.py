"""Hostile image and video files given to ``labrig calibrate`` (issue 16).

Each hostile file is put among views of the board that would calibrate and validate, and the run
asks to bind the result to a device, so a calibration would be stored if the file were let through.
Every run must end, in time, with a typed refusal (exit 2, a ``LABRIG_*`` code, no traceback, no
signal) and store nothing. A header claiming a picture far larger than any camera's was the sharp
case: OpenCV raised out of ``load_images`` on one run and crashed the process (signal 11) on
another.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import struct
import subprocess
import zlib
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import cv2
import numpy as np
import pytest

from labrig.capture.virtual import VirtualCamera
from tests.support.cli import assert_typed, labrig, write_video

BOARD = ("--board", "chessboard:9x6:25")
BIND = ("--device", "SN-HOSTILE", "--mode", "1280x720@30:BGR")
FRAMES = range(0, 900, 45)  # 20 poses of the virtual camera's board: they calibrate and validate
REFUSED = 2


@pytest.fixture(scope="module")
def board_pngs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder, camera = tmp_path_factory.mktemp("views"), VirtualCamera("board", paced=False)
    paths = [folder / f"view_{i:04d}.png" for i in FRAMES]
    for i, path in zip(FRAMES, paths, strict=True):
        cv2.imwrite(str(path), camera.render(i))
    return paths


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_claiming(width: int, height: int) -> bytes:
    """A PNG whose header (IHDR, with a correct CRC) claims ``width``×``height`` RGB pixels, with
    a few bytes of picture data."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    picture = zlib.compress(b"\0" * 64)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", picture)
        + _chunk(b"IEND", b"")
    )


def jpeg_claiming(width: int, height: int) -> bytes:
    """A real small JPEG with its frame header (SOF0) changed to claim ``width``×``height``."""
    ok, encoded = cv2.imencode(".jpg", np.full((16, 16, 3), 128, dtype=np.uint8))
    assert ok
    data = bytearray(encoded.tobytes())
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)


def bmp_claiming(width: int, height: int) -> bytes:
    """A real small BMP with its header changed to claim ``width``×``height``."""
    ok, encoded = cv2.imencode(".bmp", np.full((16, 16, 3), 128, dtype=np.uint8))
    assert ok
    data = bytearray(encoded.tobytes())
    data[18:26] = struct.pack("<ii", width, height)
    return bytes(data)


def tiff_claiming(width: int, height: int) -> bytes:
    """A TIFF whose first image directory claims ``width``×``height`` (as 32-bit values)."""
    entries = [(256, 4, 1, width), (257, 4, 1, height)]  # ImageWidth, ImageLength: LONG, 1 value
    directory = struct.pack("<H", len(entries)) + b"".join(
        struct.pack("<HHII", *e) for e in entries
    )
    return b"II*\0" + struct.pack("<I", 8) + directory + struct.pack("<I", 0)


def truncated_png(board: Path) -> bytes:
    data = board.read_bytes()
    return data[: len(data) // 2]


def _write(name: str, data: Callable[[Path], bytes]) -> Callable[[Path, Path], Path]:
    def make(folder: Path, board: Path) -> Path:
        path = folder / name
        path.write_bytes(data(board))
        return path

    return make


def _fifo(name: str) -> Callable[[Path, Path], Path]:
    def make(folder: Path, board: Path) -> Path:
        os.mkfifo(folder / name)
        return folder / name

    return make


def _folder(folder: Path, board: Path) -> Path:
    (folder / "x.png").mkdir()
    return folder / "x.png"


def _video_named_not_utf8(folder: Path, board: Path) -> Path:
    write_video(os.fsencode(folder) + b"/clip\xff.avi")
    return Path(os.fsdecode(os.fsencode(folder) + b"/clip\xff.avi"))


FIFOS = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
NOT_UTF8 = pytest.mark.skipif(os.name == "nt", reason="Windows names are UTF-16, never bytes")

# each case: how to make the hostile file, and the code it is refused with
CASES = [
    pytest.param(
        _write("huge.png", lambda _: png_claiming(50_000, 50_000)),
        "LABRIG_IMAGE_TOO_LARGE",
        id="png-claiming-50000x50000",
    ),
    pytest.param(
        _write("huge.jpg", lambda _: jpeg_claiming(60_000, 60_000)),
        "LABRIG_IMAGE_TOO_LARGE",
        id="jpeg-claiming-60000x60000",
    ),
    pytest.param(_write("cut.png", truncated_png), "LABRIG_IMAGE_UNREADABLE", id="png-truncated"),
    pytest.param(
        _write("noise.png", lambda _: np.random.default_rng(16).bytes(4096)),
        "LABRIG_IMAGE_UNREADABLE",
        id="random-bytes-png",
    ),
    pytest.param(_write("empty.png", lambda _: b""), "LABRIG_IMAGE_UNREADABLE", id="zero-byte-png"),
    pytest.param(_fifo("pipe.png"), "LABRIG_NOT_A_REGULAR_FILE", marks=FIFOS, id="fifo-png"),
    pytest.param(_folder, "LABRIG_NOT_A_REGULAR_FILE", id="folder-png"),
    pytest.param(
        _video_named_not_utf8, "LABRIG_FILE_NAME_NOT_UTF8", marks=NOT_UTF8, id="video-not-utf8"
    ),
    pytest.param(_fifo("pipe.avi"), "LABRIG_NOT_A_REGULAR_FILE", marks=FIFOS, id="fifo-avi"),
]


def _new_store(tmp_path: Path) -> tuple[Path, list[tuple[object, ...]]]:
    """Where the store goes (``labrig calibrate`` makes it), and what it has recorded so far:
    nothing."""
    return tmp_path / "store", []


def _recorded(store: Path) -> list[tuple[object, ...]]:
    """Every event and calibration the store holds, read from its database (a refused command may
    not have made it at all): "nothing stored" is checked on the rows themselves, and without
    two more starts of ``labrig`` per case."""
    db = store / "labrig.db"
    if not db.exists():
        return []
    with closing(sqlite3.connect(db)) as conn:
        events = conn.execute("SELECT name, payload FROM outbox_events ORDER BY seq").fetchall()
        return events + conn.execute("SELECT * FROM calibrations").fetchall()


def _calibrate(store: Path, *files: Path | bytes) -> subprocess.CompletedProcess[str]:
    """``labrig calibrate FILES…`` asking to bind a valid result to a device (so to store it)."""
    return labrig(store, "calibrate", *map(os.fsencode, files), *BOARD, *BIND)


@pytest.mark.parametrize(("make", "code"), CASES)
def test_a_hostile_file_among_good_views_is_refused_and_nothing_is_stored(
    tmp_path: Path, board_pngs: list[Path], make: Callable[[Path, Path], Path], code: str
) -> None:
    store, events_before = _new_store(tmp_path)
    hostile = make(tmp_path, board_pngs[0])

    refused = _calibrate(store, *board_pngs[:3], hostile, *board_pngs[3:])

    assert_typed(refused)
    assert refused.returncode == REFUSED, refused.stdout + refused.stderr
    assert f"labrig: {code}: " in refused.stderr, refused.stderr
    assert refused.stdout == ""
    assert _recorded(store) == events_before


@pytest.mark.parametrize(
    ("name", "claiming", "claimed"),
    [
        ("huge.png", png_claiming, (50_000, 50_000)),
        ("huge.jpg", jpeg_claiming, (60_000, 60_000)),
        ("wide.bmp", bmp_claiming, (20_001, 100)),  # a side too long, 2 MP
        ("big.tif", tiff_claiming, (12_000, 9_000)),  # no side too long, 108 MP
    ],
)
def test_the_refusal_of_a_huge_picture_says_the_size_found_and_what_to_do(
    tmp_path: Path,
    name: str,
    claiming: Callable[[int, int], bytes],
    claimed: tuple[int, int],
) -> None:
    huge = tmp_path / name
    huge.write_bytes(claiming(*claimed))

    refused = labrig(tmp_path / "store", "calibrate", str(huge), *BOARD)

    assert_typed(refused)
    assert refused.returncode == REFUSED
    assert f"{name} is {claimed[0]}x{claimed[1]} pixels" in refused.stderr, refused.stderr
    assert "LABRIG_IMAGE_TOO_LARGE" in refused.stderr and "export the views" in refused.stderr


def test_views_in_every_format_the_header_is_read_from_calibrate(
    tmp_path: Path, board_pngs: list[Path]
) -> None:
    """PNG, JPEG, TIFF and BMP as OpenCV writes them: their sizes are read and they decode."""
    store, _ = _new_store(tmp_path)
    formats = [".png", ".jpg", ".tif", ".bmp"]
    views = [tmp_path / f"view{i}{formats[i % 4]}" for i in range(len(board_pngs))]
    for png, view in zip(board_pngs, views, strict=True):
        cv2.imwrite(str(view), cv2.imread(str(png)))

    solved = _calibrate(store, *views)

    assert_typed(solved)
    assert solved.returncode == 0, solved.stdout + solved.stderr
    assert "Views:       20 used of 20" in solved.stdout and "Verdict:     VALID" in solved.stdout


@NOT_UTF8
def test_an_image_whose_name_is_not_utf8_is_read_and_its_name_shown(
    tmp_path: Path, board_pngs: list[Path]
) -> None:
    store, _ = _new_store(tmp_path)
    odd = os.fsencode(tmp_path) + b"/board\xff.png"
    shutil.copyfile(board_pngs[0], odd)

    solved = _calibrate(store, odd, *board_pngs[1:])

    assert_typed(solved)
    assert solved.returncode == 0, solved.stdout + solved.stderr
    assert "board\\xff.png" in solved.stdout and "Verdict:     VALID" in solved.stdout
    assert "calibration.validated" in [row[0] for row in _recorded(store)]


def test_the_good_views_alone_are_stored_so_nothing_stored_above_means_refused(
    tmp_path: Path, board_pngs: list[Path]
) -> None:
    store, before = _new_store(tmp_path)

    solved = _calibrate(store, *board_pngs)

    assert solved.returncode == 0, solved.stdout + solved.stderr
    after = [row[0] for row in _recorded(store)]
    assert before == [] and "calibration.validated" in after
