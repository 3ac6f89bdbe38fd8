"""The ``clawctx`` command line: ``assemble`` the context of a request, ``inspect`` session
files, ``repair`` them, ``convert`` foreign transcripts, ``scan`` many files, ``report`` as HTML,
``doctor`` what needs attention, ``cache`` the prompt cache turn by turn.

One module per command (as pip's ``commands/``): each declares its ``SUMMARY``, ``DESCRIPTION``
and ``EXAMPLES``, ``add_arguments`` and ``run`` (the ``clawctx.cli._common.Command`` protocol),
and ``build_parser`` registers them all the same way from ``COMMANDS``; what they share
(printer, error lines, argument types, provider choices) is in ``clawctx.cli._common``.
The CLI holds no library functions: what a command computes lives in its stage
(``clawctx.history.inspect``, ``clawctx.history.convert``, ...) and is re-exported here under
the names it always had.

Reports go to stdout (coloured with ``rich`` when stdout is a terminal and ``NO_COLOR`` is
unset, plain text otherwise); errors go to stderr, one line per file, naming the file once.

Layer: the top of the package (beside ``clawctx.report`` and ``clawctx.dask``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

from clawctx import _core
from clawctx.cli import assemble, cache, convert, doctor, inspect, repair, report, scan
from clawctx.cli._common import MODEL_APIS, PROVIDERS, Command, HelpFormatter, choice_error, wrap
from clawctx.cli.assemble import DEFAULT_ASSEMBLE_TOOLS
from clawctx.engine.diagnose import DOCTOR_PROVIDERS
from clawctx.history.convert import convert_transcript
from clawctx.history.inspect import (
    DEFAULT_CONTEXT_TOKENS,
    TOOL_CALL_BLOCK_TYPES,
    inspect_session,
    inspect_transcript,
)

__all__ = [
    "COMMANDS",
    "DEFAULT_ASSEMBLE_TOOLS",
    "DEFAULT_CONTEXT_TOKENS",
    "MODEL_APIS",
    "PROVIDERS",
    "TOOL_CALL_BLOCK_TYPES",
    "build_parser",
    "convert_transcript",
    "inspect_session",
    "inspect_transcript",
    "main",
]

COMMANDS: dict[str, Command] = {
    "assemble": assemble,
    "inspect": inspect,
    "convert": convert,
    "repair": repair,
    "report": report,
    "cache": cache,
    "scan": scan,
    "doctor": doctor,
}
"""The ``clawctx`` subcommands by name, in the order ``clawctx --help`` lists them."""

_DESCRIPTION = """\
Read, check, repair and assemble pi / OpenClaw session transcripts (JSONL).

Without a SESSION argument, assemble and inspect use the demo session and workspace bundled
with clawctx. Reports go to stdout (coloured on a terminal; set NO_COLOR for plain text),
errors to stderr."""

_EXAMPLES = """\
examples:
  clawctx assemble --prompt "What changed since the last release?"
  clawctx assemble session.jsonl --provider openai --model-api openai-responses --model gpt-5
  clawctx inspect session.jsonl
  clawctx inspect --check sessions/*.jsonl        # exit 1 if any file is damaged (for CI)
  clawctx repair --dry-run session.jsonl          # what would change, line by line
  clawctx repair sessions/*.jsonl --json"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``clawctx`` command."""
    raw = HelpFormatter
    parser = argparse.ArgumentParser(
        prog="clawctx", description=_DESCRIPTION, epilog=_EXAMPLES, formatter_class=raw
    )
    parser.add_argument("--version", action="version", version=f"clawctx {_core.__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        subparser = commands.add_parser(
            name,
            help=command.SUMMARY,
            description=wrap(command.DESCRIPTION),
            epilog=command.EXAMPLES,
            formatter_class=HelpFormatter,
        )
        command.add_arguments(subparser)
        subparser.set_defaults(handler=command.run, subparser=subparser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``clawctx`` command; returns the exit status."""
    parser = build_parser()
    args, unrecognized = parser.parse_known_args(argv)
    # Usage errors show the subcommand's usage line, as argparse's own errors do (argparse
    # itself reports an unknown option with the top-level usage).
    usage = getattr(args, "subparser", parser)
    if unrecognized:
        usage.error(f"unrecognized arguments: {' '.join(unrecognized)}")
    if args.command == "assemble":
        if args.provider not in PROVIDERS:
            usage.error(choice_error("--provider", args.provider, PROVIDERS))
        if args.model_api is not None and args.model_api not in MODEL_APIS:
            usage.error(choice_error("--model-api", args.model_api, MODEL_APIS))
    if args.command == "doctor":
        for name in args.provider or ():
            if name not in DOCTOR_PROVIDERS:
                usage.error(choice_error("--provider", name, list(DOCTOR_PROVIDERS)))
    handler = args.handler
    try:
        status: int = handler(args)
    except BrokenPipeError:
        # The reader went away (`clawctx inspect | head`): stop quietly, and keep Python from
        # reporting the same broken pipe again when it flushes stdout at exit.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return status
