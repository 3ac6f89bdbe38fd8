"""``clawctx report``: an HTML report of a session or of every session under a directory.

Layer: ``clawctx.cli`` (the top of the package).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clawctx import _core
from clawctx.cli._common import (
    add_context_window,
    clawctx_log,
    describe,
    error,
    is_store_path,
    positive_number,
    store_session_file,
    use_rich,
)

SUMMARY = "write an HTML report of a session, or of every session in a directory"
"""The command's line in ``clawctx --help``."""
DESCRIPTION = (
    "Write one self-contained HTML page (works offline): for a session file, the "
    "context size per turn against the window, tokens by role and by tool, compactions "
    "and branch points, the largest tool results, damaged lines and unpaired tool calls; "
    "for a directory, a fleet summary of every *.jsonl session under it. Never writes "
    "the sessions. Needs the report extra: pip install 'clawctx[report]'."
)
"""The command's description in ``clawctx report --help``."""
EXAMPLES = """\
examples:
  clawctx report session.jsonl -o report.html     # one session
  clawctx report ~/.openclaw/agents -o fleet.html # every *.jsonl session under a directory
  clawctx report session.jsonl --context-window 1000000
  clawctx report openclaw-agent.sqlite -o fleet.html          # every session of a store
  clawctx report openclaw-agent.sqlite --session ID -o r.html # one session of a store"""
"""Its examples, shown after the options in ``clawctx report --help``."""


def run(args: argparse.Namespace) -> int:
    # Imported here: the report package (and matplotlib, through it) only for this command.
    from clawctx.report import (
        ReportDependencyError,
        fleet_page,
        fleet_stats,
        session_page,
        session_stats,
        write_page,
    )

    source = Path(args.path)
    try:
        # The charts need matplotlib (the report extra): say so before any work, not as a
        # traceback from the first chart.
        import matplotlib  # noqa: F401
    except ImportError:
        error(
            "report",
            source,
            'needs matplotlib, which is not installed: pip install "clawctx[report]"',
        )
        return 1
    store = is_store_path(source)
    # A store without --session is a fleet of its sessions; with it, one session.
    fleet = source.is_dir() or (store and args.session is None)
    out = Path(args.output or ("fleet.html" if fleet else "report.html"))
    if not source.exists():
        error("report", source, "no such file or directory")
        return 1
    try:
        with clawctx_log(verbose=False), contextlib.ExitStack() as stack:
            if fleet:
                with _report_progress() as progress:
                    stats = fleet_stats(
                        [source], top=args.top, workers=args.jobs, progress=progress
                    )
                page = fleet_page(stats)
            else:
                local = (
                    stack.enter_context(store_session_file(source, args.session))
                    if store
                    else source
                )
                page = session_page(
                    session_stats(
                        local,
                        context_window=args.context_window,
                        top=args.top,
                        cache_breaks=args.cache_breaks,
                    )
                )
    except ReportDependencyError as err:
        error("report", source, str(err))
        return 1
    except (OSError, _core.ClawctxError) as err:
        error("report", source, describe(err, source))
        return 1
    try:
        write_page(page, out)
    except OSError as err:
        error("report", out, describe(err, out))
        return 1
    size = len(page.encode("utf-8"))
    what = f"{stats.sessions} sessions" if fleet else "session"
    print(f"wrote {out} ({size / 1000:.0f} kB, {what})")
    return 0


@contextlib.contextmanager
def _report_progress() -> Iterator[Any]:
    """A progress bar on stderr while a fleet is scanned, only when stderr is a terminal."""
    if not use_rich(sys.stderr):
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(file=sys.stderr), transient=True) as bar:
        task = bar.add_task("scanning sessions", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``clawctx report``."""
    parser.add_argument(
        "path",
        metavar="SESSION|DIR",
        help="a session .jsonl file, an OpenClaw .sqlite store, or a directory",
    )
    parser.add_argument(
        "--session",
        metavar="ID",
        help="with an OpenClaw store: report this session (without it: the store as a fleet)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="the HTML file to write (default: parser.html, or fleet.html for a directory)",
    )
    add_context_window(
        parser,
        "the model's context window the context chart is drawn against (default: %(default)s)",
    )
    parser.add_argument(
        "--top",
        type=positive_number,
        default=20,
        metavar="N",
        help="rows of the largest tool results / largest sessions tables (default: %(default)s)",
    )
    parser.add_argument(
        "--jobs",
        type=positive_number,
        default=None,
        metavar="N",
        help="threads scanning a directory (default: one per core)",
    )
    parser.add_argument(
        "--cache-breaks",
        action="store_true",
        help="mark on the prompt cache chart where the cache broke (rebuilds each turn's "
        "request, as clawctx cache does; about a second per 1,000 turns)",
    )
