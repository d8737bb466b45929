"""The interchange formats an export adds to each result's folder, beside the bundle's own files
(``result.json``, the CSVs, plots, provenance, the automatic document and its revisions, which
every export writes):

==========  =====================================================================================
``csv``     ``markers-tidy.csv``: one row per frame × marker × view, automatic beside in force
``c3d``     ``markers.c3d`` (ezc3d): points in force, residuals, the instruments as analog channels
``trc``     ``markers.trc`` for OpenSim, and ``instruments/<name>.mot`` per instrument
``nwb``     ``result.nwb`` (pynwb + ndx-pose): automatic and corrected poses, cameras, instruments
``video``   ``video/<camera>-overlay.mp4`` (H.264; ``.avi`` MJPG where FFmpeg has no H.264)
==========  =====================================================================================

The format libraries are imported only when their format is asked for: ``labrig`` starts as fast
as before for everything else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from labrig.errors import LabrigError, UsageError
from labrig.export.bundle import BundleWriter
from labrig.export.formats.opensim import FormatUnitsError
from labrig.export.tables import ResultTables
from labrig.review.player import ResultMedia

FORMATS = ("csv", "c3d", "trc", "nwb", "video")
DEFAULT_FORMATS = ("csv", "c3d")
CORE = "bundle"  # the bundle's own files: always written, may be named


class UnknownFormatError(UsageError):
    code = "LABRIG_UNKNOWN_FORMAT"


class NwbSubjectError(UsageError):
    code = "LABRIG_NWB_SUBJECT"


# an ISO 8601 duration (P30Y, P8W, P90D, P1Y6M), or a range of two (P20Y/P40Y), as NWB takes an age
_DURATION = (
    r"P(?=\d|T\d)(?:\d+Y)?(?:\d+M)?(?:\d+W)?(?:\d+D)?(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+S)?)?"
)
AGE = re.compile(rf"^{_DURATION}(?:/(?:{_DURATION})?)?$")


def nwb_subject(species: str | None, age: str | None) -> dict[str, str]:
    """The subject's species and age for the NWB files, as given at export (Labrig's catalog
    records neither); refused when the age is not an ISO 8601 duration, as NWB needs it."""
    out: dict[str, str] = {}
    if species is not None and species.strip():
        text = " ".join(species.split())
        if len(text) > 100:
            raise NwbSubjectError(
                "the species is over 100 characters; give its Latin binomial (Homo sapiens, Mus "
                "musculus) or an NCBI Taxonomy link"
            )
        out["species"] = text
    if age is not None and age.strip():
        text = age.strip().upper()
        if not AGE.match(text):
            raise NwbSubjectError(
                f"the age '{age.strip()}' is not an ISO 8601 duration as NWB records an age: write "
                "P30Y for 30 years, P8W for 8 weeks, P90D for 90 days, or P20Y/P40Y for a range. "
                "Nothing was written"
            )
        out["age"] = text
    return out


class FormatWriteError(OSError):
    """A format library failed to write its file (a full disk, a folder removed under it): the
    export fails as any failed write does, and its partial bundle is removed."""


@contextmanager
def _library(fmt: str) -> Iterator[None]:
    """Failures of a format library (which raise their own exception types) as a failed write."""
    try:
        yield
    except (LabrigError, OSError):
        raise
    except (RuntimeError, ValueError, TypeError, MemoryError) as exc:
        raise FormatWriteError(f"the {fmt} writer failed: {exc}") from exc


def parse_formats(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """The formats asked for (``"csv,c3d"`` or a list; None: :data:`DEFAULT_FORMATS`), in the
    order of :data:`FORMATS`; ``bundle`` names the files every export writes."""
    if value is None:
        return DEFAULT_FORMATS
    names = value.split(",") if isinstance(value, str) else list(value)
    wanted = {n.strip().lower() for n in names if n.strip()}
    unknown = sorted(wanted - set(FORMATS) - {CORE})
    if unknown:
        raise UnknownFormatError(
            f"there is no export format {', '.join(repr(u) for u in unknown)}; choose from "
            f"{', '.join((CORE, *FORMATS))} (for example --format csv,c3d,trc,nwb,video)"
        )
    return tuple(f for f in FORMATS if f in wanted)


def unavailable(tables: ResultTables | None, formats: Sequence[str]) -> dict[str, str]:
    """The formats ``formats`` a result cannot be written in that an export leaves out, and why
    (a documented substitution: the manifest names them). A result with no tracked markers has
    nothing for any of them."""
    if tables is None:
        return {f: "the result has no tracked markers to write" for f in formats}
    return {}


def refuse_uncalibrated(
    result_id: str, tables: ResultTables | None, formats: Sequence[str]
) -> None:
    """Refused before anything is written: TRC holds lengths for OpenSim, and a result measured in
    px has none."""
    if "trc" in formats and tables is not None and tables.points.units == "px":
        raise FormatUnitsError(
            f"result {result_id} is measured in pixels (its camera has no plane or rig "
            "calibration), and a TRC file holds lengths for OpenSim. Calibrate the camera and "
            "reprocess the attempt, or leave trc out of the formats. Nothing was written"
        )


def frames_to_write(media: ResultMedia | None, formats: Sequence[str]) -> int:
    """The video frames an export of this result draws (its progress counts them)."""
    if "video" not in formats or media is None:
        return 0
    return sum(c.frame_count for c in media.cameras)


def write_formats(
    writer: BundleWriter,
    folder: str,
    tables: ResultTables,
    media: ResultMedia,
    formats: Sequence[str],
    exported_at: datetime,
    step: Callable[[int, str], None],
    subject: Mapping[str, str] | None = None,
) -> dict[str, list[str]]:
    """Write ``formats`` of one result into ``folder`` of the bundle; the files written by
    format. ``step(units, message)`` is called as work is done (one unit per file, one per video
    frame); it may raise to cancel. ``subject``: the species and age the NWB files carry
    (:func:`nwb_subject`)."""
    written: dict[str, list[str]] = {}

    def path_for(fmt: str, name: str) -> str:
        written.setdefault(fmt, []).append(f"{folder}/{name}")
        return f"{folder}/{name}"

    if "csv" in formats:
        from labrig.export.formats.tidy_csv import tidy_csv

        step(1, "writing the tidy CSV")
        writer.write(path_for("csv", "markers-tidy.csv"), tidy_csv(tables))
    if "c3d" in formats:
        from labrig.export.formats.c3d import write_c3d

        step(1, "writing the C3D file")
        with _library("C3D"), writer.produced(path_for("c3d", "markers.c3d")) as path:
            write_c3d(tables, path)
    if "trc" in formats:
        from labrig.export.formats.opensim import write_mot, write_trc

        step(1, "writing the TRC file")
        with _library("TRC"), writer.produced(path_for("trc", "markers.trc")) as path:
            write_trc(tables, path)
        for analog in tables.analog:
            mot = path_for("trc", f"instruments/{analog.name}.mot")
            with _library("MOT"), writer.produced(mot) as path:
                write_mot(analog, path)
    if "nwb" in formats:
        from labrig.export.formats.nwb import write_nwb

        step(1, "writing the NWB file")
        with _library("NWB"), writer.produced(path_for("nwb", "result.nwb")) as path:
            write_nwb(tables, path, exported_at=exported_at, subject=subject)
    if "video" in formats:
        _write_videos(writer, tables, media, step, path_for)
    return written


def _write_videos(
    writer: BundleWriter,
    tables: ResultTables,
    media: ResultMedia,
    step: Callable[[int, str], None],
    path_for: Callable[[str, str], str],
) -> None:
    from labrig.export.formats.overlay_video import video_codec, write_overlay_video

    fourcc, ext = video_codec()
    for k, camera in enumerate(tables.cameras):
        done = 0

        def frames(now: int, total: int, name: str = camera.name) -> None:
            nonlocal done
            step(now - done, f"drawing the overlay video of {name}: frame {now} of {total}")
            done = now

        video = path_for("video", f"video/{camera.name}-overlay{ext}")
        with _library("video"), writer.produced(video) as path:
            write_overlay_video(media, k, Path(path), fourcc, step=frames)
