"""The report pages: one self-contained HTML file each, charts inlined as SVG.

No script, no external stylesheet, font or image: the page carries a Content-Security-Policy
that forbids every network load (``default-src 'none'``), so it reads the same offline, from
an e-mail attachment or a CI artifact, and a browser refuses anything that would phone home.
Every string that came from a session file (tool names, ids, paths, previews, reasons) is
escaped.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from datetime import datetime

from clawctx import _core
from clawctx.report import _charts
from clawctx.report._fleet import FleetSession, FleetStats
from clawctx.report._session import SessionStats, UnpairedCall

#: Points of the per-turn context chart at most (the series is downsampled beyond: a 100 MB
#: session has ~10k turns; each point costs ~20 bytes of SVG path).
MAX_CHART_POINTS = 1000
#: Rows of a findings table at most (the total is always shown).
MAX_TABLE_ROWS = 50
#: Bars of a by-role / by-tool chart at most; the rest are summed into one bar.
MAX_BARS = 12
#: Points of the fleet scatter at most.
MAX_SCATTER_POINTS = 3000

_CSS = """
:root { color-scheme: light; --fg: #1d2330; --muted: #5d6675; --line: #e3e6ec; --bad: #b42318;
  --warn: #9a5b00; --ok: #1a7f37; --bg-alt: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1120px; padding: 24px 28px 48px; color: var(--fg);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 32px 0 8px; padding-bottom: 4px;
  border-bottom: 1px solid var(--line); }
h3 { font-size: 14px; margin: 18px 0 6px; }
p.meta { color: var(--muted); margin: 2px 0; word-break: break-all; }
p.note { color: var(--muted); font-size: 12.5px; margin: 4px 0 10px; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  font-size: 12.5px; }
dl.stats { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr));
  gap: 8px; margin: 12px 0 0; }
dl.stats div { background: var(--bg-alt); border: 1px solid var(--line); border-radius: 6px;
  padding: 8px 10px; }
dl.stats dt { color: var(--muted); font-size: 12px; }
dl.stats dd { margin: 2px 0 0; font-size: 18px; font-weight: 600; }
dl.stats div.bad dd { color: var(--bad); }
dl.stats div.warn dd { color: var(--warn); }
figure { margin: 8px 0; }
figure svg.chart { display: block; width: 100%; height: auto; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 24px; align-items: start; }
@media (max-width: 820px) { .pair { grid-template-columns: 1fr; } }
table { border-collapse: collapse; width: 100%; margin: 6px 0; font-size: 13px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { font-weight: 600; color: var(--muted); background: var(--bg-alt); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.preview { color: var(--muted); word-break: break-word; }
td.path { word-break: break-all; }
td.when { white-space: nowrap; }
.ok { color: var(--ok); }
.bad { color: var(--bad); }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
"""

#: Forbids every load from anywhere: the page only needs its own inline styles and SVG.
_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)


#: Shown where a value is missing (an en dash).
_NONE = "\u2013"


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _n(value: int | float) -> str:
    return f"{int(value):,}"


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _size(n: int) -> str:
    for unit, factor in (("GB", 1000**3), ("MB", 1000**2), ("kB", 1000)):
        if n >= factor:
            return f"{n / factor:.1f} {unit}"
    return f"{n} B"


def _when(stamp: str | None) -> str:
    if not stamp:
        return _NONE
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC") if moment.utcoffset() is not None else stamp


def _stat(key: str, label: str, value: int | str, shown: str | None = None, tone: str = "") -> str:
    data_value = f' data-value="{_e(value)}"' if isinstance(value, int) else ""
    text = shown if shown is not None else (_n(value) if isinstance(value, int) else str(value))
    cls = f' class="{tone}"' if tone else ""
    return f'<div data-stat="{key}"{data_value}{cls}><dt>{_e(label)}</dt><dd>{_e(text)}</dd></div>'


def _bad_count(key: str, label: str, count: int) -> str:
    """A count of damage: shown as bad unless it is 0."""
    return _stat(key, label, count, tone="bad" if count else "")


def _glance(stats: Iterable[str]) -> str:
    """The "At a glance" section that opens a page, of its :func:`_stat` items."""
    return (
        '<section id="summary"><h2>At a glance</h2><dl class="stats">'
        f"{''.join(stats)}</dl></section>"
    )


def _table(
    name: str,
    headers: Sequence[str],
    rows: Iterable[Sequence[tuple[str, str]]],
    *,
    total: int,
    empty: str,
    numeric: Iterable[int] = (),
) -> str:
    """A table of at most :data:`MAX_TABLE_ROWS` rows; each cell is (css class, escaped html).

    ``total`` is how many rows exist; when more than are shown, a note says so.
    """
    if total == 0:
        return f'<p class="note" data-table="{name}" data-rows="0">{_e(empty)}</p>'
    numeric = set(numeric)
    head = "".join(
        f'<th class="num">{_e(h)}</th>' if i in numeric else f"<th>{_e(h)}</th>"
        for i, h in enumerate(headers)
    )
    body = []
    shown = 0
    for row in rows:
        if shown >= MAX_TABLE_ROWS:
            break
        cells = "".join(
            f'<td class="{cls}">{cell}</td>' if cls else f"<td>{cell}</td>" for cls, cell in row
        )
        body.append(f"<tr>{cells}</tr>")
        shown += 1
    more = f'<p class="note">Showing {_n(shown)} of {_n(total)}.</p>' if total > shown else ""
    return (
        f'<table data-table="{name}" data-rows="{shown}" data-total="{total}">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}"
    )


def _page(title: str, header: str, sections: Sequence[str]) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="generator" content="clawctx ' + _e(_core.__version__) + '">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>\n<body>\n"
        f"<header>{header}</header>\n"
        + "\n".join(sections)
        + f"\n<footer>Made by clawctx {_e(_core.__version__)} (<code>clawctx report</code>). "
        "Token numbers are estimates (characters / 4, as pi counts them) unless marked as "
        "recorded usage.</footer>\n</body></html>\n"
    )


def _bars(items: Sequence[tuple[str, int]]) -> tuple[list[str], list[int]]:
    """At most :data:`MAX_BARS` bars: the largest, then one bar summing the rest."""
    if len(items) <= MAX_BARS:
        return [k for k, _ in items], [v for _, v in items]
    head = items[: MAX_BARS - 1]
    rest = items[MAX_BARS - 1 :]
    labels = [k for k, _ in head] + [f"{len(rest)} others"]
    return labels, [v for _, v in head] + [sum(v for _, v in rest)]


def _turn(turn: float | None) -> str:
    return "off the leaf path" if turn is None else f"after turn {int(turn)}"


def session_page(stats: SessionStats) -> str:
    """The HTML page of one session."""
    series = stats.series
    window = stats.context_window
    peak = series.peak
    unpaired = len(stats.unpaired_calls) + len(stats.unpaired_results)
    title = f"clawctx report: {stats.name or stats.path.name}"
    header = (
        f"<h1>Session report: {_e(stats.name or stats.path.name)}</h1>"
        f'<p class="meta mono">{_e(stats.path)}</p>'
        f'<p class="meta">session id <code>{_e(stats.session_id or _NONE)}</code> · '
        f"{_e(_size(stats.size_bytes))} · {_n(stats.entries)} entries · "
        f"{_n(stats.messages)} messages · {_e(_when(stats.first_activity))} → "
        f"{_e(_when(stats.last_activity))}</p>"
        f'<p class="meta" data-models="{len(stats.models)}">models (assistant turns): '
        + (", ".join(f"<code>{_e(m)}</code> {_n(c)}" for m, c in stats.models.items()) or _NONE)
        + "</p>"
    )
    sections = [
        _glance(
            [
                _stat("estimated-tokens", "Estimated tokens, all messages", stats.estimated_tokens),
                _stat("leaf-context-tokens", "Leaf context now", stats.leaf_context_tokens),
                _stat(
                    "peak-context",
                    "Peak context",
                    peak,
                    f"{_n(peak)} ({peak / window:.0%})",
                    "bad" if peak > window else "",
                ),
                _stat("context-window", "Context window", window),
                _stat("turns", "Assistant turns (leaf path)", series.total_turns),
                _stat("recorded-turns", "Turns with recorded usage", series.recorded_turns),
                _stat("compactions", "Compactions", len(stats.compactions)),
                _stat("branch-points", "Branch points", len(stats.branch_points)),
                _stat("abandoned-entries", "Entries off the leaf path", stats.abandoned_entries),
                _stat("tool-calls", "Tool calls", stats.tool_calls),
                _stat("tool-results", "Tool results", stats.tool_results),
                _stat(
                    "unpaired",
                    "Unpaired calls / results",
                    unpaired,
                    tone="warn" if unpaired else "",
                ),
                _bad_count("damaged-lines", "Damaged lines", len(stats.damaged_lines)),
            ]
        )
    ]

    shown = series.downsampled(MAX_CHART_POINTS)
    sampled = (
        f" The chart shows {_n(len(shown.turns))} of the {_n(series.total_turns)} turns: the "
        "highest and lowest of each stretch, so peaks and drops stay visible."
        if len(shown.turns) < series.total_turns
        else ""
    )
    sections.append(
        '<section id="context"><h2>Context size per turn</h2>'
        '<p class="note">What the model was sent at each assistant turn of the conversation as '
        "it stands (root to leaf): the provider's recorded <code>usage</code> where the message "
        "has one, the chars/4 estimate of the context pi would build (compaction summary plus "
        "kept messages) everywhere. Green lines: compactions; purple triangles: points the "
        f"conversation was rewound to.{sampled}</p>"
        f"<figure>{_charts.context_chart(shown, window)}</figure></section>"
    )

    cache = stats.cache
    if cache is not None and cache.turns:
        breaks = [(t.index, t.cache_break.cause) for t in cache.turns if t.cache_break is not None]
        rebuilt = stats.cache_breaks
        how = (
            f"{_plural(len(breaks), 'break')} found by rebuilding each turn's request "
            "(red lines, labelled with the cause; <code>clawctx cache</code> lists them)."
            if rebuilt
            else "Breaks are not marked: build the report with <code>--cache-breaks</code> "
            "(or <code>session_stats(cache_breaks=True)</code>) to rebuild each turn's request "
            "and mark where the cache broke."
        )
        rate = cache.hit_rate
        chart = _charts.cache_chart(
            [t.index for t in cache.turns], [t.hit_rate for t in cache.turns], breaks
        )
        sections.append(
            f'<section id="cache" data-breaks="{len(breaks)}"><h2>Prompt cache per turn</h2>'
            "<p class=\"note\">The share of each assistant turn's input read from the provider's "
            "prompt cache, from its recorded <code>usage</code> (<code>cacheRead / (input + "
            "cacheRead + cacheWrite)</code>); "
            + ("no cache usage recorded" if rate is None else f"{rate:.0%} over the session")
            + f". {how}</p>"
            f"<figure>{chart}</figure></section>"
        )

    roles = sorted(stats.tokens_by_role.items(), key=lambda kv: (-kv[1], kv[0]))
    role_labels, role_values = _bars(roles)
    tools = [(t.name, t.tokens) for t in stats.tokens_by_tool]
    tool_labels, tool_values = _bars(tools)
    role_rows = (
        [
            ("", f"<code>{_e(role)}</code>"),
            ("num", _n(stats.messages_by_role.get(role, 0))),
            ("num", _n(tokens)),
        ]
        for role, tokens in roles
    )
    tool_rows = (
        [("", f"<code>{_e(t.name)}</code>"), ("num", _n(t.results)), ("num", _n(t.tokens))]
        for t in stats.tokens_by_tool
    )
    sections.append(
        '<section id="tokens"><h2>Where the tokens are</h2>'
        '<p class="note">Every message in the file, side branches included.</p>'
        '<div class="pair"><div>'
        + "<figure>"
        + _charts.bar_chart(
            "roles", role_labels, role_values, title="Tokens by role", xlabel="estimated tokens"
        )
        + "</figure>"
        + _table(
            "tokens-by-role",
            ["role", "messages", "tokens"],
            role_rows,
            total=len(roles),
            empty="No messages.",
            numeric=(1, 2),
        )
        + "</div><div><figure>"
        + _charts.bar_chart(
            "tools",
            tool_labels,
            tool_values,
            title="Tool result tokens by tool",
            xlabel="estimated tokens",
            color="#ff7f0e",
        )
        + "</figure>"
        + _table(
            "tokens-by-tool",
            ["tool", "results", "tokens"],
            tool_rows,
            total=len(stats.tokens_by_tool),
            empty="No tool results.",
            numeric=(1, 2),
        )
        + "</div></div></section>"
    )

    result_rows = (
        [
            ("num", _n(rank)),
            (
                "",
                f"<code>{_e(r.tool)}</code>"
                + (' <span class="bad">error</span>' if r.is_error else ""),
            ),
            ("num", _n(r.tokens)),
            ("mono", _e(r.entry_id or _NONE)),
            ("when", _e(_when(r.timestamp))),
            ("", "yes" if r.on_leaf_path else "no"),
            ("preview", _e(r.preview)),
        ]
        for rank, r in enumerate(stats.largest_tool_results, 1)
    )
    sections.append(
        '<section id="tool-results"><h2>Largest tool results</h2>'
        + _table(
            "largest-tool-results",
            ["#", "tool", "tokens", "entry", "time", "leaf path", "starts with"],
            result_rows,
            total=len(stats.largest_tool_results),
            empty="No tool results.",
            numeric=(0, 2),
        )
        + "</section>"
    )

    compaction_rows = (
        [
            ("mono", _e(c.entry_id or _NONE)),
            ("when", _e(_when(c.timestamp))),
            ("num", _NONE if c.tokens_before is None else _n(c.tokens_before)),
            ("num", _n(c.summary_tokens)),
            ("", _e(_turn(c.turn))),
        ]
        for c in stats.compactions
    )
    branch_rows = (
        [
            ("mono", _e(b.entry_id or _NONE)),
            ("when", _e(_when(b.timestamp))),
            ("num", _n(b.children)),
            ("", _e(_turn(b.turn))),
        ]
        for b in stats.branch_points
    )
    sections.append(
        '<section id="structure"><h2>Compactions and branches</h2>'
        f"<h3>Compactions ({_n(len(stats.compactions))})</h3>"
        + _table(
            "compactions",
            ["entry", "time", "tokens before", "summary tokens", "where"],
            compaction_rows,
            total=len(stats.compactions),
            empty="No compaction.",
            numeric=(2, 3),
        )
        + (
            f"<h3>Resets ({_n(len(stats.resets))})</h3>"
            '<p class="note">OpenClaw reset entries: the context restarts after each (from '
            "its kept entry, if it names one), without a summary.</p>"
            + _table(
                "resets",
                ["entry", "time", "reason", "keeps from", "where"],
                (
                    [
                        ("mono", _e(r.entry_id or _NONE)),
                        ("when", _e(_when(r.timestamp))),
                        ("", _e(r.reason or _NONE)),
                        ("mono", _e(r.first_kept_entry_id or _NONE)),
                        ("", _e(_turn(r.turn))),
                    ]
                    for r in stats.resets
                ),
                total=len(stats.resets),
                empty="No reset.",
            )
            if stats.resets
            else ""
        )
        + f"<h3>Branch points ({_n(len(stats.branch_points))})</h3>"
        + '<p class="note">Entries with more than one child: the conversation was rewound to '
        f"them and continued differently. {_n(stats.abandoned_entries)} entries are off the "
        "leaf path.</p>"
        + _table(
            "branch-points",
            ["entry", "time", "children", "where"],
            branch_rows,
            total=len(stats.branch_points),
            empty="No branch point.",
            numeric=(2,),
        )
        + "</section>"
    )

    damage_rows = (
        [("num", _n(d.line)), ("", _e(d.action)), ("", _e(d.reason)), ("num", _n(d.records))]
        for d in stats.damaged_lines
    )
    sections.append(
        f'<section id="damage"><h2>Damaged lines ({_n(len(stats.damaged_lines))})</h2>'
        '<p class="note">Lines the loader could not take as they were; '
        "<code>clawctx repair</code> drops or salvages them.</p>"
        + _table(
            "damaged-lines",
            ["line", "action", "reason", "records kept"],
            damage_rows,
            total=len(stats.damaged_lines),
            empty="No damaged line.",
            numeric=(0, 3),
        )
        + "</section>"
    )

    def unpaired_rows(items: Sequence[UnpairedCall]) -> Iterable[list[tuple[str, str]]]:
        return (
            [
                ("mono", _e(u.tool_call_id)),
                ("", f"<code>{_e(u.tool or _NONE)}</code>"),
                ("mono", _e(u.entry_id or _NONE)),
                ("when", _e(_when(u.timestamp))),
            ]
            for u in items
        )

    sections.append(
        f'<section id="pairing"><h2>Tool call pairing ({_n(unpaired)} unpaired)</h2>'
        '<p class="note">Across the whole file. A call without a result is normal while a tool '
        "runs; elsewhere OpenClaw inserts a synthetic error result before the next request.</p>"
        f"<h3>Calls without a result ({_n(len(stats.unpaired_calls))})</h3>"
        + _table(
            "unpaired-calls",
            ["tool call id", "tool", "assistant entry", "time"],
            unpaired_rows(stats.unpaired_calls),
            total=len(stats.unpaired_calls),
            empty="Every tool call has a result.",
        )
        + f"<h3>Results without a call ({_n(len(stats.unpaired_results))})</h3>"
        + _table(
            "unpaired-results",
            ["tool call id", "tool", "result entry", "time"],
            unpaired_rows(stats.unpaired_results),
            total=len(stats.unpaired_results),
            empty="Every tool result answers a call.",
        )
        + "</section>"
    )
    return _page(title, header, sections)


def _fleet_rows(rows: Sequence[FleetSession]) -> Iterable[list[tuple[str, str]]]:
    return (
        [
            ("num", _n(rank)),
            ("path mono", _e(r.path)),
            ("num", _e(_size(r.size_bytes))),
            ("num", _n(r.entries)),
            ("num", _n(r.messages)),
            ("num", _n(r.estimated_tokens)),
            ("num", _n(r.damaged_lines)),
        ]
        for rank, r in enumerate(rows, 1)
    )


_FLEET_HEADERS = ["#", "session", "size", "entries", "messages", "est. tokens", "damaged lines"]


def fleet_page(stats: FleetStats) -> str:
    """The HTML page of a scan over many sessions."""
    roots = ", ".join(stats.roots)
    header = (
        f'<h1>Fleet report: {_n(stats.sessions)} sessions</h1><p class="meta mono">{_e(roots)}</p>'
    )
    total_bytes = int(stats.sizes.sum())
    sections = [
        _glance(
            [
                _stat("sessions", "Sessions", stats.sessions),
                _stat("bytes", "Total size", total_bytes, _size(total_bytes)),
                _stat("entries", "Entries", int(stats.entries.sum())),
                _stat("messages", "Messages", int(stats.messages.sum())),
                _stat("estimated-tokens", "Estimated tokens", int(stats.tokens.sum())),
                _stat(
                    "largest-session",
                    "Largest session",
                    int(stats.sizes.max()) if stats.sessions else 0,
                    _size(int(stats.sizes.max())) if stats.sessions else _NONE,
                ),
                _bad_count("damaged-sessions", "Damaged sessions", stats.damaged_sessions),
                _stat("damaged-lines", "Damaged lines", int(stats.damaged_lines.sum())),
                _bad_count("unreadable", "Unreadable files", len(stats.errors)),
            ]
        )
    ]
    by_tokens = stats.largest_by_tokens()
    sections.append(
        '<section id="charts"><h2>Sizes</h2><div class="pair">'
        f"<figure>{_charts.size_histogram(stats.sizes)}</figure>"
        "<figure>"
        + _charts.size_tokens_scatter(
            stats.sizes, stats.tokens, stats.damaged_lines > 0, MAX_SCATTER_POINTS
        )
        + "</figure></div>"
        "<figure>"
        + _charts.bar_chart(
            "top-tokens",
            [r.path.name for r in by_tokens[:MAX_BARS]],
            [r.estimated_tokens for r in by_tokens[:MAX_BARS]],
            title=f"The {min(MAX_BARS, len(by_tokens))} sessions with the most tokens",
            xlabel="estimated tokens",
            width=10.0,
        )
        + "</figure></section>"
    )
    sections.append(
        f'<section id="largest"><h2>Largest sessions by tokens (top {_n(stats.top)})</h2>'
        + _table(
            "largest-by-tokens",
            _FLEET_HEADERS,
            _fleet_rows(by_tokens),
            total=len(by_tokens),
            empty="No readable session.",
            numeric=(0, 2, 3, 4, 5, 6),
        )
        + f"<h3>Largest sessions by size (top {_n(stats.top)})</h3>"
        + _table(
            "largest-by-size",
            _FLEET_HEADERS,
            _fleet_rows(stats.largest_by_size()),
            total=min(stats.top, stats.sessions),
            empty="No readable session.",
            numeric=(0, 2, 3, 4, 5, 6),
        )
        + "</section>"
    )
    damaged = stats.most_damaged()
    error_rows = ([("path mono", _e(path)), ("", _e(reason))] for path, reason in stats.errors)
    sections.append(
        '<section id="damage">'
        f"<h2>Damage ({_plural(stats.damaged_sessions, 'damaged session')})</h2>"
        '<p class="note">Sessions with lines the loader could not take as they were, most '
        "first; <code>clawctx repair</code> fixes them.</p>"
        + _table(
            "damaged-sessions",
            _FLEET_HEADERS,
            _fleet_rows(damaged),
            total=stats.damaged_sessions,
            empty="No damaged session.",
            numeric=(0, 2, 3, 4, 5, 6),
        )
        + f"<h3>Unreadable files ({_n(len(stats.errors))})</h3>"
        + _table(
            "unreadable",
            ["file", "reason"],
            error_rows,
            total=len(stats.errors),
            empty="Every file read as a session.",
        )
        + "</section>"
    )
    return _page(f"clawctx fleet report: {roots}", header, sections)
