"""``clawctx convert``: write a Claude Code or Codex transcript as a pi session file.

Layer: ``clawctx.cli`` (the top of the package).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from clawctx import _core
from clawctx.cli._common import (
    Printer,
    check_readable,
    describe,
    error,
    is_store_path,
    missing_session,
    print_json,
    store_label,
)
from clawctx.history.convert import convert_transcript
from clawctx.history.session import Session
from clawctx.history.store import export_jsonl, write_store

#: Output names ``convert`` writes as a new OpenClaw store rather than a JSONL session.
STORE_SUFFIXES = (".sqlite", ".sqlite3", ".db")

SUMMARY = "write a Claude Code or Codex transcript as a pi session file"
"""The command's line in ``clawctx --help``."""
DESCRIPTION = (
    "Write the main thread of a Claude Code session or Codex rollout (or a pi "
    "session's context) as a new pi session file that OpenClaw can resume. The input "
    "is only read; the output is written atomically."
)
"""The command's description in ``clawctx convert --help``."""
EXAMPLES = """\
examples:
  clawctx convert ~/.claude/projects/-home-me-app/SESSION.jsonl -o session.jsonl
  clawctx convert ~/.codex/sessions/2026/01/02/rollout-x.jsonl -o s.jsonl --force
  clawctx convert openclaw-agent.sqlite --session ID -o session.jsonl   # a store's session
  clawctx convert session.jsonl -o new.sqlite     # a pi session into a new OpenClaw store"""
"""Its examples, shown after the options in ``clawctx convert --help``."""


def run(args: argparse.Namespace) -> int:
    source, target = Path(args.input), Path(args.output)
    problem = check_readable(source)
    if problem is not None:
        error("convert", source, problem)
        return 1
    if is_store_path(source):
        return _from_store(args, source, target)
    if target.suffix in STORE_SUFFIXES:
        return _to_store(args, source, target)
    try:
        outcome = convert_transcript(source, target, force=args.force)
    except (OSError, ValueError, _core.ClawctxError) as err:
        failed = target if isinstance(err, OSError) and err.filename == str(target) else source
        error("convert", failed, describe(err, failed))
        return 1
    if args.json:
        print_json(outcome)
    else:
        skipped = outcome["damaged_lines"]
        note = f", {skipped} damaged line(s) skipped" if skipped else ""
        Printer().line(
            f"{source} ({outcome['format']}): {outcome['messages']} message(s) -> {target}{note}"
        )
    return 0


def _from_store(args: argparse.Namespace, source: Path, target: Path) -> int:
    """``convert STORE --session ID -o out.jsonl``: the window's records as JSONL lines."""
    if args.session is None:
        return missing_session("convert", source)
    try:
        lines = export_jsonl(source, args.session, target, force=args.force)
    except (OSError, _core.ClawctxError) as err:
        failed = target if isinstance(err, OSError) and err.filename == str(target) else source
        error("convert", failed, describe(err, failed))
        return 1
    label = store_label(source, args.session)
    outcome = {"input": label, "output": str(target), "format": "openclaw-sqlite", "lines": lines}
    if args.json:
        print_json(outcome)
    else:
        Printer().line(f"{label} (openclaw-sqlite): {lines} line(s) -> {target}")
    return 0


def _to_store(args: argparse.Namespace, source: Path, target: Path) -> int:
    """``convert SESSION.jsonl -o new.sqlite``: a pi session into a new store file."""
    if target.exists():
        # A store is never replaced, even with --force: it may be a live Gateway's database.
        error("convert", target, "exists; a store is never replaced (choose a new file name)")
        return 1
    try:
        Session.open(source, read_only=True)  # only pi sessions go into a store as they are
        session_id = write_store(source, target, session_key=args.session_key)
    except (OSError, ValueError, _core.ClawctxError) as err:
        error("convert", source, describe(err, source))
        return 1
    outcome = {"input": str(source), "output": str(target), "session_id": session_id}
    if args.json:
        print_json(outcome)
    else:
        Printer().line(f"{source}: session {session_id} -> new store {target}")
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``clawctx convert``."""
    parser.add_argument(
        "input", metavar="IN", help="transcript .jsonl file (any format) or OpenClaw .sqlite store"
    )
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="pi session to write; a name ending .sqlite/.sqlite3/.db writes a new OpenClaw "
        "store holding the (pi) session IN",
    )
    parser.add_argument(
        "--session", metavar="ID", help="with a store as IN: the session to write as JSONL"
    )
    parser.add_argument(
        "--session-key",
        default="agent:main:main",
        metavar="KEY",
        help="with a store as OUT: the session key of its window (default: %(default)s)",
    )
    parser.add_argument("--force", action="store_true", help="replace OUT if it exists")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
