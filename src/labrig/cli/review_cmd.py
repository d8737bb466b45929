"""``labrig review``: list results (flagged when their calibration changed since), show one
(automatic beside effective values, with history), revise one's values, correct its tracked data,
sign it off as reviewed or approved, reprocess one under the current calibrations."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from labrig.cli.common import services_for, store_for
from labrig.cli.output import (
    add_page_arguments,
    is_page,
    narrowed,
    page_asked,
    print_json,
    print_page_line,
)
from labrig.cli.when import add_period_arguments
from labrig.domain.correction_syntax import MAX_GAP, MIN_VALID, Operation, parse_operation
from labrig.domain.revisions import EXAMPLE, parse_assignments
from labrig.results.search import AttemptSort, Source, check_source
from labrig.review.listing import (
    RESULT_SORTS,
    ResultQuery,
    ResultStatusFilter,
    ReviewFilter,
    count_results,
    list_results,
)

if TYPE_CHECKING:
    from labrig.review import ReviewedResult, RevisionView


def add_parser(commands: Any) -> None:
    review = commands.add_parser(
        "review", help="results a reviewer checks: list, show, revise, correct, undo, approve"
    )
    sub = review.add_subparsers(dest="review_command", metavar="ACTION", required=True)
    listing = sub.add_parser(
        "list", help="results with their status and number of revisions, a page at a time"
    )
    listing.add_argument(
        "--search",
        metavar="TEXT",
        help="results whose subject code, protocol or operator starts with TEXT (any letter "
        "case), or whose result or attempt id does",
    )
    listing.add_argument(
        "--status", choices=[s.value for s in ResultStatusFilter], help="only results so marked"
    )
    listing.add_argument(
        "--review",
        choices=[r.value for r in ReviewFilter],
        help="only revised or unrevised ones, or those signed off (a sign-off no later revision "
        "cleared)",
    )
    source = listing.add_mutually_exclusive_group()
    source.add_argument("--device", metavar="ID", help="only results of attempts of this device")
    source.add_argument("--rig", metavar="NAME", help="only results of attempts of this rig")
    listing.add_argument(
        "--sort",
        choices=[s.value for s in RESULT_SORTS],
        default=AttemptSort.RECORDED.value,
        help="in the order of when the result was made (recorded, the default), its subject, "
        "protocol or status (blocked, degraded, published), each then by date",
    )
    add_period_arguments(listing, "results made")
    add_page_arguments(listing, "results")
    listing.add_argument(
        "--descending",
        dest="newest_first",
        action="store_true",
        help="the order reversed (as --newest-first): Z to A, published first",
    )
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(run=run_list)
    show = sub.add_parser(
        "show", help="a result's automatic values beside its effective values, and its history"
    )
    show.add_argument("result_id", metavar="RESULT_ID", help="the result's id (or a unique prefix)")
    show.add_argument("--json", action="store_true")
    show.set_defaults(run=run_show)
    revise = sub.add_parser(
        "revise", help="change a published result's values, beside the automatic ones"
    )
    _revision_arguments(revise)
    revise.add_argument(
        "--set",
        dest="values",
        action="append",
        default=[],
        metavar="track:ID.metric=VALUE",
        help=f"a new value, e.g. {EXAMPLE} (repeat for several fields)",
    )
    revise.set_defaults(run=run_revise)
    correct = sub.add_parser(
        "correct",
        help="correct a published result's tracked data (its tracks and so its kinematics), "
        "beside the automatic ones",
        description="Each operation is stored, in the order given, in one revision beside the "
        "automatic result; frames are stored frame indices, positions picture px as tracked.",
    )
    _revision_arguments(correct)
    for kind, metavar, text in (
        ("move", "TRACK@FRAME=X,Y", "the track's position at that frame"),
        ("occlude", "TRACK@A-B", "the track was hidden from frame A to B: no position there"),
        ("fill", "TRACK@A-B[:linear|spline]", "interpolate the track's missing frames A to B"),
        ("swap", "T1,T2@FRAME", "the two tracks exchange identities from that frame on"),
        ("trim", "A-B", "analyse frames A to B only, in every track"),
    ):
        correct.add_argument(
            f"--{kind}",
            dest="operations",
            action="append",
            default=[],
            type=lambda text, kind=kind: (kind, text),
            metavar=metavar,
            help=f"{text} (repeatable)",
        )
    correct.add_argument(
        "--max-gap",
        type=int,
        default=MAX_GAP,
        metavar="FRAMES",
        help=f"the longest gap a --fill bridges ({MAX_GAP})",
    )
    correct.add_argument(
        "--min-valid",
        type=int,
        default=MIN_VALID,
        metavar="FRAMES",
        help=f"the valid frames a --fill needs on each side of a gap ({MIN_VALID})",
    )
    correct.set_defaults(run=run_correct)
    undo = sub.add_parser(
        "undo",
        help="undo one revision by a new one (nothing is deleted): its corrections and values stop "
        "counting in the effective result",
    )
    _revision_arguments(undo)
    undo.add_argument(
        "--revision",
        type=int,
        required=True,
        metavar="N",
        help="the number of the revision to undo",
    )
    undo.set_defaults(run=run_undo)
    approve = sub.add_parser(
        "approve",
        help="sign a published result off as reviewed or approved (who, when, and the digest of "
        "the effective result, in the audit trail); a later correction clears it",
    )
    _revision_arguments(
        approve, reason="a note kept with the sign-off (default: 'signed off as …')"
    )
    approve.add_argument(
        "--meaning",
        required=True,
        metavar="reviewed|approved",
        help="what the sign-off says: reviewed (checked) or approved (released for use)",
    )
    approve.set_defaults(run=run_approve)
    again = sub.add_parser(
        "reprocess",
        help="analyse a result's attempt again under the calibrations current now (a new "
        "attempt; the result stays as it was)",
    )
    again.add_argument(
        "result_id", metavar="RESULT_ID", help="the result's id (or a unique prefix)"
    )
    again.add_argument("--json", action="store_true")
    again.set_defaults(run=run_reprocess)


def _revision_arguments(parser: argparse.ArgumentParser, *, reason: str | None = None) -> None:
    """What every revision is given: the result, why, the state it was made on, and --json.
    ``reason``: the help of a reason that may be left out (a sign-off's note)."""
    parser.add_argument(
        "result_id", metavar="RESULT_ID", help="the result's id (or a unique prefix)"
    )
    if reason is None:
        parser.add_argument(
            "--reason", required=True, help="why (kept with the revision and in the audit trail)"
        )
    else:
        parser.add_argument("--reason", default="", help=reason)
    parser.add_argument(
        "--base",
        metavar="REVISION_ID",
        help="refuse if the result was revised since this revision (or the result id) was read",
    )
    parser.add_argument("--json", action="store_true")


def run_list(args: argparse.Namespace) -> int:
    query = ResultQuery(
        search=args.search,
        status=ResultStatusFilter(args.status) if args.status else None,
        review=ReviewFilter(args.review) if args.review else None,
        sort=AttemptSort(args.sort),
        source=Source(args.device, args.rig) if args.device or args.rig else None,
        **page_asked(args),
    )
    paged = is_page(args)
    with store_for(args) as store:  # a read of the catalog alone: no services are started
        with store.read() as session:
            check_source(session, query.source)
        results = list_results(store, query)
        total = count_results(store, query) if paged and not args.json else len(results)
    if args.json:
        print_json([vars(r) | {"flags": list(r.flags)} for r in results])
        return 0
    if not results:
        filtered = query.search or query.status or query.review or query.source or narrowed(args)
        print(
            "No result matches."
            if filtered
            else "No results yet. Analyse an attempt first (for example 'labrig demo')."
        )
    for r in results:
        flags = ", ".join(
            f
            for f, on in (
                ("degraded", r.degraded),
                ("superseded", r.superseded),
                ("calibration changed", bool(r.flags)),
            )
            if on
        )
        print(
            f"{r.result_id}  {r.status:<9} {r.revisions:>2} revision(s)  attempt {r.attempt_id[:8]}"
            f"  {r.subject_code or '?'} / {r.protocol or '?'}  {r.created_at[:19]}"
            f"{f'  ({flags})' if flags else ''}"
        )
        for reason in r.flags:
            print(f"    flagged: {reason} ('labrig review reprocess {r.result_id[:12]}')")
    if paged:
        print_page_line("Results", query.offset, len(results), total)
    return 0


def run_reprocess(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        done = services.governance.reprocess.reprocess(args.result_id)
    if args.json:
        print_json(done.to_json())
        return 0
    print(
        f"Attempt {done.from_attempt_id[:8]} is analysed again as attempt {done.attempt_id} under "
        f"the calibrations current now; result {done.result_id[:12]} stays as it was. "
        "'labrig worker --drain' (or the window) runs the analysis."
    )
    return 0


def run_show(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        reviewed = services.governance.revisions.show(args.result_id)
    if args.json:
        print_json(reviewed.to_json())
    else:
        _print(reviewed)
    return 0


def run_revise(args: argparse.Namespace) -> int:
    values = parse_assignments(args.values)
    with services_for(args) as services:
        revision = services.governance.revisions.revise(
            args.result_id, values, args.reason, base_id=args.base
        )
    return _stored(revision, args.json)


def run_correct(args: argparse.Namespace) -> int:
    operations: list[Operation] = [
        parse_operation(kind, text, max_gap=args.max_gap, min_valid=args.min_valid)
        for kind, text in args.operations
    ]
    with services_for(args) as services:
        revision = services.governance.revisions.correct(
            args.result_id, operations, args.reason, base_id=args.base
        )
    return _stored(revision, args.json)


def run_undo(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        revision = services.governance.revisions.undo(
            args.result_id, args.revision, args.reason, base_id=args.base
        )
    return _stored(revision, args.json)


def run_approve(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        revision = services.governance.revisions.sign_off(
            args.result_id, args.meaning, args.reason, base_id=args.base
        )
    return _stored(revision, args.json)


def _stored(revision: RevisionView, as_json: bool) -> int:
    """Print a revision just stored: what it corrected and changed, or its JSON."""
    if as_json:
        print_json(revision.to_json())
        return 0
    print(
        f"Revision {revision.number} of result {revision.result_id} by {revision.reviewer}: "
        f"{revision.id}"
    )
    for o in revision.operations:
        print(f"  {o.describe()}")
    for c in revision.changes:
        print(f"  {c.field}: {_num(c.old)} → {_num(c.new)}")
    if revision.sign_off:
        print(
            f"  signed off as {revision.sign_off.meaning}; effective result sha256 "
            f"{revision.sign_off.approved_digest}"
        )
    if revision.undoes is not None:
        print(f"  undoes revision {revision.undoes}")
    if revision.operations or revision.undoes is not None:
        print(f"'labrig review show {revision.result_id[:12]}' gives the values they lead to.")
    return 0


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.6g}"


def _print(r: ReviewedResult) -> None:
    units = r.units or {}
    intact = "intact" if r.automatic_intact else "DOES NOT MATCH ITS DIGEST"
    print(
        f"Result {r.result_id} ({r.status}{', degraded' if r.degraded else ''}) of attempt "
        f"{r.attempt_id}"
    )
    print(
        f"Automatic document: sha256 {r.automatic_digest} ({intact}); units "
        f"{units.get('length', '-')}, {units.get('time', '-')}"
    )
    if r.superseded_by:
        print(f"A newer result of this attempt exists: {r.superseded_by}")
    print(f"Sign-off: {r.sign_off.describe() if r.sign_off else 'none'}")
    print(f"\n{'field':<32} {'automatic':>12} {'effective':>12}")
    for f in r.fields:
        mark = f"  (revision {f.revision})" if f.revision is not None else ""
        print(f"{f.field:<32} {_num(f.automatic):>12} {_num(f.effective):>12}{mark}")
    if not r.revisions:
        print("\nNo revisions.")
    undone_by = {rev.undoes: rev.number for rev in r.revisions if rev.undoes is not None}
    for rev in r.revisions:
        undone = f" — undone by revision {undone_by[rev.number]}" if rev.number in undone_by else ""
        print(
            f"\nRevision {rev.number} ({rev.id}) by {rev.reviewer} at {rev.created_at}, base "
            f"{rev.base_id}{undone}"
        )
        print(f"  reason: {rev.reason}")
        for o in rev.operations:
            print(f"  {o.describe()}")
        for c in rev.changes:
            print(f"  {c.field}: {_num(c.old)} → {_num(c.new)}")
        if rev.sign_off:
            print(
                f"  signed off as {rev.sign_off.meaning}; effective result sha256 "
                f"{rev.sign_off.approved_digest}"
            )
        if rev.undoes is not None:
            print(f"  undoes revision {rev.undoes}")
