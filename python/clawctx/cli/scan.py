"""``clawctx scan``: summarize many session files in parallel, as a table, JSON lines, CSV or
Parquet.

Layer: ``clawctx.cli`` (the top of the package).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from clawctx import _core
from clawctx.cli._common import (
    at_least_one,
    error,
    plural,
    use_rich,
)
from clawctx.history.scan import _GLOB_CHARS

SUMMARY = "summarize many session files in parallel (read-only)"
"""The command's line in ``clawctx --help``."""
DESCRIPTION = (
    "Summarize session files in parallel, one row each: format, size, entries, "
    "messages, estimated tokens of the leaf context by role, tool calls and results "
    "and unpaired ones, damaged lines, compactions, branches, model, last activity. "
    "Directories are walked for *.jsonl files; globs are expanded (** for any depth). "
    "A progress bar shows on stderr when it is a terminal. Never writes a session."
)
"""The command's description in ``clawctx scan --help``."""
EXAMPLES = """\
examples:
  clawctx scan ~/.openclaw/agents                 # every *.jsonl below, one table row each
  clawctx scan 'sessions/**/*.jsonl' --sort=-estimated_tokens --top 20
  clawctx scan sessions --json > records.jsonl    # one JSON object per line, as files finish
  clawctx scan sessions --csv > records.csv
  clawctx scan sessions --parquet records.parquet # needs pip install "clawctx[arrow]"

exit status: 0 every file was read as a session; 1 a file could not be (its row or record
says why), no file matched, or the output could not be written; 2 bad arguments."""
"""Its examples, shown after the options in ``clawctx scan --help``."""

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


def _roots(arguments: list[str]) -> list[Path]:
    """The directories the scanned paths are shown relative to: each directory argument, and
    the fixed leading part of each glob."""
    roots = []
    for text in arguments:
        if _GLOB_CHARS.intersection(text) and not os.path.lexists(text):
            fixed = []
            for part in Path(text).parts:
                if _GLOB_CHARS.intersection(part):
                    break
                fixed.append(part)
            roots.append(Path(*fixed) if fixed else Path("."))
        elif os.path.isdir(text) and not text.endswith(".jsonl"):
            roots.append(Path(text))
    return roots


def _shown_path(path: str, roots: list[Path]) -> str:
    """``path`` relative to the root it was found under (the deepest one), so that a table at
    80 columns is not all path; prefixed with the root's name when several roots were given.
    A file named directly is shown as it was given."""
    candidate = Path(path)
    for root in sorted(roots, key=lambda r: len(r.parts), reverse=True):
        try:
            relative = candidate.relative_to(root)
        except ValueError:
            continue
        if len(roots) > 1:
            return str(Path(root.name or str(root)) / relative)
        return str(relative)
    return path


def _print_scan_table(records: list[dict[str, Any]], roots: list[Path] | None = None) -> None:
    from rich.console import Console
    from rich.table import Table

    tty = use_rich(sys.stdout)
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
            cells = [_shown_path(record["path"], roots or []), f"error: {record['error']}"]
            table.add_row(*cells, *[""] * (len(_SCAN_COLUMNS) - 1), style="red" if tty else "")
            continue
        table.add_row(
            _shown_path(record["path"], roots or []),
            *[_scan_cell(record, f) for _, f in _SCAN_COLUMNS],
        )
    console.print(table)
    errors = sum(r["error"] is not None for r in records)
    tokens = sum(r["estimated_tokens"] for r in records)
    console.print(
        f"{plural(len(records), 'file')}, {plural(len(records) - errors, 'session')}, "
        f"{plural(errors, 'error')}, {tokens:,} estimated tokens in leaf contexts"
    )


def run(args: argparse.Namespace) -> int:
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
                error("scan", record["path"], reason)
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
        _print_scan_table(shown, None if args.wide else _roots(args.paths))
    return status


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``clawctx scan``."""
    parser.add_argument("paths", nargs="+", metavar="PATH", help="session file, directory or glob")
    parser.add_argument(
        "--jobs",
        type=at_least_one,
        default=None,
        metavar="N",
        help="files read in parallel (default: one per core)",
    )
    scan_output = parser.add_mutually_exclusive_group()
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
    parser.add_argument(
        "--sort",
        metavar="COLUMN",
        help="sort by a record field, e.g. estimated_tokens; a leading - sorts descending "
        "(write --sort=-estimated_tokens)",
    )
    parser.add_argument("--desc", action="store_true", help="sort descending")
    parser.add_argument(
        "--wide",
        action="store_true",
        help="show full paths in the table (default: relative to the directory or glob given)",
    )
    parser.add_argument(
        "--top",
        type=at_least_one,
        metavar="N",
        help="only the first N records (after sorting)",
    )
