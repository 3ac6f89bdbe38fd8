"""``clawctx convert``: write a Claude Code or Codex transcript as a pi session file.

Layer: ``clawctx.cli`` (the top of the package).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from clawctx import _core
from clawctx.cli._common import HelpFormatter, Printer, check_readable, describe, error, wrap
from clawctx.history.convert import convert_transcript

_CONVERT_EXAMPLES = """\
examples:
  clawctx convert ~/.claude/projects/-home-me-app/SESSION.jsonl -o session.jsonl
  clawctx convert ~/.codex/sessions/2026/01/02/rollout-x.jsonl -o s.jsonl --force"""


def run(args: argparse.Namespace) -> int:
    source, target = Path(args.input), Path(args.output)
    problem = check_readable(source)
    if problem is not None:
        error("convert", source, problem)
        return 1
    try:
        outcome = convert_transcript(source, target, force=args.force)
    except (OSError, ValueError, _core.ClawctxError) as err:
        failed = target if isinstance(err, OSError) and err.filename == str(target) else source
        error("convert", failed, describe(err, failed))
        return 1
    if args.json:
        print(json.dumps(outcome, indent=2, ensure_ascii=False))
    else:
        skipped = outcome["damaged_lines"]
        note = f", {skipped} damaged line(s) skipped" if skipped else ""
        Printer().line(
            f"{source} ({outcome['format']}): {outcome['messages']} message(s) -> {target}{note}"
        )
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the ``convert`` command to the ``clawctx`` parser."""
    raw = HelpFormatter
    convert = commands.add_parser(
        "convert",
        help="write a Claude Code or Codex transcript as a pi session file",
        description=wrap(
            "Write the main thread of a Claude Code session or Codex rollout (or a pi "
            "session's context) as a new pi session file that OpenClaw can resume. The input "
            "is only read; the output is written atomically."
        ),
        epilog=_CONVERT_EXAMPLES,
        formatter_class=raw,
    )
    convert.add_argument("input", metavar="IN", help="transcript .jsonl file (any format)")
    convert.add_argument("-o", "--output", required=True, metavar="OUT", help="pi session to write")
    convert.add_argument("--force", action="store_true", help="replace OUT if it exists")
    convert.add_argument("--json", action="store_true", help="print the outcome as JSON")
    convert.set_defaults(handler=run)
