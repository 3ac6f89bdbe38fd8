"""HTML reports of one session or of many: ``clawctx report SESSION|DIR -o page.html``.

A session report shows the context size at each assistant turn against the model's window
(recorded ``usage`` where the message has one, the chars/4 estimate everywhere), tokens by role
and by tool, compactions and branch points, the largest tool results, damaged lines and unpaired
tool calls. A fleet report scans a directory of sessions: sizes, tokens, the largest sessions and
the damaged ones. Each is one self-contained HTML file: charts are inline SVG, there is no
script, and the page forbids every network load, so it works offline.

Charts: matplotlib's SVG backend (``svg.fonttype = "none"``: text stays text). Chosen over
Vega-Lite through ``altair`` + ``vl-convert-python`` for its size and because it needs nothing at
run time but itself: the matplotlib wheel is about 10 MB with small pure-Python dependencies
(numpy is already required), while ``vl-convert-python`` alone is about 34 MB, as it embeds a
JavaScript engine to run Vega. Both render offline; matplotlib's static SVG needs no script in
the page either. It is the ``report`` extra (``pip install "clawctx[report]"``), imported only
when a chart is drawn; without it, rendering raises :class:`ReportDependencyError` naming the
extra.

Pages stay small whatever the session's size: the per-turn series is downsampled to
:data:`MAX_CHART_POINTS` points (each stretch's highest and lowest turn), tables show at most
:data:`MAX_TABLE_ROWS` rows with the total, and tool and role charts at most 12 bars.

Layer: top (beside ``clawctx.cli``); reads sessions through ``clawctx.history``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from clawctx.errors import ReportDependencyError
from clawctx.report._fleet import FleetSession, FleetStats, find_session_files, fleet_stats
from clawctx.report._html import MAX_CHART_POINTS, MAX_TABLE_ROWS, fleet_page, session_page
from clawctx.report._session import (
    DEFAULT_CONTEXT_WINDOW,
    BranchPoint,
    Compaction,
    ContextSeries,
    DamagedLine,
    Reset,
    SessionStats,
    ToolResult,
    ToolUsage,
    UnpairedCall,
    session_stats,
)

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "MAX_CHART_POINTS",
    "MAX_TABLE_ROWS",
    "BranchPoint",
    "Compaction",
    "ContextSeries",
    "DamagedLine",
    "FleetSession",
    "FleetStats",
    "ReportDependencyError",
    "Reset",
    "SessionStats",
    "ToolResult",
    "ToolUsage",
    "UnpairedCall",
    "find_session_files",
    "fleet_page",
    "fleet_report",
    "fleet_stats",
    "session_page",
    "session_report",
    "session_stats",
    "write_page",
]


def session_report(
    path: str | os.PathLike[str],
    *,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
    top: int = 20,
    cache_breaks: bool = False,
) -> str:
    """The HTML page of the session file at ``path`` (read-only).

    ``cache_breaks=True`` marks on the prompt cache chart where each break happened (each
    assistant turn's request is rebuilt, as ``clawctx cache`` does).

    ``context_window`` is the model's window in tokens (the line the context chart is drawn
    against; default OpenClaw's 200,000); ``top`` the number of largest tool results listed.
    """
    return session_page(
        session_stats(path, context_window=context_window, top=top, cache_breaks=cache_breaks)
    )


def fleet_report(
    paths: Sequence[str | os.PathLike[str]],
    *,
    top: int = 20,
    workers: int | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> str:
    """The HTML page of every session file under ``paths`` (directories are walked for
    ``*.jsonl``), scanned read-only in parallel on ``workers`` threads. ``progress(done, total)``
    is called as files finish."""
    return fleet_page(fleet_stats(paths, top=top, workers=workers, progress=progress))


def write_page(page: str, out: str | os.PathLike[str]) -> Path:
    """Writes ``page`` (UTF-8) to ``out`` through a temporary file renamed into place, so a
    reader never sees half a page; returns the path written."""
    target = Path(out)
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temp.write_text(page, encoding="utf-8")
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    return target
