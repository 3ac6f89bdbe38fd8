"""``clawctx doctor``: what needs attention in session files before they are sent; ``--fix``
applies the file repairs.

Layer: ``clawctx.cli`` (the top of the package).
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from clawctx import _core
from clawctx.cli._common import (
    Printer,
    add_context_window,
    clawctx_log,
    describe,
    error,
    is_store_path,
    missing_session,
    print_json,
    read_or_report,
)
from clawctx.engine.diagnose import DOCTOR_PROVIDERS, DoctorReport, apply_file_repairs, doctor

SUMMARY = "report what needs attention in session files (read-only unless --fix)"
"""The command's line in ``clawctx --help``."""
DESCRIPTION = (
    "Check pi sessions and Claude Code / Codex transcripts: damaged lines, problems "
    "on the leaf's path (unanswered or orphaned tool calls, repeated ids, a compaction "
    "that cuts a call from its result, empty turns, oversize images, a context over "
    "the window) and, per provider, whether the default request would be valid. "
    "Never writes unless --fix is given."
)
"""The command's description in ``clawctx doctor --help``."""
EXAMPLES = """\
examples:
  clawctx doctor session.jsonl                    # every check, every provider
  clawctx doctor sessions/*.jsonl --provider anthropic --provider openai-responses
  clawctx doctor session.jsonl --fix              # repair the file (backup kept)
  clawctx doctor ~/.claude/projects/-home-me-app/SESSION.jsonl --json
  clawctx doctor openclaw-agent.sqlite --session ID   # one session of an OpenClaw store

exit status: 0 nothing needs attention; 1 something does (or a file could not be read);
2 bad arguments."""
"""Its examples, shown after the options in ``clawctx doctor --help``."""


def _print(out: Printer, report: DoctorReport) -> None:
    if report.ok:
        out.line(f"{report.path}: ok ({report.format}, {report.messages} messages)", "green")
        return
    count = len(report.findings)
    out.line(
        f"{report.path}: {count} problem{'' if count == 1 else 's'} ({report.format}, "
        f"{report.messages} messages)",
        "yellow",
    )
    for finding in report.findings:
        where = f" [{finding.provider}]" if finding.provider else ""
        out.line(f"  {finding.kind}{where}: {finding.detail}")


def run(args: argparse.Namespace) -> int:
    providers = args.provider or list(DOCTOR_PROVIDERS)  # checked against the list by main
    out = Printer()
    status = 0
    results: list[dict[str, Any]] = []
    with clawctx_log(verbose=False):
        for name in args.sessions:
            path = Path(name)
            store = is_store_path(path)
            if store:
                if args.session is None:
                    missing_session("doctor", path)
                    results.append({"path": str(path), "error": "no --session given"})
                    status = 1
                    continue
                if args.fix:
                    error("doctor", path, "--fix never writes a store; check it without --fix")
                    results.append({"path": str(path), "error": "--fix on a store"})
                    status = 1
                    continue
            shown, report, problem = read_or_report(
                "doctor",
                path,
                args.session if store else None,
                lambda local: doctor(
                    local,
                    providers=providers,
                    model=args.model,
                    context_window=args.context_window,
                ),
            )
            if report is None:
                results.append({"path": shown, "error": problem})
                status = 1
                continue
            if store:
                report = dataclasses.replace(report, path=shown)
            data = report.to_dict()
            if not report.ok:
                status = 1
            if args.fix:
                data["fix"] = _fix(path, report)
            results.append(data)
            if not args.json:
                _print(out, report)
                if args.fix:
                    _print_fix(out, data["fix"])
    if args.json:
        print_json(results)
    return status


def _fix(path: Path, report: DoctorReport) -> dict[str, Any]:
    """Applies the file repairs (pi sessions with damaged lines) and lists what is left to the
    request pipeline."""
    outcome: dict[str, Any] = {
        "repaired": False,
        "backup_path": None,
        "summary": None,
        "error": None,
        "at_request_time": sorted({f.kind for f in report.findings if f.handled == "request"}),
        "use_convert": any(f.handled == "convert" for f in report.findings),
    }
    if report.format == "pi" and any(f.handled == "file" for f in report.findings):
        try:
            repaired = apply_file_repairs(path)
        except (OSError, _core.ClawctxError) as err:
            outcome["error"] = describe(err, path)
            return outcome
        outcome["repaired"] = repaired.repaired
        outcome["summary"] = repaired.summary()
        outcome["backup_path"] = str(repaired.backup_path) if repaired.backup_path else None
    return outcome


def _print_fix(out: Printer, fix: dict[str, Any]) -> None:
    if fix["error"]:
        out.line(f"  fix: failed: {fix['error']}", "red")
    elif fix["repaired"]:
        out.line(f"  fix: repaired: {fix['summary']}; backup {fix['backup_path']}", "green")
    else:
        out.line("  fix: no file repair needed")
    if fix["use_convert"]:
        out.line("  fix: damaged lines of a Claude Code or Codex file: clawctx convert skips them")
    if fix["at_request_time"]:
        kinds = ", ".join(fix["at_request_time"])
        out.line(f"  handled when the request is built (the file keeps them): {kinds}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``clawctx doctor``."""
    parser.add_argument(
        "sessions",
        nargs="+",
        metavar="SESSION",
        help="session or transcript .jsonl files, or an OpenClaw .sqlite store with --session",
    )
    parser.add_argument(
        "--session",
        metavar="ID",
        help="with an OpenClaw store (openclaw-agent.sqlite): the session (window) to check",
    )
    parser.add_argument(
        "--provider",
        action="append",
        metavar="NAME",
        help=f"check the default request for this provider (repeatable; default: all of "
        f"{', '.join(DOCTOR_PROVIDERS)})",
    )
    parser.add_argument("--model", help="the model id the request bodies name")
    add_context_window(
        parser,
        "the model's context window in tokens (default: 200000)",
        default=None,
    )
    parser.add_argument("--json", action="store_true", help="print one JSON list of reports")
    parser.add_argument(
        "--fix",
        action="store_true",
        help="repair damaged lines of pi sessions in place (backup kept, as clawctx repair) "
        "and say what is handled when the request is built",
    )
