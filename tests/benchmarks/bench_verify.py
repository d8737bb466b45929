"""``labrig verify`` against ``sha256sum`` over the same blobs.

    .venv/bin/python tests/benchmarks/bench_verify.py [--quick] [--files N] [--mib M] [--repeat R]

A store of N blobs of M MiB of random bytes each (default 32 x 32 MiB = 1 GiB; ``--quick`` 16 x 16
MiB), catalogued as media, is checked in full by ``verify_store`` (what ``labrig verify`` runs:
every blob re-hashed, its check recorded, manifests, orphans and catalog text looked at) and by
coreutils' ``sha256sum`` given the same files (``sha256sum -c`` of a list naming them). Each
figure is the median of R (3) runs, alternating which goes first. The files are read once before
timing, so both read from the page cache: this compares hashing, not the disk (a cold disk
limits both alike). The last line is ``verify_ratio_vs_sha256sum=X``: Labrig's throughput over
sha256sum's (above 1: faster).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

from labrig.capture import Selection, verify_store  # noqa: E402
from labrig.capture.integrity import HASHERS  # noqa: E402
from labrig.fsutil import sha256_file  # noqa: E402
from labrig.store import BlobStore, Store, open_store, utcnow  # noqa: E402
from labrig.store.models import Blob  # noqa: E402


def _fill(store: Store, files: int, mib: int) -> list[Path]:
    blobs, paths = BlobStore(store.media_dir), []
    scratch = store.root / "scratch"
    scratch.mkdir()
    with store.write() as session:
        for i in range(files):
            source = scratch / f"{i}.bin"
            with source.open("wb") as fh:
                for _ in range(mib):
                    fh.write(os.urandom(1 << 20))
            digest, size = sha256_file(source)
            paths.append(blobs.put(source, digest, ".avi"))
            session.add(
                Blob(sha256=digest, ext=".avi", size=size, kind="media", created_at=utcnow())
            )
    return paths


def _labrig(store: Store) -> float:
    start = time.perf_counter()
    report = verify_store(store, selection=Selection())
    elapsed = time.perf_counter() - start
    assert not report.problems, report.problems
    return elapsed


def _sha256sum(listing: Path) -> float:
    start = time.perf_counter()
    subprocess.run(["sha256sum", "--quiet", "-c", str(listing)], check=True)
    return time.perf_counter() - start


def _openssl(paths: list[Path]) -> float:
    """OpenSSL's own tool, one process over every file: a second reference (coreutils'
    sha256sum may not use the CPU's SHA instructions; OpenSSL, like Python's hashlib, does)."""
    start = time.perf_counter()
    subprocess.run(
        ["openssl", "dgst", "-sha256", *map(str, paths)], check=True, capture_output=True
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--files", type=int)
    parser.add_argument("--mib", type=int)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    files = args.files or (16 if args.quick else 32)
    mib = args.mib or (16 if args.quick else 32)
    version = subprocess.run(["sha256sum", "--version"], capture_output=True, text=True).stdout
    print(
        f"# {platform.platform()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
        f"{version.splitlines()[0]}; {files} blobs x {mib} MiB; Labrig hashes {HASHERS} at a time"
    )
    with tempfile.TemporaryDirectory(prefix="labrig-bench-verify-") as tmp:
        store = open_store(Path(tmp) / "store")
        try:
            paths = _fill(store, files, mib)
            listing = Path(tmp) / "SHA256SUMS"
            listing.write_text("".join(f"{p.name[:64]}  {p}\n" for p in paths))
            _sha256sum(listing)  # into the page cache
            ours, peer = [], []
            for round_ in range(args.repeat):
                runs = [("labrig", _labrig, store), ("sha256sum", _sha256sum, listing)]
                for name, run, arg in runs if round_ % 2 == 0 else runs[::-1]:
                    seconds = run(arg)  # type: ignore[operator]
                    (ours if name == "labrig" else peer).append(seconds)
                    print(f"round {round_ + 1}: {name:<9} {seconds:6.2f} s")
            openssl_s = (
                statistics.median(_openssl(paths) for _ in range(args.repeat))
                if shutil.which("openssl")
                else None
            )
        finally:
            store.close()
    total = files * mib / 1024
    labrig_s, peer_s = statistics.median(ours), statistics.median(peer)
    print(
        f"labrig verify {total / labrig_s:.2f} GiB/s ({labrig_s:.2f} s), sha256sum "
        f"{total / peer_s:.2f} GiB/s ({peer_s:.2f} s) over {total:.2f} GiB"
    )
    if openssl_s is not None:
        print(
            f"openssl dgst -sha256 (one process): {total / openssl_s:.2f} GiB/s ({openssl_s:.2f} s)"
        )
    print(f"verify_ratio_vs_sha256sum={peer_s / labrig_s:.2f}")


if __name__ == "__main__":
    main()
