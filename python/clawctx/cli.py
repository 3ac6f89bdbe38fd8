"""The ``clawctx`` command line: ``assemble`` the context of a request, ``inspect`` session
files, ``repair`` them.

Reports go to stdout (coloured with ``rich`` when stdout is a terminal and ``NO_COLOR`` is
unset, plain text otherwise); errors go to stderr, one line per file, naming the file once.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import errno
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import textwrap
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from clawctx import _core
from clawctx.demo import demo_session_path, demo_workspace_path
from clawctx.history.foreign import detect_transcript_format, read_transcript
from clawctx.history.session import Session

#: Block types that carry a tool call in assistant content (pi's ``toolCall`` and the
#: provider-shaped variants real OpenClaw files contain; pi-mono 0.58.3
#: `packages/coding-agent/src/core/messages.ts`).
TOOL_CALL_BLOCK_TYPES = frozenset({"toolCall", "toolUse", "functionCall"})


#: The tools ``clawctx assemble`` lists when none are given: pi's coding tools.
DEFAULT_ASSEMBLE_TOOLS: tuple[str, ...] = ("read", "write", "edit", "grep", "find", "ls", "exec")


def _tool_call_ids(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    ids = []
    for block in content:
        if isinstance(block, dict) and block.get("type") in TOOL_CALL_BLOCK_TYPES:
            block_id = block.get("id")
            if isinstance(block_id, str) and block_id:
                ids.append(block_id)
    return ids


def _tool_result_id(message: dict[str, Any]) -> str | None:
    for key in ("toolCallId", "toolUseId"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


#: OpenClaw's default context window (``DEFAULT_CONTEXT_TOKENS``), used for the pruning preview.
DEFAULT_CONTEXT_TOKENS = 200_000


def _pairing_preview(messages: _core.Transcript) -> dict[str, Any]:
    """What the tool-call input and pairing repairs would do to the leaf context."""
    inputs = _core.repair_tool_call_inputs(messages)
    pairing = _core.repair_tool_pairing(inputs.messages, now_ms=0)
    return {
        "dropped_tool_calls": inputs.dropped_tool_calls,
        "dropped_assistant_messages": inputs.dropped_assistant_messages,
        "synthetic_results_for": [m["toolCallId"] for m in pairing.added],
        "dropped_orphan_results": pairing.dropped_orphan_count,
        "dropped_duplicate_results": pairing.dropped_duplicate_count,
        "reordered": pairing.messages.to_json() != inputs.messages.to_json()
        and len(pairing.messages) == len(inputs.messages)
        and not pairing.added,
        "changes_transcript": pairing.messages.to_json() != messages.to_json(),
    }


def _pruning_preview(messages: _core.Transcript, context_window: int) -> dict[str, Any]:
    """What context pruning with OpenClaw's default settings would do to the leaf context."""
    settings = _core.PruningSettings.from_config({"mode": "cache-ttl"})
    assert settings is not None
    pruned = _core.prune_context(messages, settings, context_window_tokens=context_window)
    placeholder = settings.to_dict()["hardClear"]["placeholder"]
    trimmed = cleared = 0
    if pruned is not messages:
        for before, after in zip(messages, pruned, strict=True):
            if before == after:
                continue
            text = after["content"][0]["text"]
            if text == placeholder:
                cleared += 1
            else:
                trimmed += 1
    return {
        "context_window_tokens": context_window,
        "soft_trimmed_results": trimmed,
        "cleared_results": cleared,
        "chars_before": sum(_core.estimate_pruning_chars(m) for m in messages),
        "chars_after": sum(_core.estimate_pruning_chars(m) for m in pruned),
    }


def inspect_session(path: Path, *, context_window: int = DEFAULT_CONTEXT_TOKENS) -> dict[str, Any]:
    """Everything ``clawctx inspect`` reports about one session file, as plain data.

    Opens the file read-only: inspecting never writes, migrates or repairs.
    """
    session = Session.open(path, read_only=True)
    context = session.context()
    messages = context.messages.to_list()
    calls: list[str] = []
    results: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            calls.extend(_tool_call_ids(message))
        elif role == "toolResult":
            result_id = _tool_result_id(message)
            if result_id is not None:
                results.append(result_id)
    result_set, call_set = set(results), set(calls)
    types = Counter(t if t is not None else "(no type)" for t in session.entry_types())
    role_names = [r if r is not None else "(no role)" for r in context.messages.roles()]
    roles = Counter(role_names)
    tokens_by_role: Counter[str] = Counter()
    for role, tokens in zip(role_names, context.messages.token_counts().tolist(), strict=True):
        tokens_by_role[role] += int(tokens)
    return {
        "path": str(path),
        "header": session.header,
        "session_id": session.session_id,
        "name": session.name,
        "file_version": session.file_version,
        "version": session.version,
        "migration_needed": session.needs_migration,
        "entries": len(session),
        "entry_counts": dict(sorted(types.items())),
        "leaf_id": session.leaf_id,
        "leaf_path_entries": len(session.branch_path()),
        "thinking_level": context.thinking_level,
        "model": context.model,
        "context_messages": len(context.messages),
        "context_roles": dict(sorted(roles.items())),
        "labels": session.labels,
        "skipped_lines": [
            {"line": s.line, "action": s.action, "reason": s.reason, "records": s.records}
            for s in session.skipped_lines
        ],
        "tool_calls_without_results": [c for c in calls if c not in result_set],
        "tool_results_without_calls": [r for r in results if r not in call_set],
        "estimated_tokens": sum(tokens_by_role.values()),
        "estimated_tokens_by_role": dict(sorted(tokens_by_role.items())),
        "pairing_repair": _pairing_preview(context.messages),
        "pruning_preview": _pruning_preview(context.messages, context_window),
    }


def inspect_transcript(
    path: Path, *, context_window: int = DEFAULT_CONTEXT_TOKENS
) -> dict[str, Any]:
    """What ``clawctx inspect`` reports about a Claude Code or Codex transcript (read-only)."""
    imported = read_transcript(path)
    messages = imported.messages
    calls: list[str] = []
    results: list[str] = []
    for message in messages:
        if message.get("role") == "assistant":
            calls.extend(_tool_call_ids(message))
        elif message.get("role") == "toolResult":
            result_id = _tool_result_id(message)
            if result_id is not None:
                results.append(result_id)
    role_names = [r if r is not None else "(no role)" for r in messages.roles()]
    tokens_by_role: Counter[str] = Counter()
    for role, tokens in zip(role_names, messages.token_counts().tolist(), strict=True):
        tokens_by_role[role] += int(tokens)
    result_set, call_set = set(results), set(calls)
    return {
        "path": str(path),
        "format": imported.format,
        "messages": len(messages),
        "context_messages": len(messages),
        "context_roles": dict(sorted(Counter(role_names).items())),
        "session_id": imported.session_id,
        "cwd": imported.cwd,
        "version": imported.version,
        "model": imported.model,
        "first_timestamp": imported.first_timestamp,
        "last_timestamp": imported.last_timestamp,
        "lines": imported.lines,
        "damaged_lines": imported.damaged_lines,
        "torn_last_line": imported.torn_last_line,
        "dropped_sidechain_lines": imported.dropped_sidechain_lines,
        "off_path_lines": imported.off_path_lines,
        "compactions": imported.compactions,
        "branches": imported.branches,
        "skipped_lines": [],
        "tool_calls_without_results": [c for c in calls if c not in result_set],
        "tool_results_without_calls": [r for r in results if r not in call_set],
        "estimated_tokens": sum(tokens_by_role.values()),
        "estimated_tokens_by_role": dict(sorted(tokens_by_role.items())),
        "pairing_repair": _pairing_preview(messages),
        "pruning_preview": _pruning_preview(messages, context_window),
    }


def _inspect_any(path: Path, *, context_window: int) -> dict[str, Any]:
    """``inspect_session`` for pi files, ``inspect_transcript`` for Claude Code and Codex.

    Anything not recognisable as a foreign transcript (an empty file included: there is nothing
    to inspect) goes to the session loader, which gives the precise reason it is not a session.
    """
    format_name = "pi"
    if path.is_file() and path.stat().st_size > 0:
        with contextlib.suppress(ValueError):
            format_name = detect_transcript_format(path)
    if format_name != "pi":
        return inspect_transcript(path, context_window=context_window)
    report = inspect_session(path, context_window=context_window)
    return {"format": "pi", "messages": report["context_messages"], **report}


# ---- output ------------------------------------------------------------------------------


def _use_rich(stream: TextIO) -> bool:
    """Colour only for a terminal, and never with ``NO_COLOR`` set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class _Printer:
    """Writes report lines to stdout: through ``rich`` on a terminal, as plain text otherwise.

    Lines are given plain; ``style`` only adds colour, so piped output is the same text.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self._console: Any = None
        if _use_rich(self.stream):
            from rich.console import Console

            self._console = Console(file=self.stream, highlight=False, soft_wrap=True)

    def line(self, text: str = "", style: str | None = None) -> None:
        if self._console is None:
            print(text, file=self.stream)
        else:
            from rich.text import Text

            self._console.print(Text(text, style=style or ""))

    def labelled(self, label: str, value: str, style: str | None = None) -> None:
        """``label`` padded to a column, then ``value`` (the report layout of ``inspect``)."""
        if self._console is None:
            print(f"{label:<9}{value}", file=self.stream)
        else:
            from rich.text import Text

            text = Text()
            text.append(f"{label:<9}", style="bold cyan")
            text.append(value, style=style or "")
            self._console.print(text)

    def heading(self, title: str) -> None:
        if self._console is None:
            print(f"=== {title} ===", file=self.stream)
        else:
            self._console.rule(title, style="cyan")


def _error(command: str, path: object, message: str) -> None:
    """One error line on stderr, naming the file once."""
    print(f"clawctx {command}: {path}: {message}", file=sys.stderr)


_OS_ERROR_SUFFIX = re.compile(r"\s*\(os error \d+\)")


def _describe(err: BaseException, path: object) -> str:
    """A reader's sentence for ``err``: no ``[Errno N]``, no ``(os error N)``, no Rust ``Debug``
    text, and without the path (the caller names the file once)."""
    if isinstance(err, _core.SessionFormatError):
        reason = getattr(err, "reason", None) or str(err)
        line = getattr(err, "line", None)
        return f"line {line}: {reason}" if line else str(reason)
    if isinstance(err, OSError):
        text = err.strerror or str(err)
        names = {str(n) for n in (err.filename, err.filename2, path) if n}
    else:
        text = str(err)
        names = {str(path)}
    text = _OS_ERROR_SUFFIX.sub("", text)
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(f"{name}: ", "").replace(f": {name}", "").replace(f" ({name})", "")
    text = text.strip(" :")
    if not text:
        return type(err).__name__
    return text[0].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _check_readable(path: Path) -> str | None:
    """Why ``path`` cannot be a session file to read, or ``None``."""
    if not path.exists():
        return "no such file"
    if path.is_dir():
        return "is a directory, not a session file"
    return None


def _not_a_session_reason(path: Path) -> str | None:
    """What makes ``path`` unreadable as a session (the reason ``inspect`` gives), or ``None``.

    ``repair`` uses it for files it skips, so both commands reject the same files with the same
    reason: a binary file, a JSON array and a file without a header are not session files, and
    neither is an empty file (pi would start a new session in it; there is nothing to inspect).
    """
    try:
        Session.open(path, read_only=True)
    except (OSError, _core.ClawctxError) as err:
        return _describe(err, path)
    return None


@contextlib.contextmanager
def _clawctx_log(verbose: bool) -> Iterator[None]:
    """The library warns on the ``clawctx`` logger (as OpenClaw logs its repairs); the CLI
    already reports the same facts, so the warnings show only with ``--verbose``."""
    logger = logging.getLogger("clawctx")
    handler: logging.Handler
    if verbose:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("clawctx: %(message)s"))
    else:
        handler = logging.NullHandler()
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


# ---- inspect -----------------------------------------------------------------------------


def _damage(report: dict[str, Any]) -> list[str]:
    """What ``inspect --check`` counts as damage: lines the loader could not take as they were
    (what ``clawctx repair`` fixes). Unanswered tool calls are not damage: a live session has
    one while a tool runs."""
    damage = [f"line {s['line']}: {s['action']} ({s['reason']})" for s in report["skipped_lines"]]
    if report.get("damaged_lines"):  # a Claude Code or Codex transcript: skipped lines
        damage.append(f"{report['damaged_lines']} line(s) not JSON objects, skipped")
    return damage


def _print_report(out: _Printer, report: dict[str, Any]) -> None:
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
    for entry_type, count in report["entry_counts"].items():
        out.line(f"  {entry_type:<24}{count:>7}")
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
    out.labelled("context", f"{report['context_messages']} messages")
    for role, count in report["context_roles"].items():
        out.line(f"  {role:<24}{count:>7}")
    out.labelled("tokens", f"~{report['estimated_tokens']} (chars/4 estimate)")
    for role, count in report["estimated_tokens_by_role"].items():
        out.line(f"  {role:<24}{count:>7}")
    skipped = report["skipped_lines"]
    out.labelled("damaged", f"{len(skipped)} line(s)", "bold red" if skipped else None)
    for s in skipped:
        kept = f"{s['records']} record(s) kept"
        out.line(f"  line {s['line']}: {s['action']} ({s['reason']}), {kept}", "red")
    orphans = report["tool_calls_without_results"]
    out.line(
        f"tool calls without results on the leaf path: {len(orphans)}",
        "yellow" if orphans else None,
    )
    for c in orphans:
        out.line(f"  {c}")
    stray = report["tool_results_without_calls"]
    out.line(
        f"tool results without calls on the leaf path: {len(stray)}",
        "yellow" if stray else None,
    )
    for r in stray:
        out.line(f"  {r}")
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


def _print_transcript_report(out: _Printer, report: dict[str, Any]) -> None:
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
    for role, count in report["context_roles"].items():
        out.line(f"  {role:<24}{count:>7}")
    out.labelled("tokens", f"~{report['estimated_tokens']} (chars/4 estimate)")
    for role, count in report["estimated_tokens_by_role"].items():
        out.line(f"  {role:<24}{count:>7}")
    orphans = report["tool_calls_without_results"]
    stray = report["tool_results_without_calls"]
    out.line(f"tool calls without results: {len(orphans)}", "yellow" if orphans else None)
    out.line(f"tool results without calls: {len(stray)}", "yellow" if stray else None)


def _cmd_inspect(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.sessions] or [demo_session_path()]
    out = _Printer()
    status = 0
    reports: list[dict[str, Any]] = []
    with _clawctx_log(verbose=False):
        for index, path in enumerate(paths):
            problem = _check_readable(path)
            report: dict[str, Any] | None = None
            if problem is None:
                try:
                    report = _inspect_any(path, context_window=args.context_window)
                except (OSError, _core.ClawctxError) as err:
                    problem = _describe(err, path)
            if report is None:
                _error("inspect", path, problem or "unreadable")
                status = 1
                if args.json:
                    reports.append({"path": str(path), "error": problem})
                continue
            damage = _damage(report)
            report["damaged"] = bool(damage)
            if damage and args.check:
                status = 1
            if args.json:
                reports.append(report)
            elif args.check:
                if damage:
                    print(f"{path}: damaged: {'; '.join(damage)}", file=sys.stderr)
                else:
                    out.line(f"{path}: ok", "green")
            else:
                if index:
                    out.line()
                if report["format"] == "pi":
                    _print_report(out, report)
                else:
                    _print_transcript_report(out, report)
    if args.json:
        payload: Any = reports[0] if len(paths) == 1 else reports
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    return status


# ---- convert -----------------------------------------------------------------------------


def convert_transcript(source: Path, target: Path, *, force: bool = False) -> dict[str, Any]:
    """Writes the transcript at ``source`` (Claude Code, Codex or pi) as a new pi session at
    ``target``: header, one message entry per message, each the child of the one before.

    The session is written to a temporary file beside ``target`` and renamed over it, so
    ``target`` is either absent, its old self, or the whole new session. An existing ``target``
    is refused unless ``force``; ``source`` itself never is.
    """
    imported = read_transcript(source)
    if target.exists():
        if target.resolve() == source.resolve() or os.path.samefile(target, source):
            raise ValueError("the output is the input file; choose another output path")
        if not force:
            raise FileExistsError(errno.EEXIST, "exists (use --force to replace it)", str(target))
        if not target.is_file():
            raise IsADirectoryError(errno.EISDIR, "not a regular file", str(target))
    directory = target.parent if str(target.parent) else Path(".")
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    os.close(fd)
    scratch = Path(name)
    try:
        scratch.unlink()  # Session.create writes the header into a new (or empty) file
        session = Session.create(
            scratch, cwd=imported.cwd or "", session_id=imported.session_id, fsync=False
        )
        for message in imported.messages:
            session.append_message(message)
        with scratch.open("rb") as written:
            os.fsync(written.fileno())
        os.replace(scratch, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            scratch.unlink()
    return {
        "input": str(source),
        "output": str(target),
        "format": imported.format,
        "messages": len(imported.messages),
        "damaged_lines": imported.damaged_lines,
    }


def _cmd_convert(args: argparse.Namespace) -> int:
    source, target = Path(args.input), Path(args.output)
    problem = _check_readable(source)
    if problem is not None:
        _error("convert", source, problem)
        return 1
    try:
        outcome = convert_transcript(source, target, force=args.force)
    except (OSError, ValueError, _core.ClawctxError) as err:
        failed = target if isinstance(err, OSError) and err.filename == str(target) else source
        _error("convert", failed, _describe(err, failed))
        return 1
    if args.json:
        print(json.dumps(outcome, indent=2, ensure_ascii=False))
    else:
        skipped = outcome["damaged_lines"]
        note = f", {skipped} damaged line(s) skipped" if skipped else ""
        _Printer().line(
            f"{source} ({outcome['format']}): {outcome['messages']} message(s) -> {target}{note}"
        )
    return 0


# ---- repair ------------------------------------------------------------------------------


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
    problem = _check_readable(path)
    if problem is not None:
        outcome["reason"] = problem
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
        outcome["reason"] = _describe(err, path)
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
    why = _not_a_session_reason(path)
    if why is None:
        outcome["status"] = "ok"
        outcome["summary"] = f"nothing to repair ({report.reason})"
    else:
        outcome["status"] = "skipped"
        outcome["reason"] = f"not a session file ({why})"
    return outcome


def _cmd_repair(args: argparse.Namespace) -> int:
    status = 0
    outcomes = []
    out = _Printer()
    with _clawctx_log(verbose=args.verbose and not args.json):
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
                _error("repair", name, outcome["reason"])
                continue
            if kind == "skipped":
                _error("repair", name, f"skipped: {outcome['reason']}")
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
        print(json.dumps(outcomes, indent=2, ensure_ascii=False))
    return status


# ---- assemble ----------------------------------------------------------------------------

#: pi-ai 0.58.3's known APIs (``KnownApi``, `packages/ai/src/types.ts`): what ``--model-api``
#: accepts.
MODEL_APIS: tuple[str, ...] = (
    "anthropic-messages",
    "bedrock-converse-stream",
    "google-generative-ai",
    "google-gemini-cli",
    "google-vertex",
    "openai-completions",
    "openai-responses",
    "azure-openai-responses",
    "openai-codex-responses",
)

#: pi-ai 0.58.3's known providers (``KnownProvider``, `packages/ai/src/types.ts`) and the
#: others OpenClaw 2026.3.13's transcript policy names (`src/agents/provider-capabilities.ts`):
#: what ``--provider`` accepts.
PROVIDERS: tuple[str, ...] = (
    "anthropic",
    "amazon-bedrock",
    "openai",
    "openai-codex",
    "azure-openai-responses",
    "google",
    "google-gemini-cli",
    "google-antigravity",
    "google-vertex",
    "github-copilot",
    "openrouter",
    "mistral",
    "xai",
    "groq",
    "cerebras",
    "vercel-ai-gateway",
    "zai",
    "minimax",
    "minimax-cn",
    "huggingface",
    "opencode",
    "opencode-go",
    "kimi-coding",
    "kilocode",
)


def _choice_error(option: str, value: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"argument {option}: unknown value {value!r}{hint}; choose from {', '.join(choices)}"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of tokens, got {value}")
    return value


def _cmd_assemble(args: argparse.Namespace) -> int:
    # Imported here: the facade modules are not needed by the other commands.
    from clawctx.engine.pipeline import ContextPipeline, ModelSpec, PromptRequest
    from clawctx.prompt.system_prompt import SystemPromptParams
    from clawctx.runtime.replies import resolve_heartbeat_prompt

    session = Path(args.session) if args.session else demo_session_path()
    workspace = Path(args.workspace) if args.workspace else demo_workspace_path()
    problem = _check_readable(session)
    if problem is not None:
        _error("assemble", session, problem)
        return 1
    if not workspace.is_dir():
        _error("assemble", workspace, "workspace is not a directory")
        return 1
    # --tools: a JSON file of tool definitions (a list, or {"tools": [...]}, in pi's or an
    # SDK's shape: sent in --payload, names and descriptions listed in the system prompt), or
    # comma-separated names (the system prompt only).
    from clawctx.wire import normalize_tools

    tools = None
    tool_names = tuple(args.tools.split(",")) if args.tools else DEFAULT_ASSEMBLE_TOOLS
    if args.tools and Path(args.tools).is_file():
        try:
            loaded = json.loads(Path(args.tools).read_text(encoding="utf-8"))
            if isinstance(loaded, dict) and "tools" in loaded:
                loaded = loaded["tools"]
            tools = normalize_tools(loaded)
        except (OSError, ValueError) as err:
            _error("assemble", Path(args.tools), f"cannot read the tool definitions: {err}")
            return 1
        tool_names = ()  # the pipeline lists the definitions' names and descriptions
    params = SystemPromptParams(
        workspace_dir=str(workspace),
        tool_names=tool_names,
        user_timezone=args.timezone,
        # What OpenClaw 2026.3.13 gives the default agent with no heartbeat configured
        # (`src/agents/pi-embedded-runner/run/attempt.ts`, resolveHeartbeatPrompt).
        heartbeat_prompt=resolve_heartbeat_prompt(None),
    )
    model = ModelSpec(
        provider=args.provider,
        api=args.model_api,
        id=args.model,
        input=("text", "image") if args.image_input else ("text",),
        context_window=args.context_window,
    )
    # A preview: the session file is only read (no repair on disk, no leaf or snapshot writes).
    pipeline = ContextPipeline(
        model=model, workspace_dir=workspace, system_prompt=params, read_only=True, tools=tools
    )
    request = PromptRequest(text=args.prompt, session_key=args.session_key)
    try:
        with _clawctx_log(verbose=False):
            prepared = pipeline.prepare(session, request)
            # For the report's think-level line; reads only the end of the file.
            recorded = None if args.json else _core.read_leaf_context(session).thinking_level
    except (OSError, _core.ClawctxError) as err:
        _error("assemble", session, _describe(err, session))
        return 1
    if args.json:
        print(json.dumps(prepared.to_dict(), indent=2, ensure_ascii=False))
        return 0
    out = _Printer()
    if args.payload and prepared.should_run:
        # The request body pi-ai 0.58.3 would send for this model (clawctx.wire).
        try:
            body = prepared.request_payload()
        except _core.ClawctxError as err:
            _error("assemble", session, _describe(err, session))
            return 1
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return 0
    if not prepared.should_run:
        out.line(f"(no model call) {prepared.reply_text}")
        return 0
    messages = prepared.messages.to_list() + [prepared.prompt_message]
    # The summary first, the long system prompt last.
    out.heading("report")
    if prepared.think_level:
        think = f"{prepared.think_level} (the level word the prompt starts with)"
    else:
        think = (
            "(model default): the prompt does not start with a level word such as 'high'; "
            "the session file records "
            f"thinking level {recorded}, which a runtime passes as "
            "PromptRequest(resolved_think_level=...)"
        )
    out.line(f"think level: {think}")
    out.line(f"estimated tokens: {prepared.estimated_tokens}")
    lines = prepared.system_prompt.count("\n") + 1
    out.line(f"system prompt: {lines} lines (printed last)")
    out.line(f"images: {len(prepared.images)}")
    for change in prepared.changes:
        out.line(f"- {change.stage}: {change.detail}")
    out.line()
    out.heading(f"messages ({len(messages)})")
    for index, message in enumerate(messages):
        out.line(f"[{index}] {_message_preview(message)}")
    out.line()
    out.heading("system prompt")
    out.line(prepared.system_prompt)
    return 0


def _message_preview(message: dict[str, Any], width: int = 100) -> str:
    role = message.get("role", "?")
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                parts.append(str(block.get("text", "")))
            elif kind in TOOL_CALL_BLOCK_TYPES:
                parts.append(f"<{kind} {block.get('name', '')}>")
            else:
                parts.append(f"<{kind}>")
        text = " ".join(parts)
    else:
        summary = message.get("summary")  # compactionSummary / branchSummary messages
        text = summary if isinstance(summary, str) else ""
    text = " ".join(text.split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return f"{role}: {text}"


# ---- report ------------------------------------------------------------------------------


def _cmd_report(args: argparse.Namespace) -> int:
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
    fleet = source.is_dir()
    out = Path(args.output or ("fleet.html" if fleet else "report.html"))
    if not source.exists():
        _error("report", source, "no such file or directory")
        return 1
    try:
        with _clawctx_log(verbose=False):
            if fleet:
                with _report_progress() as progress:
                    stats = fleet_stats(
                        [source], top=args.top, workers=args.jobs, progress=progress
                    )
                page = fleet_page(stats)
            else:
                page = session_page(
                    session_stats(source, context_window=args.context_window, top=args.top)
                )
    except ReportDependencyError as err:
        _error("report", source, str(err))
        return 1
    except (OSError, _core.ClawctxError) as err:
        _error("report", source, _describe(err, source))
        return 1
    try:
        write_page(page, out)
    except OSError as err:
        _error("report", out, _describe(err, out))
        return 1
    size = len(page.encode("utf-8"))
    what = f"{stats.sessions} sessions" if fleet else "session"
    print(f"wrote {out} ({size / 1000:.0f} kB, {what})")
    return 0


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {value}")
    return value


@contextlib.contextmanager
def _report_progress() -> Iterator[Any]:
    """A progress bar on stderr while a fleet is scanned, only when stderr is a terminal."""
    if not _use_rich(sys.stderr):
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(file=sys.stderr), transient=True) as bar:
        task = bar.add_task("scanning sessions", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


# ---- the parser --------------------------------------------------------------------------

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

_ASSEMBLE_EXAMPLES = """\
examples:
  clawctx assemble                                # the bundled demo session and workspace
  clawctx assemble session.jsonl --workspace ~/agent --prompt "hi" --json
  clawctx assemble --provider google --model-api google-generative-ai --model gemini-2.5-pro
  clawctx assemble --payload                      # the Anthropic request body, as JSON"""

_INSPECT_EXAMPLES = """\
examples:
  clawctx inspect                                 # the bundled demo session
  clawctx inspect a.jsonl b.jsonl --json          # one JSON object per file, in a list
  clawctx inspect --check sessions/*.jsonl        # exit 1 if any file is damaged"""

_CONVERT_EXAMPLES = """\
examples:
  clawctx convert ~/.claude/projects/-home-me-app/SESSION.jsonl -o session.jsonl
  clawctx convert ~/.codex/sessions/2026/01/02/rollout-x.jsonl -o s.jsonl --force"""

_REPAIR_EXAMPLES = """\
examples:
  clawctx repair --dry-run session.jsonl          # change nothing, list what would change
  clawctx repair session.jsonl --verbose          # repair, then list each changed line
  clawctx repair sessions/*.jsonl --json --delete-backup"""


_REPORT_EXAMPLES = """\
examples:
  clawctx report session.jsonl -o report.html     # one session
  clawctx report ~/.openclaw/agents -o fleet.html # every *.jsonl session under a directory
  clawctx report session.jsonl --context-window 1000000"""
# ---- scan --------------------------------------------------------------------------------

_SCAN_EXAMPLES = """\
examples:
  clawctx scan ~/.openclaw/agents                 # every *.jsonl below, one table row each
  clawctx scan 'sessions/**/*.jsonl' --sort=-estimated_tokens --top 20
  clawctx scan sessions --json > records.jsonl    # one JSON object per line, as files finish
  clawctx scan sessions --csv > records.csv
  clawctx scan sessions --parquet records.parquet # needs pip install "clawctx[arrow]"

exit status: 0 every file was read as a session; 1 a file could not be (its row or record
says why), no file matched, or the output could not be written; 2 bad arguments."""

#: The table columns of ``clawctx scan``: (heading, record field or formatter).
_SCAN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("format", "format"),
    ("size", "size_bytes"),
    ("entries", "entries"),
    ("msgs", "messages"),
    ("user", "user_tokens"),
    ("assistant", "assistant_tokens"),
    ("tool", "tool_result_tokens"),
    ("other", "other_tokens"),
    ("calls", "tool_calls"),
    ("results", "tool_results"),
    ("unpaired", "unpaired"),
    ("damaged", "damaged_lines"),
    ("compact", "compactions"),
    ("branches", "branches"),
    ("model", "model"),
    ("last activity", "last_activity"),
)


def _human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"  # pragma: no cover - the loop always returns


def _scan_cell(record: dict[str, Any], field: str) -> str:
    if field == "size_bytes":
        return _human_size(record["size_bytes"])
    if field == "unpaired":
        return f"{record['unpaired_tool_calls']}/{record['unpaired_tool_results']}"
    value = record[field]
    if value is None:
        return "-"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _print_scan_table(records: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    tty = _use_rich(sys.stdout)
    console = Console(
        file=sys.stdout, highlight=False, no_color=not tty, width=None if tty else 250
    )
    table = Table(box=None, header_style="bold cyan" if tty else "", pad_edge=False)
    table.add_column("session", overflow="fold")
    for heading, field in _SCAN_COLUMNS:
        numeric = field not in ("format", "model", "last_activity")
        table.add_column(heading, justify="right" if numeric else "left")
    for record in records:
        if record["error"] is not None:
            cells = [record["path"], f"error: {record['error']}"]
            table.add_row(*cells, *[""] * (len(_SCAN_COLUMNS) - 1), style="red" if tty else "")
            continue
        table.add_row(record["path"], *[_scan_cell(record, f) for _, f in _SCAN_COLUMNS])
    console.print(table)
    errors = sum(r["error"] is not None for r in records)
    tokens = sum(r["estimated_tokens"] for r in records)
    console.print(
        f"{len(records)} files, {len(records) - errors} sessions, {errors} errors, "
        f"{tokens:,} estimated tokens in leaf contexts"
    )


def _positive_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _cmd_scan(args: argparse.Namespace) -> int:
    import csv

    from clawctx.history.scan import iter_sessions, records_table, session_paths

    fields = list(_core.SessionSummary.fields)
    sort_field: str | None = args.sort
    descending = bool(args.desc)
    if sort_field is not None and sort_field.startswith("-"):
        sort_field, descending = sort_field[1:], True
    if sort_field is not None and sort_field not in fields:
        print(
            f"clawctx scan: --sort: unknown column {sort_field!r}; one of: {', '.join(fields)}",
            file=sys.stderr,
        )
        return 2
    if args.parquet is not None:
        try:
            import pyarrow.parquet as parquet
        except ImportError:
            print(
                'clawctx scan: --parquet needs pyarrow: pip install "clawctx[arrow]"',
                file=sys.stderr,
            )
            return 1
    try:
        paths = session_paths(args.paths)
    except OSError as err:
        print(f"clawctx scan: {err}", file=sys.stderr)
        return 1
    if not paths:
        print("clawctx scan: no session files matched", file=sys.stderr)
        return 1
    progress_bar: Any = None
    task: Any = None
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        progress_bar = Progress(
            TextColumn("scanning"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(file=sys.stderr),
            transient=True,
            # The records on stdout go there as they are, not through the bar's console.
            redirect_stdout=False,
        )
        task = progress_bar.add_task("scan", total=len(paths))

    def advance(done: int, total: int) -> None:
        if progress_bar is not None:
            progress_bar.update(task, completed=done)

    # Without sorting, JSON lines stream out as the records arrive; everything else needs
    # them all (records are small: the sessions themselves are never held).
    stream_json = args.json and sort_field is None and args.top is None
    records: list[dict[str, Any]] = []
    kept: list[Any] = []
    errors = 0
    with progress_bar if progress_bar is not None else contextlib.nullcontext():
        for summary in iter_sessions(paths, jobs=args.jobs, progress=advance):
            record = summary.to_dict()
            if record["error"] is not None:
                errors += 1
                reason = record["error"].removeprefix(f"{record['path']}: ")
                _error("scan", record["path"], reason)
            if stream_json:
                print(json.dumps(record, ensure_ascii=False), flush=True)
            else:
                records.append(record)
                kept.append(summary)
    status = 1 if errors else 0
    if stream_json:
        return status
    order = list(range(len(records)))
    if sort_field is not None:
        # Stable either way; missing values (errors, no model) go last either way.
        present = [i for i in order if records[i][sort_field] is not None]
        present.sort(key=lambda i: records[i][sort_field], reverse=descending)
        order = present + [i for i in order if records[i][sort_field] is None]
    if args.top is not None:
        order = order[: args.top]
    shown = [records[i] for i in order]
    if args.json:
        for record in shown:
            print(json.dumps(record, ensure_ascii=False))
    elif args.csv:
        writer = csv.DictWriter(sys.stdout, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: "" if v is None else v for k, v in r.items()} for r in shown)
    elif args.parquet is not None:
        table = records_table(kept[i] for i in order)
        try:
            parquet.write_table(table, args.parquet)
        except OSError as err:
            print(f"clawctx scan: {args.parquet}: {err}", file=sys.stderr)
            return 1
        print(f"wrote {table.num_rows} records to {args.parquet}")
    else:
        _print_scan_table(shown)
    return status


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps hyphenated names (``vercel-ai-gateway``) whole when option help wraps."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def _wrap(text: str) -> str:
    return textwrap.fill(text, 88)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``clawctx`` command."""
    raw = _HelpFormatter
    parser = argparse.ArgumentParser(
        prog="clawctx", description=_DESCRIPTION, epilog=_EXAMPLES, formatter_class=raw
    )
    parser.add_argument("--version", action="version", version=f"clawctx {_core.__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    assemble = commands.add_parser(
        "assemble",
        help="assemble the system prompt and messages of one request (read-only)",
        description=_wrap(
            "Assemble the system prompt and messages of one request, and report every "
            "change the pipeline made. The session file is only read."
        ),
        epilog=_ASSEMBLE_EXAMPLES,
        formatter_class=raw,
    )
    assemble.add_argument("session", nargs="?", help="session .jsonl file (default: the demo)")
    assemble.add_argument(
        "--provider",
        default="anthropic",
        metavar="NAME",
        help=f"model provider (default: %(default)s); one of: {', '.join(PROVIDERS)}",
    )
    assemble.add_argument(
        "--model-api",
        default="anthropic-messages",
        metavar="API",
        help=f"model API (default: %(default)s); one of: {', '.join(MODEL_APIS)}",
    )
    assemble.add_argument("--model", default="claude-sonnet-4-5", help="default: %(default)s")
    assemble.add_argument(
        "--prompt", default="What changed since the last release?", help="the user message"
    )
    assemble.add_argument(
        "--workspace", help="workspace directory: AGENTS.md, SOUL.md, skills/ (default: the demo)"
    )
    assemble.add_argument("--session-key", help="session key (sub-agent keys get a minimal prompt)")
    assemble.add_argument(
        "--tools",
        help="comma-separated tool names (default: pi's coding tools), or a JSON file of tool "
        "definitions (pi's {name, description, parameters} or an SDK's shape) that --payload sends",
    )
    assemble.add_argument("--timezone", help="user time zone for the system prompt")
    assemble.add_argument(
        "--image-input", action="store_true", help="the model accepts images (loads prompt images)"
    )
    assemble.add_argument(
        "--context-window",
        type=_positive_int,
        default=DEFAULT_CONTEXT_TOKENS,
        metavar="TOKENS",
        help="the model's context window, a positive number of tokens (default: %(default)s)",
    )
    assemble.add_argument("--json", action="store_true", help="print everything as JSON")
    assemble.add_argument(
        "--payload",
        action="store_true",
        help="print only the provider request body pi-ai would send for --model-api (JSON)",
    )
    assemble.set_defaults(handler=_cmd_assemble)
    inspect = commands.add_parser(
        "inspect",
        help="summarize session files (read-only)",
        description=_wrap(
            "Summarize session files: header, counts, leaf context by role, damaged "
            "lines, unpaired tool calls, what pairing repair and pruning would do. Never writes."
        ),
        epilog=_INSPECT_EXAMPLES,
        formatter_class=raw,
    )
    inspect.add_argument(
        "sessions", nargs="*", metavar="SESSION", help="session .jsonl files (default: the demo)"
    )
    inspect.add_argument(
        "--json", action="store_true", help="print the report as JSON (a list for several files)"
    )
    inspect.add_argument(
        "--check",
        action="store_true",
        help="print one line per file and exit 1 if any file is damaged (lines that "
        "clawctx repair would drop or salvage) or is not a session file",
    )
    inspect.add_argument(
        "--context-window",
        type=_positive_int,
        default=DEFAULT_CONTEXT_TOKENS,
        metavar="TOKENS",
        help="context window in tokens for the pruning preview (default: %(default)s)",
    )
    inspect.set_defaults(handler=_cmd_inspect)
    convert = commands.add_parser(
        "convert",
        help="write a Claude Code or Codex transcript as a pi session file",
        description=_wrap(
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
    convert.set_defaults(handler=_cmd_convert)
    repair = commands.add_parser(
        "repair",
        help="repair session files in place (with a backup)",
        description=_wrap(
            "Repair session files in place, as OpenClaw does before a run: damaged "
            "lines are dropped or their records salvaged, kept lines keep their bytes, a backup "
            "is kept. Exit 1 if a file could not be read or is not a session file."
        ),
        epilog=_REPAIR_EXAMPLES,
        formatter_class=raw,
    )
    repair.add_argument("sessions", nargs="+", metavar="SESSION", help="session .jsonl files")
    repair.add_argument(
        "--dry-run",
        action="store_true",
        help="change nothing; list what a repair would change, line by line",
    )
    repair.add_argument("--json", action="store_true", help="print one JSON list of outcomes")
    repair.add_argument(
        "--verbose", action="store_true", help="list each changed line and the repair log"
    )
    repair.add_argument(
        "--delete-backup", action="store_true", help="delete the backup after a successful repair"
    )
    repair.set_defaults(handler=_cmd_repair)
    report = commands.add_parser(
        "report",
        help="write an HTML report of a session, or of every session in a directory",
        description=_wrap(
            "Write one self-contained HTML page (works offline): for a session file, the "
            "context size per turn against the window, tokens by role and by tool, compactions "
            "and branch points, the largest tool results, damaged lines and unpaired tool calls; "
            "for a directory, a fleet summary of every *.jsonl session under it. Never writes "
            "the sessions. Needs the report extra: pip install 'clawctx[report]'."
        ),
        epilog=_REPORT_EXAMPLES,
        formatter_class=raw,
    )
    report.add_argument("path", metavar="SESSION|DIR", help="a session .jsonl file or a directory")
    report.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="the HTML file to write (default: report.html, or fleet.html for a directory)",
    )
    report.add_argument(
        "--context-window",
        type=_positive_int,
        default=DEFAULT_CONTEXT_TOKENS,
        metavar="TOKENS",
        help="the model's context window the context chart is drawn against (default: %(default)s)",
    )
    report.add_argument(
        "--top",
        type=_count,
        default=20,
        metavar="N",
        help="rows of the largest tool results / largest sessions tables (default: %(default)s)",
    )
    report.add_argument(
        "--jobs",
        type=_count,
        default=None,
        metavar="N",
        help="threads scanning a directory (default: one per core)",
    )
    report.set_defaults(handler=_cmd_report)
    scan = commands.add_parser(
        "scan",
        help="summarize many session files in parallel (read-only)",
        description=_wrap(
            "Summarize session files in parallel, one row each: format, size, entries, "
            "messages, estimated tokens of the leaf context by role, tool calls and results "
            "and unpaired ones, damaged lines, compactions, branches, model, last activity. "
            "Directories are walked for *.jsonl files; globs are expanded (** for any depth). "
            "A progress bar shows on stderr when it is a terminal. Never writes a session."
        ),
        epilog=_SCAN_EXAMPLES,
        formatter_class=raw,
    )
    scan.add_argument("paths", nargs="+", metavar="PATH", help="session file, directory or glob")
    scan.add_argument(
        "--jobs",
        type=_positive_count,
        default=None,
        metavar="N",
        help="files read in parallel (default: one per core)",
    )
    scan_output = scan.add_mutually_exclusive_group()
    scan_output.add_argument(
        "--json",
        action="store_true",
        help="JSON lines: one object per file (every record field); streamed as files "
        "finish unless --sort or --top is given",
    )
    scan_output.add_argument(
        "--csv", action="store_true", help="CSV with a header row, every record field"
    )
    scan_output.add_argument(
        "--parquet",
        metavar="OUT",
        help="write the records to the Parquet file OUT (needs the arrow extra)",
    )
    scan.add_argument(
        "--sort",
        metavar="COLUMN",
        help="sort by a record field, e.g. estimated_tokens; a leading - sorts descending "
        "(write --sort=-estimated_tokens)",
    )
    scan.add_argument("--desc", action="store_true", help="sort descending")
    scan.add_argument(
        "--top",
        type=_positive_count,
        metavar="N",
        help="only the first N records (after sorting)",
    )
    scan.set_defaults(handler=_cmd_scan)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``clawctx`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "assemble":
        if args.provider not in PROVIDERS:
            parser.error(_choice_error("--provider", args.provider, PROVIDERS))
        if args.model_api not in MODEL_APIS:
            parser.error(_choice_error("--model-api", args.model_api, MODEL_APIS))
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


if __name__ == "__main__":
    sys.exit(main())
