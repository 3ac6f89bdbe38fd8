"""``clawctx inspect``: summarize session files and transcripts, read-only; ``--check`` for CI.

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
    print_json,
    read_or_report,
)
from clawctx.demo import demo_session_path
from clawctx.history.inspect import inspect_file
from clawctx.history.store import open_store

SUMMARY = "summarize session files (read-only)"
"""The command's line in ``clawctx --help``."""
DESCRIPTION = (
    "Summarize session files: header, counts, leaf context by role, damaged "
    "lines, unpaired tool calls, what pairing repair and pruning would do. Never writes."
)
"""The command's description in ``clawctx inspect --help``."""
EXAMPLES = """\
examples:
  clawctx inspect                                 # the bundled demo session
  clawctx inspect a.jsonl b.jsonl --json          # one JSON object per file, in a list
  clawctx inspect --check sessions/*.jsonl        # exit 1 if any file is damaged
  clawctx inspect openclaw-agent.sqlite           # the sessions of an OpenClaw store
  clawctx inspect openclaw-agent.sqlite --session ID"""
"""Its examples, shown after the options in ``clawctx inspect --help``."""


def _damage(report: dict[str, Any]) -> list[str]:
    """What ``inspect --check`` counts as damage: lines the loader could not take as they were
    (what ``clawctx repair`` fixes). Unanswered tool calls are not damage: a live session has
    one while a tool runs."""
    damage = [f"line {s['line']}: {s['action']} ({s['reason']})" for s in report["skipped_lines"]]
    if report.get("damaged_lines"):  # a Claude Code or Codex transcript: skipped lines
        damage.append(f"{report['damaged_lines']} line(s) not JSON objects, skipped")
    return damage


def _print_counts(out: Printer, counts: dict[str, int]) -> None:
    """One indented ``name  count`` line per key (entry types, roles)."""
    for name, count in counts.items():
        out.line(f"  {name:<24}{count:>7}")


def _print_roles(out: Printer, report: dict[str, Any]) -> None:
    """The context's messages and estimated tokens by role (a session's and a transcript's)."""
    _print_counts(out, report["context_roles"])
    out.labelled("tokens", f"~{report['estimated_tokens']} (chars/4 estimate)")
    _print_counts(out, report["estimated_tokens_by_role"])


def _print_ids(out: Printer, title: str, ids: list[str]) -> None:
    """``title: N`` (yellow when there are any), then each id on a line of its own."""
    out.line(f"{title}: {len(ids)}", "yellow" if ids else None)
    for item in ids:
        out.line(f"  {item}")


def _print_report(out: Printer, report: dict[str, Any]) -> None:
    out.labelled("session", report["path"])
    header = report["header"]
    out.labelled("header", ", ".join(f"{k}={v}" for k, v in header.items() if k != "type"))
    if report["migration_needed"]:
        version = f"{report['file_version']} (migration to v{report['version']} would apply)"
        out.labelled("version", version, "yellow")
    else:
        out.labelled("version", f"{report['file_version']} (current)")
    if report["name"]:
        out.labelled("name", report["name"])
    out.labelled("entries", str(report["entries"]))
    _print_counts(out, report["entry_counts"])
    on_path = report["leaf_path_entries"]
    out.labelled("leaf", f"{report['leaf_id']} ({on_path} entries on its path)")
    model = report["model"]
    model_text = f"{model.get('provider')}/{model.get('modelId')}" if model else "none"
    # `assemble` shows the think level of the request, which only the prompt's leading level
    # word (or a runtime's stored level) sets; say where this one comes from so the two do not look
    # contradictory.
    out.labelled(
        "model",
        f"{model_text}, thinking level {report['thinking_level']} "
        "(as recorded in the session file)",
    )
    boundary = report.get("context_boundary")
    if boundary is not None:
        # The latest compaction or OpenClaw reset on the leaf path: where the context starts.
        kept = boundary["first_kept_entry_id"]
        reason = f" ({boundary['reason']})" if boundary["type"] == "reset" else ""
        out.labelled(
            "boundary",
            f"{boundary['type']}{reason} {boundary['id']}, "
            + (f"keeps from {kept}" if kept else "keeps nothing before it"),
        )
    out.labelled("context", f"{report['context_messages']} messages")
    _print_roles(out, report)
    skipped = report["skipped_lines"]
    out.labelled("damaged", f"{len(skipped)} line(s)", "bold red" if skipped else None)
    for s in skipped:
        kept = f"{s['records']} record(s) kept"
        out.line(f"  line {s['line']}: {s['action']} ({s['reason']}), {kept}", "red")
    _print_ids(
        out, "tool calls without results on the leaf path", report["tool_calls_without_results"]
    )
    _print_ids(
        out, "tool results without calls on the leaf path", report["tool_results_without_calls"]
    )
    pairing = report["pairing_repair"]
    if pairing["changes_transcript"]:
        out.line(
            "pairing repair would: "
            f"insert {len(pairing['synthetic_results_for'])} synthetic result(s), "
            f"drop {pairing['dropped_orphan_results']} orphan and "
            f"{pairing['dropped_duplicate_results']} duplicate result(s), "
            f"drop {pairing['dropped_tool_calls']} invalid tool call(s)"
            + (", and reorder results" if pairing["reordered"] else "")
        )
    else:
        out.line("pairing repair would: change nothing")
    pruning = report["pruning_preview"]
    out.line(
        f"pruning (default settings, {pruning['context_window_tokens']} token window): "
        f"soft-trim {pruning['soft_trimmed_results']} and clear {pruning['cleared_results']} "
        f"tool result(s), {pruning['chars_before']} -> {pruning['chars_after']} chars"
    )


def _print_transcript_report(out: Printer, report: dict[str, Any]) -> None:
    """The report of a Claude Code or Codex transcript (``inspect_transcript``)."""
    out.labelled("file", report["path"])
    out.labelled("format", f"{report['format']} {report['version'] or ''}".rstrip())
    out.labelled("session", f"{report['session_id']} (cwd {report['cwd']})")
    out.labelled("model", str(report["model"] or "none"))
    out.labelled("time", f"{report['first_timestamp']} .. {report['last_timestamp']}")
    out.labelled(
        "lines",
        f"{report['lines']} ({report['dropped_sidechain_lines']} sub-agent, "
        f"{report['off_path_lines']} off the main thread, {report['compactions']} "
        f"compaction(s), {report['branches']} branch point(s))",
    )
    damaged = report["damaged_lines"]
    torn = " (the last one torn)" if report["torn_last_line"] else ""
    out.labelled("damaged", f"{damaged} line(s){torn}", "bold red" if damaged else None)
    out.labelled("messages", str(report["messages"]))
    _print_roles(out, report)
    orphans = report["tool_calls_without_results"]
    stray = report["tool_results_without_calls"]
    out.line(f"tool calls without results: {len(orphans)}", "yellow" if orphans else None)
    out.line(f"tool results without calls: {len(stray)}", "yellow" if stray else None)


def run(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.sessions] or [demo_session_path()]
    out = Printer()
    status = 0
    reports: list[dict[str, Any]] = []
    with clawctx_log(verbose=False):
        for index, given in enumerate(paths):
            # An OpenClaw store: one report per session asked for (--session), every session
            # under --check, else the list of its sessions.
            targets: list[tuple[Path, str | None]] = [(given, None)]
            if is_store_path(given):
                try:
                    with open_store(given) as store:
                        windows = store.sessions()
                except (OSError, _core.ClawctxError) as err:
                    error("inspect", given, describe(err, given))
                    status = 1
                    if args.json:
                        reports.append({"path": str(given), "error": describe(err, given)})
                    continue
                if args.session is not None:
                    targets = [(given, args.session)]
                elif args.check:
                    targets = [(given, w.session_id) for w in windows]
                else:
                    listing = {
                        "path": str(given),
                        "store": True,
                        "schema_version": store.schema_version,
                        "sessions": [dataclasses.asdict(w) for w in windows],
                    }
                    if args.json:
                        reports.append(listing)
                    else:
                        if index:
                            out.line()
                        _print_store(out, listing)
                    continue
            for path, session_id in targets:
                status = max(status, _inspect_one(args, out, path, session_id, index, reports))
    if args.json:
        payload: Any = reports[0] if len(reports) == 1 and len(paths) == 1 else reports
        print_json(payload)
    return status


def _print_store(out: Printer, listing: dict[str, Any]) -> None:
    """``inspect STORE``: the store's windows, oldest first, one line each."""
    sessions = listing["sessions"]
    out.labelled("store", f"{listing['path']} (schema {listing['schema_version']})")
    out.labelled("sessions", f"{len(sessions)} (inspect one with --session ID)")
    for w in sessions:
        why = f", {w['reason']}" if w["reason"] else ""
        after = f" after {w['previous_session_id']}" if w["previous_session_id"] else ""
        out.line(
            f"  {w['session_id']}  {w['session_key'] or '-'}{why}{after}: "
            f"{w['event_count']} records, {w['event_bytes']} bytes"
        )


def _inspect_one(
    args: argparse.Namespace,
    out: Printer,
    path: Path,
    session_id: str | None,
    index: int,
    reports: list[dict[str, Any]],
) -> int:
    """Inspects one file (or one session of a store); returns its exit status."""
    shown, report, problem = read_or_report(
        "inspect",
        path,
        session_id,
        lambda local: inspect_file(local, context_window=args.context_window),
    )
    if report is None:
        if args.json:
            reports.append({"path": shown, "error": problem})
        return 1
    if session_id is not None:
        report["path"] = shown
    damage = _damage(report)
    report["damaged"] = bool(damage)
    status = 1 if damage and args.check else 0
    if args.json:
        reports.append(report)
    elif args.check:
        if damage:
            # The same stream as the "ok" lines: one line per file, in order.
            out.line(f"{shown}: damaged: {'; '.join(damage)}", "red")
        else:
            out.line(f"{shown}: ok", "green")
    else:
        if index:
            out.line()
        if report["format"] == "pi":
            _print_report(out, report)
        else:
            _print_transcript_report(out, report)
    return status


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``clawctx inspect``."""
    parser.add_argument(
        "sessions",
        nargs="*",
        metavar="SESSION",
        help="session .jsonl files or OpenClaw .sqlite stores (default: the demo)",
    )
    parser.add_argument(
        "--session",
        metavar="ID",
        help="with an OpenClaw store (openclaw-agent.sqlite): the session to inspect "
        "(without it the store's sessions are listed)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the report as JSON (a list for several files)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="print one line per file and exit 1 if any file is damaged (lines that "
        "clawctx repair would drop or salvage) or is not a session file",
    )
    add_context_window(
        parser,
        "context window in tokens for the pruning preview (default: %(default)s)",
    )
