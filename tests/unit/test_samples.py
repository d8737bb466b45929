"""The instruments' sample chunks and the labrig-bulk/1 packets: what is written reads back, a row
cut short by a kill ends the chunk, and what breaks the protocol is refused by name."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from labrig.capture.commit import count_frames
from labrig.capture.manifest import SegmentV1
from labrig.capture.sample_sink import SampleSink
from labrig.capture.samples import (
    Channel,
    SampleBlock,
    SampleMode,
    check_mode,
    count_samples,
    read_chunk,
    stream_mode,
)
from labrig.capture.sources import Mode
from labrig.capture.usb_instrument import InstrumentProtocolError, parse_info, parse_packet

MODE = SampleMode(500.0, (Channel("Fz", "N"), Channel("EMG", "mV")))


def block(first: int, count: int) -> SampleBlock:
    values = np.column_stack([np.arange(first, first + count) * 1.5, -np.arange(count) / 3.0])
    return SampleBlock(first, 1_000_000_000 + first * 2_000_000, first * 2_000_000, values)


def test_blocks_are_written_in_chunks_of_the_segment_length_and_read_back(tmp_path: Path) -> None:
    closed: list[SegmentV1] = []
    sink = SampleSink(tmp_path, MODE, 0.1, lambda seg, _next: closed.append(seg))  # 50 a chunk
    assert sink.setup() == "seg-00000.samples.csv"
    for n in range(6):
        sink.append(block(n * 20, 20))  # 120 samples: chunks of 50, 50, 20
    sink.close()
    assert [s.frames for s in closed] == [50, 50, 20]
    assert [s.name for s in closed] == [f"seg-0000{i}.samples.csv" for i in range(3)]
    chunks = [read_chunk(tmp_path / s.name) for s in closed]
    assert chunks[0].channels == ("Fz (N)", "EMG (mV)")
    index = np.concatenate([c.index for c in chunks])
    assert list(index) == list(range(120))
    values = np.concatenate([c.values for c in chunks])
    np.testing.assert_array_equal(values[:, 0], np.arange(120) * 1.5)
    assert closed[1].first_mono_ns == 1_000_000_000 + 50 * 2_000_000
    assert closed[1].last_mono_ns == 1_000_000_000 + 99 * 2_000_000
    # the commit counts a chunk's samples where it decodes a camera's segment
    assert count_frames(tmp_path / closed[0].name) == 50


def test_a_row_cut_short_by_a_kill_ends_the_chunk(tmp_path: Path) -> None:
    path = tmp_path / "seg-00000.samples.csv"
    for cut in ("2,14,4,4.5,", "2,14,4,4.5,6.2"):  # the last row's "6.25\n" never all written
        path.write_text(MODE.header() + "0,10,0,1.5,2\n1,12,2,3,4\n" + cut)
        chunk = read_chunk(path)
        assert list(chunk.index) == [0, 1] and count_samples(path) == 2
    path.write_text(MODE.header() + "0,10,0,1.5,2\n1,12,x,3,4\n2,14,4,4.5,6\n")  # damaged row
    assert count_samples(path) == 1
    assert count_samples(tmp_path / "nothing.samples.csv") == 0


def test_a_sample_mode_round_trips_and_a_bad_one_is_refused() -> None:
    assert stream_mode(MODE.to_json()) == MODE
    assert stream_mode(Mode(640, 480, 30.0).to_json()) == Mode(640, 480, 30.0)
    assert MODE.label() == "2 ch @ 500 Hz" and MODE.fps == 500.0
    for bad in (
        SampleMode(0.5, MODE.channels),
        SampleMode(1000.0, ()),
        SampleMode(1000.0, (Channel("Fz", "N"), Channel("Fz", "N"))),
        SampleMode(1000.0, (Channel("F z,", "N"),)),
    ):
        with pytest.raises(ValueError):
            check_mode(bad)


def info(magic: bytes = b"LBI1", version: int = 1, rate: int = 2000) -> bytes:
    head = struct.pack("<4sBBHI", magic, version, 2, 25, rate)
    return head + struct.pack("<16s8s", b"EMG1", b"mV") + struct.pack("<16s8s", b"Trig", b"V")


def test_the_instruments_info_gives_its_mode() -> None:
    mode, per_packet = parse_info(info())
    assert per_packet == 25 and mode == SampleMode(
        2000.0, (Channel("EMG1", "mV"), Channel("Trig", "V"))
    )
    for bad, why in (
        (info(b"NOPE"), "not b'LBI1'"),
        (info(version=2), "version 2"),
        (info()[:20], "does not hold its 2 channels"),
        (info(rate=0), "Labrig does not record"),
        (b"LB", "too short"),
    ):
        with pytest.raises(InstrumentProtocolError, match=why):
            parse_info(bad)


def test_a_packet_gives_its_samples_and_a_broken_one_is_refused() -> None:
    values = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype="<f4")
    raw = struct.pack("<4sIQHH", b"LBD1", 75, 37_500, 3, 1) + values.tobytes()
    first, device_ns, got, flags = parse_packet(raw, 2)
    assert (first, device_ns, flags) == (75, 37_500_000, 1)
    np.testing.assert_array_equal(got, values)
    with pytest.raises(InstrumentProtocolError, match="holds 20 bytes"):
        parse_packet(raw[:-4], 2)
    with pytest.raises(InstrumentProtocolError, match="not b'LBD1'"):
        parse_packet(b"XXXX" + raw[4:], 2)
