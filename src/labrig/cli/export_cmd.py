"""``labrig export``: published results into a verifiable bundle; ``labrig export
verify`` checks one."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from labrig.cli.common import services_for
from labrig.cli.output import print_json
from labrig.errors import UsageError
from labrig.export import ExportReport, VerifyReport, verify_bundle
from labrig.export.interchange import DEFAULT_FORMATS

VERIFY = "verify"


def add_parser(commands: Any) -> None:
    export = commands.add_parser(
        "export",
        help="write published results (CSV, C3D, TRC, NWB, video, JSON, plots, provenance, "
        "SHA256SUMS) into a folder",
        description="labrig export RESULT... --to DIR [--format LIST] | labrig export --all "
        "--to DIR | labrig export verify BUNDLE",
        epilog="'labrig export verify BUNDLE' re-hashes a bundle and reports every file "
        "that changed; 'sha256sum -c --strict SHA256SUMS' inside the bundle checks it "
        "with standard tools.",
    )
    export.add_argument(
        "targets",
        nargs="*",
        metavar="RESULT",
        help="result ids (or unique prefixes) to export; or 'verify BUNDLE'",
    )
    export.add_argument(
        "--all", dest="everything", action="store_true", help="every published result"
    )
    export.add_argument(
        "--to", metavar="DIR", help="folder to write the bundle into (created if missing)"
    )
    export.add_argument(
        "--media",
        action="store_true",
        help="also copy each capture's media, timestamps and manifest",
    )
    export.add_argument(
        "--format",
        dest="formats",
        metavar="LIST",
        help="interchange formats to add, comma-separated, from csv (tidy), c3d, trc (with .mot "
        "per instrument), nwb, video (overlay per camera); 'bundle' alone adds none. "
        f"Default: {','.join(DEFAULT_FORMATS)}. The bundle's own files are always written",
    )
    export.add_argument(
        "--species",
        metavar="NAME",
        help="the subjects' species for the NWB files (Homo sapiens, Mus musculus): Labrig's "
        "catalog does not record it",
    )
    export.add_argument(
        "--age",
        metavar="DURATION",
        help="the subjects' age for the NWB files, as ISO 8601 (P30Y, P8W, P20Y/P40Y)",
    )
    export.add_argument("--json", action="store_true")
    export.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.targets[:1] == [VERIFY]:
        return _verify(args)
    if not args.to:
        raise UsageError("give the folder to export into with --to DIR")
    with services_for(args) as services:
        report = services.export.export(
            args.targets,
            Path(args.to),
            everything=args.everything,
            media=args.media,
            formats=args.formats,
            subject={"species": args.species or "", "age": args.age or ""},
        )
    if args.json:
        print_json(report.to_json())
    else:
        _print_export(report)
    return 0


def _verify(args: argparse.Namespace) -> int:
    extra = (args.to, args.everything, args.media, args.formats, args.species, args.age)
    if len(args.targets) != 2 or any(extra):
        raise UsageError(
            "write: labrig export verify BUNDLE [--json]  (BUNDLE is a labrig-export-… folder)"
        )
    report = verify_bundle(Path(args.targets[1]))
    if args.json:
        print_json(report.to_json())
    else:
        _print_verify(report)
    return 0 if report.intact else 1


def _print_export(report: ExportReport) -> None:
    print(f"Exported {len(report.results)} result(s) to {report.bundle}")
    print(
        f"  {report.files} files, {report.bytes} bytes; audit chain head: entry "
        f"{report.audit_chain_head.seq}, {report.audit_chain_head.entry_hash}"
    )
    for r in report.results:
        print(f"  {r['result_id']}  {r['folder']}  ({r['revisions']} revision(s))")
        for fmt, files in r["formats"].items():
            print(f"    {fmt}: {', '.join(f.rsplit('/', 1)[-1] for f in files)}")
        for fmt, why in r["formats_skipped"].items():
            print(f"    {fmt}: not written ({why})")
    print(f"Check it with: cd '{report.bundle}' && sha256sum -c --strict SHA256SUMS")


def _print_verify(report: VerifyReport) -> None:
    if report.intact:
        head = report.audit_chain_head or {}
        print(
            f"Bundle intact: {report.checked} files match SHA256SUMS; audit chain head at export: "
            f"entry {head.get('seq')}, {head.get('entry_hash')}"
        )
        return
    print(f"Bundle NOT intact: {len(report.problems)} problem(s) in {report.bundle}")
    for p in report.problems:
        print(f"  {p.path}: {p.problem}")
