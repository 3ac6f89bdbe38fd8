"""``clawctx repair``: repair session files in place with a backup, as OpenClaw does before a run.

Layer: ``clawctx.cli`` (the top of the package).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path
from typing import Any

from clawctx import _core
from clawctx.cli._common import (
    Printer,
    check_readable,
    clawctx_log,
    convert_hint,
    describe,
    error,
    foreign_format,
    not_a_session_reason,
    print_json,
)

SUMMARY = "repair session files in place (with a backup)"
"""The command's line in ``clawctx --help``."""
DESCRIPTION = (
    "Repair session files in place, as OpenClaw does before a run: damaged "
    "lines are dropped or their records salvaged, kept lines keep their bytes, a backup "
    "is kept. Exit 1 if a file could not be read or is not a session file."
)
"""The command's description in ``clawctx repair --help``."""
EXAMPLES = """\
examples:
  clawctx repair --dry-run session.jsonl          # change nothing, list what would change
  clawctx repair session.jsonl --verbose          # repair, then list each changed line
  clawctx repair sessions/*.jsonl --json --delete-backup"""
"""Its examples, shown after the options in ``clawctx repair --help``."""


def _repair_one(path: Path, *, dry_run: bool, delete_backup: bool) -> dict[str, Any]:
    """Repair (or, with ``dry_run``, repair a private copy of) one file; the outcome as data."""
    outcome: dict[str, Any] = {
        "path": str(path),
        "status": "error",
        "reason": None,
        "summary": None,
        "changes": [],
        "backup_path": None,
    }
    problem = check_readable(path)
    if problem is not None:
        outcome["reason"] = problem
        return outcome
    foreign = foreign_format(path)
    if foreign is not None:
        # Repair rewrites pi sessions only; a foreign file is read (damage skipped) by convert.
        outcome["status"] = "skipped"
        outcome["reason"] = convert_hint(path, foreign)
        return outcome
    try:
        if dry_run:
            # The same repair, run on a copy: what it reports is exactly what a real run would
            # do, and the file itself is never opened for writing.
            with tempfile.TemporaryDirectory(prefix="clawctx-dry-run-") as scratch:
                copy = Path(scratch) / path.name
                shutil.copyfile(path, copy)
                report = _core.repair_session_file(copy, backup="delete")
        else:
            report = _core.repair_session_file(path, backup="delete" if delete_backup else "keep")
    except (OSError, _core.ClawctxError) as err:
        outcome["reason"] = describe(err, path)
        return outcome
    outcome["changes"] = [
        {"line": c.line, "kind": c.kind, "reason": c.reason} for c in report.changes
    ]
    if report.repaired:
        outcome["status"] = "would repair" if dry_run else "repaired"
        outcome["summary"] = report.summary()
        if not dry_run and report.backup_path:
            outcome["backup_path"] = str(report.backup_path)
        return outcome
    if report.reason is None:
        outcome["status"] = "ok"
        outcome["summary"] = "nothing to repair"
        return outcome
    # The repair skipped the file ("empty session file", "invalid session header"): give the
    # loader's precise reason, the one `inspect` gives for the same file.
    why = not_a_session_reason(path)
    if why is None:
        outcome["status"] = "ok"
        outcome["summary"] = f"nothing to repair ({report.reason})"
    else:
        outcome["status"] = "skipped"
        outcome["reason"] = f"not a session file ({why})"
    return outcome


def run(args: argparse.Namespace) -> int:
    status = 0
    outcomes = []
    out = Printer()
    with clawctx_log(verbose=args.verbose and not args.json):
        for name in args.sessions:
            outcome = _repair_one(
                Path(name), dry_run=args.dry_run, delete_backup=args.delete_backup
            )
            outcomes.append(outcome)
            if outcome["status"] in ("error", "skipped"):
                status = 1
            if args.json:
                continue
            kind = outcome["status"]
            if kind == "error":
                error("repair", name, outcome["reason"])
                continue
            if kind == "skipped":
                error("repair", name, f"skipped: {outcome['reason']}")
                continue
            backup = f"; backup {outcome['backup_path']}" if outcome["backup_path"] else ""
            style = "green" if kind == "ok" else "yellow"
            out.line(f"{name}: {kind}: {outcome['summary']}{backup}", style)
            if args.dry_run or args.verbose:
                prefix = "would be " if args.dry_run else ""
                for change in outcome["changes"]:
                    out.line(
                        f"  line {change['line']}: {prefix}{change['kind']}: {change['reason']}"
                    )
    if args.json:
        print_json(outcomes)
    return status


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``clawctx repair``."""
    parser.add_argument("sessions", nargs="+", metavar="SESSION", help="session .jsonl files")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="change nothing; list what a repair would change, line by line",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON list of outcomes")
    parser.add_argument(
        "--verbose", action="store_true", help="list each changed line and the repair log"
    )
    parser.add_argument(
        "--delete-backup", action="store_true", help="delete the backup after a successful repair"
    )
