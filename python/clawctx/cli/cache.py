"""``clawctx cache``: the prompt cache of a session, turn by turn: hit rates, breaks, costs.

Layer: ``clawctx.cli`` (the top of the package).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from clawctx import _core
from clawctx.cli._common import (
    clawctx_log,
    describe,
    error,
    load_tool_definitions,
    pi_session_problem,
    print_json,
)

SUMMARY = "report the prompt cache of a session: hit rate per turn, breaks and their cost"
"""The command's line in ``clawctx --help``."""
DESCRIPTION = (
    "Rebuild each recorded assistant turn's request (the context at the turn, for the "
    "model recorded on it), report per turn the cache hit rate from the recorded usage "
    "(usage.cacheRead / cacheWrite / input), every break between consecutive requests "
    "with its cause (model, tools, system_prompt, history_rewritten, compaction, "
    "breakpoint_moved), where it is, the tokens written again and their cost at the "
    "model's prices (from the session's recorded usage.cost). Only reads the session."
)
"""The command's description in ``clawctx cache --help``."""
EXAMPLES = """\
examples:
  clawctx cache session.jsonl                     # hit rate per turn, every break and its cause
  clawctx cache session.jsonl --json              # the same as JSON
  clawctx cache session.jsonl --system-prompt prompt.txt --tools tools.json"""
"""Its examples, shown after the options in ``clawctx cache --help``."""


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{rate * 100:.0f}%"


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def run(args: argparse.Namespace) -> int:
    # Imported here: the engine module only for this command.
    from clawctx.engine.cache_report import cache_report

    session = Path(args.session)
    problem = pi_session_problem(session)
    if problem is not None:
        error("cache", session, problem)
        return 1
    system_prompt = None
    tools = None
    try:
        if args.system_prompt:
            system_prompt = Path(args.system_prompt).read_text(encoding="utf-8")
        if args.tools:
            tools = load_tool_definitions(Path(args.tools))
    except (OSError, ValueError) as err:
        error("cache", session, f"cannot read --system-prompt / --tools: {err}")
        return 1
    try:
        with clawctx_log(verbose=False):
            report = cache_report(session, system_prompt=system_prompt, tools=tools)
    except (OSError, _core.ClawctxError) as err:
        error("cache", session, describe(err, session))
        return 1
    if args.json:
        print_json(report.to_dict())
        return 0
    print(f"{session}: {len(report.turns)} assistant turns, cache hit rate")
    print(f"  {_percent(report.hit_rate)} overall, {len(report.breaks)} breaks", end="")
    print(f", cache writes {_money(report.cache_write_cost)}", end="")
    print(f", breaks {_money(report.break_cost)}")
    for turn in report.turns:
        line = (
            f"  turn {turn.index:>4}  {_percent(turn.hit_rate):>5}  "
            f"read {turn.cache_read_tokens:>8,}  write {turn.cache_write_tokens:>8,}  "
            f"input {turn.input_tokens:>8,}"
        )
        brk = turn.cache_break
        if brk is not None:
            line += (
                f"  BREAK {brk.cause} at {brk.path} "
                f"(~{brk.rewrite_tokens:,} tokens, {_money(turn.break_cost)})"
            )
        print(line)
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``clawctx cache``."""
    parser.add_argument("session", metavar="SESSION", help="a pi / OpenClaw session file (JSONL)")
    parser.add_argument(
        "--system-prompt",
        metavar="FILE",
        help="the system prompt the agent sent (a text file; sessions do not record it)",
    )
    parser.add_argument(
        "--tools",
        metavar="FILE",
        help='the tool definitions the agent sent (JSON: a list or {"tools": [...]})',
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
